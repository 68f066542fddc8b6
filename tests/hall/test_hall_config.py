"""``[hall]`` in the table configuration: checked key by key; absent, the table works alone; present, `pegwatch run` publishes."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hall_kit import TOURNAMENT, Listener, wait_until

from pegwatch.device.errors import ConfigError
from pegwatch.device.table.config import config_from_mapping
from pegwatch.device.table.hall.settings import HallSettings, parse_broker_url
from pegwatch.device.table.hall.wiring import start_hall
from pegwatch.device.table.run import run_table
from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER, table_user


def _config(tmp_path: Path, hall: str) -> Path:
    path = tmp_path / "table.toml"
    path.write_text(f"""
[match]
players = ["Ann", "Bob"]
[journal]
path = "{tmp_path / 'table.sqlite'}"
[hardware]
mode = "simulated"
{hall}
""")
    return path


def test_no_hall_section_means_the_table_works_alone(tmp_path) -> None:
    cfg = config_from_mapping({"match": {"players": ["Ann", "Bob"]}}, source=tmp_path / "t.toml")
    assert cfg.hall is None
    assert start_hall(cfg, program=None) is None  # type: ignore[arg-type]
    script = tmp_path / "moves.txt"
    script.write_text("press 0\npress 1\nquit\n")
    out = io.StringIO()
    assert run_table(config=str(_config(tmp_path, "")), script=str(script), stdout=out) == 0
    import sqlite3

    with sqlite3.connect(tmp_path / "table.sqlite") as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "hall_outbox" not in tables  # nothing of the hall was made


def test_the_hall_keys_are_read_and_defaults_given(tmp_path) -> None:
    (tmp_path / "pw").write_text("s3cret\n")
    (tmp_path / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    cfg = config_from_mapping({"hall": {
        "broker": "mqtts://hall.local", "tournament": "mso-2026", "table": "12",
        "password_file": "pw", "ca_file": "ca.pem"}}, source=tmp_path / "t.toml")
    hall = cfg.hall
    assert hall == HallSettings("mqtts://hall.local", "mso-2026", "12", "table-12", tmp_path / "pw", tmp_path / "ca.pem")
    assert hall.tls and hall.address == ("hall.local", 8883) and hall.password() == "s3cret"
    assert parse_broker_url("mqtt://10.0.0.2") == (False, "10.0.0.2", 1883)
    assert cfg.snapshot()["hall"]["table"] == "12"  # kept in the journal's config, never the password


@pytest.mark.parametrize(("hall", "words"), [
    ({"table": "1", "tournament": "t"}, "hall.broker: None is not allowed"),
    ({"broker": "http://x", "table": "1", "tournament": "t"}, "hall.broker: 'http://x': the scheme must be mqtt or mqtts"),
    ({"broker": "mqtt://x:99999", "table": "1", "tournament": "t"}, "the port must be 1..65535"),
    ({"broker": "mqtt://x", "table": "1/2", "tournament": "t"}, "hall.table: '1/2' is not allowed"),
    ({"broker": "mqtt://x", "table": "1", "tournament": "#"}, "hall.tournament: '#' is not allowed"),
    ({"broker": "mqtt://x", "table": "1", "tournament": "t", "password_file": "nope"}, "hall.password_file: 'nope': no such file"),
    ({"broker": "mqtt://x", "table": "1", "tournament": "t", "colour": "red"}, "hall.colour: unknown key"),
])
def test_every_hall_mistake_is_one_line_naming_the_key(tmp_path, hall, words) -> None:
    with pytest.raises(ConfigError) as info:
        config_from_mapping({"hall": hall}, source=tmp_path / "t.toml")
    assert words in str(info.value) and "\n" not in str(info.value)
    assert str(info.value).startswith(str(tmp_path / "t.toml"))


def test_pegwatch_run_with_a_hall_section_publishes_its_events(broker, tmp_path) -> None:
    hub = Listener(broker, HUB_USER, subscribe=(wire.hall_filter(TOURNAMENT),))
    assert hub.wait_connected() == 0
    password = broker.password_file(table_user("2"))
    config = _config(tmp_path, f"""
[hall]
broker = "{broker.url}"
tournament = "{TOURNAMENT}"
table = "2"
password_file = "{password}"
""")
    script = tmp_path / "moves.txt"
    script.write_text("press 0\npress 1\nquit\n")
    try:
        assert run_table(config=str(config), script=str(script), stdout=io.StringIO()) == 0
        wait_until(lambda: len(hub.unique("/events")) >= 3, what="the run's events at the hub")
        kinds = [wire.parse_event(p).kind for p in hub.unique("/events")]
        assert kinds[:3] == ["match", "press", "verdict"]
        assert all(m.topic.startswith(f"pegwatch/{TOURNAMENT}/tables/2/") for m in hub.received())
        wait_until(lambda: any(not wire.parse_status(m.payload).online for m in hub.received("/status")),
                   what="offline when the table stops")
    finally:
        hub.close()
