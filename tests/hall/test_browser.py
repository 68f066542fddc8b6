"""The hall in a real browser: a real Mosquitto, the real ``pegwatch hub``, two table programs publishing
through their own outbox and publisher, and Debian's chromium driven by playwright.

What the arbiter sees: the clocks tick, a mis-mark and a flag appear, a table that dies is shown
offline (its last will), a wrong password is refused and the right one lets in, a clock adjustment
made on the page reaches the table's journal before the page says "applied", and a finished match
lands in the standings. The spectators' page has no forms and no links to a table's commands, and
no page shows a secret while its game runs.

Every wait is for a condition on the page or in the journal, never for a fixed time.
``PEGWATCH_HALL_SCREENSHOT=docs/img/hall-grid.png`` keeps a screenshot of the grid.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from pathlib import Path

from browser_fixtures import ARBITER, ARBITER_PASSWORD
from hall_kit import SECRET, HallTable, play_game_1, wait_until

#: A generous bound for each condition: the page on a loaded machine (no timing is asserted).
WAIT_MS = 60_000
#: Game 2 of table 1: Bob sets SECRET_2, Ann breaks it on row 2.
SECRET_2 = ("yellow", "red", "green", "blue")
GAME_2 = ((("blue", "blue", "red", "red"), 0, 2), (SECRET_2, 4, 0))
PAGES = ("/", "/hall", "/tables/1", "/tables/2", "/results", "/standings", "/pairings",
         "/api/tables", "/api/tables/1", "/api/results")


def _secret_pattern(code: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"\W+".join(code))


def _clock_ms(text: str) -> int:
    m = re.fullmatch(r"(-?)(\d+):(\d\d)", text.strip())
    assert m, f"not a clock: {text!r}"
    return (-1 if m.group(1) else 1) * (int(m.group(2)) * 60 + int(m.group(3))) * 1000


def _no_secret_anywhere(page, base: str, code: tuple[str, ...]) -> None:
    """Every page and API answer, as the logged-in arbiter's browser gets it, is free of ``code``."""
    secret = _secret_pattern(code)
    for path in PAGES:
        answer = page.request.get(base + path)
        assert answer.ok, path
        assert not secret.search(answer.text()), f"{path} shows the secret of a game still running"
    assert not secret.search(page.content())


def _journal(path: Path) -> list[tuple[int, str, dict]]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return [(seq, kind, json.loads(payload))
                for seq, kind, payload in db.execute("SELECT seq, kind, payload FROM events ORDER BY seq")]


def _play_game_2(t: HallTable, *, upto: int) -> None:
    t.press(1)  # Bob, codemaker of game 2, starts Ann's clock
    t.secret("closed", code=SECRET_2, game=2)
    for i, (guess, black, white) in enumerate(GAME_2[:upto], start=1):
        t.press(0)
        t.reading(i, "guess", guess, game=2)
        t.press(1)
        t.reading(i, "marks", guess, black, white, game=2)


