"""The explorer plays beyond the database (issue 46, item 3), in headless Chromium
against a real ``negagraph serve``: a variant not stored at all, of a game with an
evaluation, opens at its initial position and is answered by estimates; a partial solve
played into its frontier gets estimate replies and a decided position the database's;
a game without an evaluation still refuses a variant it does not hold.

What the page should show is computed here from the API's own answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.api.test_serve import served
from tests.explorer.helpers import load, ready, screenshot, text
from tests.explorer.test_pages import C4, get, lookup, solved

SOLVES = (
    ["connect-four", "-p", "width=5", "-p", "height=4", "--max-expansions", "3000"],
    ["pig", "-p", "target=10"],
)
EMPTY_7X6 = "/".join(["......."] * 6)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('beyond') / 'beyond.db'}"
    solved(url, SOLVES)
    with served(url) as (address, _proc):
        yield address


def history(driver: webdriver.Chrome) -> list[str]:
    found: list[str] = driver.execute_script(
        "return [...document.querySelectorAll('#history li')].map(li => li.textContent)"
    )
    return found


def position(driver: webdriver.Chrome) -> str:
    return str(driver.find_element(By.ID, "position").get_attribute("value"))


def moves_listed(driver: webdriver.Chrome) -> list[tuple[str, str]]:
    items = driver.find_elements(By.CSS_SELECTOR, "#moves li")
    return [(str(li.get_attribute("data-move")), li.text) for li in items]


def decided(answer: dict[str, Any]) -> bool:
    return bool(
        answer["low"] is not None
        and answer["low"] == answer["high"]
        and answer["low_final"]
        and answer["high_final"]
    )


def test_a_variant_not_stored_opens_estimated_and_replies_by_estimate(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/connect-four?width=7&height=6")
    assert text(browser, "error") == ""
    assert position(browser) == EMPTY_7X6
    assert "nothing of this variant is stored" in text(browser, "notice")
    assert "replies are estimates" in text(browser, "notice")
    verdict = text(browser, "verdict")
    assert verdict.startswith("not in the database: X to move; estimate "), verdict
    assert verdict.endswith("(heuristic, not proven)"), verdict
    assert re.search(r"; [0-9]{1,3}(,[0-9]{3})* positions searched in ", text(browser, "detail"))
    # nothing stored, no solve to replay: its button is off
    assert browser.find_element(By.ID, "replay").get_attribute("disabled") is not None
    # its moves are unknown: all seven, the estimate's best first, every one a "?" node
    listed = moves_listed(browser)
    assert sorted(m for m, _ in listed) == [str(c) for c in range(1, 8)]
    assert listed[0][1].endswith("? (the estimate's best move)")
    drawn = browser.execute_script(
        "return window.explorer.cy.nodes().map(n => [n.id(), n.data('unknown')])"
    )
    assert len(drawn) == 8 and all(unknown == 1 for _, unknown in drawn)
    # a click in column 4: the reply comes from an estimate, both stones are on the board
    browser.find_element(By.CSS_SELECTOR, "#board td[data-cell='d1']").click()
    ready(browser)
    assert text(browser, "error") == ""
    played = history(browser)
    assert played[0] == "4" and played[1].endswith(" (estimate)"), played
    reply = played[1].split(" ")[0]
    shown = position(browser)
    assert sorted(shown.replace("/", "").replace(".", "")) == ["o", "x"], shown
    cells = browser.execute_script(
        "return [...document.querySelectorAll('#board td')].map(td => td.textContent.trim())"
    )
    assert sorted(c.lower() for c in cells if c) == ["o", "x"]  # both stones drawn
    assert text(browser, "verdict").startswith("not in the database: X to move;")
    assert browser.current_url.endswith(f"&line=4+{reply}"), browser.current_url
    screenshot(browser, "beyond")
    # undo takes back both plies; the address's line is played again on a reload
    browser.find_element(By.ID, "undo").click()
    ready(browser)
    assert history(browser) == [] and position(browser) == EMPTY_7X6
    browser.get(f"{base}/explore/connect-four?width=7&height=6&line=4+{reply}")
    ready(browser)
    assert [h.split(" ")[0] for h in history(browser)] == ["4", reply]
    assert position(browser) == shown and text(browser, "error") == ""
    # the keyboard: the first move of the list, by Enter, with no reply
    browser.find_element(By.ID, "reply").click()
    first = browser.find_elements(By.CSS_SELECTOR, "#moves li")[0]
    move = str(first.get_attribute("data-move"))
    first.send_keys(Keys.ENTER)
    ready(browser)
    assert [h.split(" ")[0] for h in history(browser)] == ["4", reply, move]
    assert text(browser, "error") == ""


def frontier_and_decided(base: str) -> tuple[str, str, str, str, str]:
    """In the partial 5x4 solve: a stored position and a move of it to a position the
    database has not decided, one and a move of it to a decided position that is not
    over, and a position of the frontier (stored, not expanded), breadth first from the
    root over the stored positions."""
    root = get(base, "/api/games/connect-four/positions", p="...../...../...../.....", **C4)
    queue = [root]
    open_move: tuple[str, str] | None = None
    decided_move: tuple[str, str] | None = None
    frontier: str | None = None
    seen: set[str] = set()
    while queue and (open_move is None or decided_move is None or frontier is None):
        answer = queue.pop(0)
        for m in answer["moves"]:
            if m["state"] == "terminal":
                continue
            child = lookup(base, "connect-four", m["position"], **C4)
            if decided(child) and decided_move is None and child["moves"]:
                decided_move = (answer["position"], m["move"])
            if not decided(child) and open_move is None:
                open_move = (answer["position"], m["move"])
            if m["state"] == "unexpanded" and frontier is None:
                frontier = m["position"]
            if m["state"] == "expanded" and m["position"] not in seen:
                seen.add(m["position"])
                queue.append(child)
    assert open_move is not None and decided_move is not None and frontier is not None
    return (*open_move, *decided_move, frontier)


def test_a_partial_solve_replies_by_estimate_past_its_frontier(
    base: str, browser: webdriver.Chrome
) -> None:
    open_at, open_move, decided_at, decided_move, frontier = frontier_and_decided(base)
    load(browser, f"{base}/explore/connect-four?width=5&height=4&p={open_at}")
    assert "nothing of this variant" not in text(browser, "notice")
    browser.find_element(By.CSS_SELECTOR, f"#moves li[data-move='{open_move}']").click()
    ready(browser)
    played = history(browser)
    assert text(browser, "error") == "" and played[0] == open_move
    assert played[1].endswith(" (estimate)"), played
    load(browser, f"{base}/explore/connect-four?width=5&height=4&p={decided_at}")
    browser.find_element(By.CSS_SELECTOR, f"#moves li[data-move='{decided_move}']").click()
    ready(browser)
    played = history(browser)
    assert text(browser, "error") == "" and played[0] == decided_move
    assert played[1].endswith(" (database)"), played
    # past the frontier: a position the database does not hold is shown estimated
    beyond = lookup(base, "connect-four", frontier, **C4)["moves"][0]["position"]
    load(browser, f"{base}/explore/connect-four?width=5&height=4&p={beyond}")
    assert text(browser, "error") == ""
    assert text(browser, "verdict").startswith("not in the database: ")
    assert "nothing of this variant" not in text(browser, "notice")


def test_a_game_without_an_evaluation_still_refuses_a_variant_not_stored(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/pig?target=20")
    assert text(browser, "error").startswith(
        "error: no stored variant of pig with target=20; stored: faces=6,target=10"
    )
    assert text(browser, "verdict") == ""
    load(browser, f"{base}/explore/connect-four?width=7&colour=red")
    assert text(browser, "error").startswith("error: connect-four has no parameter colour")


def test_a_game_over_that_the_database_does_not_hold_says_so(
    base: str, browser: webdriver.Chrome
) -> None:
    """tic-tac-toe, not stored here: the winning move gets no reply (the game is over),
    and the position shows no move, in words, with no failure."""
    load(browser, f"{base}/explore/tic-tac-toe?p=xx.%2Foo.%2F...")
    assert text(browser, "error") == "" and "nothing of this variant" in text(browser, "notice")
    browser.find_element(By.CSS_SELECTOR, "#moves li[data-move='c1']").click()
    ready(browser)
    assert text(browser, "error") == "" and history(browser) == ["c1"]
    assert position(browser) == "xxx/oo./..."
    verdict = text(browser, "verdict")
    assert verdict.startswith("not in the database: ") and "is over" in verdict, verdict
    assert moves_listed(browser) == []
