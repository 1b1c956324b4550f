"""The reference agent scaffold: turns a stateless model API into a persistent actor over the world's MCP tools."""
