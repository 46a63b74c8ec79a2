"""The models of api/schemas.py against real answers: every answer of a sample of
endpoints is an instance of its model (extra members forbidden, types strict), and the
OpenAPI components are exactly the models'."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from pydantic import BaseModel

from api import schemas
from api.schemas import component_schemas

POSITIONS = "/api/games/{game}/positions"

GETS: list[tuple[str, dict[str, Any], type[BaseModel]]] = [
    ("/api", {}, schemas.Index),
    ("/api/health", {}, schemas.Health),
    ("/api/games", {}, schemas.Games),
    ("/api/solves", {}, schemas.SolveList),
    (POSITIONS.format(game="tic-tac-toe"), {"p": "x.o/.../..."}, schemas.Position),
    (POSITIONS.format(game="number-game"), {"p": "13"}, schemas.Position),
    (POSITIONS.format(game="tic-tac-toe"), {"p": "nope"}, schemas.Error),
    ("/api/games/tic-tac-toe/line", {"p": ".../.../..."}, schemas.Line),
    ("/api/games/number-game/line", {"p": "13", "bound": "low"}, schemas.Line),
    ("/api/games/chess/positions", {"p": "x"}, schemas.Error),
]


@pytest.mark.parametrize(("url", "query", "model"), GETS)
def test_answers_are_instances_of_their_models(
    client: FlaskClient, url: str, query: dict[str, Any], model: type[BaseModel]
) -> None:
    with client.get(url, query_string=query) as r:
        body = r.get_json()
    # a member the model does not know is an error (extra="forbid"); JSON has no
    # datetimes, so those are parsed from their text (not strict)
    model.model_validate(body)


def test_a_batch_answer_mixes_positions_and_errors_in_order(client: FlaskClient) -> None:
    body = {"positions": [".........", "bad", "x........"]}
    with client.post(POSITIONS.format(game="tic-tac-toe"), json=body) as r:
        answer = schemas.BatchResponse.model_validate(r.get_json())
    kinds = [type(result).__name__ for result in answer.results]
    assert kinds == ["Position", "PositionError", "Position"]


def test_the_document_components_are_the_models(app: Flask, client: FlaskClient) -> None:
    doc = client.get("/api/openapi.json").get_json()
    expected = component_schemas(max_batch=int(app.config["MAX_BATCH"]))
    assert doc["components"]["schemas"] == expected
    for model in schemas.COMPONENTS:
        assert model.__name__ in expected
    # every reference resolves to a component
    refs = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                refs.add(node["$ref"].rsplit("/", 1)[-1])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    assert refs <= set(expected)
    assert (
        expected["BatchRequest"]["properties"]["positions"]["maxItems"] == app.config["MAX_BATCH"]
    )
