"""pegwatch.hub: the tournament hall.

The pure core: the tournament (hub.toml), its results, the standings with
the seeds' tie-breaks, and the pairings of the next round. It uses nothing
of ours but :mod:`pegwatch.rules`; the broker, the store and the page are
shells built on top of it.
"""
