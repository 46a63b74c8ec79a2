"""``GET /api/games/<game>/replay``: a stored solve stepped through commit by commit, as
the source article steps through the number game (what is stored: ``docs/sql.md``).

The answer is the variant's timeline (every commit: its node and edge counts and the run
root's bounds), its tiers when it was solved tier by tier (which commit discovered and
which solved each), and the graph as one commit left it: its positions, which of them
that commit expanded, the moves, and each position's bounds and finality flags
recomputed from that graph alone (the least fixpoint and the greatest, as the solver
defines them), so every step shows exactly what the graph then proved. The graph of a
tiered solve's commit is the positions of the tiers it had discovered (ids are given in
solve order, not discovery order: ``docs/design.md`` §5), the solved tiers' expanded.
Graphs of more than :data:`MAX_REPLAY_NODES` positions, and the graphs of a variant in
the compact layout (which stores no moves or node ids), are not drawn: the answer says
why in ``not_drawn``, with the timeline and tiers all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from flask import Response

from api.database import get_database, get_session
from api.params import Variant, int_from_query, variant_from_query
from api.responses import json_answer
from api.schemas import Replay, ReplayCommit, ReplayEdge, ReplayNode, ReplayTier
from api.views import check_rules_version
from db.errors import PositionNotFoundError
from db.records import VariantRecord
from db.replay import CommitRecord, TierStep, commit_ranges, graph_at, list_commits, list_tiers
from db.repository import Reader, get_position, get_run
from solver.fixpoint import expanded_nodes, update_finality
from solver.full.retrograde import retrograde
from solver.game import GameBase
from solver.graph import STATE_NAMES, Graph
from solver.tiers.graph import tier_rules
from solver.values import NEG_INF, POS_INF, decode, encode

MAX_REPLAY_NODES = 500
"""The most positions a replay step draws."""

COMMIT_ARG = "commit"


def get_replay(game: str) -> Response:
    """The graph as commit ``?commit=`` (default: the last that fits, else the last)
    left it, or why it is not drawn.

    :raise 400: a bad parameter.
    :raise 404: unknown game, the variant is not stored, or its commits were not recorded.
    :raise 409: the database holds the variant under another rules version.
    """
    variant = variant_from_query(game, reserved=(COMMIT_ARG,))
    record = stored_variant(variant)
    session = get_session()
    commits = list_commits(session, record.id)
    if not commits:
        raise PositionNotFoundError(
            f"{variant.cls.name} ({variant.text or 'default parameters'}) has no recorded "
            "commits to replay (it was stored before schema revision 0006)"
        )
    commit = chosen_commit(commits, record.layout == "compact")
    g = variant.game()
    check_rules_version(g, record)
    tiers = list_tiers(session, record.id)
    why = not_drawn(variant, record, commit, commits, tiers)
    graph = ReplayGraph(root=None, nodes=[], edges=[]) if why else None
    if graph is None:
        ranges = commit_ranges(commit, tiers)
        assert ranges is not None  # not_drawn said why otherwise
        graph = replay_graph(session, g, record, commit, ranges)
    names = tier_rules(g).tier_name if tiers else str
    return json_answer(
        Replay(
            game=g.name,
            params=dict(g.params),
            layout="compact" if record.layout == "compact" else "graph",
            commit=commit.seq,
            commits=timeline(session, g, record, commits, tiers),
            tiers=[_tier(t, names(t.tier)) for t in tiers],
            drawn=why is None,
            not_drawn=why,
            **graph,
        )
    )


def not_drawn(
    variant: Variant,
    record: VariantRecord,
    commit: CommitRecord,
    commits: list[CommitRecord],
    tiers: list[TierStep],
) -> str | None:
    """Why the graph of *commit* is not drawn (``None``: it is)."""
    if record.layout == "compact":
        return (
            f"{variant.cls.name} ({variant.text or 'default parameters'}) is stored in the "
            "compact layout (a value per position, no moves, node ids or commit per "
            "position), so its solve has no per-position replay: only its commits and tiers"
        )
    if commit.nodes > MAX_REPLAY_NODES:
        fitting = [c.seq for c in commits if c.nodes <= MAX_REPLAY_NODES]
        return (
            f"commit {commit.seq} holds {commit.nodes:,} positions; a replay draws at most "
            f"{MAX_REPLAY_NODES}" + (f" (the last that fits is {fitting[-1]})" if fitting else "")
        )
    if commit_ranges(commit, tiers) is None:
        return f"commit {commit.seq}'s tiers have no node ids yet (the solve is still discovering)"
    waiting = [t for t in tiers if t.discovered_in <= commit.seq and t.solved_in is None]
    if waiting:
        return (
            f"the positions of tier {waiting[0].tier} are not written yet (they are, "
            "whole, when the solve solves their tier)"
        )
    return None


def stored_variant(variant: Variant) -> VariantRecord:
    """The stored record of *variant*.

    :raises PositionNotFoundError: if the database does not hold it.
    """
    record = get_database().variant(variant.cls.name, variant.text)
    if record is None:
        raise PositionNotFoundError(
            f"{variant.cls.name} ({variant.text or 'default parameters'}) is not in the database"
        )
    return record


def chosen_commit(commits: list[CommitRecord], compact: bool) -> CommitRecord:
    """The commit ``?commit=`` names (default: the last that fits, else, or in the
    *compact* layout, the last).

    :raises InvalidRequestError: if it is not one of *commits*.
    """
    fitting = [c.seq for c in commits if c.nodes <= MAX_REPLAY_NODES and not compact]
    seq = int_from_query(
        COMMIT_ARG,
        minimum=1,
        maximum=len(commits),
        default=fitting[-1] if fitting else len(commits),
    )
    return commits[seq - 1]


def timeline(
    session: Reader,
    game: GameBase,
    record: VariantRecord,
    commits: list[CommitRecord],
    tiers: Sequence[TierStep],
) -> list[ReplayCommit]:
    """Every commit, with the run root's bounds after it. A tiered solve's commit rows
    leave the root's bounds open (it records them on its run only): the root's are its
    stored ones from the commit that solved its tier on, open before it (unsolved)."""
    out = [_commit(c) for c in commits]
    root = record.root_key
    if not tiers or root is None:
        return out
    solved = {t.tier: t.solved_in for t in tiers}.get(tier_rules(game).tier(root))
    stored = None if solved is None else get_position(session, game, root)
    if solved is None or stored is None:
        return out
    low = encode(decode(stored.bounds.low, upper=False))
    high = encode(decode(stored.bounds.high, upper=True))
    finals = {
        "root_low_final": stored.bounds.low_final,
        "root_high_final": stored.bounds.high_final,
    }
    return [
        c.model_copy(update={"root_low": low, "root_high": high, **finals})
        if c.seq >= solved
        else c
        for c in out
    ]


class ReplayGraph(TypedDict):
    """The graph part of a :class:`~api.schemas.Replay`, as its keyword arguments."""

    root: int | None
    nodes: list[ReplayNode]
    edges: list[ReplayEdge]


def replay_graph(
    session: Reader,
    game: GameBase,
    record: VariantRecord,
    commit: CommitRecord,
    ranges: Sequence[tuple[int, int]],
) -> ReplayGraph:
    """The graph *commit* left (the nodes of ids in *ranges*), its bounds and flags
    recomputed from it alone, and the node id of its run's root."""
    at = graph_at(session, record.id, commit, ranges)
    graph = at.graph
    retrograde(graph)
    value_range = game.facts.value_range
    everything = expanded_nodes(graph)
    update_finality(
        graph,
        everything,
        everything,
        vmin=NEG_INF if value_range is None else value_range[0],
        vmax=POS_INF if value_range is None else value_range[1],
    )
    run = get_run(session, commit.run_id)
    texts = game.format_many(list(graph.keys))
    ids = at.ids
    root = None if run is None else graph.find(run.root_key)
    return ReplayGraph(
        root=None if root is None else ids[root],
        nodes=[_node(graph, n, ids[n], text, at.expanded_in[n]) for n, text in enumerate(texts)],
        edges=[
            ReplayEdge(
                parent=ids[graph.edge_parent[e]],
                child=ids[graph.edge_child[e]],
                move=graph.edge_move[e],
            )
            for e in range(graph.num_edges)
        ],
    )


def _node(graph: Graph, n: int, node_id: int, text: str, expanded_in: int | None) -> ReplayNode:
    return ReplayNode(
        id=node_id,
        position=text,
        state=STATE_NAMES[graph.state[n]],
        low=encode(graph.low[n]),
        high=encode(graph.high[n]),
        low_final=bool(graph.low_final[n]),
        high_final=bool(graph.high_final[n]),
        expanded_in=expanded_in,
    )


def _commit(c: CommitRecord) -> ReplayCommit:
    return ReplayCommit(
        seq=c.seq,
        run=c.run_id,
        nodes=c.nodes,
        edges=c.edges,
        expansions=c.expansions,
        root_low=c.root_low,
        root_high=c.root_high,
        root_low_final=c.root_low_final,
        root_high_final=c.root_high_final,
    )


def _tier(t: TierStep, name: str) -> ReplayTier:
    return ReplayTier(
        tier=t.tier,
        name=name,
        ordinal=t.ordinal,
        first_id=t.first_id,
        nodes=t.nodes,
        edges=t.edges,
        discovered_in=t.discovered_in,
        solved_in=t.solved_in,
    )


__all__ = ["COMMIT_ARG", "MAX_REPLAY_NODES", "get_replay"]
