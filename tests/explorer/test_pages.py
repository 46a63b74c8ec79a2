"""The explorer as a new user meets it (issue 47, items 1 and 2), in headless Chromium
against a real ``negagraph serve``: it never fails blank (every failure shows the API's
own message and says what the page shows now; unknown games, variants and positions say
so; an unstored child is a "?" that stops there; games of chance open), and it says what
is known in words, from the side of the player to move.

Expected words are computed here from the API's own answers (the depths and bounds it
gives), not copied from the page.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterator
from typing import Any
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import Request, urlopen

import pytest
from click.testing import CliRunner
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from api.cli import cli
from tests.api.helpers import pg_database
from tests.api.test_serve import served
from tests.explorer.helpers import load, ready, screenshot, severe_logs, text

KRVK_ROOT = "k7/8/1K6/8/8/8/8/7R w - - 0 1"  # white mates with Rh8
C4 = {"width": 5, "height": 4}
SOLVES = (
    ["tic-tac-toe", "--full"],
    ["connect-four", "-p", "width=5", "-p", "height=4", "--max-expansions", "3000"],
    ["pig", "-p", "target=10"],
    ["coin-nim"],
    ["dice-race"],
    ["chess", "-p", "material=KRvK", "--root", KRVK_ROOT],
)


def solved(url: str, solves: tuple[list[str], ...]) -> None:
    for args in solves:
        result = CliRunner().invoke(cli, ["solve", *args, "-q", "--db", url])
        assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('pages') / 'pages.db'}"
    solved(url, SOLVES)
    with served(url) as (address, _proc):
        yield address


def get(base: str, path: str, **query: Any) -> Any:
    with urlopen(f"{base}{path}?{urlencode(query)}") as r:
        return json.load(r)


def api_error(base: str, path: str, **query: Any) -> str:
    """The message of the API's error answer to GET *path*."""
    with pytest.raises(HTTPError) as caught:
        urlopen(f"{base}{path}?{urlencode(query)}")
    message: str = json.load(caught.value)["error"]["message"]
    return message


def lookup(base: str, game: str, position: str, **params: Any) -> dict[str, Any]:
    answer: dict[str, Any] = get(base, f"/api/games/{game}/positions", p=position, **params)
    return answer


def drawn(driver: webdriver.Chrome) -> list[str]:
    ids: list[str] = driver.execute_script("return window.explorer.cy.nodes().map(n => n.id())")
    return sorted(ids)


def tap(driver: webdriver.Chrome, position: str) -> None:
    driver.execute_script("window.explorer.cy.getElementById(arguments[0]).emit('tap')", position)
    ready(driver)


def moves_shown(driver: webdriver.Chrome) -> list[tuple[str, str]]:
    items = driver.find_elements(By.CSS_SELECTOR, "#moves li")
    return [(str(li.get_attribute("data-move")), li.text) for li in items]


def go(driver: webdriver.Chrome, position: str) -> None:
    box = driver.find_element(By.ID, "position")
    box.clear()
    box.send_keys(position)
    driver.find_element(By.CSS_SELECTOR, "#goto button").click()
    ready(driver)


# -- words, computed from the API's answers ---------------------------------------------


def plies(n: int) -> str:
    return f"{n} {'ply' if n == 1 else 'plies'}"


def mate(winner: str, n: int) -> str:
    return f"{winner} wins: mate in {math.ceil(n / 2)} ({plies(n)})"


def number(x: float) -> str:
    """*x* as the page writes it: six significant digits (JavaScript's ``String``)."""
    rounded = float(f"{x:.6g}")
    return str(int(rounded)) if rounded.is_integer() else repr(rounded)


def probability(value: float) -> str:
    return number((value + 1) / 2)


# -- 1. never fail blank -----------------------------------------------------------------


