// pegwatch hall: the clocks run here, the rest comes by server-sent events.
// No framework, no CDN: the hall has no internet. Times come from
// performance.now() (monotonic): a clock shows remaining_ms less the time
// since the hub received the table's state (age_ms) and since this page did.
"use strict";
(function () {
  var received = {};  // table -> performance.now() at which its state was age_ms old

  // The page's settings: the body's data-* (our layout) or #hall-config's (the shared detail template).
  function config() { return document.getElementById("hall-config") || document.body; }

  function fmt(ms) {
    var sign = ms < 0 ? "-" : "";
    var total = Math.floor(Math.abs(ms) / 1000);
    var m = Math.floor(total / 60), s = total % 60;
    return sign + m + ":" + (s < 10 ? "0" : "") + s;
  }

  // The DOM is written only where a value changed: a hall of hundreds of tables sends a
  // thousand states a second, and each write makes the browser lay the grid out again.
  function setText(el, text) { text = String(text); if (el.textContent !== text) el.textContent = text; }
  function setData(el, key, value) { value = String(value); if (el.dataset[key] !== value) el.dataset[key] = value; }
  function setHidden(el, hidden) { if (el.hidden !== hidden) el.hidden = hidden; }

  function setList(el, values, label) {
    if (!el) return;
    setData(el, "rows", values.join(","));
    setHidden(el, values.length === 0);
    setText(el, values.length ? label + values.join(", ") : "");
  }

  // The clocks that run, each with its reading kept beside its element: the tick (ten times a
  // second) walks these alone and reads nothing back from the DOM.
  var runningClocks = new Set();

  function showClock(clock, now) {
    if (clock.pegwatchLeft === undefined) return;
    var left = clock.pegwatchLeft, t0 = received[clock.pegwatchTable];
    if (clock.pegwatchRunning && t0 !== undefined) left -= now - t0;
    setText(clock, fmt(left));
    clock.classList.toggle("low", left < 10000);  // a forced toggle changes nothing when it holds
    clock.classList.toggle("out", left <= 0);
  }

  function keepClock(clock, table) {
    var ms = clock.dataset.remainingMs;
    clock.pegwatchTable = table;
    clock.pegwatchLeft = ms === "" ? undefined : Number(ms);
    clock.pegwatchRunning = ms !== "" && clock.dataset.running === "true";
    if (clock.pegwatchRunning) runningClocks.add(clock); else runningClocks.delete(clock);
  }

  // Only the clocks on screen are drawn ten times a second (a hall of hundreds of tables
  // scrolls); a card that comes into view is drawn at once, and all of them before printing.
  var watcher = window.IntersectionObserver ? new IntersectionObserver(function (entries) {
    var now = performance.now();
    entries.forEach(function (entry) {
      entry.target.pegwatchOnScreen = entry.isIntersecting;
      if (entry.isIntersecting) entry.target.querySelectorAll(".clock").forEach(function (c) { showClock(c, now); });
    });
  }) : null;

  function tick() {
    var now = performance.now();
    runningClocks.forEach(function (clock) {
      if (clock.pegwatchCard.pegwatchOnScreen !== false) showClock(clock, now);
    });
  }
  window.addEventListener("beforeprint", function () {
    var now = performance.now();
    document.querySelectorAll(".clock").forEach(function (clock) { showClock(clock, now); });
  });

  function adopt(card) {
    stamp(card);
    if (watcher && !card.pegwatchWatched) { card.pegwatchWatched = true; watcher.observe(card); }
    var now = performance.now();
    card.querySelectorAll(".clock").forEach(function (clock) {
      clock.pegwatchCard = card;
      keepClock(clock, card.dataset.table);
      // A card out of view is drawn as it comes into view (the watcher), or before printing:
      // a state arriving for it (a thousand a second in a large hall) draws nothing.
      if (card.pegwatchOnScreen !== false) showClock(clock, now);
    });
  }

  function stamp(card) {
    var age = card.dataset.ageMs;
    received[card.dataset.table] = performance.now() - (age === "" ? 0 : Number(age));
  }

  function newCard(t) {
    var grid = document.getElementById("grid");
    if (!grid) return null;
    var card = document.createElement("article");
    card.className = "card";
    card.id = "table-" + t.table;
    card.dataset.table = t.table;
    var link = config().dataset.public === "true"
      ? '<span class="table-name"></span>' : '<a class="table-name" href="/tables/' + encodeURIComponent(t.table) + '"></a>';
    card.innerHTML = "<header>" + link + ' <span class="offline-marker"></span> <span class="needs"></span></header>' +
      ["white", "black"].map(function (side) {
        return '<div class="side side-' + side + '"><span class="player"></span> <span class="clock" data-side="' + side +
          '" data-remaining-ms="" data-running="false"></span></div>';
      }).join("") +
      '<div class="where">game <span class="game"></span> · row <span class="row"></span> <span class="phase"></span></div>' +
      '<ul class="flags"></ul><div class="mismarks"></div><div class="uncertain"></div><div class="alarms"></div><div class="pending"></div>';
    card.querySelector(".table-name").textContent = "Table " + t.table;
    var ids = { ".offline-marker": "offline-", ".needs": "needs-", ".game": "game-", ".row": "row-", ".phase": "phase-",
      ".flags": "flags-", ".mismarks": "mismarks-", ".uncertain": "uncertain-", ".alarms": "alarms-", ".pending": "pending-" };
    Object.keys(ids).forEach(function (sel) { card.querySelector(sel).id = ids[sel] + t.table; });
    card.querySelectorAll(".side").forEach(function (div) {
      var side = div.querySelector(".clock").dataset.side;
      div.querySelector(".player").id = "player-" + t.table + "-" + side;
      div.querySelector(".clock").id = "clock-" + t.table + "-" + side;
    });
    grid.appendChild(card);
    return card;
  }

  function byId(prefix, table) { return document.getElementById(prefix + table); }

  function update(t) {
    var card = byId("table-", t.table) || newCard(t);
    if (!card) return;
    setData(card, "status", t.status);
    if (card.className !== "card status-" + t.status) card.className = "card status-" + t.status;
    var resort = card.dataset.needs !== String(t.needs) || !card.pegwatchSorted;
    card.pegwatchSorted = true;
    setData(card, "needs", t.needs);
    setData(card, "ageMs", t.age_ms === null ? "" : t.age_ms);
    var flagsNow = t.flags.join(","), flagsChanged = card.dataset.flags !== flagsNow;
    setData(card, "flags", flagsNow);
    setData(card, "mismarks", t.mismarks.join(","));
    setData(card, "uncertain", t.uncertain_rows.join(","));
    setData(card, "pending", t.pending_commands);
    setData(card, "turn", t.turn || "");
    var off = byId("offline-", t.table);
    setHidden(off, !t.offline);
    setText(off, t.status === "offline" ? "OFFLINE" : "NOT CONNECTED");
    setText(byId("needs-", t.table), t.needs || "");
    ["white", "black"].forEach(function (side) {
      setText(byId("player-" + t.table + "-", side), t.players ? t.players[side] : "—");
      var clock = byId("clock-" + t.table + "-", side);
      setData(clock, "remainingMs", t.clocks ? t.clocks[side].remaining_ms : "");
      setData(clock, "running", t.clocks && t.clocks[side].running ? "true" : "false");
      if (!t.clocks) setText(clock, "–:––");
      clock.parentNode.classList.toggle("to-move", t.turn === side);
    });
    setText(byId("game-", t.table), t.game === null ? "–" : t.game);
    setText(byId("row-", t.table), t.row);
    setText(byId("phase-", t.table), t.phase);
    var flags = byId("flags-", t.table);
    if (flagsChanged || flags.children.length !== t.flags.length) {
      flags.textContent = "";
      t.flags.forEach(function (f) {
        var li = document.createElement("li");
        li.className = "flag"; li.dataset.flag = f; li.textContent = "flag: " + f;
        flags.appendChild(li);
      });
    }
    setList(byId("mismarks-", t.table), t.mismarks, "mis-mark: row ");
    setList(byId("uncertain-", t.table), t.uncertain_rows, "uncertain: row ");
    var alarms = byId("alarms-", t.table);
    setHidden(alarms, t.alarms.length === 0);
    setText(alarms, t.alarms.join(", "));
    var pending = byId("pending-", t.table);
    setHidden(pending, !t.pending_commands);
    setText(pending, t.pending_commands ? t.pending_commands + " command(s) not applied yet" : "");
    adopt(card);
    if (resort) sortGrid();  // a sort reads every card: only when the order may change
  }

  var STATUS_TEXT = { pending: "waiting for the table", sent: "sent" };

  function commandChanged(c) {
    var li = document.getElementById("command-" + c.id);
    if (!li) return;
    li.dataset.status = c.status;
    var span = li.querySelector(".command-status");
    if (span) span.textContent = STATUS_TEXT[c.status] || c.status;
  }

  function natural(a, b) {
    var na = /^\d+$/.test(a), nb = /^\d+$/.test(b);
    if (na && nb) return Number(a) - Number(b);
    if (na !== nb) return na ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  // Sorted once per frame, however many tables changed in it (a sort reads every card).
  var sortAsked = false;
  function sortGrid() {
    if (sortAsked) return;
    sortAsked = true;
    requestAnimationFrame(function () { sortAsked = false; sortNow(); });
  }

  function sortNow() {
    var grid = document.getElementById("grid");
    if (!grid || grid.dataset.sort !== "needs") return;
    var cards = Array.prototype.slice.call(grid.querySelectorAll(".card"));
    cards.sort(function (a, b) {
      return (Number(b.dataset.needs) - Number(a.dataset.needs)) || natural(a.dataset.table, b.dataset.table);
    });
    var same = cards.every(function (c, i) { return grid.children[i] === c; });
    if (!same) cards.forEach(function (c) { grid.appendChild(c); });
  }

  function unsortGrid() {
    var grid = document.getElementById("grid");
    var cards = Array.prototype.slice.call(grid.querySelectorAll(".card"));
    cards.sort(function (a, b) { return natural(a.dataset.table, b.dataset.table); });
    cards.forEach(function (c) { grid.appendChild(c); });
  }

  var standingsTimer = null;
  function refreshStandings() {
    var body = document.getElementById("standings-body");
    if (!body || standingsTimer) return;
    standingsTimer = setTimeout(function () {
      standingsTimer = null;
      fetch("/api/standings", { cache: "no-store" }).then(function (r) { return r.json(); }).then(function (s) {
        body.textContent = "";
        s.rows.forEach(function (r) {
          var tr = document.createElement("tr");
          tr.dataset.player = r.player; tr.dataset.rank = r.rank;
          [r.rank + (r.shared ? "=" : ""), r.name, r.score, r.games].concat(r.tiebreaks).forEach(function (v) {
            var td = document.createElement("td"); td.textContent = v; tr.appendChild(td);
          });
          body.appendChild(tr);
        });
      });
    }, 300);
  }

  // The stream tells what changes after it opens: each time it (re)opens,
  // the tables and this table's commands are fetched as they are now, so a
  // quiet table, or an ack that came before the stream, is not left stale.
  function resync() {
    function get(url, then) {
      fetch(url, { cache: "no-store" }).then(function (r) { return r.ok ? r.json() : null; })
        .then(function (d) { if (d) then(d); }).catch(function () {});
    }
    if (document.getElementById("grid")) get("/api/tables", function (d) { d.tables.forEach(update); });
    var m = /^\/tables\/([^\/]+)$/.exec(location.pathname);
    if (m && config().dataset.public !== "true") {
      get("/api/tables/" + m[1], function (d) { (d.commands || []).forEach(commandChanged); });
    }
  }

  function connect() {
    var url = config().dataset.stream;
    var live = document.getElementById("live");
    if (!url || !window.EventSource) return;
    var source = new EventSource(url);
    source.onopen = function () { if (live) live.dataset.state = "open"; resync(); };
    source.onerror = function () { if (live) live.dataset.state = "lost"; };
    source.addEventListener("table", function (e) { update(JSON.parse(e.data)); });
    source.addEventListener("command", function (e) { commandChanged(JSON.parse(e.data)); });
    source.addEventListener("result", refreshStandings);
    source.addEventListener("tournament", refreshStandings);
    source.addEventListener("reload", function () { location.reload(); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll(".card").forEach(adopt);
    var button = document.getElementById("sort-needs");
    if (button) {
      button.addEventListener("click", function () {
        var grid = document.getElementById("grid");
        var on = grid.dataset.sort !== "needs";
        grid.dataset.sort = on ? "needs" : "table";
        button.setAttribute("aria-pressed", on ? "true" : "false");
        if (on) sortGrid(); else unsortGrid();
      });
    }
    tick();
    setInterval(tick, 100);
    connect();
  });
})();
