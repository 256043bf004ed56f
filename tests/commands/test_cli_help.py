"""Help is plain text, --version works, and mistyped commands, flags and names get a suggestion."""

from __future__ import annotations

import re

import pytest

from lyra_lab import __version__
from lyra_lab.cli import build_parser, main

RST = re.compile(r"``|:(func|data|class|meth|mod|attr):`")


def _subparsers():
    parser = build_parser()
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return parser, action.choices


def test_help_of_every_command_is_plain_text():
    parser, commands = _subparsers()
    assert not RST.search(parser.format_help())
    assert len(commands) >= 7
    for name, sub in commands.items():
        text = sub.format_help()
        assert not RST.search(text), f"{name} --help shows RST markup: {RST.search(text).group(0)}"


@pytest.mark.parametrize("command", ["import", "report", "recall-eval", "run", "bench"])
def test_help_exits_0(command, capsys):
    assert main([command, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: lyra-lab {command}")


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"lyra-lab {__version__}"


@pytest.mark.parametrize("argv, hint", [
    (["recal-eval", "x"], "did you mean 'recall-eval'?"),
    (["recall-eval", "x", "--recaler", "bm25"], "did you mean '--recaller'?"),
    (["report", "x", "--resampels", "3"], "did you mean '--resamples'?"),
    (["run", "x.toml", "--fersh"], "did you mean '--fresh'?"),
    (["recall-eval", "x", "--recaller", "bm25", "--category-labels", "mem"], "did you mean 'mem0'?"),
])
def test_mistypes_get_a_suggestion(argv, hint, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and hint in err


def test_library_wording_is_translated_to_flags():
    from lyra_lab.commands._errors import message_of
    from lyra_lab.corpus import CorpusFormatError

    text = message_of(CorpusFormatError("f.json", "", "unknown format (pass format= to force one)"))
    assert "--format" in text and "format=" not in text
