"""The hall's broker with its ACL, against a real Mosquitto: a table speaks only as itself."""

from __future__ import annotations

from pathlib import Path

from hall_kit import TOURNAMENT, Listener, wait_until

from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER, MosquittoBroker, hash_password, table_user, write_config

NOT_AUTHORIZED = 135  # MQTT 5 reason code


def test_a_table_cannot_publish_as_another_table(broker) -> None:
    hub = Listener(broker, HUB_USER, subscribe=("pegwatch/#",))
    table3 = Listener(broker, table_user("3"))
    try:
        assert hub.wait_connected() == 0 and table3.wait_connected() == 0
        for channel in wire.Channel:
            forged = wire.topic(TOURNAMENT, "4", channel)
            assert table3.publish(forged, b"forged") == NOT_AUTHORIZED, forged
        # Nor under its own number in another tournament, nor its own commands.
        assert table3.publish(wire.topic("other", "3", "state"), b"forged") == NOT_AUTHORIZED
        assert table3.publish(wire.topic(TOURNAMENT, "3", "commands"), b"forged") == NOT_AUTHORIZED
        own = wire.topic(TOURNAMENT, "3", "state")
        assert table3.publish(own, b"mine") == 0
        # The hub receives one publisher's messages in order: once "mine" is
        # there, every forged one before it would be too.
        wait_until(lambda: hub.received("/state"), what="table 3's own state at the hub")
        assert [(m.topic, m.payload) for m in hub.received()] == [(own, b"mine")]
    finally:
        hub.close()
        table3.close()


def test_a_table_reads_only_its_own_commands(broker) -> None:
    hub = Listener(broker, HUB_USER)
    table3 = Listener(broker, table_user("3"), subscribe=(
        wire.topic(TOURNAMENT, "4", "commands"), wire.topic(TOURNAMENT, "3", "commands"), "pegwatch/#"))
    try:
        assert hub.wait_connected() == 0 and table3.wait_connected() == 0
        assert hub.publish(wire.topic(TOURNAMENT, "4", "commands"), b"for 4") == 0
        assert hub.publish(wire.topic(TOURNAMENT, "4", "state"), b"hub forging") == NOT_AUTHORIZED
        assert hub.publish(wire.topic(TOURNAMENT, "3", "commands"), b"for 3") == 0
        wait_until(lambda: table3.received("/commands"), what="table 3's command")
        # Overlapping subscriptions may each deliver it; none delivers table 4's.
        assert {m.payload for m in table3.received()} == {b"for 3"}
    finally:
        hub.close()
        table3.close()


def test_a_wrong_password_or_no_user_is_refused(broker) -> None:
    wrong = Listener(broker, table_user("3"), password="not-the-password")
    stranger = Listener(broker, "table-99", password="whatever")
    try:
        assert wrong.wait_connected() == NOT_AUTHORIZED
        assert stranger.wait_connected() == NOT_AUTHORIZED
    finally:
        wrong.close()
        stranger.close()


def test_restart_keeps_the_port_and_retained_messages(broker) -> None:
    table = Listener(broker, table_user("1"))
    assert table.wait_connected() == 0
    state = wire.topic(TOURNAMENT, "1", "state")
    table.client.publish(state, b"retained", qos=1, retain=True)
    wait_until(lambda: table.pubacks, what="the PUBACK")
    table.close()
    port = broker.port
    broker.restart()
    assert broker.port == port and broker.is_running
    hub = Listener(broker, HUB_USER, subscribe=("pegwatch/#",))
    try:
        hub.wait_connected()
        wait_until(lambda: hub.received("/state"), what="the retained state after the restart")
        assert hub.received("/state")[0].payload == b"retained"
    finally:
        hub.close()


def test_the_written_files_match_mosquittos_formats(tmp_path: Path) -> None:
    conf = write_config(tmp_path, tables={"12": "pw12"}, hub_password="hubpw", tournament="mso", port=8883)
    acl = (tmp_path / "acl").read_text()
    assert "user table-12\n" in acl and "topic write pegwatch/mso/tables/12/events\n" in acl
    assert "topic read pegwatch/mso/tables/12/commands\n" in acl
    assert "topic write pegwatch/mso/tables/12/commands" not in acl
    text = conf.read_text()
    assert "allow_anonymous false" in text and "listener 8883\n" in text
    assert (tmp_path / "passwd").stat().st_mode & 0o077 == 0
    # The entry mosquitto_passwd itself writes for the password "secret" with this salt.
    salt = bytes.fromhex("4a6863cd0816663ffa342ae3")
    assert hash_password("secret", salt=salt) == (
        "$7$101$SmhjzQgWZj/6NCrj$g4WTujpaxSAvugYIc4CJ3rx7+iqgMWjkPvXjnKNsmF6Qf97yNOWut/fSM+6/Uhk4j+yb0RJgHH2MEvcQVeMu3g==")


