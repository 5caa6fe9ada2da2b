"""The real MCP client of the MCP server tests (tests/mcp_server*.rs): the PyPI `mcp` package
(pinned in scripts/mcp/requirements.txt, installed by scripts/mcp-peers.sh).

    python client.py '<spec as JSON>'

The spec says where the server is and what to do:

    {"stdio": {"command": "...", "args": [...]}}  or  {"http": {"url": "...", "token": "..."}},
    "mode": "auto" | "legacy"  (auto: the 2026-07-28 discovery first; legacy: initialize),
    "ops": [{"op": "list"}, {"op": "call", "name": "...", "arguments": {...}}, ...]

It prints one JSON document on stdout: {"protocol": ..., "results": [...]} with one entry per
op (a tool list, a call's content texts / structuredContent / isError, or a JSON-RPC error), or
{"refused": {"status": <HTTP status or null>, "error": "..."}} when the server refused the
connection itself.
"""

import asyncio
import json
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError


def http_status(error):
    """The HTTP status of the first HTTP error in an exception (group) chain, if any."""
    seen = set()
    stack = [error]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        response = getattr(e, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            return status
        stack.extend(getattr(e, "exceptions", ()) or ())
        stack.append(e.__cause__)
        stack.append(e.__context__)
    return None


def text_of(error):
    parts = []
    stack = [error]
    while stack:
        e = stack.pop()
        if e is None:
            continue
        parts.append(f"{type(e).__name__}: {e}")
        stack.extend(getattr(e, "exceptions", ()) or ())
        stack.append(e.__cause__)
    return " | ".join(parts)


async def run(spec):
    statuses = []
    if "stdio" in spec:
        server = StdioServerParameters(command=spec["stdio"]["command"], args=spec["stdio"].get("args", []))
        http_client = None
    else:
        headers = {}
        if spec["http"].get("token") is not None:
            headers["Authorization"] = f"Bearer {spec['http']['token']}"
        http_client = create_mcp_http_client(headers=headers)

        async def record(response):
            statuses.append(response.status_code)

        http_client.event_hooks["response"].append(record)
        server = streamable_http_client(spec["http"]["url"], http_client=http_client)
    results = []
    try:
        async with Client(server, mode=spec.get("mode", "auto"), cache=None) as client:
            for op in spec["ops"]:
                # One op's JSON-RPC error (a refusal included) is its result.
                if op["op"] == "list":
                    listed = await client.list_tools()
                    results.append(
                        {
                            "tools": [
                                {
                                    "name": t.name,
                                    "description": t.description,
                                    "inputSchema": t.input_schema,
                                    "outputSchema": t.output_schema,
                                }
                                for t in listed.tools
                            ]
                        }
                    )
                elif op["op"] == "call":
                    try:
                        result = await client.call_tool(op["name"], op.get("arguments", {}))
                    except MCPError as e:
                        results.append({"jsonrpcError": {"code": e.error.code, "message": e.error.message}})
                        continue
                    results.append(
                        {
                            "isError": bool(result.is_error),
                            "texts": [c.text for c in result.content if getattr(c, "type", None) == "text"],
                            "structured": result.structured_content,
                        }
                    )
                else:
                    raise ValueError(f"unknown op {op['op']!r}")
            protocol = client.protocol_version
    except Exception as e:  # noqa: BLE001 - the refusal is the result
        if results:
            raise
        return {"refused": {"status": http_status(e), "error": text_of(e)}, "statuses": statuses}
    finally:
        if http_client is not None:
            await http_client.aclose()
    return {"protocol": protocol, "results": results, "statuses": statuses}


def main():
    spec = json.loads(sys.argv[1])
    out = asyncio.run(run(spec))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
