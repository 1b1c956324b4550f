"""The task suite: tasks as data, evaluators folding an attempt's events, attempts as short matches, the suite's table."""
