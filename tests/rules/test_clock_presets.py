"""Clock presets (rules/data/clocks.toml), event preset files and durations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.rules.clock import (
    Clock,
    ClockPreset,
    DelayKind,
    DurationError,
    InvalidPlayerError,
    OvertimeKind,
    PresetFileError,
    Stage,
    StageAdvance,
    TimeControl,
    UnknownClockPresetError,
    format_duration,
    get_preset,
    load_presets,
    parse_duration,
    parse_presets,
    preset_names,
)
from pegwatch.rules.errors import PegwatchError

S = 1_000_000_000
MIN = 60 * S


# ----------------------------------------------------------------------
# Built-in presets


def test_required_presets_exist() -> None:
    names = preset_names()
    for name in ("mso-mastermind", "mensa-connection", "fide-classical", "blitz-3+2"):
        assert name in names
    assert len(names) == len(set(names))


def test_every_builtin_preset_builds_a_clock() -> None:
    for name in preset_names():
        preset = get_preset(name)
        for n in preset.players:
            roles = None if len(preset.roles) in (1, n) else preset.roles[:n]
            clock = Clock.from_preset(preset, players=n, roles=roles)
            assert clock.players == n
            view = clock.view(0)
            assert all(r > 0 or up for r, up in zip(view.remaining_ns, view.count_up, strict=True))


def test_mso_mastermind_timings_from_seed_000() -> None:
    p = get_preset("mso-mastermind")
    assert p.control("codebreaker") == TimeControl.sudden_death(8 * MIN)
    assert p.control("codemaker") == TimeControl.sudden_death(4 * MIN)
    assert p.roles == ("codemaker", "codebreaker")
    assert p.players == (2,)
    assert p.freeze_at_flag


def test_mensa_connection_from_seed_001() -> None:
    p = get_preset("mensa-connection")
    assert p.players == (2, 4)
    assert p.skip_flagged and not p.freeze_at_flag
    assert p.control("player") == TimeControl.sudden_death(20 * MIN)
    with pytest.raises(InvalidPlayerError, match="2 or 4 players, not 3"):
        Clock.from_preset(p, players=3)


def test_fide_and_blitz() -> None:
    assert get_preset("fide-classical").controls == (TimeControl.fischer(90 * MIN, 30 * S),)
    assert get_preset("blitz-3+2").controls == (TimeControl.fischer(3 * MIN, 2 * S),)
    two_stage = get_preset("fide-90-40").controls[0]
    assert [s.time_ns for s in two_stage.stages] == [90 * MIN, 30 * MIN]
    assert two_stage.stages[0].moves == 40
    assert two_stage.advance is StageAdvance.MOVES
    assert get_preset("fide-90-40-flag").controls[0].advance is StageAdvance.FLAG
    assert get_preset("us-g90-d5").controls[0].stages[0].delay_kind is DelayKind.US
    assert get_preset("bronstein-25-10").controls[0].stages[0].delay_kind is DelayKind.BRONSTEIN
    ot = get_preset("byo-yomi-60-5x30").controls[0].overtime
    assert ot is not None and ot.kind is OvertimeKind.BYO_YOMI and ot.periods == 5
    ot = get_preset("canadian-60-15in5").controls[0].overtime
    assert ot is not None and ot.kind is OvertimeKind.CANADIAN and ot.moves == 15


def test_unknown_preset_lists_the_known_names() -> None:
    with pytest.raises(UnknownClockPresetError, match="mso-mastermind") as info:
        get_preset("mso-mastermnd")
    assert "'mso-mastermnd'" in str(info.value)
    assert isinstance(info.value, PegwatchError)
    with pytest.raises(UnknownClockPresetError):
        Clock.from_preset("nope")


def test_roles_must_be_known_and_complete() -> None:
    with pytest.raises(InvalidPlayerError, match="no role 'referee'"):
        Clock.from_preset("mso-mastermind", roles=("codemaker", "referee"))
    with pytest.raises(InvalidPlayerError, match="1 roles given for 2 players"):
        Clock.from_preset("mso-mastermind", roles=("codemaker",))
    with pytest.raises(PegwatchError, match="unknown clock option"):
        Clock.from_preset("mso-mastermind", freeze=False)


def test_options_override_preset_defaults() -> None:
    c = Clock.from_preset("fide-classical", freeze_at_flag=False, debounce_ns=5)
    assert not c.freeze_at_flag and c.debounce_ns == 5


# ----------------------------------------------------------------------
# An event's own presets file


EVENT_FILE = """
[presets.mso-2027-final]
description = "Final: longer thinking time"
roles = ["codemaker", "codebreaker"]
[presets.mso-2027-final.controls]
codebreaker = { time = "10:00" }
codemaker = { time = "5:00", increment = "5s" }

