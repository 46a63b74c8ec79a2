"""The two kinds of shapes the API publishes, held against what it really does.

*Answers*: a crawl of the solved databases (every endpoint, every stored variant, the
positions a move from each root, lines for every bound, strategies, replays, solve runs,
batches and the error answers of each endpoint) gives about 170 real answers per backend;
each must be an instance of the model its documented response names (pydantic, extra
members forbidden) and valid under the published JSON Schema of that response
(``jsonschema_rs``, a validator that shares no code with pydantic), and the crawl must
reach every documented operation with a success and an error.

*Requests*: for JSON bodies drawn by hypothesis, the published ``BatchRequest`` schema,
the model and the server agree: a body the schema rejects is a 400 naming what is wrong;
a body it accepts is answered, one result per position.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import jsonschema_rs
import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from api import schemas
from api.schemas import component_schemas
from db.migrate import upgrade
from tests.api.conftest import SOLVED
from tests.api.helpers import fresh_database, solve_into

JSON = "application/json"


@dataclass(frozen=True)
class Answer:
    method: str
    path: str
    """The documented path template, e.g. ``/api/games/{game}/positions``."""
    url: str
    status: int
    body: Any


class Crawler:
    """Requests through a Flask client, remembering every JSON answer."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        self.answers: list[Answer] = []

    def get(self, path: str, url: str, query: dict[str, Any] | None = None) -> Answer:
        with self.client.get(url, query_string=query or {}) as r:
            shown = f"{url}?{urlencode(query)}" if query else url
            answer = Answer("get", path, shown, r.status_code, r.get_json())
        self.answers.append(answer)
        return answer

    def post(self, path: str, url: str, body: Any) -> Answer:
        with self.client.post(url, json=body) as r:
            answer = Answer("post", path, url, r.status_code, r.get_json())
        self.answers.append(answer)
        return answer


def query_params(params: dict[str, Any]) -> dict[str, str]:
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in params.items()}


def crawl(client: FlaskClient) -> list[Answer]:
    """Every kind of answer the solved database gives, a few hundred of them."""
    c = Crawler(client)
    c.get("/api", "/api")
    c.get("/api/health", "/api/health")
    games = c.get("/api/games", "/api/games").body
    solves = c.get("/api/solves", "/api/solves").body
    c.get("/api/solves", "/api/solves", {"limit": 1})
    c.get("/api/solves", "/api/solves", {"limit": 0})  # 400
    for run in solves["solves"]:
        c.get("/api/solves/{run_id}", f"/api/solves/{run['id']}")
    c.get("/api/solves/{run_id}", "/api/solves/999999")  # 404

    positions = "/api/games/{game}/positions"
    line = "/api/games/{game}/line"
    strategy = "/api/games/{game}/strategy"
    replay = "/api/games/{game}/replay"
    estimate = "/api/games/{game}/estimate"
    for game in games["games"]:
        name = game["name"]
        for variant in game["variants"]:
            params = query_params(variant["params"])
            root = c.get(
                positions, f"/api/games/{name}/positions", {"p": variant["root"], **params}
            )
            assert root.status == 200, root.body
            children = [m["position"] for m in root.body["moves"]]
            for child in children:
                c.get(positions, f"/api/games/{name}/positions", {"p": child, **params})
            for bound in ("value", "low", "high"):
                c.get(
                    line,
                    f"/api/games/{name}/line",
                    {"p": variant["root"], "bound": bound, **params},
                )
            c.get(line, f"/api/games/{name}/line", {"p": variant["root"], "max_plies": 1, **params})
            for limit in (1, 200):  # a tree for games of chance, else a 400
                c.get(
                    strategy,
                    f"/api/games/{name}/strategy",
                    {"p": variant["root"], "max_nodes": limit, **params},
                )
            first = c.get(replay, f"/api/games/{name}/replay", {"commit": 1, **params})
            if first.status == 200:
                for commit in first.body["commits"]:
                    c.get(replay, f"/api/games/{name}/replay", {"commit": commit["seq"], **params})
            c.get(replay, f"/api/games/{name}/replay", params)
            # proven where decided; a 400 for games that cannot be estimated
            c.get(
                estimate,
                f"/api/games/{name}/estimate",
                {"p": variant["root"], "depth": 2, **params},
            )
            c.get(replay, f"/api/games/{name}/replay", {"commit": 10**6, **params})  # 400
            c.post(
                positions,
                f"/api/games/{name}/positions",
                {
                    "params": variant["params"],
                    "positions": [variant["root"], *children, "?!", variant["root"]],
                },
            )
        # errors common to the lookups: malformed position, unknown parameter
        initial = game["initial"]
        for path, url in (
            (positions, f"/api/games/{name}/positions"),
            (line, f"/api/games/{name}/line"),
        ):
            c.get(path, url, {"p": "?!"})
            c.get(path, url, {"p": initial, "no_such_parameter": "1"})
        c.get(line, f"/api/games/{name}/line", {"p": initial, "bound": "middle"})
        # an estimate of the start (searched for games with an evaluation), a bad depth
        c.get(estimate, f"/api/games/{name}/estimate", {"p": initial, "depth": 2})
        c.get(estimate, f"/api/games/{name}/estimate", {"p": initial, "depth": 0})
        c.get(strategy, f"/api/games/{name}/strategy", {"p": initial, "max_nodes": 0})
        c.get(replay, f"/api/games/{name}/replay", {"commit": "first"})
        c.post(positions, f"/api/games/{name}/positions", {"positions": [initial], "x": 1})

    # unknown games and variants not stored (404), too large a batch (413)
    c.get(positions, "/api/games/no-such-game/positions", {"p": "1"})
    c.get(line, "/api/games/no-such-game/line", {"p": "1"})
    c.get(replay, "/api/games/no-such-game/replay")
    c.get(estimate, "/api/games/no-such-game/estimate", {"p": "1", "depth": 2})
    c.get(positions, "/api/games/connect-four/positions", {"p": "", "width": 5, "height": 5})
    c.get(replay, "/api/games/connect-four/replay", {"width": 5, "height": 5})
    c.post(positions, "/api/games/no-such-game/positions", {"positions": []})
    c.post(positions, "/api/games/tic-tac-toe/positions", {"positions": ["........."] * 1001})
    return c.answers


