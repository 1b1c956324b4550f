"""Running matches: the input log that drives a world, its store, its agents."""
