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
