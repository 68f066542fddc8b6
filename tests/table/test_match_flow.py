"""The pure MSO match flow: presses, readings and arbiter actions in, verdicts out."""

from __future__ import annotations

from flow_script import FlowScript

from pegwatch.rules.codes import score
from pegwatch.rules.flow import MatchFlow, Phase, RowState, replay_events, verdict_agrees
from pegwatch.rules.record import Role

S = 1_000_000_000
SECRET = ("red", "green", "blue", "yellow")


class Script(FlowScript):
    """Builds an event list the way the table journals it."""

    def press(self, seat, dt=S):
        return self.ev("press", dt, player=seat)

    def read(self, game, row, phase, guess, black=0, white=0, status="ok"):
        return self.ev(
            "reading",
            100_000_000,
            game=game,
            row=row,
            phase=phase,
            guess=list(guess),
            black=black,
            white=white,
            status=status,
        )

    def secret(self, game, code, shield, status="ok"):
        return self.ev(
            "reading",
            100_000_000,
            game=game,
            row=0,
            phase="secret",
            code=list(code),
            shield=shield,
            status=status,
        )

    def row(self, game, maker, breaker, guess, marks=None, secret=SECRET):
        g = self.flow.game
        self.press(breaker)
        self.read(game, len(g.rows), "guess", guess)
        b, w = marks if marks is not None else score(secret, guess)
        self.press(maker)
        self.read(game, len(g.rows), "marks", guess, b, w)


def test_game_solved_then_roles_swap_and_match_result():
    s = Script()
    s.press(1)  # Bob is not the codemaker of game 1: ignored
    assert s.flow.phase is Phase.SETUP
    s.press(0)
    s.secret(1, SECRET, "closed")
    assert s.flow.phase is Phase.GUESS
    assert s.flow.on_move(s.t) == 1
    s.row(1, 0, 1, ("red", "red", "green", "green"))
    s.row(1, 0, 1, SECRET)
    assert s.flow.phase is Phase.REVEAL
    # The secret is never in a line before it is revealed.
    assert not any("secret red" in line for line in s.lines)
    s.secret(1, SECRET, "open")
    assert s.flow.phase is Phase.GAME_OVER
    assert s.flow.games[0].verdict.attempts == 2
    # Game 2: Bob is codemaker now.
    s.press(1)
    assert s.flow.phase is Phase.GUESS and s.flow.game.codemaker == 1
    code2 = ("pink", "pink", "orange", "white")
    for guess in (("red", "red", "red", "red"), ("pink", "orange", "white", "pink"), code2):
        s.row(2, 1, 0, guess, secret=code2)
    s.secret(2, code2, "open")
    assert s.flow.phase is Phase.MATCH_OVER
    mv = s.flow.match_verdict
    assert mv.attempts == {"Bob": 2, "Ann": 3}
    assert mv.vp == {"Ann": 0.0, "Bob": 1.0}


def test_mismark_caught_exactly_when_secret_seen():
    s = Script()
    s.press(0)
    s.secret(1, SECRET, "closed")
    s.row(1, 0, 1, ("red", "red", "green", "green"))
    s.row(1, 0, 1, ("blue", "yellow", "red", "green"), marks=(1, 2))  # truly 0B4W
    kinds = [v["what"] for v in s.verdicts]
    assert "mismark" in kinds
    mis = next(v for v in s.verdicts if v["what"] == "mismark")
    assert mis["row"] == 2 and mis["attempts"] == 3
    assert s.flow.phase is Phase.REVEAL
    # The clock stopped at the mis-marked row's press.
    frozen = s.flow.remaining_ns(s.t)
    assert frozen == s.flow.remaining_ns(s.t + 60 * S)


def test_uncertain_reading_never_accuses_and_waits_for_arbiter():
    s = Script()
    s.press(0)
    s.secret(1, SECRET, "closed")
    s.press(1)
    s.read(1, 1, "guess", ("red", "red", "green", "green"))
    s.press(0)
    # A hand over the row: the marks reading is occluded, with wrong counts.
    s.read(1, 1, "marks", ("red", "red", "green", "green"), 4, 0, status="occluded")
    assert s.flow.checks() == (1,)
    assert not any(v["what"] == "mismark" for v in s.verdicts)
    assert s.flow.game.rows[0].marks_state is RowState.CHECK
    s.ev("arbiter", action="confirm_row", game=1, row=1, black=1, white=1, by="arbiter")
    assert s.flow.checks() == ()
    assert any(v["what"] == "row" and v["row"] == 1 for v in s.verdicts)
    assert not any(v["what"] == "mismark" for v in s.verdicts)


def test_codebreaker_flag_ends_game_with_failure_attempts():
    s = Script()
    s.press(0)
    s.row(1, 0, 1, ("red", "red", "green", "green"))
    # 8 minutes pass: the press after the flag is the flag.
    s.press(1, dt=9 * 60 * S)
    assert s.flow.game.timeout is Role.CODEBREAKER
    assert s.flow.remaining_ns(s.t)[1] == 0
    s.secret(1, SECRET, "open")
    assert s.flow.games[0].verdict.attempts == 13


