// negagraph explorer: plain script over the JSON API (/api), drawn with cytoscape.js.
"use strict";
(function () {
  const CAP_STEP = 60; // nodes drawn at once; "draw more" raises the cap by as many
  const $ = (id) => document.getElementById(id);
  const state = { game: null, params: {}, history: [], cap: CAP_STEP, pending: [],
                  opened: new Set(), root: null, view: null, replay: null };
  let cy = null;

  function query(extra) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(state.params)) q.set(k, String(v));
    for (const [k, v] of Object.entries(extra || {})) q.set(k, String(v));
    return q.toString();
  }
  async function api(path, extra) {
    const r = await fetch(`${path}?${query(extra)}`);
    const body = await r.json();
    if (!r.ok) throw new Error(body.message || body.error || r.statusText);
    return body;
  }
  const positionOf = (p) => api(`/api/games/${state.game}/positions`, { p });
  // a bound's text: null is -∞ for a low bound, +∞ for a high one
  const bound = (b, sign) => (b === null || b === undefined ? `${sign}∞` : String(b));
  const low = (v) => bound(v.low, "-");
  const high = (v) => bound(v.high, "+");
  function label(v) {
    if (v.state === "unexpanded" || v.state === "unknown") return "?";
    return v.low === v.high && v.low !== null ? low(v) : `${low(v)} ${high(v)}`;
  }
  function moveClass(m) {
    if (m.move_low === m.move_high && m.move_low !== null) {
      return m.move_low > 0 ? "win" : m.move_low < 0 ? "loss" : "draw";
    }
    if (m.move_low !== null && m.move_low > 0) return "win";
    if (m.move_high !== null && m.move_high < 0) return "loss";
    return "open";
  }
  const bestFirst = (moves) => moves.slice().sort((a, b) =>
    (b.move_low ?? -1e18) - (a.move_low ?? -1e18) || (b.move_high ?? 1e18) - (a.move_high ?? 1e18));

  // ---- board -------------------------------------------------------------------------
  async function drawBoard(position) {
    const box = $("board");
    const answer = await api(`/explore/board/${state.game}`, { p: position });
    if (answer.svg) { box.innerHTML = answer.svg; return; }
    if (position.includes("/")) {
      const table = document.createElement("table");
      table.className = "grid";
      for (const row of position.split("/")) {
        const tr = table.insertRow();
        for (const c of row) tr.insertCell().textContent = c === "." ? "" : c.toUpperCase();
      }
      box.replaceChildren(table);
      return;
    }
    const pre = document.createElement("pre");
    pre.textContent = position;
    box.replaceChildren(pre);
  }

  // ---- graph -------------------------------------------------------------------------
  function nodeData(id, v) {
    return { id, label: label(v), lowc: v.low_final ? "#2a2" : "#d22",
             highc: v.high_final ? "#2a2" : "#d22",
             unknown: v.state === "unexpanded" || v.state === "unknown" ? 1 : 0 };
  }
  function addNode(id, v) {
    if (cy.getElementById(id).nonempty()) return false;
    cy.add({ group: "nodes", data: nodeData(id, v) });
    return true;
  }
  async function open(id) {
    if (state.opened.has(id)) return;
    if (cy.nodes().length >= state.cap) { state.pending.push(id); $("more").hidden = false; return; }
    state.opened.add(id);
    const v = await positionOf(id);
    cy.getElementById(id).data(nodeData(id, v));
    for (const m of bestFirst(v.moves)) {
      const existed = cy.getElementById(m.position).nonempty();
      if (!existed && cy.nodes().length >= state.cap) {
        state.pending.push(id); state.opened.delete(id); $("more").hidden = false; break;
      }
      addNode(m.position, m);
      const eid = `${id}->${m.position}`;
      if (cy.getElementById(eid).empty()) {
        cy.add({ group: "edges", data: { id: eid, source: id, target: m.position, label: m.move },
                 classes: existed ? "back" : "" });
      }
    }
  }
  // The principal line (class "best"), and the strategies realising the root's low and
  // high bounds ("low", "high": the mover plays for that bound, the opponent against it).
  async function markBest(root) {
    for (const [bound, cls] of [["value", "best"], ["low", "low"], ["high", "high"]]) {
      const line = await api(`/api/games/${state.game}/line`, { p: root, bound, max_plies: 40 });
      let from = root;
      for (const s of line.steps) {
        cy.getElementById(`${from}->${s.position}`).addClass(cls);
        from = s.position;
      }
    }
  }
  // Layered from the root; zoomed out to fit, but never so far that labels cannot be read
  // (then the root is put at the top and the rest is reached by dragging the view).
  const MIN_ZOOM = 0.8;
  function layout(root = state.root) {
    cy.layout({ name: "breadthfirst", directed: true, roots: root ? [root] : undefined,
                spacingFactor: 1.1, animate: false }).run();
    if (cy.zoom() >= MIN_ZOOM || !root) return;
    const at = cy.getElementById(root).position();
    cy.zoom(MIN_ZOOM);
    cy.pan({ x: cy.width() / 2 - at.x * MIN_ZOOM, y: 40 - at.y * MIN_ZOOM });
  }
  async function drawGraph(root, view) {
    state.root = root; state.opened = new Set(); state.pending = []; state.cap = CAP_STEP;
    cy.elements().remove();
    addNode(root, view);
    await open(root);
    for (const m of bestFirst(view.moves)) await open(m.position);
    await markBest(root);
    layout();
    info(view);
  }
  function info(view) {
    const fin = (f) => (f ? "final" : "not final");
    $("graphinfo").textContent = `${state.root}: low ${low(view)} (${fin(view.low_final)}),` +
      ` high ${high(view)} (${fin(view.high_final)}) · ${cy.nodes().length} nodes drawn` +
      ` (cap ${state.cap}) · blue: the principal line; green: the low strategy; orange: the` +
      ` high strategy · click a node to open it, click an open node to go there`;
    $("graph").dataset.ready = "1";
  }
  async function drawMore() {
    state.cap += CAP_STEP;
    $("more").hidden = true;
    const pending = state.pending; state.pending = [];
    for (const id of pending) await open(id);
    await markBest(state.root);
    layout(); info(state.view);
  }

  // ---- replay: the solve commit by commit (/api/games/<game>/replay) --------------------
  async function replay(seq) {
    $("graph").dataset.ready = "";
    const answer = await api(`/api/games/${state.game}/replay`, seq ? { commit: seq } : {});
    state.replay = answer;
    cy.elements().remove();
    for (const n of answer.nodes) {
      const data = nodeData(`r${n.id}`, n);
      data.label = `${n.position}\n${data.label}`;
      data.position = n.position;
      cy.add({ group: "nodes", data, classes: n.expanded_in === answer.commit ? "fresh" : "" });
    }
    for (const e of answer.edges) {
      cy.add({ group: "edges", data: { id: `r${e.parent}-${e.move}`, source: `r${e.parent}`,
                                       target: `r${e.child}`, label: e.move } });
    }
    layout(answer.root === null ? null : `r${answer.root}`);
    const fresh = answer.nodes.filter((n) => n.expanded_in === answer.commit)
      .map((n) => n.position);
    const fin = (f) => (f ? "final" : "not final");
    const root = answer.root === null ? null : answer.nodes[answer.root];
    const rootText = root === null ? "" : ` · root ${root.position}: low ${low(root)}` +
      ` (${fin(root.low_final)}), high ${high(root)} (${fin(root.high_final)})`;
    $("replayinfo").textContent = `commit ${answer.commit} of ${answer.commits.length}` +
      ` · ${answer.nodes.length} positions · expanded: ${fresh.join(", ") || "none"}` + rootText;
    $("graphinfo").textContent = "replay: the graph as each commit left it (bounds as that" +
      " graph proves them; orange: expanded by this commit) · click a node to leave the replay";
    $("rfirst").disabled = $("rprev").disabled = answer.commit <= 1;
    $("rnext").disabled = $("rlast").disabled = answer.commit >= answer.commits.length;
    $("graph").dataset.ready = "1";
    $("graph").dataset.commit = String(answer.commit);
  }
  function leaveReplay() {
    state.replay = null;
    $("replaycontrols").hidden = true;
    $("replay").textContent = "replay the solve";
  }
  function replayMode(on) {
    if (!on) { leaveReplay(); return show(state.view.position); }
    $("replaycontrols").hidden = false;
    $("replay").textContent = "back to the position";
    return replay(null);
  }
  const step = (to) => () => replay(to(state.replay)).catch(fail);

  // ---- play --------------------------------------------------------------------------
  function status(v) {
    if (v.state === "terminal") {
      const r = v.value > 0 ? "win" : v.value < 0 ? "loss" : "draw";
      return `game over: ${r} (value ${v.value} for the player to move)`;
    }
    const d = (x) => (x === null ? "∞" : String(x));
    return `to move: low ${low(v)}, high ${high(v)}; remaining depth ` +
      `${d(v.depth_low)} (low) / ${d(v.depth_high)} (high) plies`;
  }
  async function show(position) {
    $("graph").dataset.ready = "";
    const v = await positionOf(position);
    state.view = v;
    $("position").value = v.position;
    history.replaceState(null, "", `/explore/${state.game}?${query({ p: v.position })}`);
    $("status").textContent = status(v);
    const list = $("moves");
    list.replaceChildren();
    for (const m of bestFirst(v.moves)) {
      const li = document.createElement("li");
      li.className = moveClass(m);
      li.dataset.move = m.move;
      li.textContent = `${m.move}: ${m.move_low === m.move_high && m.move_low !== null
        ? String(m.move_low) : `${bound(m.move_low, "-")} ${bound(m.move_high, "+")}`}`;
      li.onclick = () => play(m).catch(fail);
      list.append(li);
    }
    const hist = $("history");
    hist.replaceChildren(...state.history.map((h) => {
      const li = document.createElement("li");
      li.textContent = `${h.move}${h.by === "db" ? " (database)" : ""}`;
      return li;
    }));
    await drawBoard(v.position);
    await drawGraph(v.position, v);
    document.body.dataset.ready = "1";
  }
  async function play(m) {
    document.body.dataset.ready = "";
    state.history.push({ move: m.move, position: m.position, from: state.view.position, by: "you" });
    let pos = m.position;
    if ($("reply").checked) {
      const line = await api(`/api/games/${state.game}/line`, { p: pos, max_plies: 1 });
      if (line.steps.length) {
        const s = line.steps[0];
        state.history.push({ move: s.move, position: s.position, from: pos, by: "db" });
        pos = s.position;
      }
    }
    await show(pos);
  }
  async function undo() {
    let h = state.history.pop();
    while (h && h.by === "db" && state.history.length) h = state.history.pop();
    if (h) await show(h.from);
  }

  // ---- start -------------------------------------------------------------------------
  function fail(e) {
    $("status").textContent = `error: ${e.message}`;
    document.body.dataset.ready = "1";
  }
  async function start() {
    cy = cytoscape({
      container: $("graph"),
      style: [
        { selector: "node", style: { label: "data(label)", "text-valign": "center",
          "text-halign": "center", "font-size": 11, color: "#fff", "text-outline-width": 2,
          "text-outline-color": "#333", width: 46, height: 46, "pie-size": "100%",
          "pie-1-background-color": "data(highc)", "pie-1-background-size": 50,
          "pie-2-background-color": "data(lowc)", "pie-2-background-size": 50 } },
        { selector: "node[unknown = 1]", style: { "background-color": "#999",
          "pie-size": "0%" } },
        { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle",
          width: 1.5, label: "data(label)", "font-size": 9, "line-color": "#888",
          "target-arrow-color": "#888" } },
        { selector: "edge.low", style: { width: 3, "line-color": "#2a2",
          "target-arrow-color": "#2a2" } },
        { selector: "edge.high", style: { width: 3, "line-color": "#c60",
          "target-arrow-color": "#c60" } },
        { selector: "edge.best", style: { width: 4, "line-color": "#06c",
          "target-arrow-color": "#06c" } },
        { selector: "edge.back", style: { "line-style": "dashed", "curve-style": "unbundled-bezier" } },
        { selector: "node.fresh", style: { "border-width": 4, "border-color": "#f90" } },
        { selector: "node[position]", style: { "text-wrap": "wrap", width: 56, height: 56 } },
      ],
    });
    window.explorer = { cy, state };
    cy.on("tap", "node", (ev) => {
      if (state.replay) {  // leave the replay for the position tapped
        leaveReplay(); state.history = []; show(ev.target.data("position")).catch(fail); return;
      }
      const id = ev.target.id();
      if (state.opened.has(id)) { state.history = []; show(id).catch(fail); return; }
      open(id).then(() => markBest(state.root)).then(() => { layout(); info(state.view); })
        .catch(fail);
    });
    $("more").onclick = () => drawMore().catch(fail);
    $("replay").onclick = () => replayMode(!state.replay).catch(fail);
    $("rfirst").onclick = step(() => 1);
    $("rprev").onclick = step((r) => Math.max(1, r.commit - 1));
    $("rnext").onclick = step((r) => Math.min(r.commits.length, r.commit + 1));
    $("rlast").onclick = step((r) => r.commits.length);
    $("undo").onclick = () => undo().catch(fail);
    $("goto").onsubmit = (ev) => { ev.preventDefault(); state.history = [];
      show($("position").value).catch(fail); };
    const games = (await api("/api/games")).games;
    const select = $("variant");
    const variants = [];
    for (const g of games) {
      if (!g.installed) continue;
      for (const v of g.variants) {
        variants.push({ game: g.name, params: v.params, root: v.root });
        const o = document.createElement("option");
        o.value = String(variants.length - 1);
        o.textContent = `${g.name} (${v.params_text || "defaults"}) · ${v.nodes} nodes`;
        select.append(o);
      }
    }
    const pick = (i, position) => {
      const v = variants[i];
      state.game = v.game; state.params = v.params; state.history = [];
      leaveReplay();
      return show(position || v.root);
    };
    select.onchange = () => pick(Number(select.value)).catch(fail);
    if (!variants.length) { $("status").textContent = "no stored variant: run negagraph solve";
      document.body.dataset.ready = "1"; return; }
    // /explore/<game>?<params>&p=<position>: the variant whose parameters match
    const url = new URL(location.href);
    const want = location.pathname.startsWith("/explore/") ? location.pathname.split("/")[2] : "";
    let index = 0;
    if (want) {
      const found = variants.findIndex((v) => v.game === want &&
        Object.entries(v.params).every(([k, x]) => !url.searchParams.has(k)
          || url.searchParams.get(k) === String(x)));
      if (found >= 0) index = found;
    }
    select.value = String(index);
    await pick(index, want ? url.searchParams.get("p") : null);
  }
  start().catch(fail);
})();
