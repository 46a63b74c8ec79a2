"""The explorer works offline: no served static file names an external URL, and Flask
serves the page, the script and the vendored library."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import api
from solver.game import PositionKey
from solver.games import GAMES, GameSource, get_game
from solver.games.tic_tac_toe import TicTacToe

STATIC = Path(api.__file__).with_name("static")
SERVED_TEXT = ("*.html", "*.js", "*.css")
LICENCE_LINKS = {
    # named in the licence banners cytoscape.min.js carries (comments, never fetched)
    "http://engelschall.com",
    "http://opensource.org/licenses/MIT",
    "http://en.wikipedia.org/wiki/MIT_License",
}


def test_no_served_file_names_an_external_url() -> None:
    files = [p for pattern in SERVED_TEXT for p in STATIC.rglob(pattern)]
    assert any(p.name == "cytoscape.min.js" for p in files)
    for path in files:
        found = set(re.findall(r"https?://[^\s\"'<>)]+", path.read_text(encoding="utf-8")))
        assert found <= LICENCE_LINKS, f"{path}: {sorted(found - LICENCE_LINKS)[:3]}"


def test_flask_serves_the_page_and_its_scripts(tmp_path: Path) -> None:
    # the page and its files need no database: none is created
    client = api.create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'absent.db'}"}).test_client()
    for url in ("/", "/explore/tic-tac-toe"):
        with client.get(url) as r:
            assert r.status_code == 200 and b"negagraph explorer" in r.data
    for url in ("/static/explorer/app.js", "/static/vendor/cytoscape/cytoscape.min.js"):
        with client.get(url) as r:
            assert r.status_code == 200


def test_the_board_endpoint_draws_chess_and_leaves_grids_to_the_page(tmp_path: Path) -> None:
    client = api.create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'absent.db'}"}).test_client()
    fen = "k7/8/1K6/8/8/8/8/7R_w_-_-"
    with client.get("/explore/board/chess", query_string={"material": "KRvK", "p": fen}) as r:
        assert r.status_code == 200 and r.get_json()["svg"].startswith("<svg")
    with client.get("/explore/board/tic-tac-toe", query_string={"p": "x.o/.../..."}) as r:
        assert r.status_code == 200 and r.get_json() == {"svg": None}
    with client.get("/explore/board/chess", query_string={"material": "KRvK", "p": "nope"}) as r:
        assert r.status_code == 400 and set(r.get_json()) == {"error"}


class _DrawnTicTacToe(TicTacToe):
    """A game that draws itself: the board endpoint must hand its drawing on as is."""

    name = "drawn-tic-tac-toe"

    def draw_svg(self, key: PositionKey) -> str:
        return f'<svg xmlns="http://www.w3.org/2000/svg"><text>{self.format(key)}</text></svg>'


def test_the_board_endpoint_serves_a_games_own_drawing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    GAMES._load()  # then register beside the loaded games, for this test only
    monkeypatch.setitem(GAMES._games, _DrawnTicTacToe.name, _DrawnTicTacToe)
    monkeypatch.setitem(GAMES._sources, _DrawnTicTacToe.name, GameSource("reference", "test"))
    client = api.create_app({"DATABASE_URL": f"sqlite:///{tmp_path / 'absent.db'}"}).test_client()
    with client.get("/explore/board/drawn-tic-tac-toe", query_string={"p": "x.o/.../..."}) as r:
        assert r.status_code == 200
        assert r.get_json()["svg"] == get_game("drawn-tic-tac-toe").draw_svg(
            get_game("drawn-tic-tac-toe").parse("x.o/.../...")
        )
        assert "x.o/.../..." in r.get_json()["svg"]
