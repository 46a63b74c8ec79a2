// negagraph explorer: the board, its coordinates, and moves played on it by clicking.
// Grid games (rows of the notation separated by "/") name their moves after the board:
// a cell ("a1": column letter, row number from the first row of the notation, as
// tic-tac-toe does) or a column ("3", from 1 at the left, as connect-four does). Chess
// moves are UCI ("b6c7"): click a piece's square, then the square it goes to.
// Plain ES module, no build step.

const LETTERS = "abcdefghijklmnopqrstuvwxyz";

// How the moves name the board: "cell", "column", or null (clicks play nothing).
function naming(moves) {
  if (!moves.length) return null;
  if (moves.every((m) => /^[a-z][0-9]+$/.test(m.move))) return "cell";
  if (moves.every((m) => /^[0-9]+$/.test(m.move))) return "column";
  return null;
}

// The move a click on cell (row r, column c) plays, or undefined.
function moveAt(moves, kind, r, c) {
  const name = kind === "cell" ? `${LETTERS[c]}${r + 1}` : String(c + 1);
  return moves.find((m) => m.move === name);
}

// A grid board of *position* with its coordinates; a cell that a move plays (the cell,
// or any cell of the column) is coloured as the move (*classOf*), titled with it
// (*wordsOf*), and plays it when clicked (*play*).
export function gridBoard(position, moves, classOf, wordsOf, play) {
  const rows = position.split("/");
  const kind = naming(moves);
  const table = document.createElement("table");
  table.className = "grid";
  const head = table.createTHead().insertRow();
  if (kind !== "column") head.append(document.createElement("th"));
  for (let c = 0; c < rows[0].length; c += 1) {
    const th = document.createElement("th");
    th.textContent = kind === "column" ? String(c + 1) : LETTERS[c];
    head.append(th);
  }
  const body = table.createTBody();
  rows.forEach((row, r) => {
    const tr = body.insertRow();
    if (kind !== "column") {
      const th = document.createElement("th");
      th.textContent = String(r + 1);
      tr.append(th);
    }
    [...row].forEach((ch, c) => {
      const td = tr.insertCell();
      td.textContent = ch === "." ? "" : ch.toUpperCase();
      td.dataset.cell = `${LETTERS[c]}${r + 1}`;
      const m = kind === null ? undefined : moveAt(moves, kind, r, c);
      if (m === undefined) return;
      td.className = `playable ${classOf(m)}`;
      td.dataset.move = m.move;
      td.title = `${m.move}: ${wordsOf(m)}`;
      td.onclick = () => play(m);
    });
  });
  return table;
}

// The square of python-chess's SVG board under a click, or null.
function squareAt(svg, ev) {
  for (const rect of svg.querySelectorAll("rect.square")) {
    const box = rect.getBoundingClientRect();
    if (ev.clientX >= box.left && ev.clientX < box.right &&
        ev.clientY >= box.top && ev.clientY < box.bottom) {
      return rect;
    }
  }
  return null;
}
const nameOf = (rect) => [...rect.classList].find((k) => /^[a-h][1-8]$/.test(k));

// Clicks on a chess board (python-chess's SVG in *div*): the first on a square a move
// starts from selects it (its moves' squares coloured as the moves), the second on one
// of those squares plays the move (a promotion: to a queen when there is the choice).
export function chessClicks(div, moves, classOf, play) {
  const svg = div.querySelector("svg");
  if (!svg || !moves.every((m) => /^[a-h][1-8][a-h][1-8][qrbn]?$/.test(m.move))) return;
  let from = null;
  const clear = () => {
    for (const r of svg.querySelectorAll("rect.square")) r.classList.remove("from", "win", "draw", "loss", "open");
  };
  div.classList.add("clickable");
  svg.addEventListener("click", (ev) => {
    const rect = squareAt(svg, ev);
    if (!rect) return;
    const sq = nameOf(rect);
    const chosen = from === null ? [] : moves.filter((m) => m.move.startsWith(from + sq));
    if (chosen.length) {
      play(chosen.find((m) => m.move.endsWith("q")) || chosen[0]);
      return;
    }
    clear();
    from = moves.some((m) => m.move.startsWith(sq)) ? sq : null;
    div.dataset.selected = from || "";
    if (from === null) return;
    rect.classList.add("from");
    for (const m of moves.filter((x) => x.move.startsWith(sq))) {
      const target = svg.querySelector(`rect.square.${m.move.slice(2, 4)}`);
      if (target) target.classList.add(classOf(m));
    }
  });
}
