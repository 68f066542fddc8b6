"""What a peg read confidently, but not surely, may still be.

A hole is read as a colour from a posterior of the colour model's
``min_posterior`` (0.99) up. That is sure enough to count the hole as read,
not to accuse on: one correct row on issue 14's hard set was accused on an
orange peg read yellow at 0.994 under a warm lamp. So a peg read below
:data:`SURE_POSTERIOR` keeps, as its candidates, the colours that make up
that much of its posterior, best first. Its reading stays the colour (the
hole is confident, and a clear verdict may rest on it), and
:attr:`~pegwatch.vision.reading.HoleReading.possible` names them all, so a
row is proved mis-marked only when it is mis-marked whichever they hold,
and cleared only when it is right whichever they hold.

A bare hole is no candidate of a peg in a game without blanks: there a
marked row with a bare hole is an incomplete move, which the flow reports
on its own and whose marks are never judged, so the rules already make it
far less likely than the colour model's even odds say. (Black read beside
a bare hole's posterior is most of what the rule would cost otherwise.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pegwatch.rules.codes import EMPTY
from pegwatch.vision.reading import HoleReading

__all__ = ["SURE_POSTERIOR", "could_be", "peg_reading", "secret_posterior"]

SURE_POSTERIOR = 0.999
"""The share of a peg's posterior its candidates must hold."""


def could_be(read: str, candidates: Sequence[tuple[str, float]], *, blanks: bool) -> tuple[tuple[str, float], ...]:
    """The colours a peg read as ``read`` may still be, ``read`` first and then best
    first, with their posteriors: ``candidates`` are the classes the colour
    model has not ruled out, with their posteriors over every class (the
    rest hold too little to name). Where there are no ``blanks`` a bare
    hole's share is taken out and the others renormalised. ``()`` when
    ``read`` alone holds :data:`SURE_POSTERIOR`, or is not among them."""
    kept = [(c, p) for c, p in candidates if blanks or c != EMPTY]
    total = 1.0 - sum(p for c, p in candidates if not blanks and c == EMPTY)
    if total <= 0.0 or read not in dict(kept):
        return ()
    kept.sort(key=lambda cp: (cp[0] != read, -cp[1]))
    out: list[tuple[str, float]] = []
    held = 0.0
    for c, p in kept:
        out.append((c, p / total))
        held += p / total
        if held >= SURE_POSTERIOR:
            break
    return tuple(out) if len(out) > 1 else ()


def peg_reading(
    read: str, confidence: float, candidates: Callable[[], Sequence[tuple[str, float]]], *, blanks: bool
) -> HoleReading:
    """A hole read confidently as ``read``: with the colours it may still be
    (:func:`could_be` of ``candidates()``, asked only below :data:`SURE_POSTERIOR`)."""
    if read == EMPTY or confidence >= SURE_POSTERIOR:
        return HoleReading(read, confidence)
    return HoleReading(read, confidence, could_be(read, candidates(), blanks=blanks))


def secret_posterior(min_posterior: float, rows: int) -> float:
    """The posterior a secret hole is read from: every row is judged against
    the secret, so it may err ``rows`` times less than a guess hole, and it
    is never read less surely than an accusation needs (the secret is never
    judged within bounds, so it cannot name what else it may be)."""
    return max(SURE_POSTERIOR, 1.0 - (1.0 - min_posterior) / max(rows, 1))
