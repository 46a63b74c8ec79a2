"""The solve-run endpoints: every run with its progress at its latest commit, readable
while a solve runs in another process (each commit updates the run's row)."""

from __future__ import annotations

from dataclasses import asdict
from typing import cast

from flask import Response

from api.database import get_session
from api.errors import RunNotFoundError
from api.params import int_from_query
from api.positions import bounds_model
from api.responses import json_answer
from api.schemas import RunStatus, SolveList, SolveRun, WorkerUnits
from db.records import RunRecord, VariantRecord
from db.repository import Reader, get_run, get_variant, list_runs

MAX_RUN_ID = 2**31 - 1
"""Run ids are 32-bit: larger ones cannot exist (and are not sent to the database)."""


def solve_run(run: RunRecord, variant: VariantRecord | None) -> SolveRun:
    """A solve run as the API shows it."""
    return SolveRun(
        id=run.id,
        variant_id=run.variant_id,
        game=None if variant is None else variant.game,
        params=None if variant is None else dict(variant.params_json),
        rules_version=None if variant is None else variant.rules_version,
        status=cast(RunStatus, run.status),
        started_at=run.started_at,
        heartbeat_at=run.heartbeat_at,
        finished_at=run.finished_at,
        root=run.root_position,
        full=run.tablebase,
        max_expansions=run.max_expansions,
        max_seconds=run.max_seconds,
        expansions=run.expansions,
        nodes_added=run.nodes_added,
        edges_added=run.edges_added,
        nodes=run.nodes,
        edges=run.edges,
        frontier=run.frontier,
        root_bounds=bounds_model(run.root_bounds),
        seconds=run.seconds,
        rss_bytes=run.rss_bytes,
        memory_limit=run.memory_limit,
        resident_nodes=run.resident_nodes,
        tiers_done=run.tiers_done,
        tiers_total=run.tiers_total,
        units_done=run.units_done,
        units_total=run.units_total,
        workers=run.workers,
        eta_seconds=run.eta_seconds,
        worker_units=[WorkerUnits(**asdict(w)) for w in run.worker_units],
        pid=run.pid,
        hostname=run.hostname,
    )


def solve_runs(session: Reader, runs: list[RunRecord]) -> list[SolveRun]:
    """*runs* as the API shows them (each with its variant)."""
    variants = {vid: get_variant(session, vid) for vid in {r.variant_id for r in runs}}
    return [solve_run(r, variants[r.variant_id]) for r in runs]


def list_solves() -> Response:
    """Solve runs, newest first (at most ``limit``, default 100)."""
    limit = int_from_query("limit", minimum=1, maximum=1000, default=100)
    session = get_session()
    runs = list_runs(session)
    return json_answer(SolveList(solves=solve_runs(session, runs[:limit]), total=len(runs)))


def get_solve(run_id: int) -> Response:
    """One solve run.

    :raise 404: no run has that id.
    """
    session = get_session()
    run = get_run(session, run_id)
    if run is None:
        raise RunNotFoundError(f"no solve run {run_id} in this database")
    return json_answer(solve_runs(session, [run])[0])


__all__ = ["MAX_RUN_ID", "get_solve", "list_solves", "solve_run"]
