"""Drives `kubectl diag mcp` with MCP's official Python client (PyPI `mcp`).

Usage: client.py SERVER [ARGS...] < calls.json > answers.json

`calls.json` is a list of {"tool": NAME, "args": {...}} or {"resource": URI}.
The answer holds what the server said at the handshake, its tools and
resources, and for each call the result as the client sees it: whether it is
an error, its text, its structured content, or the protocol error it raised.
Environment variables named in DIAG_MCP_PASS_ENV (comma separated) are passed
to the server: the client passes only HOME, PATH and a few others itself.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError


async def main(command: str, args: list[str], calls: list[dict]) -> dict:
    env = {k: os.environ[k] for k in os.environ.get("DIAG_MCP_PASS_ENV", "").split(",") if k in os.environ}
    params = StdioServerParameters(command=command, args=args, env=env)
    out: dict = {"results": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["server"] = {
                "name": init.server_info.name,
                "version": init.server_info.version,
                "protocol": init.protocol_version,
                "instructions": init.instructions,
                "tools": init.capabilities.tools is not None,
                "resources": init.capabilities.resources is not None,
            }
            tools = await session.list_tools()
            out["tools"] = {
                t.name: {
                    "description": t.description,
                    "properties": sorted(t.input_schema.get("properties", {})),
                    "read_only": bool(t.annotations and t.annotations.read_only_hint),
                }
                for t in tools.tools
            }
            listed = await session.list_resources()
            out["resources"] = [{"uri": str(r.uri), "mime": r.mime_type} for r in listed.resources]
            for call in calls:
                if "resource" in call:
                    try:
                        doc = await session.read_resource(call["resource"])
                        out["results"].append({"resource": call["resource"], "text": doc.contents[0].text})
                    except MCPError as e:
                        out["results"].append({"resource": call["resource"], "protocol_error": e.code, "message": e.message})
                    continue
                try:
                    r = await session.call_tool(call["tool"], call.get("args", {}), read_timeout_seconds=120)
                    out["results"].append({
                        "tool": call["tool"],
                        "is_error": bool(r.is_error),
                        "text": "\n".join(c.text for c in r.content if getattr(c, "text", None) is not None),
                        "structured": r.structured_content,
                    })
                except MCPError as e:
                    out["results"].append({"tool": call["tool"], "protocol_error": e.code, "message": e.message})
    return out


if __name__ == "__main__":
    calls = json.load(sys.stdin)
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2:], calls))))