def test_the_arbiter_sees_the_hall_live_in_a_real_browser(broker, hub, browser, tmp_path) -> None:
    base = hub.url
    one = HallTable(broker, tmp_path / "table1.sqlite", "1")
    two = HallTable(broker, tmp_path / "table2.sqlite", "2")
    three = HallTable(broker, tmp_path / "table3.sqlite", "3")
    context = browser.new_context(viewport={"width": 1100, "height": 700})
    page = context.new_page()
    hall_screen = browser.new_context(viewport={"width": 1100, "height": 700})
    page.set_default_timeout(WAIT_MS)
    try:
        # -- the login: a wrong password is refused, the right one lets the arbiter in.
        page.goto(base + "/")
        page.wait_for_selector("#login-form")
        page.fill("#login", ARBITER)
        page.fill("#password", "wrong")
        page.click("#login-submit")
        page.wait_for_selector("#login-error")
        assert page.locator("#grid").count() == 0
        page.fill("#login", ARBITER)
        page.fill("#password", ARBITER_PASSWORD)
        page.click("#login-submit")
        page.wait_for_selector("#grid")
        page.wait_for_selector(f'#logged-in[data-login="{ARBITER}"]')
        page.wait_for_selector('#live[data-state="open"]')

        # -- the clocks tick: table 1's game starts, Bob's clock runs on the page.
        play_game_1(one, upto=2)
        clock = page.locator("#clock-1-black")
        page.wait_for_selector('#clock-1-black[data-running="true"]')
        first = clock.text_content() or ""
        page.wait_for_function("([sel, text]) => document.querySelector(sel).textContent !== text",
                               arg=["#clock-1-black", first])
        second = clock.text_content() or ""
        assert _clock_ms(second) < _clock_ms(first), (first, second)
        assert page.locator("#player-1-white").text_content() == "Ann"
        # A card scrolled out of view is not redrawn; back in view, it shows its clock as it is now.
        page.evaluate("document.body.style.paddingTop = '6000px'; window.scrollTo(0, 0)")
        page.wait_for_function("() => document.getElementById('table-1').pegwatchOnScreen === false")
        hidden_at = clock.text_content() or ""
        page.wait_for_timeout(1500)
        assert clock.text_content() == hidden_at
        # Nor is it drawn when a state arrives for it (a large hall sends a thousand a second):
        # table 1's clock moves on five seconds while its card is out of view.
        sent_ms = clock.get_attribute("data-remaining-ms")
        one.step(5)
        page.wait_for_function("([sel, ms]) => document.querySelector(sel).dataset.remainingMs !== ms",
                               arg=["#clock-1-black", sent_ms])
        assert clock.text_content() == hidden_at
        page.evaluate("document.body.style.paddingTop = ''")
        page.wait_for_function("([sel, text]) => document.querySelector(sel).textContent !== text",
                               arg=["#clock-1-black", hidden_at])
        assert _clock_ms(clock.text_content() or "") < _clock_ms(hidden_at)

        # -- no page shows game 1's secret while it runs.
        wait_until(lambda: page.request.get(base + "/api/tables/1").json()["row"] == 2, what="row 2 at the hub", timeout=60)
        _no_secret_anywhere(page, base, SECRET)

        # -- table 2: a mis-mark (one white too many; its game is over); table 3: Bob's flag falls.
        two.press(0)
        two.secret("closed")
        guess = ("blue", "blue", "red", "red")
        two.press(1)
        two.reading(1, "guess", guess)
        two.press(0)
        two.reading(1, "marks", guess, 0, 3)
        page.wait_for_selector('#mismarks-2[data-rows="1"]:not([hidden])')
        assert "mis-mark: row 1" in (page.locator("#mismarks-2").text_content() or "")
        three.press(0)  # Bob's 8 minutes run out
        for _ in range(100):
            three.step(6)
        page.wait_for_selector('#flags-3 li.flag[data-flag="black"]')
        assert page.locator("#table-3").get_attribute("data-flags") == "black"
        page.wait_for_selector("#clock-3-black.out")  # the page's own tick redraws it at 0:00
        assert page.locator("#clock-3-black").text_content() == "0:00"

        # -- table 2 dies without a goodbye: the broker's last will shows it offline.
        two.hang()
        page.wait_for_selector('#table-2[data-status="offline"]')
        assert page.locator("#offline-2").is_visible() and page.locator("#offline-2").text_content() == "OFFLINE"
        assert page.locator("#table-1").get_attribute("data-status") == "online"
        page.click("#sort-needs")
        wait_until(lambda: page.locator("#grid .card").first.get_attribute("data-table") == "2",
                   what="table 2 first when sorted by needs", timeout=60)
        if shot := os.environ.get("PEGWATCH_HALL_SCREENSHOT"):
            page.locator("#grid").screenshot(path=shot)

        # -- a clock adjustment made on the page reaches table 1's journal, then shows "applied".
        # Table 1 is held while the page loads (its program's lock: the command desk waits for it
        # before it journals or answers), so the ack can only come once the page listens: it
        # must arrive live, not in the page's first render.
        one.program._lock.acquire()
        page.goto(base + "/tables/1")
        form = page.locator("#form-adjust-clock")
        form.locator('select[name="player"]').select_option("black")
        form.locator('input[name="delta_s"]').fill("30")
        form.locator('button[type="submit"]').click()
        page.wait_for_selector('li.command[data-kind="adjust_clock"]')
        page.wait_for_selector('#live[data-state="open"]')
        command = page.locator('li.command[data-kind="adjust_clock"]')
        assert command.get_attribute("data-status") in ("pending", "sent")
        assert not [e for e in _journal(one.path) if e[1] == "hall_command"]
        one.program._lock.release()
        applied = page.locator('li.command[data-kind="adjust_clock"][data-status="applied"]')
        applied.wait_for()
        assert applied.locator(".command-status").text_content() == "applied"
        command_id = applied.get_attribute("data-id")
        events = _journal(one.path)
        [(cmd_seq, _, cmd)] = [e for e in events if e[1] == "hall_command" and e[2]["id"] == command_id]
        assert cmd["kind"] == "adjust_clock" and cmd["args"] == {"player": "black", "delta_ms": 30_000}
        assert cmd["by"] == ARBITER
        [(adjust_seq, _, adjust)] = [e for e in events if e[2].get("hall_command") == command_id]
        assert adjust["action"] == "adjust" and adjust["player"] == 1 and adjust["delta_ns"] == 30 * 10**9
        [(ack_seq, _, ack)] = [e for e in events if e[1] == "hall_ack" and e[2]["command"] == command_id]
        assert ack["status"] == "applied" and cmd_seq < adjust_seq < ack_seq

        # -- the spectators' page (a browser of its own, never logged in): the grid and the
        # standings, no forms, no commands, no secret.
        spectators = hall_screen.new_page()
        spectators.set_default_timeout(WAIT_MS)
        spectators.goto(base + "/hall")
        spectators.wait_for_selector("#grid #table-1")
        spectators.wait_for_selector('#table-2[data-status="offline"]')
        html = spectators.content()
        assert spectators.locator("form").count() == 0 and spectators.locator("a[href^='/tables/']").count() == 0
        assert spectators.locator("img").count() == 0 and spectators.locator("li.command").count() == 0
        assert 'name="csrf"' not in html and "/commands" not in html and "evidence" not in html
        assert not _secret_pattern(SECRET).search(html)

        # -- table 1 finishes game 1 and plays game 2; its secret stays hidden until it is over.
        one.row(3, SECRET, 4, 0)
        one.secret("open")
        _play_game_2(one, upto=1)
        wait_until(lambda: page.request.get(base + "/api/tables/1").json()["game"] == 2, what="game 2 at the hub", timeout=60)
        _no_secret_anywhere(page, base, SECRET_2)
        assert not _secret_pattern(SECRET_2).search(spectators.content())
        standings = spectators.locator("#standings")
        assert standings.locator('tr[data-player="ann"]').get_attribute("data-rank") == "1"  # all equal: 0 VP
        one.press(0)
        one.reading(2, "guess", SECRET_2, game=2)
        one.press(1)
        one.reading(2, "marks", SECRET_2, 4, 0, game=2)
        one.secret("open", code=SECRET_2, game=2)

        # -- the finished match lands in the standings, live on the spectators' page: Ann 1 VP, Bob 0.
        spectators.wait_for_function(
            "() => { const r = document.querySelector('#standings tr[data-player=\"ann\"]');"
            " return r && r.dataset.rank === '1' && /^1(\\.0)?$/.test(r.children[2].textContent); }")
        ann = spectators.locator('#standings tr[data-player="ann"] td')
        bob = spectators.locator('#standings tr[data-player="bob"] td')
        assert ann.nth(1).text_content() == "Ann" and float(bob.nth(2).text_content() or "") == 0
        page.goto(base + "/standings")
        assert page.locator('#standings tr[data-player="ann"]').get_attribute("data-rank") == "1"
        [recorded] = page.request.get(base + "/api/results").json()["results"]
        assert recorded["table"] == "1" and recorded["players"] == ["ann", "bob"] and recorded["vp"] == [1.0, 0.0]
    finally:
        context.close()
        hall_screen.close()
        one.close()
        two.close()
        three.close()
