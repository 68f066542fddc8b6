"""The table configuration: documented defaults, one clear line for every wrong value."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from pegwatch.device.errors import ConfigError
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.table.config import (
    DEFAULT_CONFIG,
    TableConfig,
    default_journal_path,
    find_config,
    is_raspberry_pi,
    load_config,
)
from pegwatch.rules.errors import PegwatchError

NOT_A_PI = Path("/nonexistent/device-tree/model")


def write(tmp_path: Path, text: str, name: str = "pegwatch.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path, model_path=NOT_A_PI)
    message = str(info.value)
    assert "\n" not in message
    assert isinstance(info.value, PegwatchError)
    assert message.startswith(f"{path}: ") or message.startswith("pegwatch.toml: ")
    return message


def test_repository_file_loads_with_desktop_defaults(monkeypatch):
    monkeypatch.delenv("PEGWATCH_CONFIG", raising=False)
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    config = load_config(model_path=NOT_A_PI)
    assert config.source == DEFAULT_CONFIG
    assert config.players == ("Player A", "Player B")
    assert config.rules == "mso"
    assert config.clock == "mso-mastermind"
    assert config.board == "invicta-12x4"
    assert config.calibration is None
    assert config.camera == "render"
    assert config.hardware == "auto"
    assert config.simulated and not config.on_pi
    assert config.evidence is True
    assert config.journal == default_journal_path()
    assert isinstance(config.pins, PinMap)
    assert config.vision.frames_to_accept >= 1


def test_documented_file_sets_every_key_of_its_sections():
    # The shipped file documents every key this module reads, so an arbiter
    # sees all the options where they stand.
    data = tomllib.loads(DEFAULT_CONFIG.read_text())
    from pegwatch.device.table.config import _KEYS

    for section, keys in _KEYS.items():
        assert section in data, section
        assert sorted(data[section]) == sorted(keys), section


def test_empty_file_gives_the_same_defaults(tmp_path):
    config = load_config(write(tmp_path, ""), model_path=NOT_A_PI)
    assert config.players == ("Player A", "Player B")
    assert config.camera == "render"
    assert config.journal == default_journal_path()


def test_on_a_pi_auto_means_real_hardware_and_picamera2(tmp_path):
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert is_raspberry_pi(model)
    assert not is_raspberry_pi(NOT_A_PI)
    config = load_config(write(tmp_path, ""), model_path=model)
    assert config.on_pi and config.camera == "picamera2"
    forced = load_config(write(tmp_path, '[hardware]\nmode = "simulated"\n'), model_path=model)
    assert forced.simulated and forced.camera == "render"
    pi = load_config(write(tmp_path, '[hardware]\nmode = "pi"\n'), model_path=NOT_A_PI)
    assert pi.on_pi and pi.camera == "picamera2"


def test_values_are_read_and_paths_resolve_beside_the_file(tmp_path):
    (tmp_path / "cal.json").write_text("{}")
    (tmp_path / "frames").mkdir()
    path = write(
        tmp_path,
        """
        [table]
        name = "Table 7"
        board = "lego-10x4"
        calibration = "cal.json"
        [match]
        players = ["Ann", "Bob"]
        rules = "mso-5"
        [camera]
        source = "images:frames"
        resolution = [1280, 960]
        fps = 15
        [vision]
        frames_to_accept = 5
        motion_threshold = 6.5
        [journal]
        path = "state/j.sqlite"
        evidence = false
        evidence_jpeg_quality = 70
        max_mb = 64
        [hardware]
        mode = "simulated"
        [pins]
        player_buttons = [23, 24]
        """.replace("\n        ", "\n"),
    )
    config = load_config(path, model_path=NOT_A_PI)
    assert config.table_name == "Table 7"
    assert config.board == "lego-10x4"
    assert config.calibration == tmp_path / "cal.json"
    assert config.players == ("Ann", "Bob")
    assert config.rules == "mso-5"
    assert config.camera == f"images:{tmp_path / 'frames'}"
    assert config.vision.resolution == (1280, 960)
    assert config.vision.fps == 15.0
    assert config.vision.frames_to_accept == 5
    assert config.vision.motion_threshold == 6.5
    assert config.vision.jpeg_quality == 70
    assert config.journal == tmp_path / "state" / "j.sqlite"
    assert config.journal_max_bytes == 64 * 1024 * 1024
    assert config.evidence is False
    assert config.pins.player_buttons == (23, 24)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[table]\nplayerz = 1\n", "table.playerz: unknown key; allowed: name, board, calibration"),
        ("[match]\nplayerz = 1\n", "match.playerz: unknown key; allowed: players, rules, clock"),
        ("[tabel]\n", "[tabel]: unknown section; allowed: table, match, camera"),
        ("table = 3\n", "table: must be a table ([table]), not a value"),
        ('[match]\nplayers = ["Ann"]\n', "match.players: ['Ann'] is not allowed; give two names"),
        ('[match]\nplayers = ["Ann", ""]\n', "match.players[1]: '' is not a name"),
        ('[match]\nplayers = ["Ann", "ann"]\n', "match.players: both players are called 'Ann'"),
        (
            '[match]\nrules = "chess"\n',
            "match.rules: 'chess' is not a known rules preset; allowed: hasbro",
        ),
        ("[match]\nrules = 5\n", "match.rules: 5 is not a string"),
        (
            '[match]\nclock = "blitz"\n',
            "match.clock: 'blitz' is not a known clock preset; allowed: mso-mastermind",
        ),
        (
            '[table]\nboard = "pegboard"\n',
            "table.board: 'pegboard' is not a known board profile; allowed: invicta-12x4",
        ),
        (
            '[table]\nboard = "nope/board.toml"\n',
            "table.board: 'nope/board.toml': no such profile file",
        ),
        ('[table]\ncalibration = "cal.json"\n', "table.calibration: 'cal.json': no such file"),
        ('[table]\nname = ""\n', "table.name: '' is not allowed; 1 to 24 characters"),
        (
            '[camera]\nsource = "kinect"\n',
            "camera.source: 'kinect' is not a camera source; allowed: auto, render, picamera2",
        ),
        (
            '[camera]\nsource = "webcam:x"\n',
            "camera.source: 'webcam:x': the webcam number must be 0, 1",
        ),
        (
            '[camera]\nsource = "video:missing.mp4"\n',
            "camera.source: 'video:missing.mp4': no such video file",
        ),
        ('[camera]\nsource = "images"\n', "camera.source: 'images': images needs a path"),
        ('[camera]\nsource = "render:3"\n', "camera.source: 'render:3': render takes no argument"),
        (
            "[camera]\nresolution = [640]\n",
            "camera.resolution: [640] is not allowed; give [width, height]",
        ),
        ("[camera]\nresolution = [64, 48]\n", "camera.resolution: [64, 48] is out of range"),
        ("[camera]\nfps = 0\n", "camera.fps: 0 is out of range; allowed 1..60"),
        ('[camera]\nfps = "fast"\n', "camera.fps: 'fast' is not a number; allowed 1..60"),
        (
            '[camera]\nfocus = "continuous"\n',
            "camera.focus: 'continuous' is not a known focus; allowed: distance, once",
        ),
        ("[camera]\nfocus_cm = 0\n", "camera.focus_cm: 0 is out of range; allowed 5..300"),
        (
            "[vision]\nframes_to_accept = 0\n",
            "vision.frames_to_accept: 0 is out of range; allowed 1..30",
        ),
        (
            "[vision]\nframes_to_accept = 2.5\n",
            "vision.frames_to_accept: 2.5 is not a whole number",
        ),
        (
            "[vision]\nframes_to_accept = true\n",
            "vision.frames_to_accept: True is not a whole number",
        ),
        ("[vision]\nmotion_threshold = nan\n", "vision.motion_threshold: nan is not a number"),
        (
            '[journal]\nevidence = "yes"\n',
            "journal.evidence: 'yes' is not allowed; use true or false",
        ),
        ('[journal]\npath = ""\n', 'journal.path: "" is not allowed; give a file path, or "auto"'),
        ('[journal]\npath = "."\n', "journal.path: '.' is a directory"),
        ("[journal]\nmax_mb = -1\n", "journal.max_mb: -1 is out of range"),
        (
            "[journal]\nevidence_jpeg_quality = 101\n",
            "journal.evidence_jpeg_quality: 101 is out of range; allowed 30..100",
        ),
        (
            '[hardware]\nmode = "arduino"\n',
            "hardware.mode: 'arduino' is not a known hardware mode; allowed: auto, pi, simulated",
        ),
        ("[pins]\nplayer_buttons = [17, 17]\n", "pins.player_buttons"),
        ('[display]\nkind = "ssd1306"\n[pins]\narbiter_button = 2\n', "pins.arbiter_button"),
        ("[display]\nrotate = 7\n", "display.rotate"),
        ("[buzzer]\nkind = 'siren'\n", "buzzer.kind: 'siren' is not allowed"),
    ],
)
def test_wrong_values_name_file_key_and_what_is_allowed(tmp_path, text, expected):
    message = error_of(tmp_path, text)
    assert expected in message, message


def test_toml_syntax_errors_name_the_file_and_line(tmp_path):
    message = error_of(tmp_path, '[match]\nplayers = ["Ann"\nrules = 3\n')
    assert "not valid TOML" in message
    assert re.search(r"line \d+", message)


def test_missing_and_unreadable_files(tmp_path):
    with pytest.raises(ConfigError, match=r"nothere\.toml: no such file"):
        load_config(tmp_path / "nothere.toml")
    with pytest.raises(ConfigError, match="is a directory"):
        load_config(tmp_path)
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'[table]\nname = "Caf\xe9"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(bad)


def test_environment_variable_picks_the_file(tmp_path, monkeypatch):
    path = write(tmp_path, '[match]\nplayers = ["Cy", "Di"]\n', "other.toml")
    monkeypatch.setenv("PEGWATCH_CONFIG", str(path))
    assert find_config() == path
    assert load_config(model_path=NOT_A_PI).players == ("Cy", "Di")
    # An explicit path wins over the environment.
    assert find_config(tmp_path / "x.toml") == tmp_path / "x.toml"


def test_journal_auto_path_follows_systemd_then_xdg(tmp_path):
    assert default_journal_path({"STATE_DIRECTORY": "/var/lib/pegwatch"}) == Path(
        "/var/lib/pegwatch/journal.sqlite"
    )
    assert default_journal_path({"XDG_STATE_HOME": str(tmp_path)}) == (
        tmp_path / "pegwatch" / "journal.sqlite"
    )
    assert default_journal_path({}) == Path.home() / ".local/state/pegwatch/journal.sqlite"
    # A relative XDG_STATE_HOME is invalid by the spec and ignored.
    assert default_journal_path({"XDG_STATE_HOME": "rel"}) == default_journal_path({})


def test_snapshot_is_json_for_the_journal(tmp_path):
    config = load_config(write(tmp_path, ""), model_path=NOT_A_PI)
    snap = config.snapshot()
    assert json.loads(json.dumps(snap)) == snap
    assert snap["players"] == ["Player A", "Player B"]
    assert snap["pins"]["arbiter_button"] == config.pins.arbiter_button
    assert snap["source"] == str(tmp_path / "pegwatch.toml")


def test_config_is_frozen():
    config = TableConfig()
    with pytest.raises(AttributeError):
        config.rules = "hasbro"  # type: ignore[misc]


def test_the_table_program_reports_a_bad_file_in_one_line_and_exit_2(tmp_path, capsys):
    from pegwatch.device import cli

    parser = cli.build_parser()
    if "run" not in parser.format_help():
        pytest.skip("pegwatch run is not there yet")
    path = write(tmp_path, '[match]\nplayers = ["Ann", "Bob"]\nrules = "chess"\n')
    assert cli.main(["run", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"pegwatch run: {path}: match.rules: 'chess' is not a known rules preset")
