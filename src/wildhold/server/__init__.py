"""The faces of a served match: the HTTP API, the MCP server and the briefing, all over one host."""
