"""The documentation stays true: every JSON field list in README.md and docs/api.md names
exactly the fields of real answers, no link or path in the documentation points outside
the repository, and the figures these tests can afford to recompute are the documented ones.

Field lists are the markdown tables that follow a ``<!-- fields: NAME -->`` comment; the
backticked names in a table's first column are the fields. The answers come from a real
SQLite database solved for several games (a chess KRvK partial solve among them), read
through a Flask test client, and from real ``negagraph`` processes.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from sqlalchemy import text

from db.migrate import upgrade
from db.session import make_engine
from db.store import SqlStore
from solver.games import BUILTIN_GAMES, get_game
from solver.negamax import solve
from tests.api.helpers import make_app, solve_into

ROOT = Path(__file__).resolve().parents[1]
NEGAGRAPH = Path(sys.executable).with_name("negagraph")
README = ROOT / "README.md"
API_DOC = ROOT / "docs" / "api.md"

SKIPPED_DIRS = {"build", "dist", "node_modules", "__pycache__"}
"""Directories of generated files (besides hidden ones and ``*.egg-info``)."""


def repository_files(*suffixes: str) -> list[Path]:
    """The repository's own files ending in one of *suffixes* (no virtualenv, no build
    output, nothing hidden)."""
    found: list[Path] = []
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [
            d
            for d in subdirs
            if not (d.startswith(".") or d in SKIPPED_DIRS or d.endswith(".egg-info"))
        ]
        found.extend(Path(directory, f) for f in files if f.endswith(suffixes))
    return sorted(found)


def field_tables(doc: Path) -> dict[str, set[str]]:
    """The field lists of *doc*: name -> the backticked names of the table's first column."""
    tables: dict[str, set[str]] = {}
    for m in re.finditer(r"<!-- fields: ([\w-]+) -->\n((?:\|.*\n)+)", doc.read_text()):
        rows = m.group(2).splitlines()[2:]  # after the header and the separator
        names: set[str] = set()
        for row in rows:
            first = row.strip().strip("|").split("|")[0]
            names.update(re.findall(r"`([^`]+)`", first))
        assert m.group(1) not in tables, f"{doc.name}: two field lists named {m.group(1)}"
        tables[m.group(1)] = names
    return tables


def union(dicts: Iterable[dict[str, Any]]) -> set[str]:
    keys: set[str] = set()
    for d in dicts:
        keys |= d.keys()
    return keys


def assert_documented(
    name: str, documented: dict[str, set[str]], answers: list[dict[str, Any]]
) -> None:
    """Every field of every answer is documented, and every documented field occurs."""
    assert answers, f"no real answers to compare the {name!r} field list with"
    assert name in documented, f"no field list named {name!r}"
    seen = union(answers)
    assert seen - documented[name] == set(), f"{name}: undocumented fields"
    assert documented[name] - seen == set(), f"{name}: documented fields no answer has"


# -- the solved database ------------------------------------------------------------------

SOLVED: list[tuple[str, dict[str, Any], bool, int | None]] = [
    ("number-game", {}, False, None),  # cyclic, partial: low 3, high 5
    ("tic-tac-toe", {}, True, None),
    ("e-valuate", {}, False, None),  # says who is to move
    ("chess", {"material": "KRvK"}, False, 40),  # a partial solve cut short
    ("coin-nim", {"n": 6}, True, None),  # a game of chance
]
"""(game, parameters, tablebase mode, expansion budget)."""


@pytest.fixture(scope="module")
def solved_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("docs") / "solved.db"
    url = f"sqlite:///{path}"
    upgrade(url)
    for game, params, full, budget in SOLVED:
        if budget is None:
            solve_into(url, game, params, full)
        else:
            engine = make_engine(url)
            try:
                solve(get_game(game, **params), max_expansions=budget, store=SqlStore(engine))
            finally:
                engine.dispose()
    return url


@pytest.fixture(scope="module")
def client(solved_url: str) -> Iterator[FlaskClient]:
    with make_app(solved_url) as app:
        yield app.test_client()


