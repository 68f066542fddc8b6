"""Data files shipped with the rules core (variant presets)."""
