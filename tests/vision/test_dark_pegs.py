"""A doubtful dark hole whose block shows no colour and nothing white holds a dark peg or nothing;
one whose core shines, or stands in relief, above every bare hole of the frame holds the peg.

On the physically based set, black pegs on a dark board, in a light other
than the calibration's, lay about as far from every colour's class as
from black's: the colour model ruled none out, and a row with one such
hole had eight colours to try there and went unjudged. A chromatic or a
white peg fills most of a disc round its hole and shows there as no black
peg and no bare hole does; a glossy black peg's dome catches the light,
which a bare hole's recess does not; and its dome's lit top, shaded flank
and cast shadow span a wider range of light than a recess's rim and floor
(vision.dark_pegs). A black peg's lit dome may lift its block a little above
the bare holes' light; short of any lit peg's colour and white, and in
relief, it is still read as the dark peg it is.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from vision_kit import mask

import pegwatch.vision.dark_pegs as dark_pegs
from pegwatch.vision.calibrate import truth_from_record
from pegwatch.vision.colour import lab_to_linear_bgr
from pegwatch.vision.dark_pegs import (
    COLOUR_WHITE_MARGIN,
    MARGIN,
    RELIEF_MARGIN,
    SHEEN_MARGIN,
    VOUCH_SHORTFALL,
    WITNESS_MARGIN,
    Kinds,
    in_relief,
    no_brighter_than_bare,
    ruled_out,
    shines,
    white_ruled_out,
)
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import UNKNOWN, HoleReading


def test_a_kind_is_ruled_out_below_the_bare_holes_bound_when_the_frame_shows_it_well_above():
    n = 10
    scores = np.zeros(n)
    scores[[5, 6, 7, 8, 9]] = [0.1, 0.3, 0.2, 0.25, 1.5]  # hole 9: a bare hole with something on it
    bound = 0.3 + MARGIN
    scores[[0, 1, 2, 3, 4]] = [bound - 0.01, bound + 0.01, bound + WITNESS_MARGIN + 0.2, 2.0, 2.0]
    refs, witnesses = mask(n, 5, 6, 7, 8, 9), mask(n, 2)
    assert np.flatnonzero(ruled_out(scores, refs, witnesses) & ~refs & ~witnesses).tolist() == [0]
    assert not ruled_out(scores, refs, mask(n)).any()  # no such peg read: nothing shown
    assert not ruled_out(scores, mask(n, 5, 6, 7), witnesses).any()  # too few bare holes
    weak = scores.copy()
    weak[2] = bound + WITNESS_MARGIN - 0.01
    assert not ruled_out(weak, refs, witnesses).any()  # the frame's pegs do not stand out enough


def test_white_is_ruled_out_with_no_white_peg_where_the_chromatic_pegs_vouch_for_it():
    """With no white peg read, each chromatic colour read puts a white peg's block at its weakest
    peg's whiteness plus white's calibrated lead over it; the least of these, less the shortfall,
    must stand the witness margin above the bare holes' bound."""
    kinds = Kinds(frozenset({"red", "blue"}), frozenset({"white"}), frozenset({"black", "empty"}),
                  weakest={"red": -1.0, "blue": -1.2, "white": 0.8})
    n = 9
    refs = mask(n, 0, 1, 2, 3)
    bound = 0.1 + MARGIN  # the bare holes' second highest, plus the margin
    need = bound + WITNESS_MARGIN + VOUCH_SHORTFALL  # the least estimate that vouches
    white = np.array([0.0, 0.1, -0.1, 0.1, bound - 0.01, bound + 0.01, 0.0, 0.0, 0.0])
    read = np.array(["empty"] * 4 + ["unknown"] * 2 + ["red", "blue", "black"], dtype=object)
    sure = mask(n, 6, 7, 8)
    lead_red, lead_blue = 0.8 - -1.0, 0.8 - -1.2
    white[6], white[7] = need - lead_red + 0.01, need - lead_blue + 0.01
    assert np.flatnonzero(white_ruled_out(white, refs, read, sure, kinds) & ~refs & ~sure).tolist() == [4]
    short = white.copy()
    short[7] = need - lead_blue - 0.01  # the blue pegs alone fall short: the least estimate decides
    assert not white_ruled_out(short, refs, read, sure, kinds).any()
    assert not white_ruled_out(white, refs, read, mask(n, 8), kinds).any()  # no chromatic peg read
    assert not white_ruled_out(white, mask(n, 0, 1, 2), read, sure, kinds).any()  # too few bare holes
    assert not white_ruled_out(white, refs, read, sure, replace(kinds, weakest={})).any()  # nothing calibrated
    # A white peg read surely witnesses for the frame itself, and the chromatic pegs are not asked.
    witnessed = np.r_[white[:8], bound + WITNESS_MARGIN + 0.2]
    read_w = read.copy()
    read_w[8] = "white"
    assert np.array_equal(
        white_ruled_out(witnessed, refs, read_w, sure, kinds), ruled_out(witnessed, refs, mask(n, 8))
    )