def positions_asked(url: str) -> list[tuple[str, dict[str, Any], str]]:
    """(game, query parameters, position) of lookups that cover every kind of answer:
    cyclic and acyclic games, games that say who is to move, terminal, expanded and
    frontier positions, and moves into positions the database does not hold."""
    chess = get_game("chess")
    return [
        ("number-game", {}, "13"),
        ("number-game", {}, "3"),
        ("tic-tac-toe", {}, "x.o/.x./..."),
        ("tic-tac-toe", {}, "xxx/oo./..."),
        ("e-valuate", {}, "x=?,y=?,z=?"),
        ("chess", {"material": "KRvK"}, chess.format(chess.initial())),
        ("chess", {"material": "KRvK"}, frontier_position(url)),
        ("coin-nim", {"n": 6}, "6:first"),  # a chance node
        ("coin-nim", {"n": 6}, "6:first:tails"),  # a decision node
    ]


def frontier_position(url: str) -> str:
    """A stored but unexpanded position of the partial chess solve (its moves lead to
    positions the database does not hold)."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            found = conn.execute(
                text(
                    "SELECT position FROM position_values WHERE game = 'chess' "
                    "AND state = 'unexpanded' ORDER BY node_id LIMIT 1"
                )
            ).scalar()
    finally:
        engine.dispose()
    assert found is not None, "the partial chess solve left no frontier"
    return str(found)


def lookup(client: FlaskClient, game: str, params: dict[str, Any], position: str) -> dict[str, Any]:
    r = client.get(f"/api/games/{game}/positions", query_string={"p": position, **params})
    assert r.status_code == 200, r.get_json()
    body: dict[str, Any] = r.get_json()
    return body


@pytest.fixture(scope="module")
def answers(client: FlaskClient, solved_url: str) -> list[dict[str, Any]]:
    found = [lookup(client, g, p, pos) for g, p, pos in positions_asked(solved_url)]
    states = {m["state"] for a in found for m in a["moves"]} | {a["state"] for a in found}
    assert {"expanded", "terminal", "unexpanded", "unknown"} <= states
    assert any("to_move" in a for a in found) and any("to_move" not in a for a in found)
    return found


# -- docs/api.md ----------------------------------------------------------------------------


def test_position_and_move_fields_are_the_documented_ones(answers: list[dict[str, Any]]) -> None:
    doc = field_tables(API_DOC)
    assert_documented("position", doc, answers)
    assert_documented("move", doc, [m for a in answers for m in a["moves"]])
    chess = [a for a in answers if a["game"] == "chess"]
    assert chess and all(a["to_move"] in ("MAX", "MIN") for a in chess)
    # Games of chance: the chance object of moves (a superset of the position's).
    moves = [m["chance"] for a in answers for m in a["moves"] if "chance" in m]
    assert_documented("chance-move", doc, moves)
    own = [a["chance"] for a in answers if "chance" in a]
    assert own and union(own) < doc["chance-move"]


def test_query_json_is_the_lookup_answer(solved_url: str, client: FlaskClient) -> None:
    """``negagraph query --json`` (a real process) answers with the same object."""
    proc = subprocess.run(
        [
            str(NEGAGRAPH),
            "query",
            "chess",
            get_game("chess").format(get_game("chess").initial()),
            "-p",
            "material=KRvK",
            "--db",
            solved_url,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    api = lookup(client, "chess", {"material": "KRvK"}, cli["position"])
    assert list(cli) == list(api)
    assert [list(m) for m in cli["moves"]] == [list(m) for m in api["moves"]]


def test_batch_fields_are_the_documented_ones(client: FlaskClient) -> None:
    doc = field_tables(API_DOC)
    r = client.post(
        "/api/games/tic-tac-toe/positions",
        json={"positions": [".../.../...", "oops", "x.o/.x./..."]},
    )
    assert r.status_code == 200
    body = r.get_json()
    assert_documented("batch", doc, [body])
    good = [x for x in body["results"] if "error" not in x]
    bad = [x for x in body["results"] if "error" in x]
    assert len(good) == 2 and len(bad) == 1
    for entry in good:  # each a single lookup's answer
        assert list(entry) == list(lookup(client, "tic-tac-toe", {}, entry["position"]))
        assert set(entry) <= doc["position"]
    assert_documented("batch-error", doc, bad)


def test_line_fields_are_the_documented_ones(client: FlaskClient) -> None:
    doc = field_tables(API_DOC)
    chess = get_game("chess")
    lines = []
    for game, params, position in [
        ("number-game", {}, "13"),
        ("tic-tac-toe", {}, "x.o/.x./..."),
        ("e-valuate", {}, "x=?,y=?,z=?"),
        ("chess", {"material": "KRvK"}, chess.format(chess.initial())),
    ]:
        r = client.get(f"/api/games/{game}/line", query_string={"p": position, **params})
        assert r.status_code == 200, r.get_json()
        lines.append(r.get_json())
    assert_documented("line", doc, lines)
    assert_documented("line-step", doc, [s for line in lines for s in line["steps"]])
    # the start is a lookup's position fields without the moves (and without the chance
    # object: a game of chance has no line, which tests/api/test_chance_api.py checks)
    start = doc["position"] - {"game", "params", "moves", "chance"}
    for line in lines:
        assert set(line["start"]) <= start
    assert union(line["start"] for line in lines) == start


def test_strategy_fields_are_the_documented_ones(client: FlaskClient) -> None:
    doc = field_tables(API_DOC)
    trees = []
    queries: list[dict[str, Any]] = [
        {"p": "6:first"},
        {"p": "6:first", "max_nodes": 4},
        {"p": "0:second"},
    ]
    for query in queries:
        r = client.get("/api/games/coin-nim/strategy", query_string={"n": 6, **query})
        assert r.status_code == 200, r.get_json()
        trees.append(r.get_json())
    assert [t["cut"] for t in trees] == [False, True, False]
    assert_documented("strategy", doc, trees)
    nodes = [n for t in trees for n in t["nodes"]]
    assert_documented("strategy-node", doc, nodes)
    assert_documented("strategy-move", doc, [m for n in nodes for m in n["children"]])
    # a node's chance fields are the position answers' chance object
    assert doc["strategy-node"] - {"id", "position", "children", "cut"} < doc["chance-move"]


def test_games_fields_are_the_documented_ones(client: FlaskClient) -> None:
    doc = field_tables(API_DOC)
    r = client.get("/api/games")
    assert r.status_code == 200 and set(r.get_json()) == {"games", "plugin_errors"}
    games = r.get_json()["games"]
    assert_documented("game", doc, games)
    assert_documented("game-parameter", doc, [p for g in games for p in g["parameters"]])
    variants = [v for g in games for v in g["variants"]]
    assert len(variants) == len(SOLVED)
    assert_documented("variant", doc, variants)


def test_estimate_fields_are_the_documented_ones(client: FlaskClient) -> None:
    doc = field_tables(API_DOC)
    answers = []
    for game, query in [
        ("tic-tac-toe", {"p": "x../.o./...", "depth": 3}),  # proven in the database
        ("connect-four", {"p": "4453", "depth": 3}),  # not stored: searched
        ("chess", {"material": "KRvK", "p": chess_frontier(client), "depth": 2}),
    ]:
        r = client.get(f"/api/games/{game}/estimate", query_string=query)
        assert r.status_code == 200, r.get_json()
        answers.append(r.get_json())
    assert {a["kind"] for a in answers} == {"proven", "estimate"}
    assert any(a["stored"] and a["kind"] == "estimate" for a in answers)
    assert_documented("estimate", doc, answers)


def chess_frontier(client: FlaskClient) -> str:
    """A stored, undecided position of the partial KRvK solve: the root."""
    games = client.get("/api/games").get_json()["games"]
    [variant] = [v for g in games if g["name"] == "chess" for v in g["variants"]]
    root: str = variant["root"]
    return root


def test_solve_run_fields_are_the_documented_ones(client: FlaskClient) -> None:
    doc = field_tables(API_DOC)
    r = client.get("/api/solves")
    assert r.status_code == 200 and set(r.get_json()) == {"solves", "total"}
    runs = r.get_json()["solves"]
    assert len(runs) == len(SOLVED)
    assert_documented("solve-run", doc, runs)
    one = client.get(f"/api/solves/{runs[0]['id']}")
    assert one.status_code == 200 and set(one.get_json()) == set(runs[0])


def test_health_fields_are_the_documented_ones(client: FlaskClient, tmp_path: Path) -> None:
    doc = field_tables(API_DOC)
    ok = client.get("/api/health")
    assert ok.status_code == 200
    with make_app(f"sqlite:///{tmp_path / 'missing.db'}") as app:
        down = app.test_client().get("/api/health")
    assert down.status_code == 503
    bodies = [ok.get_json(), down.get_json()]
    assert_documented("health", doc, bodies)
    assert_documented("health-database", doc, [b["database"] for b in bodies])
    assert ok.get_json()["database"]["schema"]["revision"] in API_DOC.read_text()


# -- README.md: solve --json ------------------------------------------------------------------


def test_solve_json_fields_are_the_documented_ones() -> None:
    """Real ``negagraph solve --json`` processes, partial and full."""
    outputs = []
    for args in (
        ["number-game"],
        ["tic-tac-toe", "--full"],
        [
            "chess",
            "--root",
            "k7/8/1K6/8/8/8/8/6Q1 w - -",
            "-p",
            "material=KQvK",
            "--max-expansions",
            "1",
        ],
    ):
        proc = subprocess.run(
            [str(NEGAGRAPH), "solve", *args, "--memory", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        outputs.append(json.loads(proc.stdout))
    assert_documented("solve-json", field_tables(README), outputs)


# -- README.md: the Python examples ---------------------------------------------------------

CHECKED = re.compile(r"^(?P<indent>\s*)(?P<expr>[^#\n]+?)\s+#\s*(?P<shown>\(.*?\))(?::.*)?$")
"""A line of an example that shows its own result: ``expr  # (result)`` or
``expr  # (result): what it is``."""


