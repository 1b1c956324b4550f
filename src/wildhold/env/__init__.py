"""Gymnasium and PettingZoo faces over the same rules (the optional `rl` extra): importing this package registers
`Wildhold/<category>.<task>-v<N>` for every task of the suite and `Wildhold/<Scenario>-v1` for every scenario, and
gives PettingZoo's two factories, `parallel_env` and `env` (the AEC form), as a PettingZoo environment module does.

    import gymnasium as gym, wildhold.env
    env = gym.make("Wildhold/exploration.gather-wood-v1")
    agents = wildhold.env.parallel_env("famine")
"""

from __future__ import annotations

from typing import Any

from wildhold.content import default_content
from wildhold.extras import require
from wildhold.tasks.catalog import default_suite

gym = require("rl", "wildhold.env")  # without the extra, importing this package says which one to install

NAMESPACE = "Wildhold"
SCENARIO_VERSION = 1
ENTRY = "wildhold.env.gym_env:WildholdEnv"

FACTORIES = {"parallel_env": "parallel_env", "env": "aec_env"}  # PettingZoo's names -> wildhold.env.parallel's


def __getattr__(name: str) -> Any:
    """`parallel_env` and `env` (the AEC form) of `wildhold.env.parallel`, imported (with PettingZoo) when first asked."""
    if name in FACTORIES:
        from wildhold.env import parallel

        return getattr(parallel, FACTORIES[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def task_env_id(task_id: str) -> str:
    """`exploration/gather-wood-v1` -> `Wildhold/exploration.gather-wood-v1` (the task's version is the env's)."""
    category, _, rest = task_id.partition("/")
    return f"{NAMESPACE}/{category}.{rest}"


def scenario_env_id(scenario: str) -> str:
    return f"{NAMESPACE}/{scenario.capitalize()}-v{SCENARIO_VERSION}"


def task_ids() -> list[str]:
    return [task_env_id(t) for t in default_suite().tasks]


def scenario_ids() -> list[str]:
    return [scenario_env_id(s) for s in sorted(default_content().scenarios)]


def lite_ids() -> list[str]:
    return [task_env_id(t) for t in default_suite().lite]


def register_envs() -> list[str]:
    """Register every task and scenario id (again is harmless); the ids registered."""
    ids = []
    for task in default_suite().tasks:
        env_id = task_env_id(task)
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=ENTRY, kwargs={"task": task})
        ids.append(env_id)
    for scenario in sorted(default_content().scenarios):
        env_id = scenario_env_id(scenario)
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=ENTRY, kwargs={"scenario": scenario})
        ids.append(env_id)
    return ids


register_envs()
