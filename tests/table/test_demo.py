"""``pegwatch demo``: the scripted match with the real vision, rules, clock and journal."""

from __future__ import annotations

import json

from PIL import Image

from pegwatch.device.cli import main
from pegwatch.device.table.program import replay_journal
from pegwatch.simulation.demo import run_demo


def test_demo_plays_the_whole_match_and_replays(tmp_path, capsys):
    lines: list[str] = []
    result = run_demo(journal=tmp_path / "demo.sqlite", gif=tmp_path / "demo.gif", out=lines.append)
    text = "\n".join(lines)
    # The three things the demo is for, caught by the real vision and rules.
    assert "CHECK ROW 2" in text and "confirmed by the arbiter" in text
    assert "MIS-MARK on row 3" in text
    assert "FLAG, Alice (codebreaker) ran out of time" in text
    assert result.result["phase"] == "match_over"
    assert result.result["vp"] == {"Alice": 0.0, "Bob": 1.0}
    assert result.result["attempts"] == {"Alice": 13, "Bob": 4}
    # The code seen under the shield is never printed before it is revealed.
    before_reveal = text.split("secret red green blue yellow")[0]
    assert "red green blue yellow" not in before_reveal
    # The display frames.
    with Image.open(tmp_path / "demo.gif") as gif:
        assert gif.n_frames > 20
    # The journal replays to the same verdicts, by the API and by the CLI.
    assert not replay_journal(tmp_path / "demo.sqlite").mismatches
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "demo.sqlite")]) == 0
    assert "every verdict reproduced" in capsys.readouterr().out
    # Export: game records that `pegwatch judge` reads and agrees with.
    assert main(["export", str(tmp_path / "demo.sqlite"), "-o", str(tmp_path / "out"), "--evidence"]) == 0
    # The evidence for disputes: the frame and the reading behind each confirmed row.
    jpegs = sorted((tmp_path / "out" / "evidence").glob("game1-row*.jpg"))
    assert len(jpegs) >= 3 and jpegs[0].read_bytes().startswith(b"\xff\xd8\xff")
    capsys.readouterr()
    assert main(["judge", "--json", str(tmp_path / "out" / "match.json")]) == 0
    judged = json.loads(capsys.readouterr().out)
    assert judged["vp"] == {"Alice": 0.0, "Bob": 1.0}


def test_replay_of_a_missing_journal_is_one_line(tmp_path, capsys):
    assert main(["replay", str(tmp_path / "nope.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nope.sqlite" in err
