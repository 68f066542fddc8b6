"""The tournament as data: the game, the format, the players, the rounds, the results.

Everything here is a frozen dataclass; an arbiter's action (a late entry, a
withdrawal, a bye, a result, a new round) returns a new
:class:`Tournament`, so the hub can journal the action before it swaps the
tournament it shows. ``hub/config.py`` reads and writes it as hub.toml.

Seat order matters: the first-named player of a Mastermind match is the
codemaker of game 1 (seed 000, MATCHES), and the first-named player of a
Connection game plays first (seed 001, GAME).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum

from pegwatch.rules.errors import BadInput
from pegwatch.rules.variants import get_variant

__all__ = [
    "CONNECTION_COLOURS",
    "CONNECTION_TOP",
    "Bye",
    "ByeRequest",
    "Format",
    "Game",
    "GameKind",
    "HubError",
    "Pairing",
    "Player",
    "Readings",
    "Result",
    "Round",
    "Tournament",
]

#: Connection is scored on six colours, each from 0 to 18 (seed 001, GAME).
CONNECTION_COLOURS = 6
CONNECTION_TOP = 18
#: All-play-all "till 10 players" (seeds 000 and 001, TOURNAMENT).
ROUND_ROBIN_MAX = 10


class HubError(BadInput):
    """A tournament, its hub.toml or an arbiter's action is wrong; the message says where."""


class GameKind(Enum):
    MASTERMIND = "mastermind"
    CONNECTION = "connection"


class Format(Enum):
    AUTO = "auto"
    """All-play-all up to 10 players, Swiss above (seeds 000 and 001)."""
    SWISS = "swiss"
    ROUND_ROBIN = "round-robin"
    RANDOM_DRAW = "random-draw"
    """Four-player Connection: a random draw each round, then a final table (seed 001)."""


@dataclass(frozen=True)
class Game:
    """What is played at every table."""

    kind: GameKind
    variant: str = ""
    """The Mastermind preset (pegwatch.rules.variants); empty for Connection."""
    seats: int = 2

    def __post_init__(self) -> None:
        if self.kind is GameKind.MASTERMIND:
            if self.seats != 2:
                raise HubError(f"seats: Mastermind is played by 2, not {self.seats}")
            get_variant(self.variant or "mso")  # an unknown preset is refused here
        elif self.seats not in (2, 4):
            raise HubError(f"seats: Connection is played by 2 or 4, not {self.seats}")

    @property
    def failure_attempts(self) -> int:
        return get_variant(self.variant or "mso").failure_attempts

    @property
    def games_per_match(self) -> int:
        return get_variant(self.variant or "mso").games_per_match

    @property
    def place_vp(self) -> tuple[float, ...]:
        """VP by place; seed 001: "1st 5VP, 2nd 3VP, 3rd 2VP, 4th 0VP"."""
        return (1.0, 0.0) if self.seats == 2 else (5.0, 3.0, 2.0, 0.0)

    @property
    def max_vp(self) -> float:
        return self.place_vp[0]


@dataclass(frozen=True)
class Player:
    """One entrant. ``joined`` is the first round they may be paired in (a
    late entry joins later than 1); ``withdrawn`` the first round they are
    no longer paired in."""

    id: str
    name: str = ""
    joined: int = 1
    withdrawn: int | None = None

    def active_in(self, round_number: int) -> bool:
        return self.joined <= round_number and (self.withdrawn is None or round_number < self.withdrawn)


@dataclass(frozen=True)
class Pairing:
    """Who sits at a table in a round, in seat order."""

    table: str
    players: tuple[str, ...]


@dataclass(frozen=True)
class Bye:
    """A round without a game. ``requested`` byes are the arbiter granting a
    player's request; the others come from the pairing (an odd count, an
    opponent who withdrew)."""

    player: str
    score: float
    requested: bool = False


@dataclass(frozen=True)
class ByeRequest:
    """A bye the arbiter granted for a round not yet paired."""

    round: int
    player: str
    score: float


