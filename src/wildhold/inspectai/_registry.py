"""The module Inspect loads through the `inspect_ai` entry point: importing it registers wildhold/tasks,
wildhold/lite, wildhold/season, wildhold/famine and wildhold/frontier."""

from wildhold.inspectai.tasks import famine, frontier, lite, season, task_suite

__all__ = ["famine", "frontier", "lite", "season", "task_suite"]
