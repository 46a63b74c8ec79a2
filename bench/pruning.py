"""The e-Valuate paper's pruning comparison, with negagraph added (``--only pruning``).

For e-Valuate expressions of 3 to 6 variables and a few domino boards, the positions each
method searches to prove the root's value:

* plain minimax — ``alphabeta(game, prune=False, tt=False)``: the whole game tree. Past
  :data:`RUN_MINIMAX_UP_TO` calls it is not run but counted (marked ``*``): with the
  paper's recursion (1) for e-Valuate, by a memoised count over the move graph for domino;
  the test suite checks the count against real runs on small trees;
* alpha-beta in the game's move order without a table — ``alphabeta(game, tt=False)``;
  for e-Valuate also with MAX proposing digits from 0 up (``ab_asc``), the natural order
  the paper's plain alpha-beta starts from (the game itself proposes from 9 down);
* alpha-beta with move ordering and a transposition table —
  ``alphabeta(game, ordering=True)``;
* negagraph's partial solve — ``solve(game)``: expansions until both root bounds are
  final; also with one leak per round (``batch_size=1``) where that finishes quickly.

``calls`` counts searched positions with repeats (tree nodes), ``distinct`` without.
Symmetry is off in this table (the paper has none). A second table (``family``) puts the
rest of the classic search family (:data:`FAMILY_COLUMNS`: iterative deepening, PVS,
aspiration windows, MTD(f)) beside alpha-beta with a table and negagraph's partial solve,
on the same rows and on connect-four; a third measures what the games' ``symmetry``
parameters save.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from bench.measure import Row, timed
from solver.alphabeta import alphabeta
from solver.classic import FAMILY, search
from solver.game import Game, PositionKey
from solver.games import get_game
from solver.games.connect_four import ConnectFour
from solver.games.domino_tiling import DominoTiling
from solver.games.e_valuate import EValuate
from solver.negamax import solve

RUN_MINIMAX_UP_TO = 300_000
"""Largest tree plain minimax is actually run on (calls); larger ones are counted."""

EXPRESSIONS: list[tuple[str, str]] = [
    ("x*(y-z)", "0-9"),
    ("a*b-c*d", "0-9"),
    ("(a-b)*(c-d)", "0-9"),
    ("a*(b-c)+d", "0-9"),
    ("a*b*c-d*e", "0-9"),
    ("a-b*(c-d)+e", "0-9"),
    ("a*b-c*d+e*f", "0-9"),
    ("a*(b-c)*(d-e)+f", "0-9"),
]
"""Expressions like the paper's (products of differences, sums of products)."""
SMOKE_EXPRESSIONS: list[tuple[str, str]] = [("x*(y-z)", "0-9"), ("a*b-c*d", "0-3")]
BOARDS = [(3, 4), (4, 4), (4, 5)]
SMOKE_BOARDS = [(3, 3), (3, 4)]
CONNECT_FOUR = [(5, 4), (4, 5)]
SMOKE_CONNECT_FOUR = [(4, 3)]
FAMILY_COLUMNS: dict[str, str] = {
    "id": "deepening",
    "pvs": "pvs",
    "asp": "aspiration",
    "mtdf": "mtdf",
    "mtdf_id": "mtdf-deepening",
}
"""The family's columns: prefix -> member of :data:`solver.classic.FAMILY` (exact mode,
symmetry off like the rest of the table)."""
BATCH_ONE_UP_TO = 500_000
"""Rows whose default partial solve expands more than this skip the ``batch_size=1`` run."""


