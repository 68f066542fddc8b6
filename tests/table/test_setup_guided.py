"""The guided set-up at a real table program, with a rendered camera.

The set-up is stepped by hand (:meth:`GuidedSetup.step_once`) and the
program's loop by :meth:`TableProgram.step`; once the set-up starts the
vision worker, that reads the rendered board in its own thread, and the
tests wait for what the journal says, never for a fixed time.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

from pegwatch.device.table.config import VisionOptions
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.run import ArbiterButton
from pegwatch.device.table.setup import guided_setup
from pegwatch.device.table.setup.driver import GuidedSetup
from pegwatch.device.table.setup.layout import layout_record
from pegwatch.device.table.setup.machine import Button, Step
from pegwatch.rules.flow.verdicts import Mismark
from pegwatch.simulation.camera import RenderedSource
from pegwatch.simulation.render import BoardContents, Conditions
from pegwatch.vision.calibration import Calibration
from pegwatch.vision.profile import load_profile

PROFILE = load_profile("invicta-12x4")
CAMERA = Conditions.easy().with_(width=1280, height=960, focal_px=800.0)
WAIT_S = 60.0


class Board:
    """What lies on the rendered board; the tests change it as players would."""

    def __init__(self) -> None:
        self.contents = BoardContents(guesses=(None,) * PROFILE.rows, keys=(None,) * PROFILE.rows,
                                      secret=None, shield_open=False)

    def clear(self) -> None:
        self.__init__()

    def lay_out(self) -> None:
        record = layout_record(PROFILE)
        pad = (None,) * (PROFILE.rows - len(record["rows"]))
        self.contents = BoardContents(
            guesses=tuple(tuple(r["guess"]) for r in record["rows"]) + pad,
            keys=tuple((r["black"], r["white"]) for r in record["rows"]) + pad,
            secret=tuple(record["secret"]), shield_open=True,
        )

    def place(self, row: int, guess=None, keys=None) -> None:
        guesses, marks = list(self.contents.guesses), list(self.contents.keys)
        if guess is not None:
            guesses[row - 1] = tuple(guess)
        if keys is not None:
            marks[row - 1] = keys
        self.contents = BoardContents(guesses=tuple(guesses), keys=tuple(marks),
                                      secret=self.contents.secret, shield_open=self.contents.shield_open)


class Broken:
    """A camera that is not there."""

    def read(self):
        raise OSError("camera picamera2: no camera found")


def _until(what: str, test, program: TableProgram | None = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while not test():
        if time.monotonic() > deadline:
            pytest.fail(f"never got to: {what}")
        if program is not None:
            program.step(timeout=0.01)
        else:
            time.sleep(0.01)  # a poll of the condition, not a wait for time to pass


@pytest.fixture
def table(tmp_path):
    board = Board()
    program = TableProgram.open(tmp_path / "table.sqlite", players=("Ann", "Bob"))
    setup = GuidedSetup(program, PROFILE, RenderedSource(PROFILE, lambda: board.contents, CAMERA, seed=3),
                        save_to=tmp_path / "calibration.json", worker_options={"frames_to_accept": 2})
    yield SimpleNamespace(board=board, program=program, setup=setup, path=tmp_path)
    setup.close()
    program.close()


def _walk(t, *buttons: Button) -> None:
    for button in buttons:
        t.setup.step_once()  # the arbiter presses what the display says now
        t.setup.press(button)
        t.setup.step_once()
        t.program.step()


def _readings(program: TableProgram, row: int, phase: str) -> list:
    return [e.payload for e in program.journal.events() if e.kind == "reading"
            and e.payload.get("row") == row and e.payload.get("phase") == phase]


def test_markers_empty_board_and_layout_give_a_table_that_reads_rows(table):
    t = table
    t.setup.step_once()
    model = t.setup.overlay(t.program.display_model())
    assert model.table == "SET-UP" and model.banner == "SET-UP 1/3 BOARD"
    assert model.message.text == "MARKERS 4: ARB OK"
    _walk(t, Button.OK)  # the board found by its markers: confirmed
    assert t.setup.step is Step.EMPTY
    _walk(t, Button.OK)  # the board is clear: learn it
    assert t.setup.step is Step.COLOURS and t.setup.calibration.trust == "low"
    assert set(t.setup.calibration.not_learned) == set(PROFILE.palette)
    assert (t.path / "calibration.json").is_file()  # kept at once
    _walk(t, Button.LEFT)
    assert t.setup.step is Step.LAYOUT
    t.board.lay_out()
    _walk(t, Button.OK)
    assert t.setup.step is Step.DONE and t.setup.calibration.trust == "full"
    assert Calibration.load(t.path / "calibration.json").trust == "full"
    assert t.setup.overlay(t.program.display_model()).table != "SET-UP"
    steps = [e.payload.get("step") for e in t.program.journal.events() if e.kind == "setup"]
    assert steps[0] == "board" and steps[-1] == "done"  # every step journaled
    # The table reads: a game, a guess confirmed by the codebreaker's press, read by the camera.
    t.board.clear()
    t.program.press(0)
    t.board.place(1, guess=("blue", "red", "yellow", "green"))
    t.program.press(1)
    _until("the guess read", lambda: _readings(t.program, 1, "guess"), t.program)
    reading = _readings(t.program, 1, "guess")[0]
    assert reading["status"] == "ok" and list(reading["guess"]) == ["blue", "red", "yellow", "green"]


def test_low_trust_never_accuses_and_learns_from_the_rows_the_arbiter_confirms(table):
    t = table
    _walk(t, Button.OK, Button.OK, Button.RIGHT)  # markers, empty board, then colours from the rows
    assert t.setup.step is Step.ROWS and t.program.worker is t.setup.worker
    model = t.setup.overlay(t.program.display_model())
    assert model.table == "SET-UP" and model.message.text == "SET-UP: LOW TRUST"
    t.program.press(0)

    def play(number, guess, keys):
        t.board.place(number, guess=guess)
        t.program.press(1)
        _until(f"row {number}'s guess answered", lambda: _readings(t.program, number, "guess"), t.program)
        t.board.place(number, keys=keys)
        t.program.press(0)
        _until(f"row {number}'s marks answered", lambda: _readings(t.program, number, "marks"), t.program)
        answers = _readings(t.program, number, "guess") + _readings(t.program, number, "marks")
        assert all(r["trust"] == "low" for r in answers)  # never a verdict on its own
        return answers

    # Colours never seen read unknown: the row goes to the arbiter, who enters it as it is.
    first = (("red", "orange", "yellow", "green"), (2, 1))
    answers = play(1, *first)
    assert all(r["status"] != "ok" and "candidates" not in r for r in answers)
    assert 1 in t.program.flow.checks()
    assert t.setup.overlay(t.program.display_model()).message.text == "CHECK ROW 1"
    t.program.arbiter("confirm_row", game=1, row=1, guess=list(first[0]), black=2, white=1)
    t.program.step()
    _until("row 1 learned", lambda: (t.setup.step_once() or True) and
           {(1, 1, "guess"), (1, 1, "marks")} <= t.setup._learned_rows)
    assert t.setup.step is Step.ROWS and set(t.setup.machine.to_learn) == {"blue", "purple", "white", "black"}
    # Colours learned now read as they are, still marked low trust (the flow never accuses from those).
    answers = play(2, ("green", "yellow", "red", "orange"), (2, 1))
    assert answers[0]["status"] == "ok" and list(answers[0]["guess"]) == ["green", "yellow", "red", "orange"]
    t.setup.step_once()
    assert (1, 2, "guess") not in t.setup._learned_rows  # the camera's own reading teaches nothing
    assert not any(isinstance(v, Mismark) for v in t.program.verdicts)
    # The rest of the colours, from a row the arbiter confirms: the table is calibrated.
    last = (("blue", "purple", "white", "black"), (1, 2))
    play(3, *last)
    t.program.arbiter("confirm_row", game=1, row=3, guess=list(last[0]), black=1, white=2)
    t.program.step()
    _until("row 3 learned", lambda: (t.setup.step_once() or True) and t.setup.step is Step.DONE)
    assert t.setup.calibration.trust == "full"
    assert t.setup.overlay(t.program.display_model()).table != "SET-UP"


def test_a_board_without_markers_is_found_by_its_outline_and_kept_by_its_corners(tmp_path):
    board = Board()
    program = TableProgram.open(tmp_path / "t.sqlite", players=("Ann", "Bob"))
    source = RenderedSource(PROFILE, lambda: board.contents, CAMERA.with_(markers=False), seed=3)
    setup = GuidedSetup(program, PROFILE, source, save_to=tmp_path / "cal.json")
    try:
        setup.step_once()
        assert setup.machine.seen.found and setup.machine.seen.method == "best-effort"
        assert setup.overlay(program.display_model()).message.text == "CORNERS: ARB OK"
        for button in (Button.OK, Button.OK):
            setup.press(button)
            setup.step_once()
        assert setup.step is Step.COLOURS and setup.calibration.method == "corners"
        corners = np.array(setup.calibration.corners_px)
        assert corners.shape == (4, 2) and np.all(np.isfinite(corners))
    finally:
        setup.close()
        program.close()


def test_no_camera_says_so_and_the_clock_goes_on(tmp_path):
    program = TableProgram.open(tmp_path / "t.sqlite", players=("Ann", "Bob"))
    setup = GuidedSetup(program, PROFILE, Broken())
    try:
        setup.step_once()
        model = setup.overlay(program.display_model())
        assert model.message.text == "SET-UP: NO CAMERA" and model.table == "SET-UP"
        setup.press(Button.OK)
        setup.step_once()
        assert setup.step is Step.BOARD  # nothing found, nothing confirmed
        # With no camera there is nothing to set up: the buttons stay the clock's.
        assert not setup.owns_buttons
        buttons = setup.buttons(ArbiterButton(program))
        buttons.player(0, program.now_ns())
        program.step()
        assert [e.kind for e in program.journal.events()].count("press") == 1
        # The clock does not wait for the camera: the codemaker's press started the codebreaker's time.
        assert program.running_seat(program.now_ns()) == 1
    finally:
        setup.close()
        program.close()


def test_the_dialogue_holds_the_buttons_and_the_hold_gives_them_back(table):
    t = table
    t.setup.step_once()  # the camera's first frame
    buttons = t.setup.buttons(ArbiterButton(t.program))
    buttons.player(0, t.program.now_ns())
    t.program.step()
    assert not [e for e in t.program.journal.events() if e.kind == "press"]  # the set-up's, not the match's
    buttons.held(t.program.now_ns())
    t.setup.step_once()
    assert t.setup.step is Step.LATER and not t.setup.owns_buttons and t.program.worker is None
    assert t.setup.overlay(t.program.display_model()).message.text == "SET-UP: ROWS BY HAND"
    buttons.player(0, t.program.now_ns())
    t.program.step()
    assert [e.kind for e in t.program.journal.events()].count("press") == 1


def test_a_restart_carries_on_from_the_calibration_it_saved(table):
    t = table
    _walk(t, Button.OK, Button.OK)
    t.setup.close()
    cfg = SimpleNamespace(calibration=None, camera="render", board=PROFILE.name, vision=VisionOptions(),
                          evidence=True)
    desk = SimpleNamespace(guided_setup=True)
    again = guided_setup(cfg, t.program, desk=desk,
                         open_source=lambda: RenderedSource(PROFILE, lambda: t.board.contents, CAMERA))
    try:
        assert again is not None and again.step is Step.ROWS  # the empty board is not asked for again
        assert again.calibration.trust == "low" and again.save_to == t.path / "calibration.json"
        again.start()
        assert t.program.worker is again.worker and again.worker is not None
    finally:
        again.close()
    # A table with a calibration, or the desktop's self-calibrating desk, needs no set-up.
    assert guided_setup(SimpleNamespace(calibration=t.path / "calibration.json"), t.program, desk=None,
                        open_source=lambda: None) is None
    assert guided_setup(cfg, t.program, desk=SimpleNamespace(), open_source=lambda: None) is None


def test_a_game_under_way_keeps_its_buttons_while_the_set_up_waits(table):
    t = table
    t.setup.step_once()
    assert t.setup.owns_buttons  # before the first game: the set-up's
    t.program.press(0)  # a game starts (say the table restarted in one)
    t.program.step()
    assert not t.setup.owns_buttons
    model = t.setup.overlay(t.program.display_model())
    assert model.table == "SET-UP" and model.banner != "SET-UP 1/3 BOARD"
    buttons = t.setup.buttons(ArbiterButton(t.program))
    buttons.player(1, t.program.now_ns())
    t.program.step()
    assert [e.kind for e in t.program.journal.events()].count("press") == 2


def test_with_preview_enabled_the_set_up_serves_the_camera_page(table):
    import json
    import socket
    import urllib.request

    from pegwatch.device.preview import PreviewSettings

    t = table
    t.setup.close()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = SimpleNamespace(calibration=None, camera="render", board=PROFILE.name, vision=VisionOptions(),
                          evidence=True, table_name="Table 4",
                          preview=PreviewSettings(enabled=True, listen=f"127.0.0.1:{port}", fps=10))
    setup = guided_setup(cfg, t.program, desk=SimpleNamespace(guided_setup=True),
                         open_source=lambda: RenderedSource(PROFILE, lambda: t.board.contents, CAMERA))
    try:
        setup.start()
        camera, page = setup.companions
        _until("the page up", lambda: page.started)
        # The set-up's own reads feed the page: no second reader of the camera.
        _until("a frame on the page", lambda: camera.latest is not None)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status.json", timeout=10) as reply:
            status = json.loads(reply.read())
        assert status["look"]["markers_found"] is True
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as reply:
            assert "pegwatch camera: Table 4" in reply.read().decode()
    finally:
        setup.close()
    assert not page._thread.is_alive()


class Frames:
    """A camera showing whichever picture the test puts in front of it."""

    def __init__(self, image: np.ndarray) -> None:
        self.image = image

    def read(self):
        return self.image.copy(), time.monotonic_ns()


def _card_beside(board: np.ndarray, shot) -> np.ndarray:
    """``board``'s picture with the swatch card below it, a peg on each circle
    cut from ``shot`` (the same camera's photo of the layout's pegs)."""
    from pegwatch.vision.swatch import card_for, render_card

    ppm = 3.0  # the card's pixels per mm, about the board's
    card = card_for(PROFILE)
    sheet = np.asarray(render_card(PROFILE, dpi=round(ppm * 25.4)))[:, :, ::-1].copy()
    where: dict[tuple[str, str], tuple[float, float]] = {}
    for r, guess in enumerate(shot.contents.guesses):
        for c, xy in zip(guess or (), PROFILE.hole_centres_mm(r + 1), strict=False):
            where.setdefault(("code", c), xy)
        for c, xy in zip(shot.key_positions[r], PROFILE.key_centres_mm(r + 1), strict=True):
            where.setdefault(("key", c), xy)
    for s in card.swatches:
        cx, cy = shot.project([where[(s.kind, s.name)]])[0]
        rad = s.diameter_mm / 2 * ppm * 1.05
        half = int(np.ceil(rad)) + 1
        patch = shot.image[round(cy) - half: round(cy) + half + 1, round(cx) - half: round(cx) + half + 1]
        yy, xx = np.mgrid[-half: half + 1, -half: half + 1]
        inside = np.hypot(xx, yy) <= rad
        tx, ty = round(s.centre_mm[0] * ppm), round(s.centre_mm[1] * ppm)
        sheet[ty - half: ty + half + 1, tx - half: tx + half + 1][inside] = patch[inside]
    h, w = board.shape[:2]
    photo = np.full((h + sheet.shape[0] + 20, max(w, sheet.shape[1]), 3), 120, np.uint8)
    photo[:h, :w] = board
    photo[h + 10: h + 10 + sheet.shape[0], 40: 40 + sheet.shape[1]] = sheet
    return photo


def test_the_swatch_card_beside_the_board_teaches_every_colour(tmp_path):
    from pegwatch.simulation.render import render

    board = Board()
    empty = render(PROFILE, board.contents, CAMERA, seed=3).image
    board.lay_out()  # only to cut the card's pegs from: the board itself is cleared again
    pegs = render(PROFILE, board.contents, CAMERA, seed=3)
    camera = Frames(empty)
    program = TableProgram.open(tmp_path / "t.sqlite", players=("Ann", "Bob"))
    setup = GuidedSetup(program, PROFILE, camera, save_to=tmp_path / "cal.json")
    try:
        for button in (Button.OK, Button.OK, Button.LEFT):
            setup.step_once()
            setup.press(button)
            setup.step_once()
        assert setup.step is Step.LAYOUT
        assert setup.overlay(program.display_model()).message.text == "CARD/LAYOUT: ARB OK"
        # The board stays empty: every colour must come from the card.
        camera.image = _card_beside(empty, pegs)
        setup.press(Button.OK)
        setup.step_once()
        assert setup.step is Step.DONE and setup.calibration.trust == "full"
        assert setup.calibration.not_learned == () and setup.calibration.keys_not_learned == ()
    finally:
        setup.close()
        program.close()


def test_a_step_that_fails_says_so_and_the_next_press_tries_again(tmp_path):
    from pegwatch.simulation.render import render

    empty = render(PROFILE, Board().contents, CAMERA, seed=3).image
    camera = Frames(empty)
    program = TableProgram.open(tmp_path / "t.sqlite", players=("Ann", "Bob"))
    setup = GuidedSetup(program, PROFILE, camera, save_to=tmp_path / "cal.json")
    try:
        setup.step_once()
        setup.press(Button.OK)
        setup.step_once()
        assert setup.step is Step.EMPTY
        camera.image = np.zeros_like(empty)  # a sleeve over the lens as the arbiter presses
        setup.press(Button.OK)
        setup.step_once()
        program.step()
        assert setup.step is Step.EMPTY and setup.calibration is None
        assert setup.overlay(program.display_model()).message.text == "FAILED: ARB RETRY"
        said = [e.payload.get("status", "") for e in program.journal.events() if e.kind == "setup"]
        assert said[-1].startswith("set-up: not learned (")  # a journaled line: the display wakes for it
        camera.image = empty
        setup.press(Button.OK)
        setup.step_once()
        assert setup.step is Step.COLOURS and setup.calibration is not None
        assert Calibration.load(tmp_path / "cal.json").trust == "low"
    finally:
        setup.close()
        program.close()