def test_a_broker_that_cannot_start_says_why(tmp_path: Path) -> None:
    import pytest

    from pegwatch.hub.broker import BrokerError

    with pytest.raises(BrokerError, match="not installed"):
        MosquittoBroker(directory=tmp_path, executable="/nonexistent/mosquitto").start()


def test_a_broker_s_port_lies_outside_the_ports_outgoing_connections_take(tmp_path: Path) -> None:
    """A stopped broker keeps its port for a restart; an outgoing connection (a table
    retrying it, landing on itself) must never be able to take it meanwhile."""
    import socket

    from pegwatch.hub.broker import ephemeral_range, free_port

    low, high = ephemeral_range()
    for _ in range(20):
        port = free_port()
        assert not low <= port <= high
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # free
    assert not 30000 <= free_port(ephemeral=(30000, 65535)) <= 65535
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("40000\t50000\n", encoding="ascii")
    assert ephemeral_range(ranges) == (40000, 50000)
    assert ephemeral_range(tmp_path / "absent") == (32768, 60999)


def test_a_broker_whose_port_is_taken_says_so(broker) -> None:
    """Mosquitto's own reason reaches the error, not only its warning about running as root."""
    import socket

    import pytest

    from pegwatch.hub.broker import BrokerError

    broker.stop()
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", broker.port))  # as a connection to itself holds it
        with pytest.raises(BrokerError, match=r"(?i)address already in use"):
            broker.start(timeout=3.0)


def test_tls_is_a_setting_a_table_publishes_over_mqtts(tmp_path: Path, mosquitto: str) -> None:
    import shutil
    import subprocess

    import pytest

    from pegwatch.device.table.hall.settings import HallSettings
    from pegwatch.device.table.hall.wiring import TableLink
    from pegwatch.device.table.program import TableProgram
    from pegwatch.hub.broker import TlsFiles

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=tmp_path, check=True, capture_output=True)

    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=hall test CA")
    openssl("req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (tmp_path / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", "server.pem", "-days", "1", "-extfile", "san.ext")
    tls = TlsFiles(tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key")
    with MosquittoBroker(tables=["5"], tournament=TOURNAMENT, directory=tmp_path / "broker", tls=tls) as broker:
        assert broker.url.startswith("mqtts://") and "cafile" in broker.conf.read_text()
        hub = Listener(broker, HUB_USER, subscribe=("pegwatch/#",), tls_ca=tls.cafile)
        assert hub.wait_connected() == 0
        settings = HallSettings(broker.url, TOURNAMENT, "5", table_user("5"),
                                broker.password_file(table_user("5")), tls.cafile)
        assert settings.tls and settings.address == ("127.0.0.1", broker.port)
        program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"))
        link = TableLink(program, settings, keepalive_s=5, reconnect_s=(1, 1), poll_s=0.02).start()
        try:
            assert link.drain(20)  # the match event, through the table's own publisher, over TLS
            wait_until(lambda: hub.received("/events"), what="the table's event over TLS")
            assert wire.parse_event(hub.received("/events")[0].payload).kind == "match"
        finally:
            link.close()
            program.close()
            hub.close()


def test_the_written_config_runs_as_written(tmp_path: Path, mosquitto: str) -> None:
    """What docs/hall.md and the README do: write_config, then `mosquitto -c` (started by root,
    Mosquitto reads the password file and the ACL as the user it drops to)."""
    import os
    import shutil
    import subprocess
    import tempfile
    from types import SimpleNamespace

    from pegwatch.hub.broker import free_port

    folder = Path(tempfile.mkdtemp(prefix="pegwatch-hall-"))  # a folder another user may enter
    os.chmod(folder, 0o755)
    port = free_port()
    conf = write_config(folder / "hall", tables={"1": "pw-1"}, hub_password="pw-hub", tournament=TOURNAMENT,
                        port=port, host="127.0.0.1")
    os.chmod(folder / "hall", 0o755)
    process = subprocess.Popen([mosquitto, "-c", str(conf)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        address = SimpleNamespace(host="127.0.0.1", port=port)  # where the listener connects
        table = Listener(address, table_user("1"), password="pw-1")
        assert table.wait_connected() == 0, process.stderr.read1().decode() if process.poll() is not None else ""
        assert table.publish(wire.topic(TOURNAMENT, "1", "state"), b"x") < 0x80  # accepted
        assert table.publish(wire.topic(TOURNAMENT, "2", "state"), b"x") == NOT_AUTHORIZED
        table.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()
        shutil.rmtree(folder, ignore_errors=True)
