// negagraph explorer: what a replay step says besides its graph — the commit in words
// (a summary when the graph is not drawn), the tiers of a tiered solve, and a chart of
// the root's low and high bounds over the commits. Plain ES module, no build step.
// SVG's namespace, as the HTML parser gives it (no address written here: the offline test)
const SVG = (() => {
  const holder = document.createElement("div");
  holder.innerHTML = "<svg></svg>";
  return holder.firstChild.namespaceURI;
})();

const bound = (b, sign) => (b === null || b === undefined ? `${sign}∞` : String(b));
const fin = (f) => (f ? "final" : "not final");
const count = (n, one, many) => `${n.toLocaleString("en")} ${n === 1 ? one : many}`;

// The root's bounds after commit c, in words.
export function rootWords(c) {
  return `low ${bound(c.root_low, "-")} (${fin(c.root_low_final)}), ` +
    `high ${bound(c.root_high, "+")} (${fin(c.root_high_final)})`;
}

// What commit *answer.commit* did to the tiers of a tiered solve, in words.
export function tierEvents(answer) {
  const k = answer.commit;
  const out = [];
  for (const t of answer.tiers) {
    if (t.discovered_in === k) out.push(`tier ${t.name} discovered (${count(t.nodes, "position", "positions")})`);
    if (t.solved_in === k) out.push(`tier ${t.name} solved (${count(t.edges || 0, "move", "moves")})`);
  }
  return out;
}

// A commit not drawn, in words: its positions and moves, what it added, the root's bounds.
export function summary(answer) {
  const c = answer.commits[answer.commit - 1];
  const before = answer.commit > 1 ? answer.commits[answer.commit - 2] : { nodes: 0, edges: 0 };
  const events = tierEvents(answer);
  return `${count(c.nodes, "position", "positions")} (+${(c.nodes - before.nodes).toLocaleString("en")}),` +
    ` ${count(c.edges, "move", "moves")} (+${(c.edges - before.edges).toLocaleString("en")})` +
    (events.length ? ` · ${events.join(", ")}` : "") + ` · root: ${rootWords(c)}`;
}

// The tiers as a row of cells: not found yet, discovered, solved; this commit's ringed.
export function tierList(answer) {
  const k = answer.commit;
  const list = document.createElement("ol");
  list.className = "tiers";
  for (const t of answer.tiers) {
    const li = document.createElement("li");
    const status = t.solved_in !== null && t.solved_in <= k ? "solved"
      : t.discovered_in <= k ? "discovered" : "pending";
    li.className = status + (t.discovered_in === k || t.solved_in === k ? " now" : "");
    li.textContent = t.name;
    li.dataset.tier = String(t.tier);
    li.dataset.status = status;
    li.title = `tier ${t.name}: ${count(t.nodes, "position", "positions")}, discovered by commit ` +
      `${t.discovered_in}` + (t.solved_in === null ? ", not solved yet"
        : `, solved by commit ${t.solved_in} (${count(t.edges || 0, "move", "moves")})`) +
      ` · at commit ${k}: ${status === "pending" ? "not found yet" : status}`;
    list.append(li);
  }
  return list;
}

// The y range of the chart: the game's values when it has a range, else the finite
// bounds seen (an infinite bound is drawn at the edge, marked ∞).
function range(commits, valueRange) {
  if (valueRange) return [valueRange[0], valueRange[1]];
  const seen = commits.flatMap((c) => [c.root_low, c.root_high]).filter((b) => b !== null);
  if (!seen.length) return [-1, 1];
  const lo = Math.min(...seen);
  const hi = Math.max(...seen);
  return lo === hi ? [lo - 1, hi + 1] : [lo, hi];
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

// The chart of the root's low (green) and high (orange) over the commits, the commit
// shown marked; a click on it asks for the commit under the pointer (*pick(k)*).
export function boundsChart(commits, current, valueRange, pick) {
  const W = 320, H = 104, L = 30, R = 6, T = 20, B = 28;
  const [lo, hi] = range(commits, valueRange);
  const n = commits.length;
  const x = (k) => L + (n === 1 ? 0 : ((k - 1) * (W - L - R)) / (n - 1));
  const y = (v, sign) => {
    if (v === null) return sign < 0 ? H - B + 10 : T - 10; // infinite: past the edge
    return H - B - ((v - lo) * (H - T - B)) / (hi - lo);
  };
  const svg = el("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img",
    "aria-label": "the root's low and high bounds over the commits" });
  svg.append(el("title", {}, "the root's bounds over the commits (green: low, orange: high;" +
    " past the edge: infinite); click to go to a commit"));
  for (const v of [lo, hi]) {
    svg.append(el("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), stroke: "#ccc" }));
    svg.append(el("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end", "font-size": 10 }, String(v)));
  }
  svg.append(el("text", { x: L - 4, y: T - 6, "text-anchor": "end", "font-size": 10 }, "+∞"));
  svg.append(el("text", { x: L - 4, y: H - B + 14, "text-anchor": "end", "font-size": 10 }, "-∞"));
  for (const [key, sign, colour] of [["root_low", -1, "#2a2"], ["root_high", 1, "#c60"]]) {
    const points = [];
    commits.forEach((c, i) => {
      if (i) points.push(`${x(c.seq)},${y(commits[i - 1][key], sign)}`); // steps
      points.push(`${x(c.seq)},${y(c[key], sign)}`);
    });
    svg.append(el("polyline", { points: points.join(" "), fill: "none", stroke: colour,
      "stroke-width": 2, class: key.slice(5),
      "data-values": commits.map((c) => (c[key] === null ? "" : c[key])).join(",") }));
  }
  svg.append(el("line", { x1: x(current), x2: x(current), y1: 2, y2: H - 2, stroke: "#06c",
    class: "current", "stroke-dasharray": "3 2" }));
  svg.append(el("text", { x: W / 2, y: H - 2, "text-anchor": "middle", "font-size": 10 },
    `commit 1 … ${n}`));
  svg.onclick = (ev) => {
    const box = svg.getBoundingClientRect();
    const at = ((ev.clientX - box.left) * W) / box.width;
    const k = Math.round(1 + ((at - L) * (n - 1)) / (W - L - R));
    pick(Math.min(n, Math.max(1, k)));
  };
  return svg;
}
