"""Optional dependencies: the provider SDKs, pyarrow and the RL libraries are extras, so a plain install stays small.

A feature that needs one calls `require` before importing the module that uses it; without the
package the user gets one sentence naming the extra to install, not a traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# extra -> (module to import, what the user knows it as)
EXTRAS = {
    "openai": ("openai", "the OpenAI SDK"),
    "anthropic": ("anthropic", "the Anthropic SDK"),
    "google": ("google.genai", "the Google GenAI SDK"),
    "parquet": ("pyarrow", "pyarrow"),
    "rl": ("pettingzoo", "Gymnasium and PettingZoo"),
    "ray": ("ray", "Ray"),
    "inspect": ("inspect_ai", "Inspect AI"),
}


class MissingExtra(ImportError):
    """A feature was asked for whose optional dependency is not installed; the message names the extra."""


def require(extra: str, feature: str) -> ModuleType:
    """Import the module behind `extra`, or raise MissingExtra saying `feature` needs it."""
    module, label = EXTRAS[extra]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(f"{feature} needs {label}: pip install 'wildhold[{extra}]'", name=module) from exc