def python_examples(doc: Path) -> list[str]:
    """The fenced ``python`` blocks of *doc*."""
    return re.findall(r"```python\n(.*?)```", doc.read_text(), flags=re.DOTALL)


def run_example(code: str) -> list[tuple[str, Any, Any]]:
    """Run *code*; for each line that shows its result, (the line, the result shown, the
    result the expression really has)."""
    shown: list[tuple[str, Any]] = []
    lines = []
    for line in code.splitlines():
        m = CHECKED.match(line)
        if m is None:
            lines.append(line)
            continue
        lines.append(f"{m['indent']}__seen__.append(({m['expr']}))")
        shown.append((line.strip(), ast.literal_eval(m["shown"])))
    seen: list[Any] = []
    exec(compile("\n".join(lines), "README.md", "exec"), {"__seen__": seen})
    assert len(seen) == len(shown)
    return [(line, want, got) for (line, want), got in zip(shown, seen, strict=True)]


def test_the_readme_python_examples_show_their_real_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``expr  # (result)`` line of the README's Python examples has that result, run
    where ``make run`` leaves its database (connect-four 4 x 4 in ``negagraph.db``)."""
    monkeypatch.chdir(tmp_path)
    solve_into("sqlite:///negagraph.db", "connect-four", {"width": 4, "height": 4}, True)
    examples = python_examples(README)
    assert len(examples) == 2, "the README's Python examples are not where this test looks"
    checked = [c for code in examples for c in run_example(code)]
    assert len(checked) == 2, checked
    for line, want, got in checked:
        assert got == want, f"README.md: {line} is really {got!r}"


# -- README.md: the games ---------------------------------------------------------------------


def readme_games() -> list[str]:
    """The games of the README's table, in its order."""
    section = README.read_text().split("\n## Games\n", 1)[1]
    return re.findall(r"^\| `([\w-]+)` \|", section, flags=re.MULTILINE)


