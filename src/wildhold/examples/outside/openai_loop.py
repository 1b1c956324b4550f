"""A generic agent loop over any OpenAI-compatible chat-completions endpoint: the world's MCP tools handed to the
model as functions, each call it asks for made over MCP, its result sent back, until it stops asking or the steps
run out. Plain Python over the official MCP and OpenAI SDKs, no Wildhold import.

The endpoint and key come from the OpenAI SDK's own variables (OPENAI_BASE_URL, OPENAI_API_KEY): under
`wildhold tasks run --proxy` they point at the metering proxy, so every call is priced into the attempt's archive.

    wildhold tasks run --suite lite --agent-cmd 'python examples/outside/openai_loop.py --model gpt-4.1-mini' \\
        --proxy examples/proxy/proxy.yaml --harness openai-loop --model gpt-4.1-mini --repeats 1 --out runs/loop
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os

import httpx2
import openai
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

SYSTEM = ("You control one character in Wildhold, a persistent world, through the tools given. Your objective: "
          "{objective}\nLook with observe, act with the action tools (each starts an operation; wait_operation waits "
          "for it), and stop calling tools when the objective is done.")


async def main(model: str, max_steps: int) -> None:
    url, token, objective = (os.environ[k] for k in ("WILDHOLD_MCP_URL", "WILDHOLD_TOKEN", "WILDHOLD_OBJECTIVE"))
    async with openai.AsyncOpenAI() as llm, httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60.0, trust_env=False) as http:
        async with Client(streamable_http_client(url, http_client=http)) as world:
            listed = (await world.list_tools()).tools
            tools = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                       "parameters": t.input_schema}}
                     for t in listed if t.name != "register"]
            messages: list[dict] = [{"role": "system", "content": SYSTEM.format(objective=objective)},
                                    {"role": "user", "content": "Begin."}]
            for _ in range(max_steps):
                reply = (await llm.chat.completions.create(model=model, messages=messages, tools=tools)).choices[0].message
                messages.append(reply.model_dump(exclude_none=True))
                if not reply.tool_calls:
                    print(reply.content, flush=True)
                    return
                for call in reply.tool_calls:
                    try:
                        args = json.loads(call.function.arguments or "{}")
                    except json.JSONDecodeError:
                        args = {}
                    result = await world.call_tool(call.function.name, args)
                    text = "\n".join(getattr(c, "text", "") for c in result.content)
                    if not result.is_error and result.structured_content is not None:
                        text = json.dumps(result.structured_content)
                    print(f"{call.function.name} {json.dumps(args)} -> {'error' if result.is_error else 'ok'}", flush=True)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="the model name the endpoint serves")
    parser.add_argument("--max-steps", type=int, default=60, help="model calls at most")
    options = parser.parse_args()
    asyncio.run(main(options.model, options.max_steps))
