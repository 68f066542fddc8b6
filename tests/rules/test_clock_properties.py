"""Property tests for the clock against an independent tick-by-tick model.

The model below charges time one nanosecond at a time, the naive way; the
clock computes whole spans from stamps. For small integer times they must
agree exactly, on every control, flag and arbiter action.
"""

from __future__ import annotations

import contextlib
import copy
import json
from dataclasses import dataclass, field

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pegwatch.rules.clock import (
    BronsteinCount,
    Clock,
    ClockEvent,
    ClockEventKind,
    ClockReadings,
    ClockStateError,
    ClockView,
    ControlMode,
    DelayKind,
    Overtime,
    OvertimeKind,
    PressOutcome,
    Stage,
    StageAddAtFlag,
    StageAdvance,
    TimeControl,
)

# ----------------------------------------------------------------------
# The reference model


@dataclass
class RefPlayer:
    main: int
    stage: int = 0
    moves: int = 0
    overtime: bool = False
    periods_left: int = 0
    period_left: int = 0
    block_moves: int = 0
    turn_used: int = 0
    turn_stage: int = 0  # the stage the move began in: its delay is the move's
    used: int = 0
    flag_at: int | None = None

    def begin_turn(self) -> None:
        self.turn_used = 0
        self.turn_stage = self.stage