def test_the_readme_says_which_games_its_paragraphs_are_about() -> None:
    """The paragraphs after the games table: "the last three" are the games of chance,
    and the e-Valuate family, named, are the three before them and read the notations
    shown."""
    names = readme_games()
    assert set(names) == set(BUILTIN_GAMES), "the table lists every built-in game"
    text = " ".join(README.read_text().split())
    assert text.count("The last three") == 1
    assert "The last three are games of chance" in text
    assert [n for n in names if get_game(n).facts.chance] == names[-3:]
    family = re.search(r"The three before them, (.*?), are the e-Valuate family", text)
    assert family is not None, "the e-Valuate family's paragraph does not name its games"
    named = re.findall(r"`([\w-]+)`", family.group(1))
    assert named == names[-6:-3]
    shown = re.search(r"Their notations are (.*?); see", text)
    assert shown is not None
    notations = re.findall(r"`([^`]+)`", shown.group(1))
    assert len(notations) == len(named)
    for name, notation in zip(named, notations, strict=True):
        game = get_game(name)
        assert game.format(game.parse(notation)) == notation, name


# -- README.md: the explorer's address ---------------------------------------------------------


def test_the_readme_gives_the_explorer_address_serve_prints() -> None:
    """The address `negagraph serve` prints for the explorer, with its default host and
    port, is the one the README's explorer section tells the reader to open."""
    from api.commands.serve import serve_command
    from api.serve import banner

    defaults = {p.name: p.default for p in serve_command.params}
    host, port = defaults["host"], defaults["port"]
    assert isinstance(host, str) and isinstance(port, int)
    line = banner("sqlite:///negagraph.db", host, port, 2, 1000)
    printed = re.search(r"explorer: (\S+)\)", line)
    assert printed is not None, line
    section = README.read_text().split("\n## Explorer\n", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"`(http://[^`]*)`", section) == [printed.group(1)]


