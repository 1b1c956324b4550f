"""The module Inspect loads through the `inspect_ai` entry point: importing it registers wildhold/season,
wildhold/famine, wildhold/frontier and wildhold/lite."""

from wildhold.inspectai.tasks import famine, frontier, lite, season

__all__ = ["famine", "frontier", "lite", "season"]
