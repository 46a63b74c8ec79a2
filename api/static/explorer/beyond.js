// negagraph explorer: playing beyond the database. A position the database does not
// hold, of a game with an evaluation, is shown from
// /api/games/<game>/estimate: its moves, unknown ("?"), and a heuristic search's score,
// never mistaken for a proven value; a reply where the database has not decided the
// position is the estimate's best move. A variant not stored at all opens at its initial
// position (the batch answer's `initial`). Plain ES module, no build step.

// The search budget (seconds) of a view's or a reply's estimate: the page waits for it,
// so it stays well under the server's MAX_ESTIMATE_SECONDS (5 by default).
export const ESTIMATE_SECONDS = 2;

// What the page says, on every view, of a variant the database holds nothing of.
export const UNSTORED = "nothing of this variant is stored: every position shown is " +
  "estimated, and the replies are estimates (heuristic, not proven)";

// Whether batch answer *a* is decided: stored, its bounds equal and both final.
export function decided(a) {
  return !a.error && a.low !== null && a.low === a.high && a.low_final && a.high_final;
}

// The view of an estimate answer *e* (as a position answer's fields, so that the board,
// the graph and the move list draw it): its moves are unknown, the best one first.
export function estimateView(e) {
  const unknown = { state: "unknown", low: null, high: null, low_final: false,
                    high_final: false, move_low: null, move_high: null };
  const moves = e.moves.map((m) => ({ ...unknown, move: m.move, position: m.position,
    note: m.move === e.best_move ? "? (the estimate's best move)" : "? (not in the database)" }));
  moves.sort((a, b) => (b.move === e.best_move) - (a.move === e.best_move));
  const view = { ...unknown, position: e.position, moves, estimate: e };
  if (e.to_move) view.to_move = e.to_move;
  return view;
}

// The verdict on an estimated view *v*, for the player to move (*me*), e.g. "not in the
// database: X to move; estimate 0 for X at depth 12 (heuristic, not proven)".
export function estimateWords(v, me) {
  const e = v.estimate;
  const where = "not in the database";
  if (e.refused) return `${where}: ${e.refused}`;
  const score = e.exact
    ? `value ${e.score} for ${me}, searched to the end at depth ${e.depth} (exact)`
    : `estimate ${e.score} for ${me} at depth ${e.depth} (heuristic, not proven)`;
  return `${where}: ${me} to move; ${score}`;
}

export function estimateDetail(v) {
  const e = v.estimate;
  if (e.refused) return "";
  return `the estimate's best move ${e.best_move}; ${e.positions.toLocaleString("en")} positions searched in ` +
    `${e.seconds.toFixed(1)} s; estimates are never stored`;
}

// /explore/<game>?<params>: the stored variant of <game> whose parameters are the ones
// given (the others: any); else, for a game with an evaluation, the variant given, not
// stored (`unstored`: it opens at its initial position); an error saying what is stored
// otherwise. *games*: name -> the game list's entry.
export function wanted(games, variants, name, url) {
  const game = games.get(name);
  if (!game) throw new Error(`this server has no game ${name}`);
  const given = [...url.searchParams.keys()].filter((k) => k !== "p" && k !== "line");
  const known = new Set(game.parameters.map((p) => p.name));
  const unknown = given.filter((k) => !known.has(k));
  if (unknown.length) {
    throw new Error(`${name} has no parameter ${unknown.join(", ")}` +
      ` (its parameters: ${[...known].join(", ") || "none"})`);
  }
  const mine = variants.filter((v) => v.game === name);
  const found = mine.find((v) => given.every((k) => url.searchParams.get(k) === String(v.params[k])));
  if (found) return found;
  if (game.estimates) {
    return { game: name, params: Object.fromEntries(given.map((k) => [k, url.searchParams.get(k)])),
             root: null, unstored: true };
  }
  const asked = given.map((k) => `${k}=${url.searchParams.get(k)}`).join(", ");
  throw new Error(mine.length
    ? `no stored variant of ${name} with ${asked}; stored: ` +
      `${mine.map((v) => v.text || "defaults").join("; ")} (pick one above)`
    : `no stored variant of ${name}: solve one with "negagraph solve ${name}"`);
}

// The page's calls beyond the store, over its *request* (url, init) and *api* (path,
// query: the variant's parameters added) and its *state* (game, params, info).
export function beyond(request, api, state) {
  const estimates = () => Boolean(state.info && state.info.estimates);
  const cache = new Map(); // one search per position and variant: undo shows the same
  async function lookup(positions) {
    return request(`/api/games/${state.game}/positions`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ params: state.params, positions }),
    });
  }
  async function estimateOf(p, extra) {
    const key = JSON.stringify([state.game, state.params, p, extra]);
    if (!cache.has(key)) {
      cache.set(key, await api(`/api/games/${state.game}/estimate`, { p, ...extra }));
    }
    return cache.get(key);
  }
  const budget = { seconds: ESTIMATE_SECONDS };
  // The variant's initial position (its parameters in normal form kept).
  async function initial() {
    const answer = await lookup([]);
    state.params = answer.params;
    return answer.initial;
  }
  // Position *p*'s view: the database's answer; an estimate's where the database does
  // not hold it (a game with an evaluation); a position over that the database does not
  // hold: no moves, the estimate's refusal as its words.
  async function viewOf(p) {
    const [a] = (await lookup([p])).results;
    if (!a.error || a.error.code !== 404 || !estimates()) {
      if (a.error) throw new Error(a.error.message);
      return a;
    }
    try {
      return estimateView(await estimateOf(p, budget));
    } catch (e) {
      if (e.status !== 400) throw e;
      return estimateView({ position: p, moves: [], stored: false, refused: e.message });
    }
  }
  // The moves of position *p* (an address's line is followed through it): the
  // database's, else (a game with an evaluation) a one-ply estimate's, which is quick.
  async function movesOf(p) {
    const [a] = (await lookup([p])).results;
    if (!a.error) return a;
    if (a.error.code !== 404 || !estimates()) throw new Error(a.error.message);
    return estimateOf(p, { depth: 1 });
  }
  // The reply at position *p*: the database's move where it has decided p (or cannot
  // estimate), else the estimate's best move; null at the end of the game.
  async function reply(p) {
    const [a] = (await lookup([p])).results;
    if (decided(a) || !estimates()) {
      const line = await api(`/api/games/${state.game}/line`, { p, max_plies: 1 });
      if (!line.steps.length) return null;
      const s = line.steps[0];
      return { move: s.move, position: s.position, from: p, by: "db" };
    }
    let e;
    try {
      e = await estimateOf(p, budget);
    } catch (err) {
      if (err.status === 400 && a.error) return null; // over: no move to estimate
      throw err;
    }
    const m = e.moves.find((x) => x.move === e.best_move);
    return m ? { move: m.move, position: m.position, from: p, by: "est" } : null;
  }
  return { initial, viewOf, movesOf, reply };
}
