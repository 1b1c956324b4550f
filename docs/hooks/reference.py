"""MkDocs hook: adds the reference pages generated from the code (wildhold.handbook.reference) to the site as it
is built, so they are never hand-copied and never stale."""

from __future__ import annotations

from typing import Any

from mkdocs.structure.files import File, Files


def on_files(files: Files, config: Any) -> Files:
    import typer

    from wildhold.cli import app
    from wildhold.handbook.reference import pages

    for path, text in pages(typer.main.get_command(app)).items():
        files.append(File.generated(config, path, content=text))
    return files
