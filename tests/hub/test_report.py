"""``pegwatch report`` on a journal made by the real demo: one self-contained HTML file with
every row, its verdict, both clocks and its frames with the read grid drawn."""

from __future__ import annotations

import base64
import re
import sqlite3
from html.parser import HTMLParser

import cv2
import numpy as np
import pytest
from report_kit import SECRET, demo_journal

from pegwatch.device.cli import main
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.report import journal_events
from pegwatch.hub.detail import detail_from_events
from pegwatch.hub.evidence import EvidenceImageError, Grid, GridHole, draw_grid, grid_from_points
from pegwatch.hub.render import environment, render_detail

DATA_JPEG = "data:image/jpeg;base64,"


class Page(HTMLParser):
    """The report's rows (their data- attributes) and its figures, as a browser would find them."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.rows: list[dict[str, str]] = []
        self.figures: list[dict[str, str]] = []
        self.clocks: list[tuple[int, int]] = []
        self.srcs: list[str] = []
        self.hrefs: list[str] = []
        self.tags: list[str] = []
        self._figure: dict[str, str] | None = None
        self._row: dict[str, str] | None = None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "article" and "data-row" in a:
            self._row = a
            a["clocks"] = ""
            self.rows.append(a)
        elif tag == "figure":
            self._figure = {**a, "game": (self._row or {}).get("data-game", ""),
                            "row": (self._row or {}).get("data-row", "0")}
            self.figures.append(self._figure)
        elif tag == "img":
            self.srcs.append(a.get("src", ""))
            if self._figure is not None:
                self._figure["src"] = a.get("src", "")
        elif tag == "span" and "data-clock-0" in a and self._row is not None and not self._row["clocks"]:
            self._row["clocks"] = f"{a['data-clock-0']},{a['data-clock-1']}"
        if "href" in a:
            self.hrefs.append(a["href"])

    def handle_endtag(self, tag):
        if tag == "figure":
            self._figure = None
        elif tag == "article":
            self._row = None


def decode(src: str) -> np.ndarray:
    assert src.startswith(DATA_JPEG)
    data = base64.b64decode(src[len(DATA_JPEG):], validate=True)
    assert data.startswith(b"\xff\xd8\xff")
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None and image.shape[2] == 3
    return image


def outline_pixels(image: np.ndarray) -> int:
    """Pixels of the grid's outline colour (BGR 0, 220, 255), which a rendered board never has."""
    diff = np.abs(image.astype(int) - np.array([0, 220, 255])).max(axis=2)
    return int((diff < 40).sum())


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "game.html"
    assert main(["report", str(demo_journal()), "-o", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def test_every_row_of_the_demo_is_in_the_report_with_its_verdict_and_clocks(report):
    page = Page(report)
    detail = detail_from_events(journal_events(demo_journal()).events)
    want = [(str(g.number), str(r.row), r.verdict.value, r.marks, " ".join(h.label for h in r.guess),
             f"{r.clocks.remaining_ms[0]},{r.clocks.remaining_ms[1]}" if r.clocks else "")
            for g in detail.games for r in g.rows]
    got = [(r["data-game"], r["data-row"], r["data-verdict"], r["data-marks"], r["data-guess"], r["clocks"])
           for r in page.rows]
    assert got == want
    # The demo's rows, by hand: game 1 ok, ok (confirmed by the arbiter), mis-marked; game 2 ok, ok.
    assert [(r["data-game"], r["data-row"], r["data-verdict"], r["data-marks"]) for r in page.rows] == [
        ("1", "1", "ok", "1B0W"), ("1", "2", "ok", "0B2W"), ("1", "3", "mismark", "1B1W"),
        ("2", "1", "ok", "2B1W"), ("2", "2", "ok", "0B3W")]
    assert [r.get("data-ruled") for r in page.rows] == [None, "arbiter", None, None, None]
    # Row 1 of game 1: Alice 3:44.0 and Bob 7:15.0 when Alice confirmed the marks (see test_detail).
    assert page.rows[0]["clocks"] == "224000,435000"
    assert "3:44.0" in report and "7:15.0" in report
    assert "MIS-MARK" in report and "the code gives 1B2W" in report


def test_every_frame_is_an_inline_jpeg_with_the_grid_drawn(report):
    page = Page(report)
    with Journal(demo_journal(), create=False) as j:
        kept = {e.event_seq: e for e in j.all_evidence()}
    assert {int(f["data-seq"]) for f in page.figures} == set(kept)
    for figure in page.figures:
        assert "src" in figure, f"frame of event {figure['data-seq']} is missing"
        drawn = decode(figure["src"])
        raw = cv2.imdecode(np.frombuffer(kept[int(figure["data-seq"])].image, np.uint8), cv2.IMREAD_COLOR)
        # The board's outline and the row's box are drawn: thousands of pixels of their colour
        # where the camera's frame has next to none.
        assert outline_pixels(drawn) > 1500 > 20 > outline_pixels(raw)
    # Two frames per row (the guess and the marks), two of each game's code.
    assert sorted(f["data-phase"] for f in page.figures) == ["guess"] * 5 + ["marks"] * 5 + ["secret"] * 4


def test_the_report_makes_no_request(report):
    page = Page(report)
    assert not re.search(r"https?://", report)
    assert all(src.startswith(DATA_JPEG) for src in page.srcs) and len(page.srcs) == 14
    assert page.hrefs == []
    assert "link" not in page.tags and "script" not in page.tags


@pytest.fixture(scope="module")
def unfinished(tmp_path_factory):
    """The demo's journal cut after row 2 of game 1 was confirmed: game 1 is not over."""
    folder = tmp_path_factory.mktemp("unfinished")
    path = folder / "cut.sqlite"
    with sqlite3.connect(demo_journal()) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    with sqlite3.connect(path) as db:
        cut = db.execute("SELECT seq FROM events WHERE kind = 'arbiter' ORDER BY seq LIMIT 1").fetchone()[0]
        db.execute("DELETE FROM evidence WHERE event_seq > ?", (cut + 1,))
        db.execute("DELETE FROM events WHERE seq > ?", (cut + 1,))
    return path


def test_masking_leaves_out_the_secret_of_a_game_not_over(unfinished, tmp_path):
    masked, plain = tmp_path / "masked.html", tmp_path / "plain.html"
    assert main(["report", str(unfinished), "-o", str(masked), "--mask-secret"]) == 0
    assert main(["report", str(unfinished), "-o", str(plain)]) == 0
    masked_html, plain_html = masked.read_text(), plain.read_text()
    code = " ".join(SECRET)
    assert code in plain_html  # without the option the arbiter's report shows it
    assert code not in masked_html and "data-secret" not in masked_html
    assert not re.search(r"code gives \d", masked_html) and re.search(r"code gives \d", plain_html)
    assert "hidden while the game runs" in masked_html
    # The code's frame: the same frame, with a solid black box over the secret row.
    m, p = Page(masked_html), Page(plain_html)
    secret_m = [f for f in m.figures if f["data-phase"] == "secret"]
    secret_p = [f for f in p.figures if f["data-phase"] == "secret"]
    assert len(secret_m) == len(secret_p) == 1

    def black(image: np.ndarray) -> int:
        return int((image.max(axis=2) < 12).sum())

    # The box over four holes is well over a thousand black pixels more.
    assert black(decode(secret_m[0]["src"])) - black(decode(secret_p[0]["src"])) > 1000
    for fm in (f for f in m.figures if f["data-phase"] != "secret"):
        assert black(decode(fm["src"])) > black(decode(next(
            f for f in p.figures if f["data-seq"] == fm["data-seq"])["src"])) + 1000


def test_one_game_only(tmp_path):
    out = tmp_path / "g2.html"
    assert main(["report", str(demo_journal()), "-o", str(out), "--game", "2"]) == 0
    page = Page(out.read_text())
    assert {r["data-game"] for r in page.rows} == {"2"} and len(page.rows) == 2


@pytest.mark.parametrize("make, words", [
    (lambda p: p.write_text("not a journal"), "not a usable pegwatch journal"),
    (lambda p: None, "no such journal"),
    (lambda p: Journal(p).close(), "no match event names the players"),
])
def test_a_bad_journal_is_one_line_and_exit_2(tmp_path, capsys, make, words):
    path = tmp_path / "j.sqlite"
    make(path)
    assert main(["report", str(path), "-o", str(tmp_path / "out.html")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pegwatch report: ") and words in err
    assert "Traceback" not in err and not (tmp_path / "out.html").exists()


def test_a_game_the_journal_does_not_have(tmp_path, capsys):
    assert main(["report", str(demo_journal()), "-o", str(tmp_path / "x.html"), "--game", "5"]) == 2
    err = capsys.readouterr().err
    assert "no game 5 in this journal (games: [1, 2])" in err and err.count("\n") == 1


def test_draw_grid_masks_the_secret_holes_and_rings_the_row():
    frame = np.full((200, 400, 3), 200, np.uint8)
    ok, buf = cv2.imencode(".jpg", frame)
    assert ok
    holes = tuple(GridHole(100 + 30 * i, 100, 8) for i in range(4))
    grid = Grid(((50, 50), (350, 50), (350, 150), (50, 150)),
                holes=tuple(GridHole(h.x, h.y, h.r, c) for h, c in zip(holes, ("red", "blue", None, "white"), strict=True)),
                secret=(GridHole(300, 70, 8), GridHole(300, 90, 8)))
    plain = cv2.imdecode(np.frombuffer(draw_grid(buf.tobytes(), grid), np.uint8), cv2.IMREAD_COLOR)
    masked = cv2.imdecode(np.frombuffer(draw_grid(buf.tobytes(), grid, mask_secret=True), np.uint8),
                          cv2.IMREAD_COLOR)
    assert plain.shape == masked.shape
    # The crop keeps the board and an 8% margin (24 px of 300): x 26..374, y 26..174, scaled by
    # 960 / 349 (the longest side to 960 px, at most 2x: 2x). The secret hole (300, 70) lands at
    # ((300 - 26) * 2, (70 - 26) * 2) = (548, 88): black when masked, the grey frame otherwise.
    assert masked[88, 548].max() < 30 and plain[88, 548].min() > 150
    # Hole 1 read red: a red ring 2 px outside its radius (8 * 2 + 2 = 18) left of its centre.
    cx, cy = (100 - 26) * 2, (100 - 26) * 2
    b, g, r = (int(v) for v in plain[cy, cx - 18])
    assert r > 150 and g < 90 and b < 90


def test_the_page_extends_the_same_template():
    """The hub's page: images by URL, its own actions in the row block, the frames on request."""
    detail = detail_from_events(journal_events(demo_journal()).events)
    page = environment(__import__("jinja2").DictLoader({"page.html": (
        '{% extends "table_detail.html" %}'
        '{% block row_actions %}<form class="act" data-row="{{ row.row }}"></form>{% endblock %}'
        '{% block evidence_missing %}<a href="/evidence/{{ ref.seq }}">ask the table</a>{% endblock %}'
        '{% block secret_evidence_missing %}<a href="/evidence/{{ ref.seq }}">ask</a>{% endblock %}'
    )}))
    first = detail.games[0].rows[0].evidence
    assert first is not None
    html = render_detail(detail, standalone=False, images={first.seq: "/img/1.jpg"}, env=page,
                         template="page.html")
    parsed = Page(html)
    assert parsed.srcs == ["/img/1.jpg"]
    assert len(re.findall(r'<form class="act"', html)) == 5
    assert len(parsed.hrefs) == 14 - 1 and "pegwatch report" not in html


def test_the_page_draws_a_row_from_the_grid_the_table_sends():
    """The evidence message's grid: every code hole's centre, row by row (3 rows of 4 here)."""
    points = [(100 + 40 * r, 50 + 30 * h) for r in range(3) for h in range(4)]
    grid = grid_from_points(points, holes=4, row=2)
    assert [(h.x, h.y) for h in grid.holes] == [(140, 50), (140, 80), (140, 110), (140, 140)]
    assert len(grid.others) == 8 and grid.secret == ()
    assert grid.holes[0].r == 10.0  # a third of the 30 px between neighbouring holes
    assert grid.outline == ((100, 50), (100, 140), (180, 140), (180, 50))
    frame = np.full((200, 300, 3), 200, np.uint8)
    ok, buf = cv2.imencode(".jpg", frame)
    assert ok
    drawn = decode("data:image/jpeg;base64," + base64.b64encode(
        draw_grid(buf.tobytes(), grid.with_colours(["red", "blue", None, "white"]))).decode())
    assert outline_pixels(drawn) > 200
    with pytest.raises(EvidenceImageError, match="no row 4 in 3 rows of 4 holes"):
        grid_from_points(points, holes=4, row=4)
    with pytest.raises(EvidenceImageError, match="11 points are not rows of 4 holes"):
        grid_from_points(points[:11], holes=4, row=1)


def test_a_frame_pruned_at_max_mb_says_so(tmp_path):
    path = tmp_path / "pruned.sqlite"
    with sqlite3.connect(demo_journal()) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    with Journal(path, create=False) as j:
        last = max(e.at_ns for e in j.events())
        assert j.prune_evidence(1 << 40, games=[1], at_ns=last) > 0
    out = tmp_path / "pruned.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    html = out.read_text()
    page = Page(html)
    game1 = [f for f in page.figures if f["game"] == "1" or (f["data-phase"] == "secret" and int(f["data-seq"]) < 90)]
    assert game1 and all("src" not in f for f in game1)
    assert html.count("image pruned at max_mb") == len(game1) == 8
    assert sum("src" in f for f in page.figures) == 6  # game 2's frames are all there


def test_a_damaged_calibration_beside_the_journal_leaves_the_markers_to_place_the_board(tmp_path, capsys):
    path = tmp_path / "journal.sqlite"
    with sqlite3.connect(demo_journal()) as src, sqlite3.connect(path) as dst:
        src.backup(dst)
    (tmp_path / "calibration.json").write_text("{ not json")
    out = tmp_path / "game.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    page = Page(out.read_text())
    assert len(page.srcs) == 14 and all(outline_pixels(decode(src)) > 1500 for src in page.srcs[:2])
    # Named on the command line, it is the arbiter's choice: one line, exit 2.
    assert main(["report", str(path), "-o", str(out), "--calibration", str(tmp_path / "calibration.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "calibration.json" in err