@dataclass
class Ref:
    controls: list[TimeControl]
    freeze: bool
    skip: bool
    debounce: int = 0
    readings: ClockReadings = field(default_factory=ClockReadings)
    last_accept: dict[int, int] = field(default_factory=dict)
    players: list[RefPlayer] = field(default_factory=list)
    started: bool = False
    paused: bool = False
    frozen: bool = False
    on_move: int = 0
    now: int = 0
    flags: list[int] = field(default_factory=list)
    flag_times: list[int] = field(default_factory=list)
    running_units: int = 0

    def __post_init__(self) -> None:
        self.players = [RefPlayer(main=tc.stages[0].time_ns) for tc in self.controls]

    @property
    def finished(self) -> bool:
        return self.frozen or all(p.flag_at is not None for p in self.players)

    @property
    def running(self) -> bool:
        return self.started and not self.paused and not self.finished

    def next_player(self, after: int) -> int | None:
        n = len(self.players)
        for k in range(1, n + 1):
            j = (after + k) % n
            if not self.skip or self.players[j].flag_at is None:
                return j
        return None

    def tick(self) -> None:
        """Charge one nanosecond to the running player."""
        i = self.on_move
        p = self.players[i]
        tc = self.controls[i]
        stage = tc.stages[p.turn_stage]
        self.now += 1
        self.running_units += 1
        p.used += 1
        in_delay = self.delay_first(stage, p) and p.turn_used < stage.delay_ns
        p.turn_used += 1
        if tc.mode is ControlMode.COUNT_UP:
            p.main += 1
        elif p.flag_at is None and not in_delay:
            if p.overtime:
                p.period_left -= 1
            else:
                p.main -= 1
                if tc.mode is ControlMode.HOURGLASS:
                    self.players[1 - i].main += 1
        self.resolve()

    def delay_first(self, stage: Stage, p: RefPlayer) -> bool:
        if stage.delay_kind is DelayKind.BRONSTEIN and p.overtime:
            return False  # Bronstein adds nothing to an overtime period, in either reading
        return stage.delay_kind is DelayKind.US or self.readings.bronstein is BronsteinCount.DGT

    def resolve(self) -> None:
        """Let whatever is due now happen: a stage added, overtime, a flag."""
        while self.running:
            i = self.on_move
            p = self.players[i]
            tc = self.controls[i]
            stage = tc.stages[p.turn_stage]
            if p.flag_at is not None:
                return
            if tc.mode is ControlMode.COUNT_UP:
                return
            if self.delay_first(stage, p) and p.turn_used < stage.delay_ns:
                return
            ot = tc.overtime
            if not p.overtime:
                if p.main > 0:
                    return
                if tc.advance is StageAdvance.FLAG and p.stage + 1 < len(tc.stages):
                    ended = p.stage
                    p.stage += 1
                    p.main = tc.stages[p.stage].time_ns
                    if self.readings.stage_at_flag is StageAddAtFlag.BOTH:
                        for j, q in enumerate(self.players):
                            tj = self.controls[j]
                            if (j != i and q.stage == ended and tj.advance is StageAdvance.FLAG
                                    and ended + 1 < len(tj.stages)):
                                q.stage = q.turn_stage = ended + 1
                                q.main += tj.stages[ended + 1].time_ns
                    continue
                if ot is not None:
                    p.overtime = True
                    p.periods_left = ot.periods
                    p.period_left = ot.period_ns
                    p.block_moves = 0
                    continue
            else:
                assert ot is not None
                if p.period_left > 0:
                    return
                if ot.kind is OvertimeKind.BYO_YOMI:
                    p.periods_left -= 1
                    if p.periods_left > 0:
                        p.period_left = ot.period_ns
                        continue
            self.flag(i)

    def flag(self, i: int) -> None:
        self.players[i].flag_at = self.now
        self.flags.append(i)
        self.flag_times.append(self.now)
        if self.freeze:
            self.frozen = True
        elif self.skip:
            nxt = self.next_player(i)
            if nxt is not None:
                self.on_move = nxt
                self.players[nxt].begin_turn()

    def advance_to(self, t: int) -> None:
        self.resolve()
        while self.now < t:
            if self.running:
                self.tick()
            else:
                self.now = t

    def press(self, i: int) -> PressOutcome:
        if not self.started:
            return PressOutcome.NOT_STARTED
        if self.finished:
            return PressOutcome.FINISHED
        if i in self.last_accept and self.now - self.last_accept[i] < self.debounce:
            return PressOutcome.BOUNCE
        if self.paused:
            return PressOutcome.PAUSED
        if i != self.on_move:
            if self.skip and self.players[i].flag_at is not None:
                return PressOutcome.FLAGGED
            return PressOutcome.NOT_ON_MOVE
        p = self.players[i]
        tc = self.controls[i]
        stage = tc.stages[p.stage]
        delay_stage = tc.stages[p.turn_stage]
        p.moves += 1
        if p.flag_at is None:
            if not p.overtime:
                if delay_stage.delay_kind is DelayKind.BRONSTEIN and not self.delay_first(delay_stage, p):
                    p.main += min(delay_stage.delay_ns, p.turn_used)
                p.main += stage.increment_ns
                if tc.advance is StageAdvance.MOVES:
                    total = 0
                    for k, s in enumerate(tc.stages[:-1]):
                        total += s.moves or 0
                        if k == p.stage and p.moves >= total:
                            p.stage += 1
                            p.main += tc.stages[p.stage].time_ns
            elif tc.overtime is not None and tc.overtime.kind is OvertimeKind.BYO_YOMI:
                p.period_left = tc.overtime.period_ns
            elif tc.overtime is not None:
                p.block_moves += 1
                if p.block_moves >= tc.overtime.moves:
                    p.block_moves = 0
                    p.period_left = tc.overtime.period_ns
        p.begin_turn()
        self.last_accept[i] = self.now
        nxt = self.next_player(i)
        assert nxt is not None
        self.on_move = nxt
        self.players[nxt].begin_turn()
        return PressOutcome.ACCEPTED

    def adjust(self, i: int, remaining: int, moves: int) -> None:
        p = self.players[i]
        p.moves = moves
        p.main = remaining
        p.overtime = False
        p.periods_left = p.period_left = p.block_moves = 0
        if p.flag_at is not None and remaining > 0:
            everyone_out = self.finished and not self.frozen
            k = self.flags.index(i)
            del self.flags[k], self.flag_times[k]
            p.flag_at = None
            if self.frozen and not self.flags:
                self.frozen, self.paused = False, True
            elif everyone_out:
                self.paused = True

    def remaining(self) -> tuple[int, ...]:
        out = []
        for i, p in enumerate(self.players):
            stage = self.controls[i].stages[p.turn_stage]
            if p.flag_at is not None:
                out.append(0)
            elif p.overtime:
                out.append(p.period_left)
            elif (self.readings.bronstein is BronsteinCount.DGT and stage.delay_ns
                  and stage.delay_kind is DelayKind.BRONSTEIN and self.running_or_paused
                  and self.on_move == i):
                out.append(p.main + max(0, stage.delay_ns - p.turn_used))
            else:
                out.append(p.main)
        return tuple(out)

    @property
    def running_or_paused(self) -> bool:
        return self.started and not self.finished


# ----------------------------------------------------------------------
# Strategies

durations = st.integers(min_value=1, max_value=25)