def documented_schema(doc: dict[str, Any], answer: Answer) -> dict[str, Any]:
    """The schema the document gives for *answer*'s status on its operation."""
    operation = doc["paths"][answer.path][answer.method]
    response = operation["responses"].get(str(answer.status))
    assert response is not None, f"{answer.method} {answer.url}: {answer.status} is undocumented"
    schema: dict[str, Any] = response["content"][JSON]["schema"]
    return schema


@pytest.fixture(scope="module")
def solved_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The shared solved variants (:data:`tests.api.conftest.SOLVED`) and a game of
    chance, whose strategy the crawl asks for too (other games answer it with a 400)."""
    with fresh_database(backend, tmp_path_factory.mktemp("schemas")) as url:
        upgrade(url)
        for game, params, full in [*SOLVED, ("coin-nim", {"n": 6}, True)]:
            solve_into(url, game, params, full)
        yield url


@pytest.fixture
def document(client: FlaskClient) -> dict[str, Any]:
    doc: dict[str, Any] = client.get("/api/openapi.json").get_json()
    return doc


def validator(doc: dict[str, Any], schema: dict[str, Any]) -> Any:
    """A JSON Schema validator of *schema*, whose references point into *doc*."""
    return jsonschema_rs.validator_for({**schema, "components": doc["components"]})


def test_every_answer_has_its_documented_shape(
    client: FlaskClient, document: dict[str, Any]
) -> None:
    answers = crawl(client)
    problems: list[str] = []
    for answer in answers:
        schema = documented_schema(document, answer)
        name = schema["$ref"].rsplit("/", 1)[-1]
        model: type[BaseModel] = getattr(schemas, name)
        try:
            model.model_validate(answer.body)
        except ValidationError as exc:
            problems.append(f"{answer.method} {answer.url} ({name}, model): {exc}")
        for error in validator(document, schema).iter_errors(answer.body):
            problems.append(f"{answer.method} {answer.url} ({name}, JSON Schema): {error}")
    assert not problems, "\n".join(problems[:10])

    # the crawl is broad: each documented operation answered with a success and an error,
    # each stored variant looked up, each kind of batch entry seen
    reached = {(a.method, a.path, a.status // 100) for a in answers}
    for path, item in document["paths"].items():
        if path in ("/api/openapi.json", "/api/docs"):
            continue  # not JSON answers of a model (tests/api/test_openapi.py)
        for method in item:
            if method == "parameters":
                continue
            assert (method, path, 2) in reached, (method, path)
            if path not in ("/api", "/api/games", "/api/health"):
                assert (method, path, 4) in reached, (method, path)
    assert len(answers) > 100
    entries = [
        type(r).__name__
        for a in answers
        if a.method == "post" and a.status == 200
        for r in schemas.BatchResponse.model_validate(a.body).results
    ]
    assert {"Position", "PositionError"} <= set(entries)


def test_a_change_of_shape_is_caught(client: FlaskClient, document: dict[str, Any]) -> None:
    """The checks above can fail: an answer with a member too many, or one missing, or of
    the wrong type, is refused by the model and by the JSON Schema alike."""
    answer = Crawler(client).get(
        "/api/games/{game}/positions", "/api/games/tic-tac-toe/positions", {"p": "........."}
    )
    schema = documented_schema(document, answer)
    body = answer.body
    broken = [
        {**body, "surprise": 1},
        {k: v for k, v in body.items() if k != "low_final"},
        {**body, "low": "minus one"},
        {**body, "moves": [{**body["moves"][0], "move_low": 0.5}]},
        {**body, "state": "half-expanded"},
    ]
    check = validator(document, schema)
    for case in broken:
        with pytest.raises(ValidationError):
            schemas.Position.model_validate(case)
        assert not check.is_valid(case), case
    schemas.Position.model_validate(body)
    assert check.is_valid(body)


# -- requests ---------------------------------------------------------------------------------

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(-(2**53), 2**53).map(float)  # integers to JSON Schema, e.g. 4.0
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
cells = st.text(alphabet="xo.", min_size=9, max_size=9)
bodies = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"positions": st.lists(cells | json_scalars, max_size=4)},
        optional={
            "params": st.dictionaries(
                st.sampled_from(["symmetry", "size"]),
                st.booleans() | st.sampled_from(["true", "false", "perhaps"]) | json_values,
                max_size=2,
            )
            | json_values,
            "extra": json_values,
        },
    ),
)


@pytest.fixture
def request_checks(app: Flask, document: dict[str, Any]) -> Iterator[tuple[Any, int]]:
    schema = document["paths"]["/api/games/{game}/positions"]["post"]["requestBody"]
    yield validator(document, schema["content"][JSON]["schema"]), int(app.config["MAX_BATCH"])


SHAPE_MESSAGES = re.compile(
    r"the body must be a JSON object|unknown members? .* in the body|"
    r'"params" must be an object|game parameter .* must be a string, an integer or a boolean|'
    r'"positions" must be an array|positions\[\d+\] must be a string'
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=bodies)
@example(body={"positions": ["........."], "params": {"symmetry": 1.0}})
@example(body={"positions": [], "params": {"symmetry": 0.5}})
@example(body={"positions": [1.0]})
def test_the_request_schema_model_and_server_agree(
    client: FlaskClient, request_checks: tuple[Any, int], body: Any
) -> None:
    check, max_batch = request_checks
    published = check.is_valid(body)
    try:
        schemas.BatchRequest.model_validate(body, strict=True)
        modelled = True
    except ValidationError:
        modelled = False
    assert published == modelled, body

    data = json.dumps(body)
    with client.post("/api/games/tic-tac-toe/positions", data=data, content_type=JSON) as r:
        status, answer = r.status_code, r.get_json()
    if not published:
        assert status == 400, (body, answer)
        assert SHAPE_MESSAGES.search(answer["error"]["message"]), (body, answer)
        return
    if status == 400:
        # a well-shaped body whose parameters the game refuses
        message = answer["error"]["message"]
        assert "parameter" in message or "true or false" in message, (body, answer)
        params = body.get("params", {})
        assert set(params) - {"symmetry"} or type(params["symmetry"]) is not bool, body
        return
    assert status == 200, (body, answer)
    results = schemas.BatchResponse.model_validate(answer).results
    assert len(results) == len(body["positions"]) <= max_batch


def test_the_component_schemas_are_the_models(app: Flask, document: dict[str, Any]) -> None:
    expected = component_schemas(max_batch=int(app.config["MAX_BATCH"]))
    assert document["components"]["schemas"] == expected
    for model in schemas.COMPONENTS:
        assert model.__name__ in expected
    refs: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "$ref" in node:
                refs.add(node["$ref"].rsplit("/", 1)[-1])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    assert refs <= set(expected)
    batch = expected["BatchRequest"]["properties"]["positions"]
    assert batch["maxItems"] == app.config["MAX_BATCH"]