def test_the_candidates_the_vouching_drops_are_never_the_truth(pbr, monkeypatch):
    """On the cached boards, white is dropped where no white peg was read, and never from a white peg."""
    table, cal, cases = pbr
    p = table.profile
    dropped = 0
    for i, board in enumerate(cases):
        reading = BoardReader(p, cal).read(board.image, at_ns=i)
        with monkeypatch.context() as m:
            m.setattr(dark_pegs, "VOUCH_SHORTFALL", np.inf)
            plain = BoardReader(p, cal).read(board.image, at_ns=i)
        truth = truth_from_record(board.truth, p, where="truth")
        for got, was, t in zip(reading.rows, plain.rows, truth.rows, strict=True):
            for h, w, th in zip(got.holes, was.holes, t.holes, strict=True):
                gone = set(w.possible or ()) - set(h.possible or ()) if not h.is_certain else set()
                assert th.colour not in gone, f"case {board.meta['index']} row {t.row}"
                dropped += bool(gone)
    assert dropped >= 3


def test_a_dark_peg_is_no_brighter_than_the_bare_holes():
    white = np.array([0.0, 0.05, 0.1, 0.12, -0.5, 0.3])
    refs = mask(6, 0, 1, 2, 3)
    assert no_brighter_than_bare(white, refs).tolist() == [True, True, True, True, True, False]
    assert not no_brighter_than_bare(white, mask(6, 0, 1)).any()


def test_a_hole_shines_above_every_bare_hole_by_a_margin():
    scores = np.array([0.0, 0.1, -0.2, 0.3, 0.3 + SHEEN_MARGIN - 0.01, 0.3 + SHEEN_MARGIN + 0.01, 2.0])
    refs = mask(7, 0, 1, 2, 3)
    assert np.flatnonzero(shines(scores, refs)).tolist() == [5, 6]
    assert not shines(scores, mask(7, 0, 1, 2)).any()  # too few bare holes to judge the frame by


def test_a_hole_stands_in_relief_above_every_bare_hole_by_a_margin():
    scores = np.array([0.4, 0.5, 0.3, 0.6, 0.6 + RELIEF_MARGIN - 0.01, 0.6 + RELIEF_MARGIN + 0.01, 2.0])
    refs = mask(7, 0, 1, 2, 3)
    assert np.flatnonzero(in_relief(scores, refs)).tolist() == [5, 6]
    assert not in_relief(scores, mask(7, 0, 1, 2)).any()  # too few bare holes to judge the frame by


def _code_plastic(reader, board, cal):
    """The reader's last fit and the plastic's light at each code hole in it (as the reader measures them)."""
    loc = reader.last_localisation
    assert loc is not None
    f = reader.sampler.features_from_frame(board.image, loc.image_to_board, cal.plastic_linear, covers=False, warp=loc.warp)
    assert f.code_plastic is not None
    return loc, f.code_plastic


