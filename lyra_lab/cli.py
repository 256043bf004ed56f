"""The ``lyra-lab`` command line: a thin layer over the public API.

Each subcommand lives in ``lyra_lab/commands/<name>.py`` with two functions,
``add_parser(subparsers)`` and ``run(args) -> int``.  Expected failures (bad
input files, bad configs, unreachable backends) print one line to stderr and
exit 2; they never show a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

from lyra_lab._registry import ConfigError
from lyra_lab.corpus import CorpusFormatError

# module names under lyra_lab.commands, in the order --help lists them
COMMANDS: tuple[str, ...] = ("import_corpus", "report", "recall_eval", "serve_local", "run", "demo", "bench")
COMMANDS += ("probes",)  # lyra-lab probes plant|draft

EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lyra-lab", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        module = importlib.import_module(f"lyra_lab.commands.{name}")
        sub_parser = module.add_parser(sub)
        sub_parser.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except (CorpusFormatError, ConfigError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `lyra-lab import X | head`: the reader left; that is not an error of ours.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the CLI's one place to turn errors into a line
        from lyra_lab.backends._types import BackendError

        if isinstance(exc, BackendError):
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        raise


if __name__ == "__main__":
    sys.exit(main())
