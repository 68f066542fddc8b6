"""A row's evidence frame sent to the hub: the read grid in pixels, the secret row masked while its game runs."""

from __future__ import annotations

import uuid

import cv2
import numpy as np
import pytest
from hall_kit import GAME_1, SECRET, TOURNAMENT, HallTable, Listener, wait_until

from pegwatch.device.table.hall.evidence import EvidenceRefused, frame_evidence
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER
from pegwatch.hub.wire import AckStatus, Command, CommandKind


@pytest.fixture(scope="module")
def camera():
    """The demo's calibrated reader and a rendered photo: the secret in view, row 1 placed."""
    from dataclasses import replace

    from pegwatch.simulation.demo import Scene, calibrated_reader
    from pegwatch.simulation.render import BoardContents

    profile, reader, conditions = calibrated_reader()
    scene = Scene(profile, BoardContents.empty(profile), conditions)
    scene.new_game(SECRET)
    scene.place_guess(1, GAME_1[0][0])
    scene.contents = replace(scene.contents, shield_open=True)
    ok, buf = cv2.imencode(".jpg", scene.photo(), [cv2.IMWRITE_JPEG_QUALITY, 90])
    assert ok
    return profile, reader, bytes(buf.tobytes())


def secret_pixels(profile, reader, jpeg: bytes) -> np.ndarray:
    """The colours at the secret holes' centres (peg heads), as the frame shows them."""
    frame = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    loc = reader.calibration.localiser(profile).locate(frame)
    assert loc.ok
    points = loc.to_image_at_height(profile.secret_centres_mm(), profile.code_head_centre_height_mm)
    return np.array([frame[round(y), round(x)] for x, y in points], dtype=float)


def test_the_secret_row_is_painted_over_and_the_grid_given(camera) -> None:
    profile, reader, jpeg = camera
    localiser = reader.calibration.localiser(profile)
    masked = frame_evidence(jpeg, profile=profile, localiser=localiser, mask_secret=True)
    assert masked.masked_secret and len(masked.grid) == profile.rows * profile.holes
    before, after = secret_pixels(profile, reader, jpeg), secret_pixels(profile, reader, masked.jpeg)
    assert np.abs(after - 40).max() < 25  # the mask's grey, give or take the JPEG
    assert np.abs(before - 40).max() > 60  # the pegs were there to see
    plain = frame_evidence(jpeg, profile=profile, localiser=localiser, mask_secret=False)
    assert plain.jpeg == jpeg and plain.grid == masked.grid and not plain.masked_secret
    # A frame too large for the wire is made smaller, its grid with it.
    small = frame_evidence(jpeg, profile=profile, localiser=localiser, mask_secret=True,
                           max_jpeg_bytes=len(masked.jpeg) // 2)
    assert len(small.jpeg) <= len(masked.jpeg) // 2 and small.masked_secret
    ratio = small.grid[5][0] / masked.grid[5][0]
    assert 0.3 < ratio < 0.8 and abs(small.grid[5][1] / masked.grid[5][1] - ratio) < 0.01
    with pytest.raises(EvidenceRefused, match="no board profile"):
        frame_evidence(jpeg, profile=None, localiser=None, mask_secret=True)
    blank = cv2.imencode(".jpg", np.zeros((480, 640, 3), np.uint8))[1].tobytes()
    with pytest.raises(EvidenceRefused, match="board is not found"):
        frame_evidence(blank, profile=profile, localiser=reader.calibration.localiser(profile), mask_secret=True)


def test_send_evidence_publishes_the_masked_frame_and_acknowledges(broker, tmp_path, camera) -> None:
    profile, reader, jpeg = camera
    hub = Listener(broker, HUB_USER, subscribe=(wire.hall_filter(TOURNAMENT),))
    assert hub.wait_connected() == 0
    t = HallTable(broker, tmp_path / "j.sqlite")
    t.program.worker = VisionWorker(None, reader, submit=lambda *a: None)
    try:
        t.press(0)
        t.secret("closed")
        t.press(1)
        t.step()
        guess = GAME_1[0][0]
        t.program.submit("reading", {"game": 1, "row": 1, "phase": "guess", "guess": list(guess), "black": 0,
                                     "white": 0, "status": "ok", "confidence": 0.9, "frame_ns": t.clock()},
                         jpeg=jpeg)
        t.program.step()
        assert t.program.journal.evidence(1, 1) is not None

        def ask(row: int) -> wire.Ack:
            cid = uuid.uuid4().hex
            command = Command(cid, "1", CommandKind.SEND_EVIDENCE, {"game": 1, "row": row}, by="eve")
            assert hub.publish(wire.topic(TOURNAMENT, "1", "commands"), wire.format_command(command)) == 0

            def answered():
                return [a for a in (wire.parse_ack(m.payload) for m in hub.received("/acks")) if a.command == cid]

            wait_until(answered, what="the evidence's ack")
            return answered()[0]

        ack = ask(1)
        assert ack.status is AckStatus.APPLIED
        [message] = [wire.parse_evidence(m.payload) for m in hub.received("/evidence")]
        assert message.id == ack.command and (message.game, message.row) == (1, 1) and message.masked_secret
        assert np.abs(secret_pixels(profile, reader, message.jpeg) - 40).max() < 25
        assert len(message.grid) == profile.rows * profile.holes
        refused = ask(5)
        assert refused.status is AckStatus.REFUSED and "no evidence frame" in refused.reason
        refused = ask(0)
        assert refused.status is AckStatus.REFUSED and "after the game" in refused.reason
        assert len(hub.received("/evidence")) == 1
    finally:
        t.close()
        hub.close()
