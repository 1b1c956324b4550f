"""Which configuration an agent of an archive is: its full arm identity from the manifest (provider, model,
sampling, scaffold caps and budget, cassette digest, harness), never its display name, and a short key of it."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def identity_key(ident: dict[str, Any]) -> str:
    """The configuration's key: a digest of its canonical identity."""
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]


def agent_identity(manifest: dict[str, Any], agent: dict[str, Any]) -> dict[str, Any]:
    """The identity an archive records for one of its agents (`arm_identities`, written by `wildhold run`); for an
    archive without it, what its roster and price table say: harness, model or policy, provider (and the agent's
    name only when nothing else tells configurations apart)."""
    recorded = manifest.get("arm_identities", {}).get(agent.get("name"))
    if recorded is not None:
        return dict(recorded)
    change = manifest.get("fork", {}).get("agents", {}).get(agent.get("name"))
    if change is not None:  # a fork's agent that another policy took over (or left absent) from the fork's tick
        return {"harness": "direct", "provider": "scripted", "policy": change["to"],
                "fork": {"tick": manifest["fork"]["tick"], "from": change["from"]}}
    ident: dict[str, Any] = {"harness": agent.get("harness", "direct")}
    if agent.get("policy"):
        ident.update(provider="scripted", policy=agent["policy"])
    price = manifest.get("price_table", {}).get(agent.get("name"))
    if price:
        ident["provider"] = price.get("provider")
        ident["price"] = {k: price[k] for k in ("input_per_mtok", "output_per_mtok") if k in price}
    if agent.get("model") and not agent.get("policy"):
        ident["model"] = agent["model"]
    if "model" not in ident and "policy" not in ident:
        ident["name"] = agent.get("name")
    return ident


def label(ident: dict[str, Any]) -> str:
    """A readable name for a configuration: its model, else its policy, else the agent's name."""
    return str(ident.get("model") or ident.get("policy") or ident.get("name") or "?")


def labels(identities: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Readable labels by key, unique: a label two configurations share is followed by each one's key."""
    base = {key: label(ident) for key, ident in identities.items()}
    shared = {lab for lab in base.values() if list(base.values()).count(lab) > 1}
    return {key: f"{lab} #{key[:8]}" if lab in shared else lab for key, lab in base.items()}
