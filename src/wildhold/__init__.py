"""Wildhold: a persistent multi-agent survival and settlement world for evaluating agents."""

__version__ = "0.1.0"
