"""`pegwatch demo --hall`: the scripted match played as a hall table, through the real outbox and publisher."""

from __future__ import annotations

import os

import pytest
from hall_kit import Listener, wait_until

from pegwatch.device.cli import main
from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER, MosquittoBroker, table_user


def test_a_wrong_hall_url_is_one_line_before_anything_is_played(tmp_path, capsys) -> None:
    journal = tmp_path / "demo.sqlite"
    assert main(["demo", "--fast", "--journal", str(journal), "--hall", "http://hall", "--table", "7"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("pegwatch demo: command line: hall.broker: 'http://hall': the scheme must be mqtt or mqtts; "
                   'give "mqtt://HOST:1883" or "mqtts://HOST:8883"')
    assert not journal.exists()
    assert main(["demo", "--fast", "--journal", str(journal), "--hall", "mqtt://hall", "--table", "7/8"]) == 2
    assert "hall.table: '7/8' is not allowed" in capsys.readouterr().err


# The whole demo renders and reads some 500 frames: a minute on a busy machine,
# beyond the hall tests' budget. It runs with PEGWATCH_DEMO_HALL=1 (and `-m slow`).
@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("PEGWATCH_DEMO_HALL") != "1", reason="set PEGWATCH_DEMO_HALL=1 to play the demo")
def test_the_demo_plays_as_a_hall_table_and_its_results_reach_the_hub(tmp_path, capsys) -> None:
    with MosquittoBroker(tables=["7"], tournament="demo", directory=tmp_path / "broker") as broker:
        hub = Listener(broker, HUB_USER, subscribe=(wire.hall_filter("demo"),))
        assert hub.wait_connected() == 0
        password = broker.password_file(table_user("7"))
        rc = main(["demo", "--fast", "--journal", str(tmp_path / "demo.sqlite"), "--hall", broker.url,
                   "--table", "7", "--password-file", str(password)])
        out = capsys.readouterr().out
        assert rc == 0 and "hall: every event published" in out
        wait_until(lambda: len(hub.received("/results")) >= 3, what="both games and the match")
        results = {r.game: r for r in (wire.parse_result(m.payload) for m in hub.received("/results"))}
        assert results[1].secret == ("red", "green", "blue", "yellow") and results[1].result["attempts"] == 4
        assert results[2].result["attempts"] == 13 and results[0].result["vp"] == {"Alice": 0, "Bob": 1}
        kinds = {wire.parse_event(m.payload).kind for m in hub.received("/events")}
        assert {"match", "press", "reading", "verdict"} <= kinds
        hub.close()
