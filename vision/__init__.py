"""From camera frames to board readings that say how sure they are."""
