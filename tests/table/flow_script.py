"""An event list fed to a match flow the way the table journals it (verdicts included)."""

from __future__ import annotations

from pegwatch.rules.flow import MatchFlow

S = 1_000_000_000


class FlowScript:
    def __init__(self, players=("Ann", "Bob")):
        self.flow = MatchFlow(players)
        self.t = 10 * S
        self.events: list[tuple[str, dict, int]] = []
        self.lines: list[str] = []
        self.verdicts: list[dict] = []

    def ev(self, kind, dt=S, **payload):
        self.t += dt
        self.events.append((kind, payload, self.t))
        out = self.flow.apply(kind, payload, self.t)
        self.lines.extend(out.lines)
        # As the table journals them: the verdicts' JSON.
        journaled = [v.to_json() for v in out.verdicts]
        self.verdicts.extend(journaled)
        self.events.extend(("verdict", v, self.t) for v in journaled)
        return out
