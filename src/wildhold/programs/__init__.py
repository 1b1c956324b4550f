"""Agent-written programs: Python that runs in the world on a character's behalf between model calls.

`api` is the program API (generated from the action registry and the reads the service hands
in), `sandbox` drives the Monty interpreter, `runner` is the separate process that owns it, `client`
talks to that process, and `replay` re-simulates recorded runs. Programs inside a served match are
scheduled by `wildhold.service.program_host`, above this package.
"""
