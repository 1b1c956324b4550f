"""Agents that play Wildhold: scripted baselines (and later the LLM scaffold)."""
