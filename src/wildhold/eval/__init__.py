"""Evaluation: pure functions over match archives."""