[presets.go-club]
players = 2
[presets.go-club.control]
time = "1h"
overtime = { kind = "byo-yomi", periods = 3, period = "30s" }

[presets.pgn-style]
control = { pgn = "40/5400+30:1800+30", advance = "flag" }

[presets.two-stage]
control = { advance = "flag", stages = [{ time = "1:30:00", moves = 40 }, { time = "30:00" }] }
"""


def test_event_presets_file(tmp_path: Path) -> None:
    path = tmp_path / "event.toml"
    path.write_text(EVENT_FILE, encoding="utf-8")
    presets = load_presets(path)
    assert list(presets) == ["mso-2027-final", "go-club", "pgn-style", "two-stage"]
    pgn = presets["pgn-style"].controls[0]
    assert pgn.to_pgn() == "40/5400+30:1800+30" and pgn.advance is StageAdvance.FLAG
    final = presets["mso-2027-final"]
    assert final.roles == ("codemaker", "codebreaker")
    assert final.control("codemaker") == TimeControl.fischer(5 * MIN, 5 * S)
    assert presets["go-club"].control("player") == TimeControl.byo_yomi(60 * MIN, 3, 30 * S)
    assert presets["two-stage"].controls[0].advance is StageAdvance.FLAG
    # An event preset is found before (or besides) the built-ins.
    assert get_preset("go-club", presets) is presets["go-club"]
    assert get_preset("blitz-3+2", presets).name == "blitz-3+2"
    c = Clock.from_preset(get_preset("mso-2027-final", presets), roles=("codebreaker", "codemaker"))
    assert c.view(0).remaining_ns == (10 * MIN, 5 * MIN)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[presets.x]\ncontrol = { time = 'soon' }\n", "presets.x.control.time"),
        ("[presets.x]\ncontrol = { tme = '5:00' }\n", "presets.x.control.tme"),
        (
            "[presets.x]\ncontrol = { time = '5:00', delay_kind = 'fide' }\n",
            "presets.x.control.delay_kind",
        ),
        ("[presets.x]\ncontrol = { time = '5:00' }\nplayers = [5]\n", "presets.x.players"),
        (
            "[presets.x]\ncontrol = { time = '5:00' }\nskip_flagged = 'yes'\n",
            "presets.x.skip_flagged",
        ),
        ("[presets.x]\ndescription = 'no control'\n", "presets.x"),
        (
            "[presets.x]\ncontrol = { stages = [{ time = '5:00' }, { time = '1:00' }] }\n",
            "presets.x.control",
        ),
        (
            "[presets.x]\ncontrol = { time = '5:00', overtime = { kind = 'byo-yomi' } }\n",
            "presets.x.control.overtime",
        ),
        (
            "[presets.x]\ncontrol = { time = '5:00', overtime = { kind = 'byo', period = '30s' } }\n",
            "presets.x.control.overtime.kind",
        ),
        (
            "[presets.x]\nroles = ['a', 'c']\n[presets.x.controls]\na = { time = '1:00' }\nb = { time = '1:00' }\n",
            "presets.x.roles",
        ),
        ("[presets.x]\ncontrols = { a = { time = 3 }, b = 7 }\n", "presets.x.controls.b"),
        ("[clocks.x]\ncontrol = { time = '5:00' }\n", "(top level).clocks"),
        ("[presets.x\n", "not valid TOML"),
        ("[presets.x]\ncontrol = { pgn = '40/7200' }\n", "presets.x.control.pgn"),
        ("[presets.x]\ncontrol = { pgn = '300', time = '5:00' }\n", "presets.x.control.time"),
    ],
)
def test_bad_preset_files_name_file_and_key(tmp_path: Path, text: str, where: str) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PresetFileError) as info:
        load_presets(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert where in message
    assert "\n" not in message


def test_missing_presets_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "missing.toml"
    with pytest.raises(PresetFileError, match=f"^{re.escape(str(path))}: no such file"):
        load_presets(path)


def test_preset_dataclass_is_frozen_and_checked() -> None:
    p = get_preset("blitz-3+2")
    with pytest.raises(AttributeError):
        p.name = "x"  # type: ignore[misc]
    with pytest.raises(PresetFileError):
        ClockPreset("x", "", ("a", "b"), (TimeControl.sudden_death(MIN),))


def test_parse_presets_source_name() -> None:
    with pytest.raises(PresetFileError, match=r"^event sheet: presets\.y\.control\.time"):
        parse_presets("[presets.y]\ncontrol = { time = -3 }\n", source="event sheet")


# ----------------------------------------------------------------------
# Durations


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("90:00", 90 * MIN),
        ("1:30:00", 90 * MIN),
        ("4:00", 4 * MIN),
        ("0:59.5", 59 * S + S // 2),
        ("30s", 30 * S),
        ("1h30m", 90 * MIN),
        ("2m 5s", 125 * S),
        ("250ms", S // 4),
        ("1.5s", 3 * S // 2),
        ("7ns", 7),
        ("30", 30 * S),
        (30, 30 * S),
        (0.1, S // 10),
        ("20min", 20 * MIN),
    ],
)
def test_parse_duration(text: str | int | float, ns: int) -> None:
    assert parse_duration(text) == ns


@pytest.mark.parametrize(
    "text", ["", "soon", "1:60", "1:61:00", "-5s", "1.5ns", -1, True, "5 s x", None]
)
def test_bad_durations(text: object) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (90 * MIN, "1:30:00"),
        (4 * MIN, "4:00"),
        (30 * S, "30s"),
        (S // 4, "0.25s"),
        (0, "0s"),
        (61 * S + 5, "1:01.000000005"),
    ],
)
def test_format_duration(ns: int, text: str) -> None:
    assert format_duration(ns) == text


@settings(max_examples=200)
@given(st.integers(min_value=0, max_value=10**15))
def test_duration_text_round_trips(ns: int) -> None:
    assert parse_duration(format_duration(ns)) == ns


# ----------------------------------------------------------------------
# PGN TimeControl tag


@pytest.mark.parametrize(
    ("text", "control"),
    [
        ("300", TimeControl.sudden_death(5 * MIN)),
        ("180+2", TimeControl.fischer(3 * MIN, 2 * S)),
        ("5400+30", TimeControl.fischer(90 * MIN, 30 * S)),
        (
            "40/5400+30:1800+30",
            TimeControl(
                (
                    Stage(90 * MIN, moves=40, increment_ns=30 * S),
                    Stage(30 * MIN, increment_ns=30 * S),
                )
            ),
        ),
        ("0.5+0.25", TimeControl.fischer(S // 2, S // 4)),
    ],
)
def test_pgn_time_control_round_trip(text: str, control: TimeControl) -> None:
    assert TimeControl.from_pgn(text) == control
    assert control.to_pgn() == text


@pytest.mark.parametrize("text", ["40/7200", "?", "-", "*180", "abc", "300:60", "40/0:0"])
def test_bad_pgn_time_controls(text: str) -> None:
    with pytest.raises(PegwatchError, match="time control"):
        TimeControl.from_pgn(text)


def test_pgn_cannot_express_delay_or_overtime() -> None:
    with pytest.raises(PegwatchError, match="no PGN"):
        TimeControl.us_delay(MIN, 5 * S).to_pgn()
    with pytest.raises(PegwatchError, match="no PGN"):
        TimeControl.byo_yomi(MIN, 5, 30 * S).to_pgn()