def test_a_bad_position_shows_the_apis_message_and_keeps_the_view(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/tic-tac-toe?p=.../.../...")
    address, before = browser.current_url, drawn(browser)
    go(browser, "zzz")
    said = api_error(base, "/api/games/tic-tac-toe/positions", p="zzz")
    assert text(browser, "error") == f"error: {said} (still showing .../.../...)"
    assert "[object Object]" not in browser.page_source
    # the previous view stays whole: graph, words, address
    assert drawn(browser) == before
    assert text(browser, "verdict") == "X to move: draw"
    assert browser.current_url == address
    # and the page is usable: a move plays, and the error goes
    browser.find_elements(By.CSS_SELECTOR, "#moves li")[0].click()
    ready(browser)
    assert text(browser, "error") == ""
    assert len(browser.find_elements(By.CSS_SELECTOR, "#history li")) == 2  # yours, its reply
    assert severe_logs(browser) == []  # a malformed position is no failed request


def test_an_unknown_game_or_address_is_an_html_404(base: str, browser: webdriver.Chrome) -> None:
    for path, said in (
        ("/explore/nosuchgame", "unknown game 'nosuchgame' (known games: chess, "),
        ("/explore/tic-tac-toe/more", "the explorer has no page /explore/tic-tac-toe/more"),
        ("/explore/tic-tac-toe:TicTacToe", "the explorer takes game names"),
    ):
        with pytest.raises(HTTPError) as caught:
            urlopen(f"{base}{path}")
        assert caught.value.code == 404
        assert caught.value.headers["Content-Type"].startswith("text/html")
        assert said in html.unescape(caught.value.read().decode())
        browser.get(f"{base}{path}")
        assert said in browser.find_element(By.ID, "notfound").text
        assert browser.current_url == f"{base}{path}"  # no silent switch to another game
        logged = severe_logs(browser)
        assert [e["source"] for e in logged] == ["network"] and "404" in logged[0]["message"]


def test_an_unknown_variant_says_so_and_shows_nothing_else(
    base: str, browser: webdriver.Chrome
) -> None:
    # (a variant not stored of a game with an evaluation opens, estimated: test_beyond.py)
    for query, said in (
        (
            "pig?target=20",
            "error: no stored variant of pig with target=20; "
            "stored: faces=6,target=10 (pick one above) (nothing is shown)",
        ),
        ("connect-four?colour=red", "error: connect-four has no parameter colour"),
    ):
        load(browser, f"{base}/explore/{query}")
        assert text(browser, "error").startswith(said)
        assert browser.current_url == f"{base}/explore/{query}"  # not rewritten
        assert drawn(browser) == [] and text(browser, "verdict") == ""
        # nothing is loaded: nothing to replay or undo
        for button in ("replay", "undo", "rfirst", "rprev", "rnext", "rlast"):
            assert browser.find_element(By.ID, button).get_attribute("disabled") is not None
        assert Select(browser.find_element(By.ID, "variant")).first_selected_option.text == (
            "choose a variant"
        )
    # the page stays usable: pick the stored variant
    Select(browser.find_element(By.ID, "variant")).select_by_visible_text(
        next(
            o.text
            for o in browser.find_elements(By.CSS_SELECTOR, "#variant option")
            if o.text.startswith("connect-four")
        )
    )
    ready(browser)
    assert text(browser, "error") == ""
    assert text(browser, "verdict") == "X to move: bounds -∞..+∞, neither final yet"
    assert browser.find_element(By.ID, "replay").get_attribute("disabled") is None
    assert browser.execute_script("return document.getElementById('more')") is None  # no bar


def test_an_unstored_child_is_a_question_mark_and_stops_there(
    base: str, browser: webdriver.Chrome
) -> None:
    root = "...../...../...../....."
    load(browser, f"{base}/explore/connect-four?width=5&height=4&p={root}")
    view = lookup(base, "connect-four", root, **C4)
    frontier = next(m for m in view["moves"] if m["state"] == "unexpanded")  # column 2
    assert (
        browser.execute_script(
            "return window.explorer.cy.getElementById(arguments[0]).data('label')",
            frontier["position"],
        )
        == "?"
    )
    tap(browser, frontier["position"])  # open it: its moves are not stored
    children = lookup(base, "connect-four", frontier["position"], **C4)["moves"]
    assert children and all(m["state"] == "unknown" for m in children)
    labels = browser.execute_script(
        "return arguments[0].map(p => window.explorer.cy.getElementById(p).data('label'))",
        [m["position"] for m in children],
    )
    assert labels == ["?"] * len(children)
    before = drawn(browser)
    assert root in before and frontier["position"] in before
    tap(browser, children[0]["position"])  # not in the database: said, and nothing else
    said = api_error(base, "/api/games/connect-four/positions", p=children[0]["position"], **C4)
    assert text(browser, "notice") == f"{children[0]['position']}: {said}"
    assert "is not in the database" in said
    assert drawn(browser) == before and text(browser, "error") == ""
    assert text(browser, "graphinfo").startswith(f"{root}: low -∞")  # still the root's view
    assert severe_logs(browser) == []


@pytest.mark.parametrize(
    ("game", "params"),
    [("pig", {"target": 10}), ("coin-nim", {}), ("dice-race", {})],
)
def test_the_games_of_chance_open_with_their_win_probability(
    base: str, browser: webdriver.Chrome, game: str, params: dict[str, Any]
) -> None:
    load(browser, f"{base}/explore/{game}?{urlencode(params)}")
    variant = next(
        v for g in get(base, "/api/games")["games"] if g["name"] == game for v in g["variants"]
    )
    start = lookup(base, game, variant["root"], **variant["params"])
    c = start["chance"]
    who = ["first", "second"][c["player"]]
    verdict = text(browser, "verdict")
    assert verdict.startswith(f"{who} to move: " if c["kind"] == "decision" else f"{who}'s ")
    low, high = probability(c["low"]), probability(c["high"])
    assert f"{who} wins with probability {low if low == high else f'{low}..{high}'}" in verdict
    assert f"{number(c['plies'])} plies expected to the end" in verdict
    # the optimal strategy (/strategy, not /line: a 400 for games of chance) is drawn
    tree = get(base, f"/api/games/{game}/strategy", p=start["position"], max_nodes=200, **params)
    strategy = {
        f"{n['position']}->{tree['nodes'][m['node']]['position']}"
        for n in tree["nodes"]
        for m in n["children"]
    }
    marked = browser.execute_script("return window.explorer.cy.edges('.best').map(e => e.id())")
    assert marked and set(marked) <= strategy
    assert severe_logs(browser) == []  # no request failed
    screenshot(browser, game)


def test_a_replay_step_too_large_to_draw_is_a_summary_and_the_controls_still_work(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/connect-four?width=5&height=4")
    browser.find_element(By.ID, "replay").click()
    ready(browser)
    shown = browser.execute_script("return document.getElementById('graph').dataset.commit")
    answer = get(base, "/api/games/connect-four/replay", **C4)
    total = len(answer["commits"])
    assert int(shown) < total  # the last commit is too large to draw
    browser.find_element(By.ID, "rlast").click()
    ready(browser)
    last = get(base, "/api/games/connect-four/replay", commit=total, **C4)
    assert not last["drawn"] and "a replay draws at most 500" in last["not_drawn"]
    assert text(browser, "error") == ""  # not a failure: a summary
    assert text(browser, "graphinfo").startswith(f"not drawn: {last['not_drawn']}")
    assert text(browser, "replayinfo").startswith(f"commit {total} of {total} · ")
    assert browser.execute_script("return document.getElementById('graph').dataset.commit") == (
        str(total)
    )
    browser.find_element(By.ID, "rfirst").click()
    ready(browser)
    assert browser.execute_script("return document.getElementById('graph').dataset.commit") == "1"
    assert text(browser, "error") == ""
    assert severe_logs(browser) == []


# -- 2. values in words ------------------------------------------------------------------


def test_values_in_words_from_the_movers_side(base: str, browser: webdriver.Chrome) -> None:
    load(browser, f"{base}/explore/tic-tac-toe?p=xx./oo./...")
    assert text(browser, "verdict") == "X to move: X wins in 1 move (1 ply)"
    load(browser, f"{base}/explore/tic-tac-toe?p=xx./oo./x..")
    assert text(browser, "verdict") == "O to move: O wins in 1 move (1 ply)"
    load(browser, f"{base}/explore/tic-tac-toe?p=xxx/oo./...")
    assert text(browser, "verdict") == "game over: X wins"
    # partial solves: the bounds and which of them are final
    load(browser, f"{base}/explore/connect-four?width=5&height=4")
    assert text(browser, "verdict") == "X to move: bounds -∞..+∞, neither final yet"
    # the legend says what halves, "?", dashed arrows and the numbers' point of view mean
    legend = text(browser, "legend")
    for words in ("Point of view", "left half is the low bound", 'Grey "?"', "Dashed arrow"):
        assert words in legend


def test_a_partial_bound_is_named_final_or_not_yet(base: str, browser: webdriver.Chrome) -> None:
    # the page's own wording of position answers with one bound final and not the other
    # (the shape of GET /positions; the number game does not say whose turn it is)
    load(browser, f"{base}/explore/tic-tac-toe")
    fields: dict[str, Any] = {
        "value": None,
        "repetition_value": None,
        "depth_low": 5,
        "depth_high": None,
        "state": "expanded",
        "moves": [],
    }
    for (low, high, low_final, high_final, to_move), said in (
        ((3, 5, True, False, None), "to move: bounds 3..5, low final, high not yet"),
        ((None, 0, False, True, "MIN"), "O to move: bounds -∞..0, high final, low not yet"),
        ((0, 1, False, False, "MAX"), "X to move: bounds 0..1, neither final yet"),
    ):
        v = {**fields, "low": low, "high": high, "low_final": low_final}
        v["high_final"] = high_final
        if to_move is not None:
            v["to_move"] = to_move
        assert (
            browser.execute_script("return window.explorer.words.verdict(arguments[0])", v) == said
        )


def test_chess_moves_are_ranked_in_words_as_a_tablebase_ranks_them(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/chess?material=KRvK&p={KRVK_ROOT.replace(' ', '+')}")
    view = lookup(base, "chess", KRVK_ROOT, material="KRvK")
    assert text(browser, "verdict") == f"White to move: {mate('White', view['depth_low'])}"
    shown = moves_shown(browser)
    assert [m for m, _ in shown] == [m["move"] for m in view["moves"]]  # the API's order
    wins = []
    for (move, words), m in zip(shown, view["moves"], strict=True):
        if m["move_low"] == 1 and m["high_final"]:  # mate in the child's defence, plus one
            assert words == f"{move}: {mate('White', m['depth_high'] + 1)}"
            wins.append(m["depth_high"] + 1)
    assert wins[0] == 1 and wins == sorted(wins)  # shortest win first
    # Black to move, lost: every move loses; the longest loss first
    black = next(m for m in view["moves"] if m["move_low"] == 1 and m["state"] != "terminal")
    load(browser, f"{base}/explore/chess?material=KRvK&p={black['position'].replace(' ', '+')}")
    lost = lookup(base, "chess", black["position"], material="KRvK")
    assert text(browser, "verdict") == f"Black to move: {mate('White', lost['depth_high'])}"
    shown = moves_shown(browser)
    losses = [m["depth_low"] + 1 for m in lost["moves"] if m["move_high"] == -1 and m["low_final"]]
    assert losses and losses == sorted(losses, reverse=True)
    for (move, words), m in zip(shown, lost["moves"], strict=True):
        if m["move_high"] == -1 and m["low_final"]:
            assert words == f"{move}: {mate('White', m['depth_low'] + 1)}"
    screenshot(browser, "chess-words")


# -- PostgreSQL ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg_base() -> Iterator[str]:
    with pg_database() as url:
        solved(url, (SOLVES[0], SOLVES[1], SOLVES[2]))
        with served(url) as (address, _proc):
            yield address


def test_on_postgresql_failures_say_why_and_values_read_in_words(
    pg_base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{pg_base}/explore/tic-tac-toe")
    assert text(browser, "verdict") == "X to move: draw"
    go(browser, "xo")
    said = api_error(pg_base, "/api/games/tic-tac-toe/positions", p="xo")
    assert text(browser, "error") == f"error: {said} (still showing .../.../...)"
    load(browser, f"{pg_base}/explore/pig?target=20")
    assert text(browser, "error").startswith("error: no stored variant of pig with")
    root = "...../...../...../....."
    load(browser, f"{pg_base}/explore/connect-four?width=5&height=4")
    moves = lookup(pg_base, "connect-four", root, **C4)["moves"]
    frontier = next(m for m in moves if m["state"] == "unexpanded")
    tap(browser, frontier["position"])
    child = lookup(pg_base, "connect-four", frontier["position"], **C4)["moves"][0]["position"]
    before = drawn(browser)
    tap(browser, child)
    assert "is not in the database" in text(browser, "notice") and drawn(browser) == before
    load(browser, f"{pg_base}/explore/pig?target=10")
    assert "first wins with probability" in text(browser, "verdict")
    assert severe_logs(browser) == []
    # a request in the API's own shape, as the page sends it, to the batch endpoint
    request = Request(
        f"{pg_base}/api/games/connect-four/positions",
        data=json.dumps({"params": C4, "positions": [child]}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urlopen(request) as r:
        assert json.load(r)["results"][0]["error"]["code"] == 404


def test_in_a_game_of_chance_the_page_rolls_the_dice_and_the_database_plays_the_other_side(
    base: str, browser: webdriver.Chrome
) -> None:
    # Pig to 10: the first player rolls; the page draws the die, and whenever the turn
    # passes, the database plays the second player's best moves and the page its dice,
    # until the first player decides again (or the game ends). Whatever the dice, the
    # line kept in the address is a line of the game, each outcome drawn at a chance
    # node, each reply the stored best move of the second player.
    params = {"target": 10}
    root = "0-0:first:0"
    for _ in range(3):  # three turns: a 1 passes the turn in about half of them
        load(browser, f"{base}/explore/pig?{urlencode({**params, 'p': root})}")
        assert browser.find_element(By.ID, "reply").is_selected()
        browser.find_element(By.CSS_SELECTOR, '#moves li[data-move="roll"]').click()
        ready(browser)
        line = [m for m in browser.current_url.split("line=")[1].split("+") if m]
        shown = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#history li")]
        assert line[0] == "roll" and shown[0] == "roll" and len(shown) == len(line) >= 2
        position = root
        for move, entry in zip(line, shown, strict=True):
            here = lookup(base, "pig", position, **params)
            (played,) = [m for m in here["moves"] if m["move"] == move]
            c = here["chance"]
            if c["kind"] == "chance":
                assert entry == f"{move} (dice)"
            elif c["player"] == 1:
                assert entry == f"{move} (database)" and move == here["moves"][0]["move"]
            else:
                assert entry == move and position == root  # the one move played by hand
            position = played["position"]
        end = lookup(base, "pig", position, **params)
        assert not end["moves"] or (end["chance"]["kind"], end["chance"]["player"]) == (
            "decision",
            0,
        )
        assert browser.find_element(By.ID, "position").get_attribute("value") == position
        browser.find_element(By.ID, "undo").click()  # back over the dice and the replies
        ready(browser)
        assert browser.find_element(By.ID, "position").get_attribute("value") == root
        assert browser.find_elements(By.CSS_SELECTOR, "#history li") == []


def test_nodes_show_their_position_in_a_readable_font(base: str, browser: webdriver.Chrome) -> None:
    # A grid's position is a small board (its rows one under the other) above the value;
    # a long notation (a FEN) is cut, the whole of it the node's tooltip; no label (of a
    # node or a move) is drawn smaller than 9 px at the zoom the page opens with.
    load(browser, f"{base}/explore/tic-tac-toe")
    assert (
        browser.execute_script(
            "return window.explorer.cy.getElementById('.../.../...').data('label')"
        )
        == "...\n...\n...\n0"
    )
    # two plies of tic-tac-toe (9 + 72 moves) are wider than the view at that zoom: the
    # info line says how to see the rest (tests/explorer/test_browser.py: the number
    # game's few nodes fit, and it does not)
    assert "drag the graph to see the rest of it" in text(browser, "graphinfo")
    assert browser.execute_script(
        "const b = window.explorer.cy.elements().renderedBoundingBox();"
        " return b.x1 < 0 || b.x2 > window.explorer.cy.width()"
    )
    load(browser, f"{base}/explore/chess?{urlencode({'material': 'KRvK', 'p': KRVK_ROOT})}")
    root = browser.find_element(By.ID, "position").get_attribute("value")
    assert root is not None
    label = browser.execute_script(
        "return window.explorer.cy.getElementById(arguments[0]).data('label')", root
    )
    shown, value = label.split("\n")
    assert len(root) > 16 and shown == root[:15] + "…"
    bounds = lookup(base, "chess", root, material="KRvK")
    assert (bounds["low"], bounds["high"]) == (1, None) and value == "1 +∞"
    browser.execute_script(
        "window.explorer.cy.getElementById(arguments[0]).emit('mouseover')", root
    )
    assert browser.find_element(By.ID, "graph").get_attribute("title") == root
    smallest = browser.execute_script(
        "const cy = window.explorer.cy;"
        " return Math.min(...cy.elements().map(e => parseFloat(e.style('font-size')))) * cy.zoom()"
    )
    assert smallest >= 9, smallest
    screenshot(browser, "krvk-labels")
