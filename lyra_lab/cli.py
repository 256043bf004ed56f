"""The lyra-lab command line: a thin layer over the public API.

Each subcommand lives in ``lyra_lab/commands/<name>.py`` with two functions,
``add_parser(subparsers)`` and ``run(args) -> int``.  Every failure prints one
line (``error: ...``) to stderr and exits 2: bad arguments and input files as
they are, anything unexpected with the traceback written to a log file whose
path the line gives (the run's ``log.jsonl`` when a command has a run folder).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Iterator, Sequence

from lyra_lab.commands import EXIT_USAGE, UsageError, report_failure, suggest

# module names under lyra_lab.commands, in the order --help lists them
COMMANDS: tuple[str, ...] = ("import_corpus", "report", "recall_eval", "serve_local", "run", "demo", "bench")
COMMANDS += ("probes",)  # lyra-lab probes plant|draft
COMMANDS += ("show",)  # lyra-lab show RUN_DIR PROBE_ID
COMMANDS += ("serve_memory",)  # lyra-lab serve-memory CONFIG --mcp|--http
COMMANDS += ("datasets",)  # lyra-lab datasets list|get|path
COMMANDS += ("compare", "view")  # lyra-lab compare RUN_A [RUN_B]; lyra-lab view [RUNS_DIR]
COMMANDS += ("plan",)  # lyra-lab plan EXPERIMENT.toml
COMMANDS += ("export", "rescore")  # lyra-lab export RUN --out FILE; lyra-lab rescore FILE --run-dir DIR


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and "did you mean" suggestions for mistyped flags and commands."""

    def error(self, message: str):
        """Raise a ``UsageError`` (one line, exit 2 in ``main``) instead of printing usage and exiting."""
        raise UsageError(f"{self.prog}: {_with_suggestion(self, message)}")


def _with_suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    import re

    choice = re.match(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if choice:
        choices = [c.strip().strip("'") for c in choice.group(3).split(",")]
        hint = suggest(choice.group(2), choices)
        return f"{message}{hint}"
    return message


def build_parser() -> argparse.ArgumentParser:
    """The ``lyra-lab`` parser: one subcommand per module of ``lyra_lab.commands`` named in ``COMMANDS``."""
    from lyra_lab import __version__

    parser = Parser(prog="lyra-lab", description=__doc__.splitlines()[0].replace("``", ""))
    parser.add_argument("--version", action="version", version=f"lyra-lab {__version__}")
    # what every command's arguments hold unless the command sets it: no --json, no --yes, and standard
    # output that the CLI wraps (a command whose output is a protocol, serve-memory --mcp, sets _raw_stdout)
    parser.set_defaults(json=False, yes=False, _raw_stdout=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=Parser)
    for name in COMMANDS:
        module = importlib.import_module(f"lyra_lab.commands.{name}")
        sub_parser = module.add_parser(sub)
        sub_parser.set_defaults(_run=module.run, _parser=sub_parser)
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv`` (default: ``sys.argv[1:]``); a mistyped flag or command is a ``UsageError`` with a suggestion."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    _check_flags(parser, argv)
    args, extras = parser.parse_known_args(argv)
    if extras:
        sub = getattr(args, "_parser", parser)
        raise UsageError(f"{sub.prog}: unrecognized argument {extras[0]}{_flag_hint(sub, extras[0])}")
    return args


def _check_flags(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    """Name a mistyped --flag (with a suggestion) before argparse complains of a missing required one."""
    sub, command = parser, -1
    # descend through nested subcommands (``probes plant``): flags belong to the innermost one
    while True:
        subparsers = next((a for a in sub._actions if isinstance(a, argparse._SubParsersAction)), None)
        if subparsers is None:
            break
        found = next((i for i, tok in enumerate(argv) if i > command and tok in subparsers.choices), None)
        if found is None:
            break
        sub, command = subparsers.choices[argv[found]], found
    if sub is parser:
        return
    flags = _flags(sub)
    for tok in argv[command + 1:]:
        if tok == "--":
            break
        name = tok.split("=", 1)[0]
        if name.startswith("--") and not any(flag.startswith(name) for flag in flags):
            raise UsageError(f"{sub.prog}: unrecognized argument {name}{_flag_hint(sub, name)}")


def _flags(parser: argparse.ArgumentParser) -> list[str]:
    return [s for action in parser._actions for s in action.option_strings]


def _flag_hint(parser: argparse.ArgumentParser, token: str) -> str:
    return suggest(token.split("=", 1)[0], _flags(parser)) if token.startswith("-") else ""


@contextlib.contextmanager
def _fitted_stdout(machine_readable: bool) -> Iterator[None]:
    """Standard output wrapped at ``COLUMNS`` while a command runs (JSON and protocol output as they are)."""
    from lyra_lab._terminal import WrappedLines

    if machine_readable:
        yield
        return
    original = sys.stdout
    wrapped = WrappedLines(original)
    sys.stdout = wrapped
    try:
        yield
    finally:
        wrapped.flush()
        sys.stdout = original


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``lyra-lab`` command; returns the exit code (errors are one line on stderr, no traceback)."""
    args = None
    try:
        args = parse_args(argv)
        with _fitted_stdout(machine_readable=bool(args.json or args._raw_stdout)):
            return int(args._run(args) or 0)
    except SystemExit as exc:  # --help and --version exit 0 through argparse
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_USAGE
    except BrokenPipeError:
        # `lyra-lab import X | head`: the reader left; that is not an error of ours.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt as exc:  # a run says what it kept (RunInterrupted); anything else, that it stopped
        print(str(exc) if str(exc).startswith("interrupted") else "interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the CLI's one place to turn errors into a line
        print(report_failure(exc, args), file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
