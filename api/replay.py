"""``GET /api/games/<game>/replay``: a stored solve stepped through commit by commit, as
the source article steps through the number game (what is stored: ``docs/sql.md``).

The answer is the variant's timeline (every commit: its node count and the run root's
bounds) and the graph as one commit left it: its positions, which of them that commit
expanded, the moves, and each position's bounds and finality flags recomputed from that
graph alone (the least fixpoint and the greatest, as the solver defines them), so every
step shows exactly what the graph then proved. Graphs of more than
:data:`MAX_REPLAY_NODES` positions are not drawn.
"""

from __future__ import annotations

from typing import TypedDict

from flask import Response

from api.database import get_database, get_session
from api.errors import InvalidRequestError
from api.params import Variant, int_from_query, variant_from_query
from api.responses import json_answer
from api.schemas import Replay, ReplayCommit, ReplayEdge, ReplayNode
from api.views import check_rules_version
from db.errors import PositionNotFoundError
from db.records import VariantRecord
from db.replay import CommitRecord, graph_at, list_commits
from db.repository import Reader, get_run
from solver.fixpoint import expanded_nodes, update_finality
from solver.full.retrograde import retrograde
from solver.game import GameBase
from solver.graph import STATE_NAMES, Graph
from solver.values import NEG_INF, POS_INF, encode

MAX_REPLAY_NODES = 500
"""The most positions a replay step draws."""

COMMIT_ARG = "commit"


def get_replay(game: str) -> Response:
    """The graph as commit ``?commit=`` (default: the last that fits) left it.

    :raise 400: a bad parameter, or a commit of more than ``MAX_REPLAY_NODES`` positions.
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
    commit = chosen_commit(commits)
    g = variant.game()
    check_rules_version(g, record)
    return json_answer(
        Replay(
            game=g.name,
            params=dict(g.params),
            commit=commit.seq,
            commits=[_commit(c) for c in commits],
            **replay_graph(session, g, record, commit),
        )
    )


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


def chosen_commit(commits: list[CommitRecord]) -> CommitRecord:
    """The commit ``?commit=`` names (default: the last that fits).

    :raises InvalidRequestError: if it is not one of *commits*, or holds more than
        :data:`MAX_REPLAY_NODES` positions.
    """
    fitting = [c.seq for c in commits if c.nodes <= MAX_REPLAY_NODES]
    seq = int_from_query(
        COMMIT_ARG, minimum=1, maximum=len(commits), default=fitting[-1] if fitting else 1
    )
    commit = commits[seq - 1]
    if commit.nodes > MAX_REPLAY_NODES:
        raise InvalidRequestError(
            f"commit {seq} holds {commit.nodes:,} positions; a replay draws at most "
            f"{MAX_REPLAY_NODES}" + (f" (the last that fits is {fitting[-1]})" if fitting else "")
        )
    return commit


class ReplayGraph(TypedDict):
    """The graph part of a :class:`~api.schemas.Replay`, as its keyword arguments."""

    root: int | None
    nodes: list[ReplayNode]
    edges: list[ReplayEdge]


def replay_graph(
    session: Reader, game: GameBase, record: VariantRecord, commit: CommitRecord
) -> ReplayGraph:
    """The graph *commit* left, its bounds and flags recomputed from it alone, and the
    node of its run's root."""
    at = graph_at(session, record.id, commit)
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
    return ReplayGraph(
        root=None if run is None else graph.find(run.root_key),
        nodes=[_node(graph, n, text, at.expanded_in[n]) for n, text in enumerate(texts)],
        edges=[
            ReplayEdge(
                parent=graph.edge_parent[e], child=graph.edge_child[e], move=graph.edge_move[e]
            )
            for e in range(graph.num_edges)
        ],
    )


def _node(graph: Graph, n: int, text: str, expanded_in: int | None) -> ReplayNode:
    return ReplayNode(
        id=n,
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
        expansions=c.expansions,
        root_low=c.root_low,
        root_high=c.root_high,
        root_low_final=c.root_low_final,
        root_high_final=c.root_high_final,
    )


__all__ = ["COMMIT_ARG", "MAX_REPLAY_NODES", "get_replay"]