@st.composite
def controls(draw: st.DrawFn) -> TimeControl:
    n_stages = draw(st.integers(min_value=1, max_value=3))
    stages = []
    for k in range(n_stages):
        stages.append(
            Stage(
                draw(durations),
                moves=None if k == n_stages - 1 else draw(st.integers(min_value=1, max_value=3)),
                increment_ns=draw(st.integers(min_value=0, max_value=4)),
                delay_ns=draw(st.integers(min_value=0, max_value=4)),
                delay_kind=draw(st.sampled_from(DelayKind)),
            )
        )
    overtime = draw(
        st.none()
        | st.builds(
            Overtime,
            st.sampled_from(OvertimeKind),
            durations,
            periods=st.integers(min_value=1, max_value=3),
            moves=st.integers(min_value=1, max_value=3),
        )
    )
    return TimeControl(
        tuple(stages), advance=draw(st.sampled_from(StageAdvance)), overtime=overtime
    )


actions = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=12),  # gap before the action
        st.sampled_from(["press", "press", "press", "press", "pause", "resume", "undo", "adjust"]),
        st.integers(min_value=0, max_value=3),  # player (mod players), or adjusted time
    ),
    max_size=25,
)

T0 = 10_000  # arbitrary monotonic origin


def outcome_time(who: int) -> int:
    return 4 * who


def run_both(tcs, freeze, skip, start_player, script, views, debounce=0, readings=None):
    readings = readings or ClockReadings()
    clock = Clock(tcs, debounce_ns=debounce, freeze_at_flag=freeze, skip_flagged=skip,
                  readings=readings)
    effective: list[tuple[str, int, int, PressOutcome | None, int]] = []

    def rebuild(eff):
        ref = Ref(list(tcs), freeze, skip, debounce, readings)
        ref.now = T0
        for kind, player, at, outcome, extra in eff:
            ref.advance_to(at)
            if kind == "start":
                ref.started, ref.on_move = True, player
            elif kind == "press" and outcome is PressOutcome.ACCEPTED:
                ref.press(player)
            elif kind == "pause" and ref.running:
                ref.paused = True
            elif kind == "resume" and ref.paused and not ref.finished:
                ref.paused = False
            elif kind == "adjust":
                ref.adjust(player, extra, 2 * player)
        return ref

    ref = Ref(list(tcs), freeze, skip, debounce, readings)
    ref.now = T0
    clock.start(start_player, T0)
    ref.started, ref.on_move = True, start_player
    effective.append(("start", start_player, T0, None, 0))
    t = T0
    for gap, kind, who in script:
        t += gap
        player = who % len(tcs)
        ref.advance_to(t)
        if kind == "press":
            expected = ref.press(player)
            assert clock.press(player, t) is expected
            effective.append(("press", player, t, expected, 0))
        elif kind == "pause":
            if ref.running:
                clock.pause(t)
                ref.paused = True
                effective.append(("pause", 0, t, None, 0))
            else:
                try:
                    clock.pause(t)
                except ClockStateError:
                    pass
                else:
                    raise AssertionError("pause accepted when the model says it cannot")
        elif kind == "resume":
            if ref.paused and not ref.finished:
                clock.resume(t)
                ref.paused = False
                effective.append(("resume", 0, t, None, 0))
            else:
                try:
                    clock.resume(t)
                except ClockStateError:
                    pass
                else:
                    raise AssertionError("resume accepted when the model says it cannot")
        elif kind == "adjust":
            # who doubles as the new time: 0 lets a flag fall at once.
            clock.adjust(player, remaining_ns=outcome_time(who), moves=2 * player, at_ns=t)
            ref.adjust(player, outcome_time(who), 2 * player)
            effective.append(("adjust", player, t, None, outcome_time(who)))
        else:
            idx = [k for k, e in enumerate(effective) if e[3] is PressOutcome.ACCEPTED]
            if not idx:
                try:
                    clock.undo(t)
                except ClockStateError:
                    continue
                raise AssertionError("undo accepted with nothing to undo")
            clock.undo(t)
            del effective[idx[-1]]
            ref = rebuild(effective)
            ref.advance_to(t)
        for look in views:
            compare(clock, ref, t + look)
        compare(clock, ref, t)
    return clock, ref, t


