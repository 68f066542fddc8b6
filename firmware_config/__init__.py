"""The table's shipped configuration and the board profiles, as package data.

``pegwatch.toml`` is the table configuration the installer copies to
``/etc/pegwatch``; ``boards/*.toml`` are the board profiles that
:func:`pegwatch.vision.profile.load_profile` finds by name. Both are read
with :mod:`importlib.resources`, so a plain wheel carries them.
"""
