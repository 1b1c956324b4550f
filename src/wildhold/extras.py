"""Optional dependencies: the provider SDKs, pyarrow, the RL libraries and the rest are extras, so a plain install
stays small.

A feature that needs one calls `require` before importing the module that uses it; without the package the user
gets one sentence naming the extra to install, not a traceback. A script run by hand calls `require_script`.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# extra -> (the modules to import, the first returned; what the user knows them as)
EXTRAS = {
    "openai": (("openai",), "the OpenAI SDK"),
    "anthropic": (("anthropic",), "the Anthropic SDK"),
    "google": (("google.genai",), "the Google GenAI SDK"),
    "parquet": (("pyarrow",), "pyarrow"),
    "rl": (("gymnasium", "pettingzoo"), "Gymnasium and PettingZoo"),
    "ray": (("ray",), "Ray"),
    "inspect": (("inspect_ai",), "Inspect AI"),
    "analysis": (("pandas", "pyarrow"), "pandas and pyarrow"),
    "docs": (("mkdocs", "material"), "MkDocs and its Material theme"),
}


class MissingExtra(ImportError):
    """A feature was asked for whose optional dependency is not installed; the message names the extra."""


def require(extra: str, feature: str) -> ModuleType:
    """Import the modules behind `extra` and return the first, or raise MissingExtra saying `feature` needs them."""
    modules, label = EXTRAS[extra]
    try:
        return [importlib.import_module(module) for module in modules][0]
    except ImportError as exc:
        raise MissingExtra(f"{feature} needs {label}: pip install 'wildhold[{extra}]'", name=exc.name) from exc


def require_script(extra: str, feature: str) -> ModuleType:
    """`require` for a script run by hand: without the extra it ends with its one sentence, not a traceback."""
    try:
        return require(extra, feature)
    except MissingExtra as exc:
        raise SystemExit(f"error: {exc}") from None
