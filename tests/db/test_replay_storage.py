"""What a replay reads (migration 0006): a ``commits`` row per committed batch and, per
node, the commit that expanded it — checked against an in-memory solve that records the
graph at each of its commits (the same solve: node ids are discovery order)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy import Engine, select

from db.models import Commit, Node
from db.store import SqlStore
from solver.games import get_game
from solver.graph import EXPANDED, TERMINAL
from solver.negamax import solve
from solver.store import Batch, MemoryStore, Progress
from solver.values import encode


@dataclass(frozen=True)
class Seen:
    """The graph as one commit left it."""

    nodes: int
    expanded: frozenset[int]
    expansions: int
    root: tuple[int | None, int | None, bool, bool]


class RecordingStore(MemoryStore):
    """A memory store that remembers what each commit held."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Seen] = []

    def commit(self, batch: Batch, progress: Progress) -> None:
        graph = batch.graph
        expanded = frozenset(i for i in range(graph.num_nodes) if graph.state[i] == EXPANDED)
        root = (
            encode(progress.root_low),
            encode(progress.root_high),
            bool(progress.root_low_final),
            bool(progress.root_high_final),
        )
        self.seen.append(Seen(graph.num_nodes, expanded, progress.expansions, root))
        super().commit(batch, progress)


def stored(engine: Engine) -> tuple[list[Commit], dict[int, tuple[int | None, int]]]:
    with engine.connect() as conn:
        commits = list(conn.execute(select(Commit).order_by(Commit.seq)))
        nodes = {r.id: (r.expanded_in, r.state) for r in conn.execute(select(Node))}
    return commits, nodes  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("game", "params", "root", "budgets"),
    [
        ("number-game", {}, "13", [None]),  # the article's solve
        ("tic-tac-toe", {}, None, [40, 100, None]),  # resumed twice: numbers go on
        ("nap", {"n": 6}, None, [None]),  # cycles
    ],
)
def test_partial_solves_record_each_commit_and_each_expansion(
    engine: Engine, game: str, params: dict[str, int], root: str | None, budgets: list[int | None]
) -> None:
    memory = RecordingStore()
    for budget in budgets:
        solve(get_game(game, **params), root, store=memory, max_expansions=budget)
        solve(get_game(game, **params), root, store=SqlStore(engine), max_expansions=budget)
    commits, nodes = stored(engine)
    assert [c.seq for c in commits] == list(range(1, len(memory.seen) + 1))
    assert len({c.run_id for c in commits}) == len(budgets)
    for commit, seen in zip(commits, memory.seen, strict=True):
        assert commit.nodes == seen.nodes
        assert commit.expansions == seen.expansions
        bounds = (commit.root_low, commit.root_high, commit.root_low_final, commit.root_high_final)
        assert bounds == seen.root
    # each node: expanded first by which commit (the oracle), NULL if never or terminal
    first: dict[int, int] = {}
    for seq, seen in enumerate(memory.seen, start=1):
        for n in seen.expanded:
            first.setdefault(n, seq)
    assert {i: e for i, (e, _) in nodes.items()} == {i: first.get(i) for i in nodes}
    assert all(e is None for e, state in nodes.values() if state == TERMINAL)


def test_a_full_solve_marks_every_expanded_node(engine: Engine) -> None:
    # Full solves write a node's state at discovery and once more at the end, so an
    # expansion is recorded by the commit that wrote it expanded: every expanded node has
    # one, within the solve's commits.
    solve(get_game("tic-tac-toe"), full=True, store=SqlStore(engine), batch_size=500)
    commits, nodes = stored(engine)
    seqs = {c.seq for c in commits}
    assert len(seqs) > 2 and commits[-1].nodes == len(nodes)
    for expanded_in, state in nodes.values():
        assert (expanded_in is not None) == (state == EXPANDED)
        assert expanded_in is None or expanded_in in seqs
