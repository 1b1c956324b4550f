"""The pure simulation: state, worldgen, actions, systems. No I/O, no wall clock, no threads."""
