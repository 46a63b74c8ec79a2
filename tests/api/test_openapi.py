"""The OpenAPI document matches the app, the HTML page renders it, and a property-based
run (schemathesis, over WSGI) finds no server error and no answer that breaks it."""

from __future__ import annotations

import re
from typing import Any

import pytest
import schemathesis
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig
from schemathesis.core.result import Ok

from solver.games import GAMES


def documented(doc: dict[str, Any]) -> set[tuple[str, str]]:
    return {
        (method.upper(), path)
        for path, item in doc["paths"].items()
        for method in item
        if method != "parameters"
    }


def routed(app: Flask) -> set[tuple[str, str]]:
    out = set()
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or rule.endpoint.startswith("explorer."):
            continue  # pages and their files, not the JSON API (tests/explorer)
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", r"{\1}", rule.rule)
        for method in rule.methods or ():
            if method not in ("HEAD", "OPTIONS"):
                out.add((method, path))
    return out


def test_every_route_is_documented_and_nothing_else(app: Flask, client: FlaskClient) -> None:
    doc = client.get("/api/openapi.json").get_json()
    assert doc["openapi"].startswith("3.1")
    assert documented(doc) == routed(app)


def test_document_names_every_game_and_parameter(client: FlaskClient) -> None:
    doc = client.get("/api/openapi.json").get_json()
    op = doc["paths"]["/api/games/{game}/positions"]
    assert op["parameters"][0]["schema"]["enum"] == sorted(GAMES)
    names = {p["name"] for p in op["get"]["parameters"]}
    assert {"p", "If-None-Match"} <= names
    assert {p.name for cls in GAMES.values() for p in cls.parameters} <= names
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            assert operation["responses"], path
            for status, response in operation["responses"].items():
                if status.startswith(("4", "5")) and path != "/api/health":
                    assert response["content"]["application/json"]["schema"] == {
                        "$ref": "#/components/schemas/Error"
                    }


def test_docs_page_is_self_contained_html(client: FlaskClient) -> None:
    r = client.get("/api/docs")
    assert r.status_code == 200 and r.mimetype == "text/html"
    page = r.get_data(as_text=True)
    doc = client.get("/api/openapi.json").get_json()
    for path in doc["paths"]:
        assert path in page
    for name in doc["components"]["schemas"]:
        assert f"id='schema-{name}'" in page
    assert "<script" not in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    # markup is markup: no tag shown to the reader as escaped text, and `code` spans of
    # the descriptions are code elements
    assert not re.search(r"&lt;/?(code|a|p|table|tr|td|th)\b", page)
    assert "`" not in page.split("<style>")[0] + page.split("</style>")[1]


CHECKS = 40
"""Examples per operation and generation mode (with the explicit examples)."""

FUZZ_CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            # Whether a position (or a game parameter) is valid depends on the game's
            # notation, which JSON Schema cannot express: a schema-valid `p` is often,
            # rightly, a 400.
            "positive_data_acceptance": {"enabled": False},
            # Too many positions is a 413 (documented), not a 400.
            "negative_data_rejection": {
                "expected-statuses": [400, 404, 405, 409, 413, 415],
            },
        }
    }
)
"""Every other check runs with its defaults (no 5xx, statuses, content types, headers and
bodies as documented, unsupported methods answered 405...)."""


@pytest.mark.parametrize(
    "mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["positive", "negative"]
)
def test_property_based_run_finds_no_violation(app: Flask, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", app, config=FUZZ_CONFIG)
    results = list(schema.get_all_operations())
    assert all(isinstance(result, Ok) for result in results), results
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    # schemathesis leaves out the document's own path.
    assert {tuple(op.label.split(" ", 1)) for op in operations} == documented(schema.raw_schema) - {
        ("GET", "/api/openapi.json")
    }
    exercised = []
    for operation in operations:

        @settings(
            max_examples=CHECKS,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            # Iterating the class skips the deprecated checks (hypothesis's metaclass,
            # which its type stubs do not describe).
            suppress_health_check=list(HealthCheck),  # pyright: ignore[reportArgumentType]
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def check(case: Any) -> None:
            response = case.call_and_validate()
            assert response.status_code < 500, (case.path, case.query, response.text)

        try:
            check()
        except Unsatisfiable:
            # Nothing is invalid about a request without parameters or body.
            assert mode is GenerationMode.NEGATIVE, operation.label
            continue
        exercised.append(operation.label)
    assert {
        "GET /api/games/{game}/positions",
        "POST /api/games/{game}/positions",
        "GET /api/games/{game}/line",
        "GET /api/solves/{run_id}",
    } <= set(exercised)


def test_api_index_lists_every_documented_endpoint(client: FlaskClient) -> None:
    r = client.get("/api")
    assert r.status_code == 200 and r.mimetype == "application/json"
    body = r.get_json()
    doc = client.get("/api/openapi.json").get_json()
    assert {(e["method"], e["path"]) for e in body["endpoints"]} == documented(doc)
    assert all(e["summary"] for e in body["endpoints"])
    assert body["docs"] == "/api/docs" and body["openapi"] == "/api/openapi.json"
    assert client.get(body["docs"]).status_code == 200
