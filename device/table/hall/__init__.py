"""The table as one table of a tournament hall: ``[hall]`` (docs/hall.md, "Tables publish").

Nothing here is imported unless ``[hall]`` is configured; paho is imported
only when a publisher is made.
"""
