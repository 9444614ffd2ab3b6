"""`make soak`: the whole bundle under a seeded random fault schedule, with invariants."""