def _with_and_without(proof, p, cal, board, monkeypatch, at_ns):
    """The board read with one dark peg's proof alone (``proof``: "SHEEN" or "RELIEF"), and with
    neither: (the reader, with, without)."""
    other = {"SHEEN": "RELIEF", "RELIEF": "SHEEN"}[proof]
    with monkeypatch.context() as m:
        m.setattr(dark_pegs, f"{other}_MARGIN", np.inf)
        reader = BoardReader(p, cal)
        reading = reader.read(board.image, at_ns=at_ns)
        m.setattr(dark_pegs, f"{proof}_MARGIN", np.inf)
        plain = BoardReader(p, cal).read(board.image, at_ns=at_ns)
    return reader, reading, plain


def _with_and_without_sheen(p, cal, board, monkeypatch, at_ns):
    return _with_and_without("SHEEN", p, cal, board, monkeypatch, at_ns)


def _relief_only(p, cal, board, monkeypatch, at_ns):
    return _with_and_without("RELIEF", p, cal, board, monkeypatch, at_ns)


def _case_7_in_play(pbr):
    """Case 7 read, with what dark_pegs.narrow takes: the profile, the board, the reader, the fit, the plastic's
    light at the guess holes, the holes read, which are in play (rows read with a peg) and which read surely."""
    table, cal, cases = pbr
    p = table.profile
    board = next(b for b in cases if b.meta["index"] == 7)
    reader = BoardReader(p, cal)
    reading = reader.read(board.image, at_ns=1)
    loc, plastic = _code_plastic(reader, board, cal)
    n = p.rows * p.holes
    holes = [h for r in reading.rows for h in r.holes]
    played = {r.row for r in reading.rows if any(h.colour not in ("empty", "unknown", "occluded") for h in r.holes)}
    in_play = np.array([i // p.holes + 1 in played for i in range(n)])
    sure = np.array([h.is_certain for h in holes])
    return p, board, reader, loc, plastic[:n], holes, in_play, sure


def _narrowed_with(case, at, colour, *, in_play=None):
    """``dark_pegs.narrow`` over case 7 (:func:`_case_7_in_play`), with hole ``at`` pretended read surely as ``colour``."""
    p, board, reader, loc, plastic, holes, case_in_play, sure = case
    pretend = list(holes)
    pretend[at] = HoleReading(colour, 0.99)
    return dark_pegs.narrow(
        pretend, board.image, loc, reader.sampler.code_centres_mm[: len(holes)], plastic,
        per_row=p.holes, in_play=case_in_play if in_play is None else in_play, sure=sure, kinds=reader._dark_kinds,
    )


def _truth(board, p):
    """The board's true code-hole colours, row by row."""
    return [h.colour for r in truth_from_record(board.truth, p, where="truth").rows for h in r.holes]


@pytest.fixture
def no_proof(monkeypatch):
    """The reader without the sheen's proof or the relief's: the doubtful dark holes stay doubtful."""
    monkeypatch.setattr(dark_pegs, "SHEEN_MARGIN", np.inf)
    monkeypatch.setattr(dark_pegs, "RELIEF_MARGIN", np.inf)


def _narrowed(reading):
    return [
        (row.row, k) for row in reading.rows for k, h in enumerate(row.holes)
        if h.colour == UNKNOWN and h.candidates and set(h.possible or ()) <= {"black", "empty"}
    ]


def test_every_hole_narrowed_to_a_dark_peg_on_the_physically_based_boards_is_one(pbr_reads, no_proof):
    narrowed = 0
    for board, reading, truth in pbr_reads():
        for row, k in _narrowed(reading):
            assert truth.row(row).holes[k].colour in ("black", "empty"), f"case {board.meta['index']} row {row}"
            narrowed += 1
    assert narrowed >= 5


def test_a_coloured_or_grey_thing_over_the_hole_keeps_its_colours(pbr, no_proof):
    table, cal, cases = pbr
    p = table.profile
    board = next(b for b in cases if b.meta["index"] == 7)
    reader = BoardReader(p, cal)
    plain = reader.read(board.image, at_ns=1)
    row, k = _narrowed(plain)[0]
    loc = reader.last_localisation
    assert loc is not None
    (cx, cy), (ex, _ey) = loc.to_image(np.array([p.hole_centre_mm(row, k + 1), np.add(p.hole_centre_mm(row, k + 1), (3.5, 0))]))
    radius = max(3, round(ex - cx))
    for paint in ((40, 60, 150), (120, 120, 120)):  # a dull red peg's head; a grey sleeve's edge
        frame = board.image.copy()
        cv2.circle(frame, (round(cx), round(cy)), radius, paint, -1)
        got = BoardReader(p, cal).read(frame, at_ns=2).row(row).holes[k]
        assert got.is_certain or set(got.possible or ("red",)) - {"black", "empty"}, paint


def test_scores_see_colour_and_white_where_a_black_peg_shows_neither(pbr, no_proof):
    table, cal, cases = pbr
    p = table.profile
    board = next(b for b in cases if b.meta["index"] == 7)
    reader = BoardReader(p, cal)
    reader.read(board.image, at_ns=1)
    loc, plastic = _code_plastic(reader, board, cal)
    row, k = _narrowed(reader.read(board.image, at_ns=2))[0]
    i = (row - 1) * p.holes + k
    centre = np.asarray([p.hole_centre_mm(row, k + 1)])
    (cx, cy), (ex, _ey) = loc.to_image(np.array([centre[0], centre[0] + (3.5, 0)]))
    scores = {}
    for name, paint in (("black", None), ("red", (40, 50, 200)), ("white", (235, 235, 235))):
        frame = board.image.copy()
        if paint is not None:
            cv2.circle(frame, (round(cx), round(cy)), max(3, round(ex - cx)), paint, -1)
        chroma, white = dark_pegs.block_scores(frame, loc, centre, plastic[i : i + 1])
        scores[name] = (float(chroma[0]), float(white[0]))
    assert scores["red"][0] > scores["black"][0] + 0.5
    assert scores["white"][1] > scores["black"][1] + 0.5


def _proved(reading, plain):
    """Holes a proof read as a dark peg: doubtful without it."""
    narrowed = set(_narrowed(plain))
    return [(r, k) for r, k in narrowed if reading.row(r).holes[k].is_certain]


def _first_proved(pbr, monkeypatch, reads, proof):
    """The first hole of the cached boards that ``reads`` (:func:`_with_and_without_sheen` or
    :func:`_relief_only`) proves a dark peg: (the board, the fit, the plastic's light and the centres
    of the guess holes, the bare holes of rows 9 on read surely, the hole's index)."""
    table, cal, cases = pbr
    p = table.profile
    for board in cases:
        reader, reading, plain = reads(p, cal, board, monkeypatch, 1)
        proved = _proved(reading, plain)
        if proved:
            break
    else:
        pytest.fail(f"no hole proved a peg by its {proof}")
    row, k = proved[0]
    loc, plastic = _code_plastic(reader, board, cal)
    n = p.rows * p.holes
    refs = np.array([h.colour == "empty" and h.is_certain for r in reading.rows for h in r.holes]) & (np.arange(n) // p.holes >= 8)
    assert refs.sum() >= 4
    return board, loc, plastic[:n], reader.sampler.code_centres_mm[:n], refs, (row - 1) * p.holes + k


def test_a_proved_peg_without_its_highlight_does_not_shine(pbr, monkeypatch):
    """The proof is the dome's highlight: the same hole with its core's bright pixels dulled to the
    core's median (a matte dark disc, as a bare hole's recess is) scores with the frame's bare holes."""
    board, loc, plastic, centres, refs, target = _first_proved(pbr, monkeypatch, _with_and_without_sheen, "sheen")
    (cx, cy), (ex, _ey) = loc.to_image(np.array([centres[target], centres[target] + (dark_pegs.SHEEN_RADIUS_MM + 0.5, 0)]))
    frame = board.image.copy()
    inside = np.zeros(frame.shape[:2], dtype=np.uint8)
    cv2.circle(inside, (round(cx), round(cy)), max(3, round(ex - cx)), 1, -1)
    core = frame[inside == 1]
    frame[inside == 1] = np.minimum(core, np.median(core, axis=0)).astype(np.uint8)
    before = dark_pegs.sheen_scores(board.image, loc, centres, plastic)
    after = dark_pegs.sheen_scores(frame, loc, centres, plastic)
    assert dark_pegs.shines(before, refs)[target]
    assert not dark_pegs.shines(after, refs)[target]




@pytest.mark.parametrize(("reads", "least"), [(_with_and_without_sheen, 3), (_relief_only, 2)], ids=["sheen", "relief"])
def test_every_hole_a_proof_reads_as_a_dark_peg_is_one(pbr, monkeypatch, reads, least):
    table, cal, cases = pbr
    p = table.profile
    proved = 0
    for i, board in enumerate(cases):
        _reader, reading, plain = reads(p, cal, board, monkeypatch, i)
        truth = truth_from_record(board.truth, p, where="truth")
        for row, k in _proved(reading, plain):
            got = reading.row(row).holes[k].colour
            assert got == truth.row(row).holes[k].colour == "black", f"case {board.meta['index']} row {row}"
            proved += 1
    assert proved >= least


def test_a_bare_hole_in_a_proved_peg_s_place_stands_in_no_relief(pbr, monkeypatch):
    """The proof is the dome's relief: a bare hole of the frame copied over the proved peg (its rim,
    floor and the plastic round it) scores with the frame's bare holes."""
    board, loc, plastic, centres, refs, target = _first_proved(pbr, monkeypatch, _relief_only, "relief")
    holes = pbr[0].profile.holes
    # A bare reference of the same column: as far from the board's edge, in much the same light.
    source = int(np.flatnonzero(refs & (np.arange(len(refs)) % holes == target % holes))[0])
    (tx, ty), (sx, sy), (ex, _ey) = np.rint(loc.to_image(np.array([centres[target], centres[source], centres[target] + (4.0, 0)]))).astype(int)
    half = max(4, int(ex - tx))
    frame = board.image.copy()
    frame[ty - half : ty + half + 1, tx - half : tx + half + 1] = board.image[sy - half : sy + half + 1, sx - half : sx + half + 1]
    before = dark_pegs.relief_scores(board.image, loc, centres, plastic)
    after = dark_pegs.relief_scores(frame, loc, centres, plastic)
    assert dark_pegs.in_relief(before, refs)[target]
    assert not dark_pegs.in_relief(after, refs)[target]


def _lifted_black(pbr, monkeypatch):
    """Per cached board, the holes the blocks read as black pegs (doubtful without them) whose blocks
    are brighter than a dark peg's bound over the frame's bare holes (rows with no peg read):
    (board, reader, holes, truth)."""
    table, cal, cases = pbr
    p = table.profile
    out = []
    for i, board in enumerate(cases):
        reader = BoardReader(p, cal)
        reading = reader.read(board.image, at_ns=i)
        if reading.problem is not None or reading.trust != "full":
            continue
        with monkeypatch.context() as m:
            m.setattr(dark_pegs, "narrow", lambda holes, *_a, **_k: list(holes))
            plain = [h for r in BoardReader(p, cal).read(board.image, at_ns=i).rows for h in r.holes]
        loc, plastic = _code_plastic(reader, board, cal)
        n = p.rows * p.holes
        holes = [h for r in reading.rows for h in r.holes]
        played = {r.row for r in reading.rows if any(h.is_certain and h.colour != "empty" for h in r.holes)}
        refs = np.array([h.is_certain and h.colour == "empty" and k // p.holes + 1 not in played for k, h in enumerate(holes)])
        _chroma, white = dark_pegs.block_scores(board.image, loc, reader.sampler.code_centres_mm[:n], plastic[:n])
        dark = no_brighter_than_bare(white, refs)
        lifted = [k for k, h in enumerate(holes) if h.is_certain and h.colour == "black" and not plain[k].is_certain and not dark[k]]
        out.append((board, reader, lifted, _truth(board, p)))
    return out


def test_a_black_peg_whose_lit_dome_lifts_its_block_is_read_black_and_is_one(pbr, monkeypatch):
    """A black peg's lit dome may lift its block over a dark peg's bound; short of every lit peg's
    colour and white, and standing in relief or shining, it is read black."""
    seen = 0
    for board, _reader, lifted, truth in _lifted_black(pbr, monkeypatch):
        for k in lifted:
            assert truth[k] == "black", f"case {board.meta['index']} hole {k}"
            seen += 1
    assert seen >= 1


def test_a_lifted_block_flattened_is_not_read_black(pbr, monkeypatch):
    """The same hole with its core dulled to a flat disc of its median light (as a sleeve lies) is not read black."""
    table, cal, _ = pbr
    p = table.profile
    board, reader, lifted, _ = next(x for x in _lifted_black(pbr, monkeypatch) if x[2])
    k = lifted[0]
    loc = reader.last_localisation
    assert loc is not None
    centre = reader.sampler.code_centres_mm[k]
    (cx, cy), (ex, _ey) = loc.to_image(np.array([centre, np.add(centre, (dark_pegs.SHEEN_RADIUS_MM + 0.5, 0))]))
    frame = board.image.copy()
    inside = np.zeros(frame.shape[:2], dtype=np.uint8)
    cv2.circle(inside, (round(cx), round(cy)), max(3, round(ex - cx)), 1, -1)
    frame[inside == 1] = np.median(frame[inside == 1], axis=0).astype(np.uint8)
    got = BoardReader(p, cal).read(frame, at_ns=99).row(k // p.holes + 1).holes[k % p.holes]
    assert not (got.is_certain and got.colour == "black")


def test_a_block_shows_a_peg_above_the_bare_holes_or_by_its_sheen():
    n = 8
    refs = mask(n, 0, 1, 2, 3, 4)
    chroma = np.array([0.1, 0.2, 0.3, 0.25, 0.9, 0.3 + MARGIN + 0.05, 0.3 + MARGIN - 0.05, 0.0])
    white = np.zeros(n)
    sheen = mask(n, 7)
    assert np.flatnonzero(dark_pegs.shows_a_peg(chroma, white, sheen, refs) & ~refs).tolist() == [5, 7]
    # too few bare holes to judge the frame by: only the sheen speaks (and it needs them too, see shines)
    assert np.flatnonzero(dark_pegs.shows_a_peg(chroma, white, sheen, mask(n, 0, 1))).tolist() == [7]


def test_a_peg_read_as_a_bare_hole_in_play_is_doubted_a_bare_hole_is_not(pbr):
    """A fit a little off leaves a hole's sample on its peg's shadow, which reads bare; the block still shows the peg."""
    case = _case_7_in_play(pbr)
    p, _, _, _, _, holes, in_play, _ = case
    peg = next(i for i, h in enumerate(holes) if in_play[i] and h.colour in ("white", "red", "yellow"))
    last_played = max(i // p.holes + 1 for i in range(len(holes)) if in_play[i])
    bare = next(i for i, h in enumerate(holes) if not in_play[i] and h.colour == "empty" and i // p.holes + 1 == last_played + 2)
    as_played = in_play.copy()
    as_played[bare] = True  # a blank left in a played row
    got = _narrowed_with(case, peg, "empty", in_play=as_played)
    assert got[peg].colour == UNKNOWN
    assert got[bare].colour == "empty"


def test_a_white_peg_read_as_a_dark_one_is_doubted_a_black_peg_is_not(pbr):
    """A dark peg is no whiter than a bare hole: a white peg sampled on its own shadow, read black, is doubted."""
    case = _case_7_in_play(pbr)
    p, board, _, _, _, holes, in_play, _ = case
    truth = _truth(board, p)
    white = next(i for i, h in enumerate(holes) if in_play[i] and h.colour == "white" == truth[i])
    black = [i for i, h in enumerate(holes) if in_play[i] and h.colour == "black" == truth[i]]
    assert black
    got = _narrowed_with(case, white, "black")
    assert got[white].colour == UNKNOWN
    assert all(got[i].colour == "black" for i in black)


def test_whiter_than_bare_needs_the_frame_s_bare_holes():
    scores = np.array([0.0, 0.1, 0.2, 0.2, 0.2 + MARGIN + 0.01, 0.2 + MARGIN - 0.01])
    assert np.flatnonzero(dark_pegs.whiter_than_bare(scores, mask(6, 0, 1, 2, 3))).tolist() == [4]
    assert not dark_pegs.whiter_than_bare(scores, mask(6, 0, 1, 2)).any()


def test_a_white_peg_read_as_a_colour_is_doubted_a_coloured_peg_is_not(pbr):
    """A peg of a colour is darker than the plastic in its weakest channel: a white peg read orange
    (a warm lamp on it) is doubted by its block's whiteness; every peg of a colour keeps its reading."""
    case = _case_7_in_play(pbr)
    p, board, reader, _, _, holes, in_play, sure = case
    truth = _truth(board, p)
    dim = reader._dark_kinds.dim
    white = next(i for i, h in enumerate(holes) if in_play[i] and h.colour == "white" == truth[i])
    coloured = [i for i, h in enumerate(holes) if in_play[i] and sure[i] and h.colour in dim and h.colour == truth[i]]
    assert len(coloured) >= 10
    got = _narrowed_with(case, white, "orange")
    assert got[white].colour == UNKNOWN
    assert [got[i].colour for i in coloured] == [truth[i] for i in coloured]


def test_too_white_for_a_colour_lies_far_above_the_bare_holes_and_needs_them():
    scores = np.array([0.0, 0.1, 0.2, 0.2, 0.2 + COLOUR_WHITE_MARGIN + 0.01, 0.2 + COLOUR_WHITE_MARGIN - 0.01, 0.2 + MARGIN + 0.01])
    assert np.flatnonzero(dark_pegs.too_white_for_a_colour(scores, mask(7, 0, 1, 2, 3))).tolist() == [4]
    assert not dark_pegs.too_white_for_a_colour(scores, mask(7, 0, 1, 2)).any()


def test_dim_classes_are_those_darker_than_the_plastic_in_a_channel(pbr):
    """On the dark board every colour is darker than the plastic in its weakest channel and white is
    not; against a plastic twice as bright as the white class in every channel, white is too."""
    table, cal, _ = pbr
    reader = BoardReader(table.profile, cal)
    kinds = reader._dark_kinds
    assert kinds.dim == kinds.chromatic
    assert "white" not in kinds.dim
    model = reader.code_model
    lit = sorted(kinds.chromatic | kinds.white)
    white_linear = lab_to_linear_bgr(np.asarray(model.means, dtype=np.float64)[model.index("white"), :3][None, :])[0]
    assert dark_pegs.dim_classes(dark_pegs.weakest_channels(model, white_linear * 2.0), lit) == frozenset(lit)
    assert "white" not in dark_pegs.dim_classes(dark_pegs.weakest_channels(model, white_linear * 0.5), lit)
