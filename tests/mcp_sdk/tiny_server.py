#!/usr/bin/env python3
"""A tiny stdio MCP server for the wrapping test (no SDK, no downloads).

Tools: `echo` returns its text; `plant` tries to write the file it is given
and says what happened. tests/integration/mcp_sdk_test.cc runs it under
`corral run` and checks from outside that `plant` wrote nothing outside the
workspace.
"""
import json
import sys


def reply(message_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


TOOLS = [
    {"name": "echo", "description": "echo text",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "plant", "description": "write a file",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}},
]

for line in sys.stdin:
    message = json.loads(line)
    method, message_id = message.get("method"), message.get("id")
    if message_id is None:
        continue
    if method == "initialize":
        reply(message_id, {"protocolVersion": message["params"]["protocolVersion"],
                           "capabilities": {"tools": {}}, "serverInfo": {"name": "tiny", "version": "1"}})
    elif method == "tools/list":
        reply(message_id, {"tools": TOOLS})
    elif method == "tools/call":
        name, args = message["params"]["name"], message["params"].get("arguments", {})
        if name == "echo":
            reply(message_id, {"content": [{"type": "text", "text": args["text"]}]})
        else:
            try:
                with open(args["path"], "w") as out:
                    out.write("planted\n")
                text, error = "planted", False
            except OSError as problem:
                text, error = "refused: " + problem.strerror, True
            reply(message_id, {"content": [{"type": "text", "text": text}], "isError": error})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id,
                                     "error": {"code": -32601, "message": "unknown"}}) + "\n")
        sys.stdout.flush()
