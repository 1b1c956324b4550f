"""The rules as data: content files loaded into frozen models, cross-checked at load."""

from wildhold.content.loader import Content, ContentError, default_content, load_content

__all__ = ["Content", "ContentError", "default_content", "load_content"]
