"""A fake MCP memory server for fault injection (never a feature): stores turns, and searches
as argv[1] says: ``ok`` (substring match), ``hang`` (never answers), ``garbage`` (text that is not
JSON), ``crash`` (the process dies), ``refuse`` (store answers a tool error); ``no_start`` never
answers initialize.  It spawns a sleeping child, so a test can see the whole process group go."""

import json
import os
import subprocess
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

MODE = sys.argv[1]
if MODE == "no_start":
    time.sleep(600)
CHILD = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
TURNS = []
server = MCPServer("fake-memory")


@server.tool(structured_output=False)
def store(turn_id: str, text: str) -> str:
    if MODE == "refuse":
        raise ToolError("the store is full")
    TURNS.append({"id": turn_id, "text": text})
    return "ok"


@server.tool(structured_output=False)
def search(query: str) -> str:
    if MODE == "hang":
        time.sleep(600)
    if MODE == "crash":
        os._exit(3)
    if MODE == "garbage":
        return "<html>not json</html>"
    return json.dumps({"items": [t for t in TURNS if query.lower() in t["text"].lower()]})


server.run("stdio")
