"""`pegwatch run` with [hall], killed with -9: the broker says it is offline, and nothing it journaled is lost."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from hall_kit import TOURNAMENT, Listener, wait_until

from pegwatch.device.table.hall.outbox import Outbox
from pegwatch.device.table.journal import Journal
from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER, table_user


class RunningTable:
    """`pegwatch run --script -` in a process of its own, answering 'ack SEQ' to each command."""

    def __init__(self, config: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pegwatch.device", "run", "--config", str(config), "--script", "-"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.process.stdout is not None
        assert self.process.stdout.readline().startswith("ready ")

    def say(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        return self.process.stdout.readline().strip()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def quit(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("quit\n")
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0


def test_a_table_killed_is_offline_and_loses_nothing_across_its_restarts(broker, tmp_path) -> None:
    journal = tmp_path / "table.sqlite"
    password = broker.password_file(table_user("3"))
    config = tmp_path / "table.toml"
    config.write_text(f"""
[match]
players = ["Ann", "Bob"]
[journal]
path = "{journal}"
[hardware]
mode = "simulated"
[hall]
broker = "{broker.url}"
tournament = "{TOURNAMENT}"
table = "3"
password_file = "{password}"
""")
    hub = Listener(broker, HUB_USER, subscribe=(wire.hall_filter(TOURNAMENT),), client_id="crash-hub",
                   persistent=True)
    assert hub.wait_connected() == 0

    def statuses() -> list[bool]:
        return [wire.parse_status(m.payload).online for m in hub.received("/status")]

    # 1. Online, an event out, then killed: the broker says the last will.
    table = RunningTable(config)
    assert table.say("press 0").startswith("ack ")
    wait_until(lambda: any(wire.parse_event(p).kind == "press" for p in hub.unique("/events")), what="the press")
    wait_until(lambda: statuses()[-1:] == [True], what="online")
    table.kill()
    wait_until(lambda: statuses()[-1:] == [False], what="the last will: offline")

    # 2. The broker is away; the table comes back, journals, and is killed again.
    broker.stop()
    table = RunningTable(config)
    assert table.say("arbiter resume").startswith("ack ")
    assert table.say("press 1").startswith("ack ")
    with Journal(journal) as j:
        last = j.last_seq
    with Outbox(journal) as outbox:
        wait_until(lambda: outbox.cursor >= last, what="the outbox to take the journal")
        assert outbox.counts()[1] > 0  # queued, never sent
    table.kill()

    # 3. The broker is back; the table starts again and sends what no broker acknowledged.
    broker.start()
    table = RunningTable(config)
    with Outbox(journal) as outbox:
        wait_until(lambda: outbox.caught_up(), timeout=60, what="the backlog sent")
    table.quit()
    with Journal(journal) as j:
        match = j.match_id
        expected = [wire.event_id(match, e.seq) for e in j.events() if e.kind not in ("tick", "hall_ack")]
    wait_until(lambda: len(hub.ids()) >= len(expected), what="every event of the three runs")
    assert hub.ids() == expected
    kinds = [wire.parse_event(p).kind for p in hub.unique("/events")]
    assert kinds.count("boot") == 2 and kinds.count("press") == 2
    hub.close()
