"""The pruning benchmark on its smoke sizes, and the tree counts it uses for big trees."""

from __future__ import annotations

import json
from pathlib import Path

from bench.__main__ import main
from bench.pruning import FAMILY_COLUMNS, evaluate_tree, graph_tree, pruning_rows
from solver.alphabeta import alphabeta
from solver.games.domino_tiling import DominoTiling
from solver.games.e_valuate import EValuate


def test_tree_counts_match_plain_minimax() -> None:
    for expression, digits in [("x-y", "0-9"), ("a*(b-c)", "0,4,7"), ("a+b*c-d", "1,2")]:
        game = EValuate(expression=expression, digits=digits, symmetry=False)
        result = alphabeta(game, prune=False, tt=False)
        calls, distinct = evaluate_tree(len(game.names), len(game.digits))
        assert (result.stats.calls, result.stats.distinct) == (calls, distinct)
        assert graph_tree(game) == (calls, distinct)
    for rows, cols in [(2, 3), (3, 3), (2, 5)]:
        board = DominoTiling(rows=rows, cols=cols, symmetry=False)
        result = alphabeta(board, prune=False, tt=False)
        assert graph_tree(board) == (result.stats.calls, result.stats.distinct)


def test_pruning_smoke_rows() -> None:
    rows = pruning_rows(1, True)
    pruning = [r for r in rows if r["benchmark"] == "pruning"]
    symmetry = [r for r in rows if r["benchmark"] == "symmetry"]
    family = [r for r in rows if r["benchmark"] == "family"]
    assert [r["case"] for r in pruning] == [
        "e-valuate x*(y-z)",
        "e-valuate a*b-c*d digits=0-3",
        "domino-tiling 3x3",
        "domino-tiling 3x4",
    ]
    assert pruning[0]["value"] == 18  # the paper's example
    for r in pruning:
        assert r["minimax_calls"] >= r["ab_calls"] >= r["abtt_distinct"] > 0
        assert r["negagraph_expansions"] > 0 and r["negagraph_batch1"] > 0
    # the family table: the same cases and connect-four, every member's columns, one value
    assert [r["case"] for r in family] == [r["case"] for r in pruning] + ["connect-four 4x3"]
    by_case = {r["case"]: r for r in pruning}
    for r in family:
        for prefix in FAMILY_COLUMNS:
            assert r[f"{prefix}_value"] == r["value"], (r["case"], prefix)
            assert r[f"{prefix}_calls"] > 0 and r[f"{prefix}_s"] >= 0
        assert r["abtt_calls"] > 0 and r["negagraph_expansions"] > 0
        if r["case"] in by_case:
            assert r["value"] == by_case[r["case"]]["value"]
            assert r["abtt_calls"] == by_case[r["case"]]["abtt_calls"]
    assert family[-1]["value"] == 0  # connect-four 4 x 3 is a draw
    assert family[0]["pvs_calls"] <= family[0]["abtt_calls"] < family[0]["id_calls"]
    assert len(symmetry) == 3
    for r in symmetry:
        assert r["partial_expansions_on"] <= r["partial_expansions_off"]
        assert r["full_nodes_on"] < r["full_nodes_off"]


def test_pruning_through_the_command(tmp_path: Path) -> None:
    assert main(["--smoke", "--only", "pruning", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "results.json").read_text())
    assert {r["benchmark"] for r in data["rows"]} == {"pruning", "family", "symmetry"}
    text = (tmp_path / "results.md").read_text()
    assert "### pruning" in text and "### family" in text and "### symmetry" in text