def compare(clock: Clock, ref: Ref, t: int) -> None:
    # Look ahead in a copy of the model so `ref` stays at the event time.
    r = copy.deepcopy(ref)
    r.advance_to(t)
    v = clock.view(t)
    assert v.remaining_ns == r.remaining(), (v, r)
    assert v.flags == tuple(r.flags)
    assert v.flag_times_ns == tuple(r.flag_times)
    assert v.moves == tuple(p.moves for p in r.players)
    assert v.stage == tuple(p.stage for p in r.players)
    assert v.used_ns == tuple(p.used for p in r.players)
    assert v.finished == r.finished
    assert v.running == r.running
    assert v.on_move == (None if r.finished else r.on_move)
    assert sum(v.used_ns) == r.running_units


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tcs=st.integers(min_value=2, max_value=4).flatmap(
        lambda n: st.lists(controls(), min_size=n, max_size=n)
    ),
    freeze=st.booleans(),
    skip=st.booleans(),
    start_player=st.integers(min_value=0, max_value=3),
    script=actions,
    views=st.lists(st.integers(min_value=0, max_value=40), max_size=2),
    debounce=st.sampled_from([0, 3]),
)
def test_clock_matches_tick_by_tick_model(
    tcs, freeze, skip, start_player, script, views, debounce
) -> None:
    run_both(tcs, freeze, skip, start_player % len(tcs), script, views, debounce)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=4),
    script=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=10**12),
            st.sampled_from(["press", "press", "press", "pause", "resume", "undo"]),
            st.integers(min_value=0, max_value=3),
        ),
        max_size=40,
    ),
)
def test_charged_time_adds_up_to_running_span(n, script) -> None:
    """For any presses, pauses and undos, the time charged to the players
    adds up to the nanosecond to the span the clock ran, start to last event."""
    huge = 10**18  # nobody flags
    clock = Clock([TimeControl.fischer(huge, 7)] * n, debounce_ns=0)
    t = start = 123_456_789
    clock.start(0, t)
    paused_total = 0
    paused_since: int | None = None
    for gap, kind, who in script:
        t += gap
        if kind == "press":
            clock.press(who % n, t)
        elif kind == "pause" and paused_since is None:
            clock.pause(t)
            paused_since = t
        elif kind == "resume" and paused_since is not None:
            clock.resume(t)
            paused_total += t - paused_since
            paused_since = None
        elif kind == "undo":
            with contextlib.suppress(ClockStateError):
                clock.undo(t)
    running_end = t if paused_since is None else paused_since
    v = clock.view(t)
    assert sum(v.used_ns) == running_end - start - paused_total
    # The books balance the other way too: time left = given - used.
    given_ = [huge + 7 * m for m in v.moves]
    assert [g - u for g, u in zip(given_, v.used_ns, strict=True)] == list(v.remaining_ns)


@settings(max_examples=100, deadline=None)
@given(
    tcs=st.lists(controls(), min_size=2, max_size=2),
    freeze=st.booleans(),
    script=actions,
)
def test_replay_and_looking_change_nothing(tcs, freeze, script) -> None:
    a = Clock(tcs, debounce_ns=0, freeze_at_flag=freeze)
    t = T0
    a.start(0, t)
    for gap, kind, who in script:
        t += gap
        a.view(t + 17)  # a display peeking ahead must not matter
        a.next_change_ns(t, resolution_ns=3)
        try:
            if kind == "press":
                a.press(who % 2, t)
            elif kind == "pause":
                a.pause(t)
            elif kind == "resume":
                a.resume(t)
            else:
                a.undo(t)
        except ClockStateError:
            pass
    b = Clock.replay(tcs, a.events, debounce_ns=0, freeze_at_flag=freeze)
    for look in (0, 5, 50):
        assert a.view(t + look) == b.view(t + look)


