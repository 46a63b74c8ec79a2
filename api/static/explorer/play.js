// negagraph explorer: playing from the keyboard, and the value history of the line
// played. Plain ES module, no build step.

// The move list is one Tab stop: arrows (Home, End) move within it, Enter or Space plays
// the move focused (*byKeyboard* is told first, so the next list gets the focus).
export function listKeys(ev, list, byKeyboard) {
  const items = [...list.children];
  const at = items.indexOf(document.activeElement);
  if (at < 0) return;
  const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: items.length - 1 }[ev.key];
  if (ev.key === "Enter" || ev.key === " ") {
    ev.preventDefault();
    byKeyboard();
    items[at].click();
  } else if (to !== undefined) {
    ev.preventDefault();
    const next = items[Math.max(0, Math.min(items.length - 1, to))];
    for (const li of items) li.tabIndex = li === next ? 0 : -1;
    next.focus();
  }
}

// The value history of the line played (as GamesmanUni's VVH): each position's value
// for the first player (*first*), coloured, with its distance to the end in plies and,
// as its title, the words of *verdict*.
export function valueStrip(line, first, verdict) {
  return line.map((a, ply) => {
    const li = document.createElement("li");
    const lo = a.max_low === undefined ? null : a.max_low;
    const hi = a.max_high === undefined ? null : a.max_high;
    const known = !a.error && a.state !== "unknown";
    const cls = !known ? "open" : a.state === "terminal" ? (a.max_value > 0 ? "win"
      : a.max_value < 0 ? "loss" : "draw") : lo !== null && lo === hi
      ? (lo > 0 ? "win" : lo < 0 ? "loss" : "draw") : lo !== null && lo > 0 ? "win"
        : hi !== null && hi < 0 ? "loss" : "open";
    // the plies to the end: the mover's fastest win, or his longest loss
    const d = !known ? null : a.state === "terminal" ? 0
      : a.high !== null && a.high < 0 ? a.depth_high : a.depth_low;
    li.className = cls;
    li.dataset.ply = String(ply);
    li.textContent = d === null || d === undefined ? "·" : String(d);
    li.title = `ply ${ply}: ${known ? verdict(a) : "not stored"} · for ${first}: ` +
      `${cls === "win" ? "wins" : cls === "loss" ? "loses" : cls === "draw" ? "draw" : "not decided"}`;
    return li;
  });
}

// An outcome of a chance node's *moves* drawn by their probabilities ("1/6", or a
// decimal), *random* giving a number in [0, 1).
export function drawOutcome(moves, random = Math.random) {
  const weight = (m) => {
    const [a, b] = String(m.chance.probability).split("/");
    return b === undefined ? Number(a) : Number(a) / Number(b);
  };
  const total = moves.reduce((s, m) => s + weight(m), 0);
  let x = random() * total;
  for (const m of moves) {
    x -= weight(m);
    if (x < 0) return m;
  }
  return moves[moves.length - 1];
}

// In a game of chance, what follows the player's move from *pos* until it is *you*'s
// turn again (or the game ends): the page rolls the dice at chance nodes, and the
// database plays the other player's decisions, its best move first (the moves come best
// first for their mover). *lookup* reads a position; at most *limit* steps.
export async function chanceReplies(pos, you, lookup, limit = 200) {
  const steps = [];
  for (let v = await lookup(pos); v.moves.length && steps.length < limit;
    v = await lookup(pos)) {
    const c = v.chance;
    if (!c || (c.kind === "decision" && c.player === you)) break;
    const m = c.kind === "chance" ? drawOutcome(v.moves) : v.moves[0];
    steps.push({ move: m.move, position: m.position, from: pos,
                 by: c.kind === "chance" ? "dice" : "db" });
    pos = m.position;
  }
  return steps;
}
