"""Documents generated from content and the action registry, never written by hand."""

from wildhold.docs.rules import rules_digest, rules_json, rules_markdown

__all__ = ["rules_digest", "rules_json", "rules_markdown"]