@dataclass(frozen=True)
class Round:
    number: int
    pairings: tuple[Pairing, ...] = ()
    byes: tuple[Bye, ...] = ()

    def seated(self) -> set[str]:
        return {p for pairing in self.pairings for p in pairing.players} | {b.player for b in self.byes}


@dataclass(frozen=True)
class Result:
    """The result of one table in one round, per player in seat order.

    Mastermind: ``attempts[i]`` are player i's attempts as codebreaker, one
    per game (13 for a failed or timed-out game, seed 000), ``penalties[i]``
    the VP docked (½ per codemaker exception). Connection: ``levels[i]`` are
    player i's six colour levels (0..18), in any order.

    ``forfeited`` (two-player tables only) names who lost without playing (a
    no-show, a loss of game by penalty): the other scores the maximum, both
    forfeited score 0, and the game gives no attempts or levels.
    """

    round: int
    table: str
    players: tuple[str, ...]
    attempts: tuple[tuple[int, ...], ...] = ()
    penalties: tuple[float, ...] = ()
    levels: tuple[tuple[int, ...], ...] = ()
    forfeited: tuple[str, ...] = ()


@dataclass(frozen=True)
class Readings:
    """The tie-break readings an arbiter may choose where a seed is ambiguous
    (docs/hall.md gives each with the seed's words)."""

    attempts_exclude_best: bool = True
    """Seed 000: "the less number of attempts, excluding the lowest one"."""
    equalise_opponents: bool = True
    """Seed 004, clarification 2, for Buchholz and Sonneborn-Berger."""
    connection_progressive: bool = False
    """Seed 001's "progressive difference": the plain sum (False) or the sum
    of the running totals, as seed 004's Progressive (True)."""