# -- docs/sql.md: tables and the view ---------------------------------------------------------


def test_sql_doc_lists_every_column(solved_url: str) -> None:
    """The tables' column lists in docs/sql.md and the view's columns."""
    doc = ROOT / "docs" / "sql.md"
    listed = {
        name: [c.strip() for c in cols.split(",")]
        for name, cols in re.findall(r"`(\w+)\(([^)]*)\)`", doc.read_text())
    }
    engine = make_engine(solved_url)
    try:
        with engine.connect() as conn:
            for table in ("variants", "nodes", "edges", "solve_runs", "commits"):
                columns = {
                    r[0]
                    for r in conn.execute(text(f"SELECT name FROM pragma_table_info('{table}')"))
                }
                assert table in listed and set(listed[table]) == columns, table
                assert len(listed[table]) == len(columns), f"{table}: a column twice"
            view = {
                r[0]
                for r in conn.execute(text("SELECT name FROM pragma_table_info('position_values')"))
            }
    finally:
        engine.dispose()
    assert field_tables(doc)["position_values"] == view


# -- links and paths ----------------------------------------------------------------------------

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
REPO_PATH = re.compile(r"`((?:docs|solver|db|api|tests|bench|migrations)/[\w./-]+\.(?:md|py|c))`")


def test_markdown_links_stay_inside_the_repository() -> None:
    docs = repository_files(".md")
    assert README in docs and API_DOC in docs and ROOT / "docs" / "design.md" in docs
    for doc in docs:
        content = doc.read_text()
        for target in LINK.findall(content):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a web address or an anchor of the same page
            path = (doc.parent / target.split("#")[0]).resolve()
            assert path.is_relative_to(ROOT), f"{doc.name}: {target} is outside the repository"
            assert path.exists(), f"{doc.name}: {target} does not exist"
        for path in REPO_PATH.findall(content):
            if path.startswith("bench/results/"):
                continue  # the benchmarks' output, made by running them
            assert (ROOT / path).exists(), f"{doc.name} names {path}, which does not exist"
        assert "../" not in " ".join(LINK.findall(content)), doc.name


def test_nothing_refers_to_files_outside_the_repository() -> None:
    """The design notes and sources the project started from are not part of it: the
    documentation must not send readers there."""
    for path in repository_files(".md", ".py", ".c", ".toml", ".cfg", ".txt", "Makefile"):
        if path == Path(__file__).resolve():
            continue
        content = path.read_text(errors="replace")
        for outside in ("../shared", "shared/DESIGN", "shared/seeds", "DESIGN.md"):
            if path.suffix == ".md" or outside != "DESIGN.md":
                assert outside not in content, f"{path.relative_to(ROOT)} mentions {outside}"
    for doc in repository_files(".md"):
        assert not re.search(r"\bDESIGN\b|\bseeds? \d", doc.read_text()), doc.name


# -- figures --------------------------------------------------------------------------------


def test_the_number_game_figures() -> None:
    r = solve(get_game("number-game"))
    assert (r.low, r.high, r.low_final, r.high_final, r.expansions) == (3, 5, True, True, 26)
    design = (ROOT / "docs" / "design.md").read_text()
    assert "negagraph needs 26 expansions" in design and "`low 3`, `high 5`" in design


def test_the_chess_mate_in_one_figures() -> None:
    game = get_game("chess", material="KQvK")
    root = "k7/8/1K6/8/8/8/8/6Q1 w - -"
    whole = solve(game, root)
    first = solve(game, root, max_expansions=1)
    assert whole.complete and whole.expansions == 320
    assert (first.low, first.low_final, first.repetition_value) == (1, True, 1)
    chess_doc = " ".join((ROOT / "docs" / "chess.md").read_text().split())
    assert "a partial KQvK solve expands 320 positions" in chess_doc
