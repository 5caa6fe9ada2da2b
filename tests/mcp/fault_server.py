"""A misbehaving MCP server over stdio for the fault tests of tests/mcp_client.rs (Python
standard library only). Tools: `ok` (answers with its process id), `fail` (an `isError`
result), `die` (exits mid-call), `hang` (never answers), `garbage` (writes a line that is not
JSON-RPC, then nothing). With the argument `exit-at-start` it writes to stderr and exits
before initializing."""
import json
import os
import sys
import time

if len(sys.argv) > 1 and sys.argv[1] == "exit-at-start":
    sys.stderr.write("fault server: refusing to start (configured to)\n")
    sys.stderr.flush()
    sys.exit(3)

TOOLS = [
    {"name": name, "description": f"The {name} fault", "inputSchema": {"type": "object", "properties": {}}}
    for name in ["ok", "fail", "die", "hang", "garbage"]
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


sys.stderr.write(f"fault server {os.getpid()} started\n")
sys.stderr.flush()
for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    method, rid = request.get("method"), request.get("id")
    if method == "initialize":
        version = request["params"].get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fault-server", "version": "1.0.0"},
        }})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        name = request["params"]["name"]
        if name == "ok":
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": f"pid {os.getpid()}"}]}})
        elif name == "fail":
            send({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "the database is down"}], "isError": True}})
        elif name == "die":
            os._exit(1)
        elif name == "hang":
            time.sleep(3600)
        elif name == "garbage":
            sys.stdout.write("this is not JSON-RPC {{{\n")
            sys.stdout.flush()
    elif rid is not None and method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
