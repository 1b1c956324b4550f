"""Wildhold as Inspect AI tasks (the optional `inspect` extra): `inspect eval wildhold/tasks -T suite=lite` plays
the task suite as `wildhold tasks run` does (also wildhold/lite), and `inspect eval wildhold/season` (famine,
frontier) puts any model Inspect supports into a served Wildhold match over MCP and scores the archive."""
