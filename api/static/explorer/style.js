// negagraph explorer: how the graph looks: cytoscape's style sheet (the source article's
// conventions: a node's left half its low bound, its right half its high bound, green
// when final, red when not) and the position text of a node's label. Plain ES module.

export function graphStyle() {
  return [
    { selector: "node", style: { label: "data(label)", "text-valign": "center",
      "text-halign": "center", "font-size": 12, color: "#fff", "text-outline-width": 2,
      "text-outline-color": "#333", width: 46, height: 46, "pie-size": "100%",
      "pie-1-background-color": "data(highc)", "pie-1-background-size": 50,
      "pie-2-background-color": "data(lowc)", "pie-2-background-size": 50 } },
    { selector: "node[unknown = 1]", style: { "background-color": "#999",
      "pie-size": "0%" } },
    { selector: "node[kind = \"chance\"]", style: { shape: "diamond", "text-wrap": "wrap",
      width: 60, height: 60, "background-color": "#777", "pie-size": "55%" } },
    { selector: "edge", style: { "curve-style": "bezier", "target-arrow-shape": "triangle",
      width: 1.5, label: "data(label)", "font-size": 12, "line-color": "#888",
      "text-background-color": "#fff", "text-background-opacity": 0.8,
      "target-arrow-color": "#888" } },
    { selector: "edge.low", style: { width: 3, "line-color": "#2a2",
      "target-arrow-color": "#2a2" } },
    { selector: "edge.high", style: { width: 3, "line-color": "#c60",
      "target-arrow-color": "#c60" } },
    { selector: "edge.best", style: { width: 4, "line-color": "#06c",
      "target-arrow-color": "#06c" } },
    { selector: "edge.back", style: { "line-style": "dashed", "curve-style": "unbundled-bezier" } },
    { selector: "node.fresh", style: { "border-width": 4, "border-color": "#f90" } },
    { selector: "node[position]", style: { "text-wrap": "wrap", "font-family": "monospace",
      "font-size": 12, "line-height": 1.1, width: "label", height: "label", padding: 8,
      shape: "round-rectangle", "pie-size": "0%", "background-fill": "linear-gradient",
      "background-gradient-direction": "to-right",
      "background-gradient-stop-positions": "0% 50% 50% 100%" } },
    ...halves(),
    { selector: "node[position][unknown = 1]", style: { "background-fill": "solid" } },
    { selector: "node[position][kind = \"chance\"]", style: { shape: "diamond", padding: 18,
      "background-fill": "solid", "pie-size": "55%" } },
  ];
}
// A labelled node's halves, as the round nodes' pies: low bound left, high right
// (green: final, red: not yet).
function halves() {
  const styles = [];
  for (const lo of ["#2a2", "#d22"]) {
    for (const hi of ["#2a2", "#d22"]) {
      styles.push({ selector: `node[position][lowc = "${lo}"][highc = "${hi}"]`,
        style: { "background-gradient-stop-colors": `${lo} ${lo} ${hi} ${hi}` } });
    }
  }
  return styles;
}

// A position as a node shows it: a grid's rows one under the other, a notation longer
// than 16 characters cut (the node's tooltip has the whole).
export function shortPosition(p) {
  const rows = p.split("/");
  const grid = rows.length > 1 && rows.length <= 8 && rows[0].length <= 8 &&
    rows.every((r) => r.length === rows[0].length && /^[^\s\d_]+$/.test(r));
  if (grid) {
    return rows.join("\n");
  }
  return p.length <= 16 ? p : `${p.slice(0, 15)}…`;
}