def slow_once(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Median wall time of *fn* and its result; slow calls (over a second) run once."""
    return timed(fn, repeat, once_over=1.0)


class AscendingEValuate(EValuate):
    """e-Valuate with MAX's proposals in increasing order (the paper's natural order)."""

    def children(self, key: PositionKey) -> list[tuple[str, PositionKey]]:
        moves = super().children(key)
        return moves if self.player_to_move(key) else moves[::-1]


def evaluate_tree(variables: int, digits: int) -> tuple[int, int]:
    """(non-terminal tree nodes, distinct non-terminal positions) of e-Valuate with
    *variables* variables and *digits* values: the paper's recursion (1) without the
    leaves, ``T(k) = 1 + D (1 + k T(k-1))``; positions with MAX to move are the
    ``(D+1)^n - D^n`` incomplete assignments, and each has ``D`` pending proposals too."""
    t = 0
    for k in range(1, variables + 1):
        t = 1 + digits * (1 + k * t)
    incomplete = (digits + 1) ** variables - digits**variables
    return t, (digits + 1) * incomplete


def graph_tree(game: Game) -> tuple[int, int]:
    """(non-terminal tree nodes, distinct non-terminal positions) by a memoised count
    over the move graph (iterative, children before parents)."""
    size: dict[PositionKey, int] = {}
    stack: list[tuple[PositionKey, bool]] = [(game.initial(), False)]
    while stack:
        key, ready = stack.pop()
        if key in size:
            continue
        kids = [c for _, c in game.children(key) if game.terminal_value(c) is None]
        if ready:
            size[key] = 1 + sum(size[c] for c in kids)
            continue
        stack.append((key, True))
        stack.extend((c, False) for c in kids if c not in size)
    return size[game.initial()], len(size)


def measure(
    case: str,
    game: Game,
    size: int,
    tree: tuple[int, int],
    repeat: int,
    ascending: Game | None = None,
) -> Row:
    """One row of the pruning table (*ascending*: the same game in the natural order)."""
    log = sys.stderr
    row: Row = {"benchmark": "pruning", "case": case, "size": size}
    tree_calls, tree_distinct = tree
    if tree_calls <= RUN_MINIMAX_UP_TO:
        t, plain = slow_once(lambda: alphabeta(game, prune=False, tt=False), repeat)
        if plain.stats.calls != tree_calls:
            raise SystemExit(
                f"{case}: minimax made {plain.stats.calls} calls, the count says {tree_calls}"
            )
        row.update(minimax_calls=tree_calls, minimax_distinct=tree_distinct, minimax_s=round(t, 3))
        value = plain.value
    else:
        row.update(
            minimax_calls=f"{tree_calls}*", minimax_distinct=f"{tree_distinct}*", minimax_s=""
        )
        value = None
    print(f"  {case}: alpha-beta ...", file=log)
    t, ab = slow_once(lambda: alphabeta(game, tt=False), repeat)
    row.update(ab_calls=ab.stats.calls, ab_distinct=ab.stats.distinct, ab_s=round(t, 3))
    ab_asc_calls = None
    if ascending is not None:
        print(f"  {case}: alpha-beta, digits from 0 up ...", file=log)
        t, asc = slow_once(lambda: alphabeta(ascending, tt=False), repeat)
        if asc.value != ab.value:
            raise SystemExit(f"{case}: ascending order gives {asc.value}, not {ab.value}")
        ab_asc_calls = asc.stats.calls
        row.update(ab_asc_calls=ab_asc_calls, ab_asc_s=round(t, 3))
    else:
        row.update(ab_asc_calls="", ab_asc_s="")
    print(f"  {case}: alpha-beta + ordering + TT ...", file=log)
    t, abtt = slow_once(lambda: alphabeta(game, ordering=True), repeat)
    row.update(abtt_calls=abtt.stats.calls, abtt_distinct=abtt.stats.distinct, abtt_s=round(t, 3))
    print(f"  {case}: negagraph partial solve ...", file=log)
    t, r = slow_once(lambda: solve(game), repeat)
    row.update(negagraph_expansions=r.expansions, negagraph_s=round(t, 3))
    if r.expansions <= BATCH_ONE_UP_TO:
        t1, r1 = slow_once(lambda: solve(game, batch_size=1), 1)
        row.update(negagraph_batch1=r1.expansions, negagraph_batch1_s=round(t1, 3))
        if r1.value != r.value:
            raise SystemExit(f"{case}: batch_size=1 gives {r1.value}, default {r.value}")
    else:
        row.update(negagraph_batch1="", negagraph_batch1_s="")
    values = {ab.value, abtt.value, r.value} | ({value} if value is not None else set())
    if len(values) != 1:
        raise SystemExit(f"{case}: the methods disagree: {values}")
    row["value"] = r.value
    row["minimax/ab"] = round(tree_calls / ab.stats.calls, 1)
    row["ab/abtt"] = round(ab.stats.calls / abtt.stats.distinct, 1)
    row["ab_asc/abtt"] = (
        "" if ab_asc_calls is None else round(ab_asc_calls / abtt.stats.distinct, 1)
    )
    row["negagraph/abtt"] = round(r.expansions / abtt.stats.distinct, 2)
    return row


def family_row(case: str, game: Game, size: int, repeat: int, known: Row | None = None) -> Row:
    """One row of the family table: alpha-beta with a table, each member of
    :data:`FAMILY_COLUMNS` (positions searched with repeats, seconds, value) and the
    partial solve. *known*: the pruning row of the same case, whose alpha-beta and
    negagraph columns are taken instead of measured again."""
    log = sys.stderr
    row: Row = {"benchmark": "family", "case": case, "size": size}
    if known is None:
        print(f"  {case}: alpha-beta + ordering + TT ...", file=log)
        t, abtt = slow_once(lambda: alphabeta(game, ordering=True), repeat)
        print(f"  {case}: negagraph partial solve ...", file=log)
        t_solve, r = slow_once(lambda: solve(game), repeat)
        known = {
            "abtt_calls": abtt.stats.calls,
            "abtt_s": round(t, 3),
            "value": abtt.value,
            "negagraph_expansions": r.expansions,
            "negagraph_s": round(t_solve, 3),
        }
        if r.value != abtt.value:
            raise SystemExit(f"{case}: the partial solve gives {r.value}, not {abtt.value}")
    value = known["value"]
    row.update(value=value, abtt_calls=known["abtt_calls"], abtt_s=known["abtt_s"])
    for prefix, member in FAMILY_COLUMNS.items():
        print(f"  {case}: {member} ...", file=log)
        t, result = slow_once(partial(search, game, options=FAMILY[member]), repeat)
        if result.value != value or not result.exact:
            raise SystemExit(f"{case}: {member} gives {result.value}, not {value}")
        row.update(
            {
                f"{prefix}_calls": result.stats.calls,
                f"{prefix}_s": round(t, 3),
                f"{prefix}_value": result.value,
            }
        )
    row.update(negagraph_expansions=known["negagraph_expansions"], negagraph_s=known["negagraph_s"])
    return row


def pruning_rows(repeat: int, smoke: bool) -> list[Row]:
    """The pruning table, the family table, then the symmetry table."""
    rows: list[Row] = []
    family: list[Row] = []
    for expression, digits in SMOKE_EXPRESSIONS if smoke else EXPRESSIONS:
        game = EValuate(expression=expression, digits=digits, symmetry=False)
        n, d = len(game.names), len(game.digits)
        case = f"e-valuate {expression}" + ("" if digits == "0-9" else f" digits={digits}")
        print(f"pruning: {case}", file=sys.stderr)
        ascending = AscendingEValuate(expression=expression, digits=digits, symmetry=False)
        rows.append(measure(case, game, n, evaluate_tree(n, d), repeat, ascending))
        family.append(family_row(case, game, n, repeat, rows[-1]))
    for r, c in SMOKE_BOARDS if smoke else BOARDS:
        board = DominoTiling(rows=r, cols=c, symmetry=False)
        case = f"domino-tiling {r}x{c}"
        print(f"pruning: {case}", file=sys.stderr)
        rows.append(measure(case, board, r * c, graph_tree(board), repeat))
        family.append(family_row(case, board, r * c, repeat, rows[-1]))
    for w, h in SMOKE_CONNECT_FOUR if smoke else CONNECT_FOUR:
        case = f"connect-four {w}x{h}"
        print(f"family: {case}", file=sys.stderr)
        family.append(family_row(case, ConnectFour(width=w, height=h), w * h, repeat))
    rows.extend(family)
    rows.extend(symmetry_rows(repeat, smoke))
    return rows


SYMMETRY_CASES: list[tuple[str, dict[str, Any]]] = [
    ("e-valuate", {"expression": "x*(y-z)"}),
    ("e-valuate", {"expression": "a*b-c*d"}),
    ("e-valuate", {"expression": "a-b*(c-d)+e"}),
    ("e-valuate", {"expression": "a*b*c-d*e"}),
    ("domino-tiling", {"rows": 4, "cols": 4}),
    ("domino-tiling", {"rows": 4, "cols": 5}),
    ("domino-tiling", {"rows": 5, "cols": 5}),
    ("graph-share", {"graph": "friendship-3", "mode": "vertices"}),
    ("graph-share", {"graph": "friendship-3", "mode": "edges"}),
    ("graph-share", {"graph": "friendship-4", "mode": "vertices"}),
    ("graph-share", {"graph": "cycle-6", "mode": "vertices", "colors": 3}),
]
SMOKE_SYMMETRY_CASES: list[tuple[str, dict[str, Any]]] = [
    ("e-valuate", {"expression": "a*b-c*d", "digits": "0-3"}),
    ("domino-tiling", {"rows": 3, "cols": 4}),
    ("graph-share", {"graph": "friendship-3", "mode": "vertices"}),
]


def symmetry_rows(repeat: int, smoke: bool) -> list[Row]:
    """What ``symmetry=true`` saves: positions and time, off against on."""
    rows: list[Row] = []
    for name, params in SMOKE_SYMMETRY_CASES if smoke else SYMMETRY_CASES:
        case = f"{name} " + " ".join(f"{k}={v}" for k, v in params.items())
        print(f"symmetry: {case}", file=sys.stderr)
        row: Row = {"benchmark": "symmetry", "case": case}
        results: dict[bool, tuple[Any, ...]] = {}
        for symmetry in (False, True):
            t0 = time.perf_counter()
            game = get_game(name, **params, symmetry=symmetry)
            setup = time.perf_counter() - t0
            ab_t, ab = slow_once(partial(alphabeta, game, ordering=True), repeat)
            p_t, p = slow_once(partial(solve, game), repeat)
            f_t, f = slow_once(partial(solve, game, full=True), repeat)
            results[symmetry] = (ab, ab_t, p, p_t, f, f_t, setup, game)
        values = {results[s][i].value for s in (False, True) for i in (0, 2, 4)}
        if len(values) != 1:
            raise SystemExit(f"{case}: symmetry changes the value: {values}")
        (ab0, ab0_t, p0, p0_t, f0, f0_t, _, _) = results[False]
        (ab1, ab1_t, p1, p1_t, f1, f1_t, setup, game1) = results[True]
        row.update(
            value=p0.value,
            group=getattr(game1, "symmetry_group_size", ""),
            setup_s=round(setup, 3),
            abtt_distinct_off=ab0.stats.distinct,
            abtt_distinct_on=ab1.stats.distinct,
            abtt_s_off=round(ab0_t, 3),
            abtt_s_on=round(ab1_t, 3),
            partial_expansions_off=p0.expansions,
            partial_expansions_on=p1.expansions,
            partial_s_off=round(p0_t, 3),
            partial_s_on=round(p1_t, 3),
            full_nodes_off=f0.nodes,
            full_nodes_on=f1.nodes,
            full_s_off=round(f0_t, 3),
            full_s_on=round(f1_t, 3),
            partial_time_ratio=round(p1_t / p0_t, 2) if p0_t else "",
            full_time_ratio=round(f1_t / f0_t, 2) if f0_t else "",
        )
        rows.append(row)
    return rows


__all__ = [
    "FAMILY_COLUMNS",
    "evaluate_tree",
    "family_row",
    "graph_tree",
    "pruning_rows",
    "symmetry_rows",
]