@dataclass(frozen=True)
class Tournament:
    name: str
    game: Game
    format: Format = Format.AUTO
    rounds: int = 7
    """The announced number of rounds (seed 000: "at least 7 to 9");
    all-play-all plays as many as it needs."""
    players: tuple[Player, ...] = ()
    tables: tuple[str, ...] = ()
    seed: int = 0
    """Makes the random draw and the drawing of lots reproducible."""
    bye_score: float = 1.0
    tiebreaks: tuple[str, ...] = ()
    """Empty: the defaults of the game and format (hub/tiebreaks.py)."""
    readings: Readings = field(default_factory=Readings)
    played: tuple[Round, ...] = ()
    results: tuple[Result, ...] = ()
    bye_requests: tuple[ByeRequest, ...] = ()

    # -- views -------------------------------------------------------------

    def player(self, player_id: str) -> Player:
        for p in self.players:
            if p.id == player_id:
                return p
        raise HubError(f"no player {player_id!r} in the tournament")

    def effective_format(self) -> Format:
        if self.format is not Format.AUTO:
            return self.format
        if self.game.seats > 2:
            return Format.RANDOM_DRAW
        return Format.ROUND_ROBIN if len(self.players) <= ROUND_ROBIN_MAX else Format.SWISS

    def planned_rounds(self) -> int:
        """The published number of rounds: all-play-all needs one per
        opponent (one more with an odd count, for the byes)."""
        if self.effective_format() is Format.ROUND_ROBIN:
            n = len(self.players)
            return n - 1 if n % 2 == 0 else n
        return self.rounds

    def result(self, round_number: int, table: str) -> Result | None:
        for r in self.results:
            if r.round == round_number and r.table == table:
                return r
        return None

    def table_names(self, count: int) -> tuple[str, ...]:
        """Names for ``count`` tables: hub.toml's, else "1", "2", ..."""
        if not self.tables:
            return tuple(str(i + 1) for i in range(count))
        if count > len(self.tables):
            raise HubError(f"tables: the round needs {count} tables, hub.toml names {len(self.tables)}")
        return self.tables[:count]

    # -- the arbiter's actions -----------------------------------------------

    def enter(self, player: Player) -> Tournament:
        """A (late) entry; ``player.joined`` is the first round they play."""
        if any(p.id == player.id for p in self.players):
            raise HubError(f"player {player.id!r} is already entered")
        if player.joined <= len(self.played):
            raise HubError(f"player {player.id!r}: round {player.joined} is already paired")
        if self.played and self.effective_format() is Format.ROUND_ROBIN:
            raise HubError(f"player {player.id!r}: the all-play-all draw is made; no late entry")
        return replace(self, players=(*self.players, player))

    def withdraw(self, player_id: str, from_round: int) -> Tournament:
        """``player_id`` is not paired from ``from_round`` on."""
        if from_round <= len(self.played):
            raise HubError(f"withdraw {player_id!r}: round {from_round} is already paired")
        self.player(player_id)
        players = tuple(replace(p, withdrawn=from_round) if p.id == player_id else p for p in self.players)
        return replace(self, players=players)

    def add_round(self, round_: Round) -> Tournament:
        """A round's pairings, as :mod:`pegwatch.hub.pairing` made them or the arbiter wrote them."""
        if round_.number != len(self.played) + 1:
            raise HubError(f"round {round_.number}: the next round is {len(self.played) + 1}")
        seen: set[str] = set()
        for who in [p for pairing in round_.pairings for p in pairing.players] + [b.player for b in round_.byes]:
            if not self.player(who).active_in(round_.number):
                raise HubError(f"round {round_.number}: player {who!r} does not play this round")
            if who in seen:
                raise HubError(f"round {round_.number}: player {who!r} is seated twice")
            seen.add(who)
        for pairing in round_.pairings:
            if len(pairing.players) < 2 or len(pairing.players) > self.game.seats:
                raise HubError(f"round {round_.number}, table {pairing.table}: {len(pairing.players)} players")
        tables = [p.table for p in round_.pairings]
        if len(set(tables)) != len(tables):
            raise HubError(f"round {round_.number}: a table is used twice")
        return replace(self, played=(*self.played, round_))

    def grant_bye(self, player_id: str, round_number: int, score: float) -> Tournament:
        """A requested bye: for a round not yet paired it is kept until the
        pairing leaves the player out; in a paired round the player must not
        be seated."""
        if not self.player(player_id).active_in(round_number):
            raise HubError(f"bye for {player_id!r}: they do not play round {round_number}")
        if round_number <= len(self.played):
            rnd = self.played[round_number - 1]
            if player_id in rnd.seated():
                raise HubError(f"bye for {player_id!r}: already seated in round {round_number}")
            new = replace(rnd, byes=(*rnd.byes, Bye(player_id, score, requested=True)))
            played = tuple(new if r.number == round_number else r for r in self.played)
            return replace(self, played=played)
        if any(b.round == round_number and b.player == player_id for b in self.bye_requests):
            raise HubError(f"bye for {player_id!r}: already granted in round {round_number}")
        request = ByeRequest(round_number, player_id, score)
        return replace(self, bye_requests=(*self.bye_requests, request))

    def record(self, result: Result) -> Tournament:
        """Enter or correct the result of a table (a correction replaces the earlier one)."""
        from pegwatch.hub.results import check_result

        if not 1 <= result.round <= len(self.played):
            raise HubError(f"result of round {result.round}: that round is not paired")
        pairing = next((p for p in self.played[result.round - 1].pairings if p.table == result.table), None)
        if pairing is None:
            raise HubError(f"result of round {result.round}: no table {result.table!r} in that round")
        if pairing.players != result.players:
            raise HubError(
                f"result of round {result.round}, table {result.table}: players "
                f"{list(result.players)} are not the pairing's {list(pairing.players)}"
            )
        check_result(self.game, result)
        kept = tuple(r for r in self.results if (r.round, r.table) != (result.round, result.table))
        return replace(self, results=(*kept, result))
