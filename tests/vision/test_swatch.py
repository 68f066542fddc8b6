"""The swatch card: drawn at true size, found in a photo, and its pegs teach the table their colours."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from pegwatch.simulation.render import BoardContents, random_conditions, render
from pegwatch.vision.calibrate import calibrate
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import UNKNOWN
from pegwatch.vision.swatch import (
    DOT_FRACTION,
    SwatchError,
    card_for,
    read_card,
    render_card,
    write_card,
)

PPM = 3.0  # the card's pixels per mm in the composed photo, about the board's


def _empty_cal(table):
    p = table.profile
    cond = random_conditions(np.random.default_rng([5, table.peg_set, 7]), difficulty="easy", profile=p, peg_set=table.peg_set)
    empty = render(p, BoardContents((None,) * p.rows, (None,) * p.rows, None, False), cond, seed=1)
    return calibrate([empty.image], [{"rules": "mso", "secret": None, "rows": [], "timeout": None}], p)


def _photo_with_card(table, *, pegs: bool = True, skip: tuple[str, ...] = ()):
    """The board's photo with the card below it, a peg (cut from the board's own photo) on each circle."""
    p = table.profile
    shot = table.calibration[0]
    card = card_for(p)
    sheet = np.asarray(render_card(p, dpi=round(PPM * 25.4)))[:, :, ::-1].copy()
    where: dict[tuple[str, str], tuple[float, float]] = {}
    for r, guess in enumerate(shot.contents.guesses):
        for c, xy in zip(guess or (), p.hole_centres_mm(r + 1), strict=False):
            where.setdefault(("code", c), xy)
        for c, xy in zip(shot.key_positions[r], p.key_centres_mm(r + 1), strict=True):
            where.setdefault(("key", c), xy)
    for s in card.swatches:
        if not pegs or s.name in skip:
            continue
        cx, cy = shot.project([where[(s.kind, s.name)]])[0]
        rad = s.diameter_mm / 2 * PPM * 1.05
        half = int(np.ceil(rad)) + 1
        patch = shot.image[round(cy) - half : round(cy) + half + 1, round(cx) - half : round(cx) + half + 1]
        yy, xx = np.mgrid[-half : half + 1, -half : half + 1]
        inside = np.hypot(xx, yy) <= rad
        tx, ty = round(s.centre_mm[0] * PPM), round(s.centre_mm[1] * PPM)
        region = sheet[ty - half : ty + half + 1, tx - half : tx + half + 1]
        region[inside] = patch[inside]
    h, w = shot.image.shape[:2]
    photo = np.full((h + sheet.shape[0] + 20, max(w, sheet.shape[1]), 3), 120, np.uint8)
    photo[:h, :w] = shot.image
    photo[h + 10 : h + 10 + sheet.shape[0], 40 : 40 + sheet.shape[1]] = sheet
    return photo


def test_the_card_is_drawn_at_true_size_with_every_colour(tmp_path, invicta_table):
    p = invicta_table.profile
    card = card_for(p)
    assert [s.name for s in card.swatches if s.kind == "code"] == list(p.palette)
    assert [s.name for s in card.swatches if s.kind == "key"] == [p.right_place_key, p.right_colour_key]
    assert not {m.id for m in card.markers} & {m.id for m in p.markers}
    out = write_card(p, tmp_path / "card.png", dpi=150)
    with Image.open(out) as img:
        assert img.size == (round(180 / 25.4 * 150), round(120 / 25.4 * 150))
    with pytest.raises(SwatchError, match=r"card.txt: the swatch card must be a .png or .pdf file"):
        write_card(p, tmp_path / "card.txt")


def test_an_empty_board_and_the_card_calibrate_every_colour(invicta_table):
    p = invicta_table.profile
    cal = _empty_cal(invicta_table)
    samples = read_card(_photo_with_card(invicta_table), p, cal)
    assert set(samples.code) == set(p.palette) and set(samples.keys) == {"red", "white"} and not samples.bare
    full = calibrate([], [], p, base=cal, extra_code=samples.code, extra_keys=samples.keys)
    assert full.not_learned == () and full.keys_not_learned == () and full.trust == "full"
    # Another photo of the table: its pegs read as their colours (or unknown), never as another.
    shot = invicta_table.calibration[1]
    reading = BoardReader(p, full).read(shot.image, at_ns=0)
    right = wrong = 0
    for r, guess in enumerate(shot.contents.guesses):
        for h, c in zip(reading.rows[r].holes, guess or (), strict=False):
            if h.colour != UNKNOWN:
                right += h.colour == c
                wrong += h.colour != c
    assert wrong == 0 and right >= 20


def test_a_bare_circle_teaches_nothing(invicta_table):
    p = invicta_table.profile
    cal = _empty_cal(invicta_table)
    samples = read_card(_photo_with_card(invicta_table, skip=("purple", "white")), p, cal)
    assert "purple" not in samples.code and "white" not in samples.keys
    assert set(samples.bare) == {"purple", "white", "white key"}
    assert DOT_FRACTION < 0.5


def test_no_card_in_view_is_one_clear_error(invicta_table):
    p = invicta_table.profile
    cal = _empty_cal(invicta_table)
    with pytest.raises(SwatchError, match=r"shot\.png: the swatch card.s markers"):
        read_card(invicta_table.calibration[0].image, p, cal, name="shot.png")


def test_markers_and_swatch_from_the_shell(invicta_table, tmp_path, capsys):
    import cv2

    from pegwatch.device.cli import main
    from pegwatch.vision.calibration import Calibration

    assert main(["markers", "-o", str(tmp_path / "sheet.png"), "--swatch-card", str(tmp_path / "card.pdf"), "--dpi", "100"]) == 0
    assert "swatch card for invicta-12x4" in capsys.readouterr().out and (tmp_path / "card.pdf").stat().st_size > 0
    cal_path = tmp_path / "empty.json"
    _empty_cal(invicta_table).save(cal_path)
    photo = tmp_path / "card.png"
    cv2.imwrite(str(photo), _photo_with_card(invicta_table))
    out = tmp_path / "full.json"
    assert main(["swatch", str(photo), "--calibration", str(cal_path), "-o", str(out)]) == 0
    assert "trust full" in capsys.readouterr().out
    assert Calibration.load(out).not_learned == ()
    # No card in the photo: one line naming it.
    bare = tmp_path / "bare.png"
    cv2.imwrite(str(bare), invicta_table.calibration[0].image)
    assert main(["swatch", str(bare), "--calibration", str(cal_path), "-o", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(bare) in err[0] and "swatch card's markers" in err[0]
