"""Capabilities are declared in protocols, not probed with ``getattr`` / ``hasattr``.

A *probe* is ``getattr(obj, "name", default)`` or ``hasattr(obj, "name")`` with a literal name: it asks
an object what it can do, and a type checker cannot see the answer.  What a component can do belongs in
its ``typing.Protocol`` (``Backend.capabilities``, ``TokenCount.lines_add_up``,
``testing.BudgetedChunker``); code then uses ``isinstance`` on the protocol or just calls it.

Some probes are not about our components at all: reading optional fields of a foreign library's objects
(the openai client's exceptions and responses), introspection of annotations, ``argparse`` namespaces,
platform features.  Each one left in ``lyra_lab/`` is listed in ``ALLOWED`` with why; anything else fails
``test_no_capability_probing``.  ``LEAD_SWEEP`` lists the probes still in packages being reworked on other
branches (issue 25); it shrinks to nothing as they are.  ``two-argument getattr`` (which raises when the
attribute is missing) and a computed name (``getattr(self, field_name)``) are not probes.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "lyra_lab"

ALLOWED: dict[tuple[str, str], str] = {
    ("_docs.py", "__name__"): "a field's annotation is a class or a typing construct; the docs print its name",
    ("_params.py", "__name__"): "the same for a parameter's type in an error message",
    ("_records.py", "__record_schema__"): "the marker @record sets: whether a nested field's type is a record type",
    ("commands/_errors.py", "command"): "an argparse Namespace names the subcommand only once one was parsed",
    ("commands/_errors.py", "log_path"): "an argparse Namespace holds log_path only once a command set it (a run folder exists)",
    ("experiments/executors/_ray.py", "ENABLE_RAY_CLUSTER"): "a Ray constant that some Ray versions lack, read to be restored",
    ("cli.py", "_parser"): "an argparse Namespace holds the subparser only once a subcommand was parsed",
    ("_machine.py", "sched_getaffinity"): "a platform feature (Linux only), not an object of ours",
    ("backends/_retry.py", "status_code"): "openai exceptions: only APIStatusError carries a status",
    ("backends/_retry.py", "response"): "openai / httpx exceptions: only some carry the HTTP response",
    ("backends/_retry.py", "headers"): "an httpx response's headers, when there is a response",
    ("backends/_retry.py", "body"): "openai exceptions: the provider's error body, when it sent one",
    ("backends/_retry.py", "message"): "openai exceptions carry a message; others fall back to str(exc)",
    ("backends/_openai_embedder.py", "body"): "openai exceptions: the provider's error body, when it sent one",
    ("backends/_openai_embedder.py", "response"): "openai exceptions: only some carry the HTTP response",
    ("backends/_openai_embedder.py", "text"): "an httpx response's text, when there is a response",
    ("backends/_openai_stream.py", "choices"): "a non-streamed response that may be a malformed body without choices",
    ("backends/_openai_stream.py", "content"): "a choice's message may carry no content (a refusal, a tool call)",
    ("backends/_openai_stream.py", "usage"): "servers other than OpenAI may send no usage",
    ("backends/_openai_stream.py", "model"): "the model a server names, when it names one",
    ("backends/_openai_stream.py", "system_fingerprint"): "sent by some servers only",
    ("backends/_openai_stream.py", "prompt_tokens"): "usage as the client parsed it, fields optional",
    ("backends/_openai_stream.py", "completion_tokens"): "usage as the client parsed it, fields optional",
    ("reports/_figure_check.py", "get_sizes"): "matplotlib collections of sized markers have get_sizes, others do not, and "
                                               "matplotlib has no public base class for the ones that do",
    ("testing/_rollup_machine.py", "store"): "a hypothesis state machine's invariants run before its initialize rule",
}

# Probes in the packages other branches are reworking (commands/, experiments/, reports/, runs/, systems/):
# the lead removes each entry with the probe, or moves it to ALLOWED with its reason.
LEAD_SWEEP: set[tuple[str, str]] = set()


def capability_probes(root: Path) -> list[tuple[str, int, str]]:
    """``(path relative to root, line, attribute)`` of every getattr-with-default / hasattr with a literal name."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            probing = (node.func.id == "getattr" and len(node.args) == 3) or \
                (node.func.id == "hasattr" and len(node.args) == 2)
            name = node.args[1] if probing else None
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                found.append((path.relative_to(root).as_posix(), node.lineno, name.value))
    return found


def test_no_capability_probing():
    unlisted = [f"lyra_lab/{path}:{line}: probes {name!r}" for path, line, name in capability_probes(ROOT)
                if (path, name) not in ALLOWED and (path, name) not in LEAD_SWEEP]
    assert not unlisted, ("declare the capability in the component's Protocol instead of probing for it "
                          "(or list a probe of a foreign object in ALLOWED, with why):\n" + "\n".join(unlisted))


def test_every_listed_probe_is_still_there():
    # a stale entry would let a new probe of the same name in through the back door
    present = {(path, name) for path, _, name in capability_probes(ROOT)}
    assert not (set(ALLOWED) | LEAD_SWEEP) - present


def test_a_planted_probe_is_caught(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text(
        "def f(counter, chunker, name):\n"
        "    if getattr(counter, 'line_additive', False):\n"  # a probe
        "        return hasattr(chunker, 'budget')\n"  # a probe
        "    return getattr(counter, 'encoding'), getattr(counter, name, None)\n",  # neither
        encoding="utf-8")
    assert capability_probes(pkg) == [("mod.py", 2, "line_additive"), ("mod.py", 3, "budget")]