@settings(max_examples=100, deadline=None)
@given(
    tc=controls(),
    gap=st.integers(min_value=0, max_value=30),
    res=st.integers(min_value=1, max_value=7),
)
def test_next_change_is_exactly_when_the_display_changes(tc, gap, res) -> None:
    def shown(v):
        return (
            tuple(-(-r // res) for r in v.remaining_ns),
            tuple(-(-d // res) for d in v.delay_left_ns),
            v.flags,
            v.stage,
            v.overtime,
        )

    c = Clock([tc, tc], debounce_ns=0)
    c.start(0, T0)
    t = T0 + gap
    nxt = c.next_change_ns(t, resolution_ns=res)
    if nxt is None:
        assert not c.view(t).running
        return
    assert nxt > t
    now = shown(c.view(t))
    for u in range(t, nxt):
        assert shown(c.view(u)) == now
    assert shown(c.view(nxt)) != now


# ----------------------------------------------------------------------
# Events across a file


maybe_int = st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
clock_events = st.builds(
    ClockEvent,
    kind=st.sampled_from(ClockEventKind) | st.sampled_from([k.value for k in ClockEventKind]),
    at_ns=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    player=maybe_int,
    remaining_ns=maybe_int,
    moves=maybe_int,
)


@settings(max_examples=300, deadline=None)
@given(event=clock_events)
def test_event_json_round_trip(event: ClockEvent) -> None:
    assert type(event.kind) is ClockEventKind
    data = event.to_json()
    assert ClockEvent.from_json(data) == event
    text = json.dumps(data)
    assert ClockEvent.from_json(json.loads(text)) == event
    assert json.loads(text)["kind"] == event.kind.value


@settings(max_examples=100, deadline=None)
@given(
    tcs=st.lists(controls(), min_size=2, max_size=2),
    freeze=st.booleans(),
    script=actions,
)
def test_replay_from_json_gives_the_same_clock(tcs, freeze, script) -> None:
    a = Clock(tcs, debounce_ns=0, freeze_at_flag=freeze)
    t = T0
    a.start(0, t)
    for gap, kind, who in script:
        t += gap
        with contextlib.suppress(ClockStateError):
            if kind == "press":
                a.press(who % 2, t)
            elif kind == "pause":
                a.pause(t)
            elif kind == "resume":
                a.resume(t)
            else:
                a.undo(t)
    text = json.dumps([e.to_json() for e in a.events])
    events = [ClockEvent.from_json(d) for d in json.loads(text)]
    assert events == list(a.events)
    b = Clock.replay(tcs, events, debounce_ns=0, freeze_at_flag=freeze)
    assert b.events == a.events
    for look in (0, 5, 50):
        assert a.view(t + look) == b.view(t + look)


# ----------------------------------------------------------------------
# No time is ever created (issue 15 §5): on every kind of control, a press
# never leaves a player more than they had when the move began plus what
# the control adds for that move, and no flag falls later than that.


def _counts_first(stage: Stage, readings: ClockReadings) -> bool:
    return stage.delay_ns > 0 and (
        stage.delay_kind is DelayKind.US or readings.bronstein is BronsteinCount.DGT
    )


@st.composite
def any_control(draw: st.DrawFn) -> TimeControl:
    """Every kind: sudden death, Fischer, US delay, Bronstein, move-count stages
    (either advance), byo-yomi, Canadian (all from controls()), count-up, hourglass."""
    kind = draw(st.sampled_from(["staged", "staged", "staged", "count-up", "hourglass"]))
    if kind == "count-up":
        return TimeControl.count_up(draw(st.integers(min_value=0, max_value=25)))
    if kind == "hourglass":
        return TimeControl.hourglass(draw(durations))
    return draw(controls())


readings_strategy = st.builds(
    ClockReadings,
    st.sampled_from(BronsteinCount),
    st.sampled_from(StageAddAtFlag),
)


def _moved_within(tc: TimeControl, before: ClockView, after: ClockView, i: int, free: int) -> None:
    """The bound on player *i*'s press: *before* at the move's start, *after* the press."""
    used = after.used_ns[i] - before.used_ns[i]
    if after.count_up[i]:
        assert after.remaining_ns[i] == before.remaining_ns[i] + used
        return
    ot = tc.overtime
    if after.overtime[i] is not None:
        assert ot is not None and after.remaining_ns[i] <= ot.period_ns
        return
    if before.overtime[i] is not None:
        return  # only an arbiter's adjustment leaves overtime
    s0, s1 = before.stage[i], after.stage[i]
    added = sum(tc.stages[k].time_ns for k in range(s0 + 1, s1 + 1))
    increment = max(tc.stages[k].increment_ns for k in range(s0, s1 + 1))
    bound = before.remaining_ns[i] + added + increment - max(0, used - free)
    assert after.remaining_ns[i] <= bound, (before, after, i, bound)


def _flag_within(tc: TimeControl, before: ClockView, at_flag: ClockView, i: int, free: int) -> None:
    """A flag falls no later than the time the move began with, plus what was added."""
    used = at_flag.used_ns[i] - before.used_ns[i]
    ot = tc.overtime
    if before.overtime[i] is not None:
        assert ot is not None
        left = before.periods_left[i] or 1
        capacity = before.remaining_ns[i] + free + (left - 1) * ot.period_ns
    else:
        s1 = at_flag.stage[i]
        capacity = before.remaining_ns[i] + free + sum(
            tc.stages[k].time_ns for k in range(before.stage[i] + 1, s1 + 1)
        )
        if ot is not None:
            capacity += ot.period_ns * (ot.periods if ot.kind is OvertimeKind.BYO_YOMI else 1)
    assert used <= capacity, (before, at_flag, i, capacity)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=any_control(),
    second=any_control(),
    readings=readings_strategy,
    freeze=st.booleans(),
    script=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=15),
            st.sampled_from(["press", "press", "press", "press", "pause", "resume"]),
            st.integers(min_value=0, max_value=1),
        ),
        max_size=30,
    ),
)
@example(  # found by CI: a DGT Bronstein delay was spent again in byo-yomi
    first=TimeControl(
        stages=(
            Stage(time_ns=8, moves=1, delay_ns=1, delay_kind=DelayKind.BRONSTEIN),
            Stage(time_ns=1),
        ),
        advance=StageAdvance.MOVES,
        overtime=Overtime(OvertimeKind.BYO_YOMI, 1, periods=1, moves=1),
    ),
    second=TimeControl(stages=(Stage(time_ns=0),), mode=ControlMode.COUNT_UP),
    readings=ClockReadings(BronsteinCount.DGT, StageAddAtFlag.PER_PLAYER),
    freeze=True,
    script=[(9, "press", 0), (0, "press", 1), (2, "press", 0)],
)
def test_no_press_creates_time(first, second, readings, freeze, script) -> None:
    hourglass = [tc.mode is ControlMode.HOURGLASS for tc in (first, second)]
    if any(hourglass) and not all(hourglass):
        second = first  # hourglass is played by both or by nobody
    tcs = (first, second)
    clock = Clock(tcs, debounce_ns=0, freeze_at_flag=freeze, readings=readings)
    t = T0
    clock.start(0, t)
    began = {0: clock.view(t)}
    checked_flags: set[int] = set()

    def free_of(i: int, view: ClockView) -> int:
        stage = tcs[i].stages[view.stage[i]]
        if stage.delay_kind is DelayKind.BRONSTEIN and readings.bronstein is BronsteinCount.DGT:
            return 0  # the DGT shows the delay inside the time the move began with
        return stage.delay_ns

    for gap, kind, who in script:
        t += gap
        if kind == "press":
            on_move = clock.view(t).on_move
            outcome = clock.press(who, t)
            after = clock.view(t)
            if outcome is PressOutcome.ACCEPTED and not after.is_flagged(who):
                _moved_within(tcs[who], began[who], after, who, free_of(who, began[who]))
            if outcome is PressOutcome.ACCEPTED and after.on_move is not None:
                began[after.on_move] = after
            assert on_move is None or outcome is not PressOutcome.ACCEPTED or on_move == who
        elif kind == "pause":
            with contextlib.suppress(ClockStateError):
                clock.pause(t)
        else:
            with contextlib.suppress(ClockStateError):
                clock.resume(t)
        view = clock.view(t)
        if freeze:
            for i in view.flags:
                if i not in checked_flags and i in began:
                    stage = tcs[i].stages[began[i].stage[i]]
                    free = stage.delay_ns if stage.delay_kind is DelayKind.US else 0
                    _flag_within(tcs[i], began[i], view, i, free)
                    checked_flags.add(i)
        if view.count_up[0] and view.count_up[1]:
            assert not view.flags


@st.composite
def model_controls(draw: st.DrawFn) -> list[TimeControl]:
    """Two to four controls of any kind: count-down, count-up, or a pair of hourglasses."""
    if draw(st.integers(min_value=0, max_value=4)) == 0:
        return [TimeControl.hourglass(draw(durations)), TimeControl.hourglass(draw(durations))]
    n = draw(st.integers(min_value=2, max_value=4))
    count_up = st.integers(min_value=0, max_value=25).map(TimeControl.count_up)
    return [draw(controls() | count_up) for _ in range(n)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tcs=model_controls(),
    readings=readings_strategy,
    freeze=st.booleans(),
    skip=st.booleans(),
    start_player=st.integers(min_value=0, max_value=3),
    script=actions,
    views=st.lists(st.integers(min_value=0, max_value=40), max_size=2),
)
def test_readings_and_modes_match_the_tick_by_tick_model(
    tcs, readings, freeze, skip, start_player, script, views
) -> None:
    """The DGT readings, count-up and hourglass against the one-nanosecond model too."""
    run_both(tcs, freeze, skip, start_player % len(tcs), script, views, 0, readings)