def test_restart_pauses_until_arbiter_resumes():
    s = Script()
    s.press(0)
    s.press(1)
    before = s.flow.remaining_ns(s.t)
    s.ev("boot", dt=5 * S)
    assert s.flow.paused and s.flow.awaiting_resume
    assert s.flow.remaining_ns(s.t + 100 * S) == s.flow.remaining_ns(s.t)
    s.press(0)  # ignored while paused
    assert s.flow.phase is Phase.MARKS
    s.ev("arbiter", action="resume")
    assert not s.flow.paused
    assert s.flow.remaining_ns(s.t)[0] == before[0] - 5 * S  # charged up to the boot only


def test_replay_reaches_the_verdicts_worked_out_by_hand():
    s = Script()
    s.press(0)
    s.secret(1, SECRET, "closed")
    s.row(1, 0, 1, ("red", "red", "green", "green"))
    s.row(1, 0, 1, ("blue", "yellow", "red", "green"), marks=(1, 2))
    s.secret(1, SECRET, "open")
    # By hand, against red green blue yellow: row 1 holds the red in place
    # and one green elsewhere (1B1W, marked so); row 2 holds all four
    # colours, none in place (0B4W), marked 1B2W: the first mis-mark, on
    # row 2, so Bob is credited with 3 attempts and no ½ VP (row 2 was not
    # the code).
    by_hand = [
        {"what": "start", "game": 1, "codemaker": "Ann", "codebreaker": "Bob"},
        {"what": "secret_seen", "game": 1},
        {"what": "row", "game": 1, "row": 1, "guess": ["red", "red", "green", "green"],
         "black": 1, "white": 1, "exact": True, "expected": {"black": 1, "white": 1}},
        {"what": "row", "game": 1, "row": 2, "guess": ["blue", "yellow", "red", "green"],
         "black": 1, "white": 2, "exact": True, "expected": {"black": 0, "white": 4}},
        {"what": "mismark", "game": 1, "row": 2, "attempts": 3, "penalty_vp": 0.0},
        {"what": "game", "game": 1, "verdict": {"attempts": 3, "mismarked_row": 2, "final": True,
                                                "codemaker_penalty_vp": 0.0, "solved": False}},
    ]
    journal = [e for e in s.events if e[0] != "verdict"]
    journal += [("verdict", v, s.t) for v in by_hand]
    pairs = replay_events(MatchFlow(("Ann", "Bob")), journal)
    assert len(pairs) == len(by_hand)
    assert all(verdict_agrees(got, had) for got, had in pairs), pairs
    # A verdict changed by one value is caught.
    by_hand[4] = dict(by_hand[4], row=1)
    journal = [e for e in s.events if e[0] != "verdict"] + [("verdict", v, s.t) for v in by_hand]
    pairs = replay_events(MatchFlow(("Ann", "Bob")), journal)
    assert [i for i, (got, had) in enumerate(pairs) if not verdict_agrees(got, had)] == [4]


def test_both_players_pressing_together_confirm_a_checked_row_without_ending_a_turn():
    s = Script()
    s.press(0)
    s.press(1)
    s.read(1, 1, "guess", ("red", "red", "green", "green"), status="unknown")
    assert s.flow.checks() == (1,)
    # Ann (codemaker) is on move; Bob presses first, then Ann within half a second.
    s.press(1)
    out = s.press(0, dt=200_000_000)
    assert [v.what for v in out.verdicts] == ["joint_confirm"]
    assert s.flow.phase is Phase.MARKS  # Ann's press did not confirm the marks
    s.ev("arbiter", action="confirm_row", game=1, row=1, guess=["red", "red", "green", "green"],
         by="players")
    assert s.flow.checks() == ()
    assert s.flow.game.rows[0].confirmed_by == "players"
    # With no row to check, presses are ordinary again.
    s.press(0)
    assert s.flow.phase is Phase.GUESS


def test_random_event_streams_replay_to_the_same_verdicts():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    colours = st.sampled_from(["red", "green", "blue", "yellow", "white", "black"])
    code = st.lists(colours, min_size=4, max_size=4)
    event = st.one_of(
        st.tuples(st.just("press"), st.fixed_dictionaries({"player": st.sampled_from([0, 1])})),
        st.tuples(st.just("reading"), st.fixed_dictionaries({
            "game": st.just(1), "row": st.integers(0, 4),
            "phase": st.sampled_from(["guess", "marks"]), "guess": code,
            "black": st.integers(0, 2), "white": st.integers(0, 2),
            "status": st.sampled_from(["ok", "ok", "unknown", "occluded"])})),
        st.tuples(st.just("reading"), st.fixed_dictionaries({
            "game": st.just(1), "row": st.just(0), "phase": st.just("secret"), "code": code,
            "shield": st.sampled_from(["closed", "open"]), "status": st.just("ok")})),
        st.tuples(st.just("arbiter"), st.fixed_dictionaries({
            "action": st.sampled_from(["pause", "resume"])})),
    )

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.tuples(event, st.integers(1, 90 * S)), max_size=40))
    def run(stream):
        t = 0
        events = []
        flow = MatchFlow(("Ann", "Bob"))
        for (kind, payload), dt in stream:
            t += dt
            events.append((kind, payload, t))
            for v in flow.apply(kind, payload, t).verdicts:
                events.append(("verdict", v.to_json(), t))
            # Never a mis-mark from a reading that was not certain.
            for r in flow.game.rows:
                if r.needs_check:
                    assert flow.game.announced_mismark != r.number
        pairs = replay_events(MatchFlow(("Ann", "Bob")), events)
        assert all(a.to_json() == b for a, b in pairs)

    run()
