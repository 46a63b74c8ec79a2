// negagraph explorer: plain ES modules over the JSON API (/api), drawn with cytoscape.js
// (loaded before as a plain script). replay.js: the replay's words, tiers and chart;
// board.js: the board, its coordinates and the moves played on it; play.js: the move
// list's keys and the value history of the line played; beyond.js: positions and
// variants beyond the database, shown and answered from estimates.
import { UNSTORED, beyond, estimateDetail, estimateWords, wanted } from "./beyond.js";
import { boundsChart, rootWords, summary, tierEvents, tierList } from "./replay.js";
import { chessClicks, gridBoard } from "./board.js";
import { chanceReplies, listKeys, valueStrip } from "./play.js";
import { graphStyle, shortPosition } from "./style.js";

(function () {
  const CAP = 60; // positions a view draws at first (opening a node adds all its children)
  const BATCH = 1000; // positions per batch lookup (the API's limit)
  const $ = (id) => document.getElementById(id);
  const state = { games: new Map(), info: null, game: null, params: {}, history: [],
                  opened: new Set(), root: null, view: null, replay: null, unstored: false };
  let cy = null;

  // ---- the API: every failure becomes an Error carrying the API's own message ----------
  class ApiError extends Error {
    constructor(message, status) { super(message); this.status = status; }
  }
  function query(extra) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(state.params)) q.set(k, String(v));
    for (const [k, v] of Object.entries(extra || {})) q.set(k, String(v));
    return q.toString();
  }
  async function request(url, init) {
    let r;
    try {
      r = await fetch(url, init);
    } catch (e) {
      throw new ApiError(`the server did not answer (${e.message})`, 0);
    }
    let body = null;
    try { body = await r.json(); } catch (e) { body = null; }
    if (!r.ok) {
      const said = body && body.error && typeof body.error.message === "string"
        ? body.error.message : `${r.status} ${r.statusText}`;
      throw new ApiError(said, r.status);
    }
    if (body === null) throw new ApiError(`${url}: the answer is not JSON`, r.status);
    return body;
  }
  const api = (path, extra) => request(`${path}?${query(extra)}`);
  const far = beyond(request, api, state);
  // Many positions in as few requests as the API allows; a position the database does not
  // hold (or a malformed one) is an entry {position, error: {code, message}}, not a failure.
  async function lookupMany(positions) {
    const out = [];
    for (let i = 0; i < positions.length; i += BATCH) {
      const answer = await request(`/api/games/${state.game}/positions`, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ params: state.params, positions: positions.slice(i, i + BATCH) }),
      });
      out.push(...answer.results);
    }
    return out;
  }
  // One position, through the batch lookup: a malformed or unstored position is the
  // API's own message (and no failed request in the browser's console).
  async function positionOf(p) {
    const [a] = await lookupMany([p]);
    if (a.error) throw new ApiError(a.error.message, a.error.code);
    return a;
  }

  // ---- values in words, from the side of the player to move ---------------------------
  const bound = (b, sign) => (b === null || b === undefined ? `${sign}∞` : String(b));
  const low = (v) => bound(v.low, "-");
  const high = (v) => bound(v.high, "+");
  const isUnknown = (v) => v.state === "unexpanded" || v.state === "unknown";
  const players = () => (state.info ? state.info.players : ["MAX", "MIN"]);
  // index of the player to move at v (0 first, 1 second), or null if the game does not say
  function side(v) {
    if (v.chance) return v.chance.player;
    if (v.to_move) return v.to_move === "MAX" ? 0 : 1;
    return null;
  }
  function names(v) {
    const s = side(v);
    return s === null ? ["the player to move", "the opponent"]
      : [players()[s], players()[1 - s]];
  }
  const plies = (n) => `${n} ${n === 1 ? "ply" : "plies"}`;
  function wins(winner, n) {
    if (n === null || n === undefined) return `${winner} wins`;
    const moves = Math.ceil(n / 2); // the winner's own moves: he makes the last ply
    if (state.game === "chess") return `${winner} wins: mate in ${moves} (${plies(n)})`;
    return `${winner} wins in ${moves} ${moves === 1 ? "move" : "moves"} (${plies(n)})`;
  }
  // An exact value for "me": win, loss or draw in a game of those, else the number.
  // dWin: plies of the fastest win when it is a win; dLoss: of the longest loss.
  function outcome(value, me, them, dWin, dLoss) {
    if (value === 0) return "draw";
    if (value === 1) return wins(me, dWin);
    if (value === -1) return wins(them, dLoss);
    const n = value > 0 ? dWin : dLoss;
    return `value ${value} for ${me}` + (n === null || n === undefined ? "" : ` (${plies(n)})`);
  }
  function finality(lf, hf) {
    if (lf && hf) return "both final";
    if (lf) return "low final, high not yet";
    if (hf) return "high final, low not yet";
    return "neither final yet";
  }
  // The words for bounds lo..hi (for "me") with their finality and distances.
  function boundsWords(lo, hi, lf, hf, me, them, dWin, dLoss, rep) {
    if (lo !== null && lo === hi) {
      return outcome(lo, me, them, dWin, dLoss) + (lf && hf ? "" : ` (${finality(lf, hf)})`);
    }
    if (rep !== null && rep !== undefined) { // the value under the game's rule for endless play
      const endless = (lo === null || lo < rep) && (hi === null || hi > rep);
      return outcome(rep, me, them, rep === lo ? dWin : null, rep === hi ? dLoss : null) +
        (endless ? ` by endless play (bounds ${bound(lo, "-")}..${bound(hi, "+")})` : "");
    }
    return `bounds ${bound(lo, "-")}..${bound(hi, "+")}, ${finality(lf, hf)}`;
  }
  const num = (x) => String(Number(x.toPrecision(6)));
  function span(lo, hi, exact) {
    if (exact !== null && exact !== undefined) {
      return exact.includes("/") ? `${exact} (${num(lo)})` : exact;
    }
    return num(lo) === num(hi) ? num(lo) : `${num(lo)}..${num(hi)}`;
  }
  const winsAndLosses = () => state.info && state.info.value_range &&
    state.info.value_range[0] === -1 && state.info.value_range[1] === 1;
  // A game of chance's value lo..hi for player "who": the expected value, and the chance
  // to win in a game of wins and losses (as `negagraph solve` prints it).
  function chanceValue(lo, hi, exact, who) {
    let text = `expected value ${span(lo, hi, exact)} for ${who}`;
    if (winsAndLosses()) text += `: ${who} wins with probability ${span((lo + 1) / 2, (hi + 1) / 2)}`;
    return text;
  }
  function chanceWords(v) {
    const c = v.chance;
    const [me, them] = names(v);
    if (c.kind === "terminal") return `game over: ${outcome(Number(c.value), me, them, null, null)}`;
    const head = c.kind === "chance" ? `${me}'s chance node (an outcome is drawn)`
      : `${me} to move`;
    const exact = c.value !== null ? c.value : null;
    const lasts = c.plies === null ? "" : `; ${num(c.plies)} plies expected to the end`;
    return `${head}: ${chanceValue(c.low, c.high, exact, me)}${lasts}`;
  }
  // The verdict on a position: whose turn it is and what it is worth to him.
  function verdict(v) {
    if (v.chance) return chanceWords(v);
    const [me, them] = names(v);
    if (v.state === "terminal") return `game over: ${outcome(v.value, me, them, null, null)}`;
    const words = boundsWords(v.low, v.high, v.low_final, v.high_final, me, them,
      v.depth_low, v.depth_high, v.repetition_value);
    const turn = side(v) === null ? "to move" : `${me} to move`;
    return `${turn}: ${words}` + (v.state === "unexpanded"
      ? " (not expanded yet: its moves are not stored)" : "");
  }
  function detail(v) {
    if (v.state === "terminal") return `value ${v.value} for the player to move`;
    const d = (x) => (x === null ? "∞" : String(x));
    const fin = (f) => (f ? "final" : "not final");
    return `bounds for the player to move: low ${low(v)} (${fin(v.low_final)}), high ` +
      `${high(v)} (${fin(v.high_final)}); remaining depth ${d(v.depth_low)} (low) / ` +
      `${d(v.depth_high)} (high) plies`;
  }
  // A move in words, for the player making it (the position's mover).
  function moveWords(view, m) {
    if (m.state === "unknown") return m.note || "not in the database (a move from the frontier)";
    const [me, them] = names(view);
    if (m.chance) {
      const c = m.chance;
      const prob = c.probability === null ? "" : `probability ${c.probability}: `;
      const exact = c.move_low_exact !== null && c.move_low_exact === c.move_high_exact
        ? c.move_low_exact : null;
      return prob + chanceValue(c.move_low, c.move_high, exact, me);
    }
    // the move wins in 1 + the child's longest resistance; loses in 1 + its fastest win
    const after = (d) => (d === null ? null : d + 1);
    const rep = m.repetition_value === null ? null : -m.repetition_value;
    return boundsWords(m.move_low, m.move_high, m.high_final, m.low_final, me, them,
      after(m.depth_high), after(m.depth_low), rep) +
      (m.state === "unexpanded" ? " (not expanded yet)" : "");
  }
  function moveClass(m) {
    const lo = m.chance ? m.chance.move_low : m.move_low;
    const hi = m.chance ? m.chance.move_high : m.move_high;
    if (lo === hi && lo !== null && !m.chance) return lo > 0 ? "win" : lo < 0 ? "loss" : "draw";
    if (lo !== null && lo > 0) return "win";
    if (hi !== null && hi < 0) return "loss";
    return "open";
  }

  // ---- board -------------------------------------------------------------------------
  // The board of position *v*, as an element (fetched first, put on the page by show()):
  // its moves played by clicking on it (board.js).
  async function boardOf(v) {
    const position = v.position;
    const answer = await api(`/explore/board/${state.game}`, { p: position });
    const playing = (m) => { play(m).catch(fail); };
    if (answer.svg) {
      const div = document.createElement("div");
      div.innerHTML = answer.svg;
      if (!v.chance) chessClicks(div, v.moves, moveClass, playing);
      return div;
    }
    if (position.includes("/")) {
      return gridBoard(position, v.chance ? [] : v.moves, moveClass, (m) => moveWords(v, m), playing);
    }
    const pre = document.createElement("pre");
    pre.textContent = position;
    return pre;
  }

  // ---- graph -------------------------------------------------------------------------
  function label(v) {
    if (isUnknown(v)) return "?";
    if (v.chance) {
      const c = v.chance;
      return c.value !== null || num(c.low) === num(c.high) ? num(c.low) : `${num(c.low)}\n${num(c.high)}`;
    }
    return v.low === v.high && v.low !== null ? low(v) : `${low(v)} ${high(v)}`;
  }
  // A node's label: its position (a grid's rows one under the other, a long notation
  // cut: the whole is the node's tooltip), then its value or bounds; "?" if unstored.
  function nodeData(id, v, position = id) {
    const text = isUnknown(v) && position === id ? "?"
      : `${shortPosition(position)}\n${label(v)}`;
    return { id, position, label: text, lowc: v.low_final ? "#2a2" : "#d22",
             highc: v.high_final ? "#2a2" : "#d22", unknown: isUnknown(v) ? 1 : 0,
             state: v.state, kind: v.chance ? v.chance.kind : "" };
  }
  function edgeLabel(m) {
    return m.chance && m.chance.probability !== null ? `${m.move} ${m.chance.probability}` : m.move;
  }
  // A graph being built: its nodes (position -> fields), edges in order, and the opened
  // positions; nothing is drawn until it is whole (a failure leaves the page as it was).
  function newGraph(root, view) {
    return { nodes: new Map([[root, view]]), edges: [], opened: new Set(), left: 0 };
  }
  // Add position *id*'s moves to graph *g* (all of them when *all*, else while under CAP).
  function addMoves(g, id, moves, all) {
    for (const m of moves) {
      const known = g.nodes.has(m.position);
      if (!known && !all && g.nodes.size >= CAP) { g.left += 1; continue; }
      if (!known) g.nodes.set(m.position, m);
      g.edges.push({ source: id, target: m.position, label: edgeLabel(m), back: known });
    }
    g.opened.add(id);
  }
  // The principal line (class "best") and the strategies realising the root's low and
  // high bounds ("low", "high"), as pairs [from, to, class]; a game of chance's optimal
  // strategy (/strategy: the best move at each decision, every outcome) as "best".
  async function bestEdges(root) {
    const out = [];
    if (state.info && state.info.chance) {
      const tree = await api(`/api/games/${state.game}/strategy`, { p: root, max_nodes: 200 });
      for (const n of tree.nodes) {
        for (const c of n.children) out.push([n.position, tree.nodes[c.node].position, "best"]);
      }
      return out;
    }
    for (const [b, cls] of [["value", "best"], ["low", "low"], ["high", "high"]]) {
      const line = await api(`/api/games/${state.game}/line`, { p: root, bound: b, max_plies: 40 });
      let from = root;
      for (const s of line.steps) { out.push([from, s.position, cls]); from = s.position; }
    }
    return out;
  }
  // The view of *view*: its moves and, up to CAP positions, their moves (two plies).
  async function buildGraph(view) {
    const root = view.position;
    const g = newGraph(root, view);
    addMoves(g, root, view.moves, true);
    const next = [...new Set(view.moves.filter((m) => m.state === "expanded")
      .map((m) => m.position))].filter((p) => p !== root);
    if (next.length) {
      for (const a of await lookupMany(next)) {
        if (!a.error) { g.nodes.set(a.position, a); addMoves(g, a.position, a.moves, false); }
      }
    }
    g.best = view.estimate ? [] : await bestEdges(root); // (/line and /strategy: 404)
    return g;
  }
  function addEdge(e) {
    const id = `${e.source}->${e.target}`;
    if (cy.getElementById(id).nonempty()) return;
    cy.add({ group: "edges", data: { id, source: e.source, target: e.target, label: e.label },
             classes: e.back ? "back" : "" });
  }
  function markBest(best) {
    for (const [a, b, cls] of best) cy.getElementById(`${a}->${b}`).addClass(cls);
  }
  function drawGraph(g) {
    cy.batch(() => {
      cy.elements().remove();
      for (const [id, v] of g.nodes) cy.add({ group: "nodes", data: nodeData(id, v) });
      for (const e of g.edges) addEdge(e);
      markBest(g.best);
    });
    state.opened = g.opened;
    state.best = g.best;
    state.left = g.left;
    layout();
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
  // Whether the graph, at the zoom its labels need, reaches past the view's edges.
  function overflows() {
    const box = cy.elements().renderedBoundingBox();
    return box.x1 < 0 || box.y1 < 0 || box.x2 > cy.width() || box.y2 > cy.height();
  }
  function info(view) {
    const fin = (f) => (f ? "final" : "not final");
    const left = state.left ? ` · ${state.left} more positions two plies on not drawn` : "";
    const value = view.chance ? chanceValue(view.chance.low, view.chance.high,
      view.chance.value, names(view)[0]) : `low ${low(view)} (${fin(view.low_final)}),` +
      ` high ${high(view)} (${fin(view.high_final)})`;
    $("graphinfo").textContent = `${state.root}: ${value} · ${cy.nodes().length} nodes drawn` +
      `${left} · click a node to open it, click an open node to go there` +
      (overflows() ? " · drag the graph to see the rest of it (the wheel zooms)" : "");
    $("graph").dataset.ready = "1";
  }
  // Open node *id*: draw its moves (all of them). An unstored position ("?" of a move
  // from the frontier) stays as it is, and the notice says what the API says of it.
  async function open(id) {
    const node = cy.getElementById(id);
    const [answer] = await lookupMany([id]);
    if (answer.error) { notice(`${id}: ${answer.error.message}`); return; }
    const g = { nodes: new Map(), edges: [], opened: new Set(), left: 0 };
    for (const n of cy.nodes()) g.nodes.set(n.id(), null);
    addMoves(g, id, answer.moves, true);
    cy.batch(() => {
      node.data(nodeData(id, answer));
      for (const [p, v] of g.nodes) if (v !== null) cy.add({ group: "nodes", data: nodeData(p, v) });
      for (const e of g.edges) addEdge(e);
      markBest(state.best);
    });
    state.opened.add(id);
    layout();
    info(state.view);
    notice(answer.moves.length ? "" : `${id}: no moves stored` +
      (answer.state === "terminal" ? " (the game is over)" : ""));
  }

  // ---- notices and failures -----------------------------------------------------------
  function notice(text) {
    $("notice").textContent = text;
    $("notice").hidden = !text;
  }
  // A failure: the API's own message, and what the page shows now (kept or nothing).
  function fail(e) {
    const message = e instanceof Error ? e.message : String(e);
    const now = state.replay ? "the replay step shown is kept"
      : state.view ? `still showing ${state.view.position}` : "nothing is shown";
    $("error").textContent = `error: ${message} (${now})`;
    $("error").hidden = false;
    document.body.dataset.error = message;
    document.body.dataset.ready = "1";
    $("graph").dataset.ready = "1";
    controls();
  }
  function clearError() {
    $("error").hidden = true;
    $("error").textContent = "";
    delete document.body.dataset.error;
  }
  function busy() {
    document.body.dataset.ready = "";
    $("graph").dataset.ready = "";
  }
  // Buttons that need a loaded position are disabled without one.
  function controls() {
    const loaded = state.view !== null;
    $("replay").disabled = !loaded || state.unstored; // nothing stored: no solve to replay
    $("undo").disabled = !loaded || !state.history.length;
    $("goto").querySelector("button").disabled = state.game === null;
    for (const b of ["rfirst", "rprev", "rnext", "rlast"]) if (!state.replay) $(b).disabled = true;
  }

  // ---- replay: the solve commit by commit (/api/games/<game>/replay) --------------------
  // A tiered solve's graph is the positions of the tiers the commit had discovered (the
  // API's); a commit not drawn (too large, the compact layout) is a summary in words.
  function drawReplay(answer) {
    cy.batch(() => {
      cy.elements().remove();
      for (const n of answer.nodes) {
        const data = nodeData(`r${n.id}`, n, n.position);
        cy.add({ group: "nodes", data, classes: n.expanded_in === answer.commit ? "fresh" : "" });
      }
      for (const e of answer.edges) {
        cy.add({ group: "edges", data: { id: `r${e.parent}-${e.move}`, source: `r${e.parent}`,
                                         target: `r${e.child}`, label: e.move } });
      }
    });
    layout(answer.root === null ? null : `r${answer.root}`);
  }
  // The positions a commit expanded, three at most by name (the graph shows them all,
  // in orange): a commit of a large solve expands dozens.
  function shortList(names) {
    if (!names.length) return "none";
    const more = names.length > 3 ? ` and ${(names.length - 3).toLocaleString("en")} more` +
      " (orange in the graph)" : "";
    return names.slice(0, 3).join(", ") + more;
  }
  function replayWords(answer) {
    const head = `commit ${answer.commit} of ${answer.commits.length}`;
    if (!answer.drawn) return `${head} · ${summary(answer)}`;
    const fresh = answer.nodes.filter((n) => n.expanded_in === answer.commit)
      .map((n) => n.position);
    const fin = (f) => (f ? "final" : "not final");
    const root = answer.nodes.find((n) => n.id === answer.root);
    const rootText = root === undefined ? "" : ` · root ${root.position}: low ${low(root)}` +
      ` (${fin(root.low_final)}), high ${high(root)} (${fin(root.high_final)})`;
    const events = tierEvents(answer);
    return `${head} · ${answer.nodes.length} positions · ` + (answer.tiers.length
      ? events.join(", ") || "no tier changed" : `expanded: ${shortList(fresh)}`) + rootText;
  }
  async function replay(seq) {
    busy();
    const answer = await api(`/api/games/${state.game}/replay`, seq ? { commit: seq } : {});
    state.replay = answer;
    if (answer.drawn) drawReplay(answer); else cy.elements().remove();
    $("replayinfo").textContent = replayWords(answer);
    $("tiers").replaceChildren(...(answer.tiers.length ? [tierList(answer)] : []));
    $("chart").replaceChildren(boundsChart(answer.commits, answer.commit,
      state.info && state.info.value_range, (k) => replay(k).catch(fail)));
    const last = answer.commits[answer.commits.length - 1];
    $("graphinfo").textContent = answer.drawn
      ? "replay: the graph as each commit left it (bounds as that graph proves them; orange:" +
        " expanded by this commit" + (answer.tiers.length ? "; a tiered solve, tier by tier:" +
        " discovery stores positions only, solving a tier adds its moves" : "") +
        ") · click a node to leave the replay"
      : answer.layout === "compact"
        ? `this variant is stored in the compact layout: no per-position replay (${answer.not_drawn}).` +
          ` Its solve took ${answer.commits.length} commits; root at the end: ${rootWords(last)}`
        : `not drawn: ${answer.not_drawn}; the summary above says what the commit did`;
    $("graph").dataset.drawn = answer.drawn ? "1" : "0";
    $("rfirst").disabled = $("rprev").disabled = answer.commit <= 1;
    $("rnext").disabled = $("rlast").disabled = answer.commit >= answer.commits.length;
    clearError();
    $("graph").dataset.ready = "1";
    $("graph").dataset.commit = String(answer.commit);
    document.body.dataset.ready = "1";
  }
  function leaveReplay() {
    state.replay = null;
    $("replaycontrols").hidden = true;
    $("replaypanel").hidden = true;
    $("replay").textContent = "replay the solve";
    delete $("graph").dataset.commit;
    delete $("graph").dataset.drawn;
    controls();
  }
  async function replayMode(on) {
    if (!on) { leaveReplay(); return show(state.view.position); }
    try {
      await replay(null);
    } catch (e) {
      leaveReplay(); // the position's view was not touched: it stays
      throw e;
    }
    $("replaycontrols").hidden = false;
    $("replaypanel").hidden = false;
    $("replay").textContent = "back to the position";
  }
  const step = (to) => () => replay(to(state.replay)).catch(fail);

  // ---- play --------------------------------------------------------------------------
  // A move of the list: click it, or (the list is one Tab stop) arrows, then Enter.
  function moveItem(view, m, i) {
    const li = document.createElement("li");
    li.className = moveClass(m);
    li.dataset.move = m.move;
    li.tabIndex = i === 0 ? 0 : -1;
    li.setAttribute("role", "option");
    li.textContent = `${m.move}: ${moveWords(view, m)}`;
    li.onclick = () => play(m).catch(fail);
    return li;
  }
  // Show *position*: everything is fetched first; only then is the page changed, so a
  // failure keeps the previous view whole (and says so).
  async function show(position) {
    busy();
    const v = await far.viewOf(position);
    const g = await buildGraph(v);
    const board = await boardOf(v);
    const line = state.history.length && !(state.info && state.info.chance)
      ? await lookupMany([state.history[0].from, ...state.history.map((h) => h.position)]) : [];
    state.view = v;
    state.root = v.position;
    $("position").value = v.position;
    history.replaceState(null, "", address(v.position));
    const [me] = names(v);
    $("verdict").textContent = v.estimate ? estimateWords(v, me) : verdict(v);
    $("detail").textContent = v.estimate ? estimateDetail(v) : v.chance ? "" : detail(v);
    $("movesfor").textContent = v.estimate ? "(values unknown: the estimate's best first)" : !v.chance ? `(for ${me}, best first: shortest win, ` +
      "then draws, then longest loss)" : v.chance.kind === "chance"
      ? "(the outcomes, with their probabilities)" : `(for ${me}, best first)`;
    $("moves").replaceChildren(...v.moves.map((m, i) => moveItem(v, m, i)));
    $("vvh").replaceChildren(...valueStrip(line, players()[0], verdict));
    $("vvhpane").hidden = !line.length;
    $("history").replaceChildren(...state.history.map((h) => {
      const li = document.createElement("li");
      li.textContent = `${h.move}${{ db: " (database)", dice: " (dice)", est: " (estimate)" }[h.by] || ""}`;
      return li;
    }));
    $("board").replaceChildren(board);
    drawGraph(g);
    clearError();
    notice(state.unstored ? UNSTORED : "");
    info(v);
    controls();
    if (state.keyboard && $("moves").firstElementChild) $("moves").firstElementChild.focus();
    state.keyboard = false;
    document.body.dataset.ready = "1";
  }
  // The address of the page: the line played from its start (&line=, moves separated by
  // spaces), else the position shown.
  function address(position) {
    const h = state.history;
    const extra = h.length ? { p: h[0].from, line: h.map((x) => x.move).join(" ") }
      : { p: position };
    return `/explore/${state.game}?${query(extra)}`;
  }
  // The line *moves* played from *start* (the address's &line=): its history, and the
  // position it reaches. A move that is not one of its position's says so.
  async function follow(start, moves) {
    let pos = start;
    for (const move of moves) {
      const v = await far.movesOf(pos);
      const m = v.moves.find((x) => x.move === move);
      if (!m) {
        throw new Error(`the line's move ${move} is not a move of ${v.position}` +
          ` (its moves: ${v.moves.map((x) => x.move).join(", ") || "none"})`);
      }
      state.history.push({ move, position: m.position, from: v.position, by: "you" });
      pos = m.position;
    }
    return pos;
  }
  async function play(m) {
    busy();
    const from = state.view.position;
    let pos = m.position;
    const moves = [{ move: m.move, position: m.position, from, by: "you" }];
    if ($("reply").checked && state.info && state.info.chance) {
      const you = state.view.chance ? state.view.chance.player : 0;
      const steps = await chanceReplies(pos, you, positionOf);
      moves.push(...steps);
      if (steps.length) pos = steps[steps.length - 1].position;
    } else if ($("reply").checked) { // the database's where it has decided pos, else an estimate's
      const r = await far.reply(pos);
      if (r) { moves.push(r); pos = r.position; }
    }
    state.history.push(...moves);
    try {
      await show(pos);
    } catch (e) {
      state.history.splice(state.history.length - moves.length); // the move did not happen
      throw e;
    }
  }
  async function undo() {
    const kept = state.history.slice();
    let h = state.history.pop();
    while (h && h.by !== "you" && state.history.length) h = state.history.pop();
    if (!h) return;
    try {
      await show(h.from);
    } catch (e) {
      state.history = kept;
      throw e;
    }
  }

  // ---- start -------------------------------------------------------------------------
  function tapped(ev) {
    if (state.replay) { // leave the replay for the position tapped
      leaveReplay(); state.history = []; show(ev.target.data("position")).catch(fail); return;
    }
    const id = ev.target.id();
    if (state.opened.has(id)) { state.history = []; show(id).catch(fail); return; }
    busy();
    open(id).then(() => {
      $("graph").dataset.ready = "1";
      document.body.dataset.ready = "1";
    }).catch(fail);
  }
  // The stored variants of the installed games, in the selector.
  function listVariants(games) {
    const variants = [];
    const select = $("variant");
    for (const g of games) {
      if (!g.installed) continue;
      state.games.set(g.name, g);
      for (const v of g.variants) {
        variants.push({ game: g.name, params: v.params, root: v.root, text: v.params_text,
                        index: variants.length });
        const o = document.createElement("option");
        o.value = String(variants.length - 1);
        o.textContent = `${g.name} (${v.params_text || "defaults"}) · ${v.nodes} nodes`;
        select.append(o);
      }
    }
    return variants;
  }
  // Go to variant *v* (at *position*, else its root). If that fails while another
  // variant is shown, that one stays, whole: game, parameters, history and selector.
  async function pick(v, position, line) {
    const old = { game: state.game, params: state.params, info: state.info,
                  history: state.history, picked: state.picked, unstored: state.unstored };
    const set = (x) => {
      state.game = x.game; state.params = x.params; state.info = x.info;
      state.history = x.history; state.picked = x.picked; state.unstored = x.unstored;
      $("variant").value = x.picked === undefined ? "" : String(x.picked);
      $("reply").parentElement.title = x.info && x.info.chance
        ? "in a game of chance: the page rolls the dice, the database plays the other side"
        : "";
    };
    set({ game: v.game, params: v.params, info: state.games.get(v.game), history: [],
          picked: v.index, unstored: Boolean(v.unstored) });
    leaveReplay();
    try {
      const start = position || v.root || await far.initial(); // (not stored: its initial)
      await show(line && line.length ? await follow(start, line) : start);
    } catch (e) {
      if (state.view) set(old);
      throw e;
    }
  }
  async function start() {
    cy = cytoscape({ container: $("graph"), style: graphStyle() });
    window.explorer = { cy, state, words: { verdict, moveWords } }; // for the tests
    cy.on("tap", "node", tapped);
    cy.on("mouseover", "node", (ev) => { $("graph").title = ev.target.data("position"); });
    cy.on("mouseout", "node", () => { $("graph").title = ""; });
    $("replay").onclick = () => replayMode(!state.replay).catch(fail);
    $("rfirst").onclick = step(() => 1);
    $("rprev").onclick = step((r) => Math.max(1, r.commit - 1));
    $("rnext").onclick = step((r) => Math.min(r.commits.length, r.commit + 1));
    $("rlast").onclick = step((r) => r.commits.length);
    $("undo").onclick = () => undo().catch(fail);
    $("moves").onkeydown = (ev) => listKeys(ev, $("moves"), () => { state.keyboard = true; });
    $("goto").onsubmit = (ev) => {
      ev.preventDefault();
      if (state.replay) leaveReplay();
      const kept = state.history;
      state.history = [];
      show($("position").value).catch((e) => { state.history = kept; fail(e); });
    };
    controls();
    const variants = listVariants((await api("/api/games")).games);
    const select = $("variant");
    select.onchange = () => pick(variants[Number(select.value)]).catch(fail);
    const url = new URL(location.href);
    const want = location.pathname.startsWith("/explore/") ? location.pathname.split("/")[2] : "";
    if (!want) {
      if (!variants.length) throw new Error("no stored variant: run negagraph solve");
      await pick(variants[0], null);
      return;
    }
    const line = (url.searchParams.get("line") || "").split(" ").filter((x) => x);
    await pick(wanted(state.games, variants, decodeURIComponent(want), url), url.searchParams.get("p"), line);
  }
  start().catch(fail);
}());
