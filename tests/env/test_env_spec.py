"""env.yaml is checked at load: a source the action table does not know, or a filter no entry passes, is refused
with the file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from wildhold.content import default_content
from wildhold.content.loader import ContentError
from wildhold.env.spec import ENV_FILE, load_env_spec


@pytest.mark.parametrize(("old", "new", "message"), [
    ("craft: {recipe: {content: recipes, where: {kind: craft}}}", "craft: {recipe: {content: recipes, where: {kind: bake}}}",
     "no entries of content table 'recipes' match"),
    ("    seed: carried\n", "    seed: pocket\n", "unknown source 'pocket'"),
    ("    ticks: {values: [1, 10, 60]}\n", "    ticks: {values: []}\n", "not empty"),
])
def test_a_bad_argument_source_is_refused_naming_its_key(tmp_path: Path, old: str, new: str, message: str):
    text = ENV_FILE.read_text()
    assert old in text
    broken = tmp_path / "env.yaml"
    broken.write_text(text.replace(old, new))
    with pytest.raises(ContentError, match=message) as info:
        load_env_spec(broken, default_content())
    assert "env.yaml" in str(info.value)
