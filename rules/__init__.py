"""Pure Mastermind game logic: codes, scoring, variants, judgement, clock.

No I/O beyond reading the package's own data files, and no hardware.
"""
