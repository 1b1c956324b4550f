"""Agent-written programs: Python that runs in the world on a character's behalf between model calls.

`api` is the program API (generated from the action registry), `sandbox` drives the Monty
interpreter, `runner` is the separate process that owns it, `client` talks to that process,
`host` schedules programs inside a served match, and `replay` re-simulates recorded runs.
"""
