"""The stand-in model: a scripted policy behind an OpenAI-compatible chat-completions endpoint on 127.0.0.1.

Offline examples and tests drive the real provider path with it (the `openai` SDK over HTTP, native tool calls,
provider-reported usage, the pinned price, spend records and curves) with no network and no key. It is not a
language model, and says so: its model is named `wildhold-standin/<policy>` and every answer's text begins
"Stand-in". Each turn it reads the transcript's last tool results: an observation goes to the scripted policy,
whose action it calls; an operation still running is waited on, with a fresh look after; anything else gets a
look (`observe` whole, as the policy reads it, its memory only since the policy's map when it holds one). Usage is
counted at four characters a token over what the request sent (messages and tools) and what the answer holds, so
the tokens grow with the transcript and the tool surface as a model's would. Answers are never streamed.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from wildhold.agents.base import AgentView, Policy
from wildhold.agents.scripted import POLICIES, make_policy
from wildhold.content import Content, default_content
from wildhold.server.surface import action_tools

STANDIN = "wildhold-standin"
DEFAULT_POLICY = "quester"
CHARS_PER_TOKEN = 4
WAIT_S = 10.0  # how long one wait_operation call waits at most


def standin_model(policy: str = DEFAULT_POLICY) -> str:
    """The model name of the stand-in driven by `policy`."""
    return f"{STANDIN}/{policy}"


def tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _last_turn(messages: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any], str]]:
    """The last turn's tool calls with their results: (name, arguments, result text), in order. Pictures a tool
    returned (a user message after the results) are passed over."""
    i = len(messages) - 1
    while i >= 0 and messages[i].get("role") == "user" and isinstance(messages[i].get("content"), list):
        i -= 1
    results = []
    while i >= 0 and messages[i].get("role") == "tool":
        results.insert(0, messages[i])
        i -= 1
    if i < 0 or messages[i].get("role") != "assistant":
        return []
    calls = {}
    for c in messages[i].get("tool_calls") or []:
        try:
            args = json.loads(c["function"].get("arguments") or "{}")
        except ValueError:
            args = {}
        calls[c.get("id")] = (c["function"]["name"], args if isinstance(args, dict) else {})
    return [(*calls.get(r.get("tool_call_id"), ("", {})), r.get("content") if isinstance(r.get("content"), str) else "")
            for r in results]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


@dataclass
class Standin:
    """The scripted policies the stand-in plays, one per policy name, each keeping its own map per character."""

    content: Content
    policies: dict[str, Policy] = field(default_factory=dict)
    ids: Any = field(default_factory=itertools.count)

    def policy(self, name: str) -> Policy:
        if name not in self.policies:
            self.policies[name] = make_policy(name, self.content)
        return self.policies[name]

    def calls(self, policy_name: str, messages: list[dict[str, Any]], tools: set[str]) -> list[tuple[str, dict[str, Any]]]:
        """The tool calls of the next turn, from the transcript so far."""
        policy = self.policy(policy_name)
        turn = _last_turn(messages)
        looked = [_json(text) for name, _, text in turn if name == "observe"]
        obs = looked[-1] if looked and isinstance(looked[-1], dict) and "self" in looked[-1] else None
        if obs is None:
            for name, _, text in reversed(turn):
                op = _json(text)
                if isinstance(op, dict) and op.get("status") == "running" and op.get("op"):
                    return [("wait_operation", {"op": op["op"], "timeout_s": WAIT_S}), self.look(policy, None)]
                if text.startswith("busy:"):
                    return [("wait_operation", {"timeout_s": 1.0}), self.look(policy, None)]
            return [self.look(policy, self._agent(messages))]
        me = obs["self"]
        if me.get("operation"):
            return [("wait_operation", {"op": me["operation"]["op"], "timeout_s": WAIT_S}), self.look(policy, me["id"])]
        since = getattr(policy, "memory_since", None)
        if obs.get("memory_since") is not None and (since is None or since(me["id"]) != obs["memory_since"]):
            return [self.look(policy, None)]  # its map is not the one these changes lay over (a restart): look whole
        actions = tuple(sorted(tools & set(action_tools())))
        view = AgentView(me["id"], obs["time"]["tick"], 0, lambda _since, o=obs: o, lambda o=obs: o["self"], _obs=obs,
                         actions=actions)
        return [policy.decide(view) or ("wait", {"ticks": 1})]

    @staticmethod
    def look(policy: Policy, agent: str | None) -> tuple[str, dict[str, Any]]:
        since = getattr(policy, "memory_since", None)
        tick = since(agent) if since is not None and agent is not None else None
        return "observe", ({"memory": "full"} if tick is None else {"memory": "full", "memory_since": tick})

    @staticmethod
    def _agent(messages: list[dict[str, Any]]) -> str | None:
        """The character of the transcript's last observation in this session, if any."""
        for m in reversed(messages):
            if m.get("role") == "tool" and isinstance(m.get("content"), str) and m["content"].startswith("{"):
                obs = _json(m["content"])
                if isinstance(obs, dict) and isinstance(obs.get("self"), dict) and "id" in obs["self"]:
                    return obs["self"]["id"]
        return None

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat completion for a request body (the model already checked)."""
        policy_name = body["model"].split("/", 1)[1]
        tools = {t["function"]["name"] for t in body.get("tools") or [] if t.get("type") == "function"}
        calls = [(name, args) for name, args in self.calls(policy_name, body["messages"], tools)]
        n = next(self.ids)
        text = f"Stand-in (the scripted policy {policy_name}, not a language model): " + \
            ", then ".join(name for name, _ in calls) + "."
        message = {"role": "assistant", "content": text,
                   "tool_calls": [{"id": f"call_{n}_{i}", "type": "function",
                                   "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}
                                  for i, (name, args) in enumerate(calls)]}
        prompt = tokens(json.dumps(body.get("messages"), sort_keys=True) + json.dumps(body.get("tools"), sort_keys=True))
        completion = tokens(json.dumps(message, sort_keys=True))
        return {"id": f"standin-{n}", "object": "chat.completion", "created": int(time.time()), "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


def _error(status: int, message: str, code: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}},
                        status_code=status)


def standin_app(content: Content | None = None) -> Starlette:
    """The stand-in's endpoints: POST /v1/chat/completions and GET /v1/models, as an OpenAI-compatible server has."""
    standin = Standin(content or default_content())
    models = [standin_model(name) for name in sorted(POLICIES)]

    async def chat(request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return _error(400, "The request body is not JSON.", "bad_request")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "A chat completion needs a JSON object with messages.", "bad_request")
        if body.get("model") not in models:
            return _error(404, f"The model {body.get('model')!r} is not served here; this stand-in serves "
                               f"{', '.join(models)} (scripted policies, not language models).", "model_not_found")
        if body.get("stream"):
            return _error(400, "The stand-in does not stream; ask without stream.", "unsupported")
        return JSONResponse(standin.complete(body))

    async def listing(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": m, "object": "model", "created": 0, "owned_by": STANDIN}
                                                        for m in models]})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/v1/models", listing, methods=["GET"])])
