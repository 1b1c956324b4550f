"""Wildhold as Inspect AI tasks (the optional `inspect` extra): `inspect eval wildhold/season` (also famine,
frontier, lite) puts any model Inspect supports into a served Wildhold world over MCP and scores the archive."""
