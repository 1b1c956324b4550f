"""The registered metrics, one module per area. Importing this package registers every fold below
in `wildhold.eval.fold.FOLDS`, in this order."""

from wildhold.eval.folds import activity, dungeon, exploration, incidents, pacing, production, society, survival, trial, wash, wealth  # noqa: F401
