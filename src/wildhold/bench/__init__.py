"""Benchmarks: engine throughput, world generation and memory, measured against crafter."""
