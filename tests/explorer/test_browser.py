"""The explorer in a real browser: headless Chromium (Debian's ``chromium`` and
``chromium-driver``) driven by Selenium against a real ``negagraph serve`` process.

These tests fail, never skip, when the browser cannot run (``make test`` installs it).
Every wait is on a DOM condition with a generous limit, never a fixed time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from urllib.request import urlopen

import pytest
from click.testing import CliRunner
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from api.cli import cli
from tests.api.test_serve import served
from tests.explorer.helpers import WAIT, leaving, load, node, requested, screenshot, severe_logs

KRVK_ROOT = "k7/8/1K6/8/8/8/8/7R w - - 0 1"  # white mates with Rh8


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('explorer') / 'explorer.db'}"
    for args in (
        ["solve", "number-game"],
        ["solve", "tic-tac-toe", "--full"],
        ["solve", "chess", "-p", "material=KRvK", "--root", KRVK_ROOT],
    ):
        result = CliRunner().invoke(cli, [*args, "-q", "--db", url])
        assert result.exit_code == 0, result.output
    with served(url) as (address, _proc):
        yield address


def test_the_explorer_loads_without_console_errors(base: str, browser: webdriver.Chrome) -> None:
    load(browser, f"{base}/")
    options = browser.find_element(By.ID, "variant").find_elements(By.TAG_NAME, "option")
    assert len([o for o in options if o.get_attribute("value")]) == 3  # the stored variants
    assert not browser.find_element(By.ID, "status").text.startswith("error")
    assert severe_logs(browser) == []


def test_a_request_leaving_the_machine_would_be_seen(base: str, browser: webdriver.Chrome) -> None:
    # The check every browser test ends with (conftest): the pages' requests are read
    # from Chromium's log, and one to another host is told apart (192.0.2.1 is a
    # documentation address: nothing answers it).
    requested(browser)  # the requests before the page's own
    load(browser, f"{base}/explore/tic-tac-toe")
    browser.execute_script("fetch('http://192.0.2.1/probe').catch(() => {})")
    seen: list[str] = []

    def asked(driver: webdriver.Chrome) -> bool:
        seen.extend(requested(driver))
        return any("192.0.2.1" in u for u in seen)

    WebDriverWait(browser, WAIT).until(asked)
    assert leaving(seen) == ["http://192.0.2.1/probe"]
    assert any(u.startswith(f"{base}/api/") for u in seen)  # and the page's own are there
    severe_logs(browser)  # the failed fetch's console line is this test's own
    load(browser, f"{base}/explore/tic-tac-toe")  # the check after this test: local only


def test_the_number_game_graph_has_both_root_bounds_final(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/number-game?root=13&p=13")
    root = node(browser, "13")
    assert root["label"] == "13\n3 5"
    assert root["lowc"] == root["highc"] == "#2a2"  # green: final
    info = browser.find_element(By.ID, "graphinfo").text
    assert "low 3 (final), high 5 (final)" in info
    assert "drag the graph" not in info  # all of it fits the view (test_pages: when not)
    best = browser.execute_script(
        "return window.explorer.cy.edges('.best').map(e => e.data('label'))"
    )
    assert best[:1] == ["17"]  # the best line starts with 13 -> 17
    # the strategies realising the root's low and high bounds: every drawn edge of the
    # lines /line?bound=low|high gives, and no other, carries its class
    for bound in ("low", "high"):
        steps = json.loads(
            urlopen(f"{base}/api/games/number-game/line?root=13&p=13&bound={bound}").read()
        )["steps"]
        path = ["13", *(step["position"] for step in steps)]
        drawn = browser.execute_script(
            "const cy = window.explorer.cy; return arguments[0].filter("
            "([a, b]) => cy.getElementById(a + '->' + b).nonempty()).map(([a, b]) => a + '>' + b)",
            list(zip(path, path[1:], strict=False)),
        )
        marked = browser.execute_script(
            "return window.explorer.cy.edges('.' + arguments[0])"
            ".map(e => e.source().id() + '>' + e.target().id())",
            bound,
        )
        assert drawn and sorted(marked) == sorted(drawn)
    moves = [
        li.get_attribute("data-move") for li in browser.find_elements(By.CSS_SELECTOR, "#moves li")
    ]
    assert moves == ["17", "15"]  # best first
    assert severe_logs(browser) == []
    screenshot(browser, "number-game")


def test_tic_tac_toe_played_against_the_database_is_a_draw(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/tic-tac-toe?symmetry=false&p=.../.../...")
    for _ in range(5):
        status = browser.find_element(By.ID, "status").text
        if status.startswith("game over"):
            break
        best = browser.find_elements(By.CSS_SELECTOR, "#moves li")[0]
        assert best.get_attribute("class") == "draw"  # the best move keeps the draw
        best.click()
        WebDriverWait(browser, WAIT).until(
            lambda d: d.execute_script("return document.body.dataset.ready === '1'")
        )
        WebDriverWait(browser, WAIT).until(
            lambda d: d.execute_script(
                "return document.getElementById('graph').dataset.ready === '1'"
            )
        )
    status = browser.find_element(By.ID, "status").text
    assert status.startswith("game over: draw"), status
    history = browser.find_elements(By.CSS_SELECTOR, "#history li")
    assert len(history) == 9
    assert len(browser.find_elements(By.CSS_SELECTOR, "#board td")) == 9
    assert severe_logs(browser) == []
    screenshot(browser, "tic-tac-toe")
    browser.find_element(By.ID, "undo").click()  # takes back your last move (and any reply)
    WebDriverWait(browser, WAIT).until(
        lambda d: (
            len(d.find_elements(By.CSS_SELECTOR, "#history li")) == 8
            and not d.find_element(By.ID, "status").text.startswith("game over")
        )
    )


def test_a_krvk_position_shows_its_board_and_mating_line(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/chess?material=KRvK&p={KRVK_ROOT.replace(' ', '+')}")
    assert browser.find_elements(By.CSS_SELECTOR, "#board svg")
    best = browser.execute_script(
        "return window.explorer.cy.edges('.best').map(e => e.data('label'))"
    )
    assert best == ["h1h8"], best  # Rh8 mate
    first = browser.find_elements(By.CSS_SELECTOR, "#moves li")[0]
    assert first.get_attribute("class") == "win"
    assert re.search(r"remaining depth 1 \(low\)", browser.find_element(By.ID, "status").text)
    assert severe_logs(browser) == []
    screenshot(browser, "chess")


def replayed(driver: webdriver.Chrome, button: str, commit: int | None = None) -> str:
    """Press a replay button and wait for the step drawn (commit *commit* if given)."""
    before = driver.execute_script("return document.getElementById('graph').dataset.commit")
    driver.find_element(By.ID, button).click()
    WebDriverWait(driver, WAIT).until(
        lambda d: d.execute_script(
            "const g = document.getElementById('graph').dataset;"
            " return g.ready === '1' && g.commit !== arguments[0]"
            " && (arguments[1] === null || g.commit === String(arguments[1]))",
            before,
            commit,
        )
    )
    return str(driver.find_element(By.ID, "replayinfo").text)


def test_the_number_game_replay_steps_to_both_root_bounds_final(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/number-game?root=13&p=13")
    info = replayed(browser, "replay")  # opens at the last commit that fits
    total = int(re.search(r"commit (\d+) of (\d+)", info).group(2))  # type: ignore[union-attr]
    assert f"commit {total} of {total}" in info
    info = replayed(browser, "rfirst", 1)
    assert info.startswith(f"commit 1 of {total}") and "expanded: 13" in info
    assert "root 13: low -∞ (not final), high +∞ (not final)" in info
    assert node(browser, "r0")["label"] == "13\n-∞ +∞"
    assert node(browser, "r1")["label"] == "15\n?"  # unexpanded, drawn as the article does
    seen_final = []
    for k in range(2, total + 1):  # step through, one commit at a time, to the end
        info = replayed(browser, "rnext", k)
        seen_final.append("low 3 (final), high 5 (final)" in info)
    assert seen_final[-1] and not seen_final[0]
    root = node(browser, "r0")
    assert root["label"] == "13\n3 5" and root["lowc"] == root["highc"] == "#2a2"
    assert browser.find_element(By.ID, "rnext").get_attribute("disabled")
    screenshot(browser, "number-game-replay")
    assert severe_logs(browser) == []
