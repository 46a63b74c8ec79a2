"""The explorer's replays and play on the board (issue 47, items 5 and 6, and the value
history of item 5), in headless Chromium against a real ``negagraph serve``.

Replays are checked against the API's own answers and against an oracle walking the
rules (tic-tac-toe's tier of k marks is discovered by commit k + 1); play against the
API's moves and positions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from tests.api.helpers import pg_database
from tests.api.test_replay import reachable_by_marks
from tests.api.test_serve import served
from tests.explorer.helpers import WAIT, load, ready, screenshot, severe_logs, text
from tests.explorer.test_pages import KRVK_ROOT, get, solved

SOLVES = (
    ["tic-tac-toe", "--full"],
    ["connect-four", "-p", "width=3", "-p", "height=2", "--full"],
    ["connect-four", "-p", "width=3", "-p", "height=3", "--full", "--layout", "compact"],
    ["connect-four", "-p", "width=5", "-p", "height=4", "--max-expansions", "3000"],
    ["number-game"],
    ["chess", "-p", "material=KRvK", "--root", KRVK_ROOT],
)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = f"sqlite:///{tmp_path_factory.mktemp('replay') / 'replay.db'}"
    solved(url, SOLVES)
    with served(url) as (address, _proc):
        yield address


def js(driver: webdriver.Chrome, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def step(driver: webdriver.Chrome, button: str, commit: int) -> None:
    """Press a replay button (or *button* ``replay``) and wait for commit *commit*."""
    driver.find_element(By.ID, button).click()
    WebDriverWait(driver, WAIT).until(
        lambda d: d.execute_script(
            "const g = document.getElementById('graph').dataset;"
            " return g.ready === '1' && g.commit === arguments[0]",
            str(commit),
        )
    )


def positions_drawn(driver: webdriver.Chrome) -> list[str]:
    found: list[str] = js(driver, "return window.explorer.cy.nodes().map(n => n.data('position'))")
    return sorted(found)


def tiers_shown(driver: webdriver.Chrome) -> dict[str, str]:
    found: dict[str, str] = js(
        driver,
        "return Object.fromEntries([...document.querySelectorAll('#tiers li')]"
        ".map(li => [li.dataset.tier, li.dataset.status]))",
    )
    return found


def replay_of(base: str, game: str, commit: int, **params: Any) -> dict[str, Any]:
    answer: dict[str, Any] = get(base, f"/api/games/{game}/replay", commit=commit, **params)
    return answer


# -- item 5: truthful replays --------------------------------------------------------------


def check_tiered_replay(base: str, browser: webdriver.Chrome) -> None:
    """tic-tac-toe's tiered solve, replayed tier by tier: the positions drawn are those
    of the tiers discovered (never the first node ids), commits past 500 positions are
    summaries, the buttons keep working to the last commit."""
    oracle = reachable_by_marks()
    load(browser, f"{base}/explore/tic-tac-toe")
    step(browser, "replay", 4)  # the last commit that fits: 1 + 9 + 72 + 252 positions
    assert positions_drawn(browser) == sorted(set().union(*(oracle[m] for m in range(4))))
    assert js(browser, "return window.explorer.cy.edges().length") == 0  # discovery: no moves
    assert tiers_shown(browser) == {str(t): "discovered" if t < 4 else "pending" for t in range(10)}
    assert "tier 3 discovered (252 positions)" in text(browser, "replayinfo")
    step(browser, "rfirst", 1)  # the empty board alone, not a finished one
    assert positions_drawn(browser) == [".../.../..."]
    assert "root .../.../...: low -∞ (not final), high +∞ (not final)" in text(
        browser, "replayinfo"
    )
    step(browser, "rnext", 2)
    step(browser, "rnext", 3)
    step(browser, "rnext", 4)
    step(browser, "rnext", 5)  # 1,090 positions: a summary, no graph
    info = text(browser, "replayinfo")
    assert info.startswith("commit 5 of 20 · 1,090 positions (+756), 0 moves (+0)")
    assert "tier 4 discovered (756 positions)" in info
    assert "root: low -∞ (not final), high +∞ (not final)" in info
    assert js(browser, "return window.explorer.cy.nodes().length") == 0
    assert text(browser, "graphinfo").startswith(
        "not drawn: commit 5 holds 1,090 positions; a replay draws at most 500"
    )
    assert text(browser, "error") == ""
    step(browser, "rlast", 20)  # the root's tier, solved last
    info = text(browser, "replayinfo")
    assert "tier 0 solved (9 moves)" in info and "root: low 0 (final), high 0 (final)" in info
    assert set(tiers_shown(browser).values()) == {"solved"}
    assert browser.find_element(By.ID, "rnext").get_attribute("disabled") is not None
    step(browser, "rprev", 19)
    assert "tier 1 solved (72 moves)" in text(browser, "replayinfo")
    # the chart: the root's bounds over the commits, open until the last
    lows = js(browser, "return document.querySelector('#chart polyline.low').dataset.values")
    assert lows == "," * 19 + "0"


def test_a_tiered_replay_draws_the_tiers_discovered(base: str, browser: webdriver.Chrome) -> None:
    check_tiered_replay(base, browser)
    screenshot(browser, "tic-tac-toe-replay")
    assert severe_logs(browser) == []


def test_a_small_tiered_solve_is_drawn_with_its_solved_tiers(
    base: str, browser: webdriver.Chrome
) -> None:
    query = {"width": 3, "height": 2}
    load(browser, f"{base}/explore/connect-four?width=3&height=2")
    last = replay_of(base, "connect-four", 14, **query)
    step(browser, "replay", len(last["commits"]))
    assert positions_drawn(browser) == sorted(n["position"] for n in last["nodes"])
    assert js(browser, "return window.explorer.cy.edges().length") == len(last["edges"])
    root = next(n for n in last["nodes"] if n["id"] == last["root"])
    label = js(
        browser,
        "return window.explorer.cy.getElementById(arguments[0]).data('label')",
        f"r{root['id']}",
    )
    assert label == "...\n...\n0"
    # a commit that solved a tier rings its positions: the fresh ones are that tier's
    step(browser, "rprev", len(last["commits"]) - 1)
    fresh = js(browser, "return window.explorer.cy.nodes('.fresh').map(n => n.data('position'))")
    answer = replay_of(base, "connect-four", len(last["commits"]) - 1, **query)
    tier = next(t for t in answer["tiers"] if t["solved_in"] == answer["commit"])
    assert len(fresh) == tier["nodes"] and all(p.count("x") + p.count("o") == 1 for p in fresh)
    assert severe_logs(browser) == []


def test_the_chart_of_the_roots_bounds_and_a_click_on_it(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/number-game?root=13")
    answer = replay_of(base, "number-game", 1)
    total = len(answer["commits"])
    step(browser, "replay", total)
    for bound in ("low", "high"):
        shown = js(
            browser,
            f"return document.querySelector('#chart polyline.{bound}').dataset.values",
        )
        expected = [c[f"root_{bound}"] for c in answer["commits"]]
        assert shown == ",".join("" if v is None else str(v) for v in expected)
    assert answer["commits"][-1]["root_low"] == 3 and answer["commits"][-1]["root_high"] == 5
    # the high line ends above the low one (3 and 5 on the chart's scale)
    ends = js(
        browser,
        "return ['low', 'high'].map(b => document.querySelector('#chart polyline.' + b)"
        ".getAttribute('points').split(' ').pop().split(',')[1])",
    )
    assert float(ends[1]) < float(ends[0])
    chart = browser.find_element(By.CSS_SELECTOR, "#chart svg")
    ActionChains(browser).move_to_element_with_offset(
        chart, -chart.size["width"] // 2 + 2, 0
    ).click().perform()  # its left edge: the first commit
    WebDriverWait(browser, WAIT).until(
        lambda d: d.execute_script("return document.getElementById('graph').dataset.commit") == "1"
    )
    ready(browser)
    assert text(browser, "replayinfo").startswith(f"commit 1 of {total}")
    assert severe_logs(browser) == []


def test_commits_past_the_cap_are_summaries_and_the_buttons_keep_working(
    base: str, browser: webdriver.Chrome
) -> None:
    query = {"width": 5, "height": 4}
    load(browser, f"{base}/explore/connect-four?width=5&height=4")
    first = replay_of(base, "connect-four", 1, **query)
    commits = first["commits"]
    fits = max(c["seq"] for c in commits if c["nodes"] <= 500)
    step(browser, "replay", fits)
    # the last commit drawn expanded a dozen positions: three named, the rest counted
    last = get(base, "/api/games/connect-four/replay", commit=fits, **query)
    fresh = [n["position"] for n in last["nodes"] if n["expanded_in"] == fits]
    assert len(fresh) > 3
    assert (
        f"expanded: {', '.join(fresh[:3])} and {len(fresh) - 3:,} more (orange in the graph)"
        in text(browser, "replayinfo")
    )
    step(browser, "rnext", fits + 1)  # past the cap: a summary, no error
    c, before = commits[fits], commits[fits - 1]
    assert text(browser, "replayinfo").startswith(
        f"commit {fits + 1} of {len(commits)} · {c['nodes']:,} positions "
        f"(+{c['nodes'] - before['nodes']:,}), {c['edges']:,} moves "
        f"(+{c['edges'] - before['edges']:,})"
    )
    assert text(browser, "error") == ""
    step(browser, "rlast", len(commits))
    step(browser, "rprev", len(commits) - 1)
    step(browser, "rfirst", 1)
    assert positions_drawn(browser) != []
    # chess KRvK: the replay opens though no commit fits
    load(browser, f"{base}/explore/chess?material=KRvK&p={KRVK_ROOT.replace(' ', '+')}")
    chess = get(base, "/api/games/chess/replay", material="KRvK")
    step(browser, "replay", chess["commit"])
    if not chess["drawn"]:
        assert (
            text(browser, "graphinfo") == f"not drawn: {chess['not_drawn']}; the summary"
            " above says what the commit did"
        )
    step(browser, "rfirst", 1)
    assert text(browser, "error") == ""
    assert severe_logs(browser) == []


def test_a_compact_variant_says_it_has_no_per_position_replay(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/connect-four?width=3&height=3")
    step(browser, "replay", 20)
    said = text(browser, "graphinfo")
    assert said.startswith("this variant is stored in the compact layout: no per-position replay")
    assert said.endswith(
        "Its solve took 20 commits; root at the end: low 0 (final), high 0 (final)"
    )
    assert js(browser, "return window.explorer.cy.nodes().length") == 0
    assert set(tiers_shown(browser).values()) == {"solved"}
    step(browser, "rfirst", 1)
    assert tiers_shown(browser) == {"0": "discovered", **{str(t): "pending" for t in range(1, 10)}}
    assert severe_logs(browser) == []


# -- item 6: play on the board -------------------------------------------------------------


def history(driver: webdriver.Chrome) -> list[str]:
    found: list[str] = js(
        driver, "return [...document.querySelectorAll('#history li')].map(li => li.textContent)"
    )
    return found


def check_grid_play(base: str, browser: webdriver.Chrome) -> None:
    """tic-tac-toe: coordinates, a click on a cell plays it (the database replies), the
    line is in the address, and a reload restores it."""
    load(browser, f"{base}/explore/tic-tac-toe")
    heads = js(
        browser,
        "return [...document.querySelectorAll('#board th')].map(t => t.textContent)",
    )
    assert heads == ["", "a", "b", "c", "1", "2", "3"]
    browser.find_element(By.CSS_SELECTOR, "#board td[data-cell='b2']").click()
    ready(browser)
    played = history(browser)
    assert played[0] == "b2" and played[1].endswith("(database)")
    reply = played[1].split(" ")[0]
    position = browser.find_element(By.ID, "position").get_attribute("value")
    assert position is not None and position.split("/")[1][1] == "x"  # b2: row 2, column b
    assert browser.current_url.endswith(f"p=...%2F...%2F...&line=b2+{reply}")
    browser.get(browser.current_url)  # reload: the line is played again
    ready(browser)
    assert [h.split(" ")[0] for h in history(browser)] == ["b2", reply]
    assert browser.find_element(By.ID, "position").get_attribute("value") == position
    # the value history: a draw at every ply so far, 9, 8, 7 plies to the end
    strip = js(
        browser,
        "return [...document.querySelectorAll('#vvh li')]"
        ".map(li => [li.className, li.textContent])",
    )
    assert strip == [["draw", "9"], ["draw", "8"], ["draw", "7"]]
    screenshot(browser, "tic-tac-toe-play")


def test_a_click_on_a_grid_plays_and_the_address_keeps_the_line(
    base: str, browser: webdriver.Chrome
) -> None:
    check_grid_play(base, browser)
    # a line that is not one of the moves says so, and nothing is shown
    load(browser, f"{base}/explore/tic-tac-toe?line=b2+b2")
    assert text(browser, "error").startswith("error: the line's move b2 is not a move of")
    assert severe_logs(browser) == []


def test_a_click_in_a_connect_four_column_plays_it(base: str, browser: webdriver.Chrome) -> None:
    load(browser, f"{base}/explore/connect-four?width=5&height=4")
    browser.find_element(By.ID, "reply").click()  # no database replies
    heads = js(
        browser, "return [...document.querySelectorAll('#board th')].map(t => t.textContent)"
    )
    assert heads == ["1", "2", "3", "4", "5"]
    browser.find_element(By.CSS_SELECTOR, "#board td[data-cell='d1']").click()  # top of column 4
    ready(browser)
    assert history(browser) == ["4"]
    assert browser.find_element(By.ID, "position").get_attribute("value") == (
        "...../...../...../...x."
    )
    assert severe_logs(browser) == []


def test_a_chess_move_is_a_click_on_a_piece_then_its_square(
    base: str, browser: webdriver.Chrome
) -> None:
    load(browser, f"{base}/explore/chess?material=KRvK&p={KRVK_ROOT.replace(' ', '+')}")
    browser.find_element(By.ID, "reply").click()
    square = browser.find_element(By.CSS_SELECTOR, "#board rect.square.h1")
    ActionChains(browser).move_to_element(square).click().perform()
    WebDriverWait(browser, WAIT).until(
        lambda d: (
            d.execute_script("return document.getElementById('board').firstChild.dataset.selected")
            == "h1"
        )
    )
    marked = js(
        browser,
        "return [...document.querySelectorAll('#board rect.win')]"
        ".map(r => [...r.classList].find(k => /^[a-h][1-8]$/.test(k)))",
    )
    assert "h8" in marked  # Rh8 mates: a winning move
    ActionChains(browser).move_to_element(
        browser.find_element(By.CSS_SELECTOR, "#board rect.square.h8")
    ).click().perform()
    ready(browser)
    assert history(browser) == ["h1h8"]
    assert text(browser, "verdict").startswith("game over")
    assert severe_logs(browser) == []


def test_the_move_list_is_played_from_the_keyboard(base: str, browser: webdriver.Chrome) -> None:
    load(browser, f"{base}/explore/tic-tac-toe")
    browser.find_element(By.ID, "reply").click()
    items = browser.find_elements(By.CSS_SELECTOR, "#moves li")
    assert [li.get_attribute("tabindex") for li in items] == ["0"] + ["-1"] * (len(items) - 1)
    second = str(items[1].get_attribute("data-move"))
    items[0].send_keys(Keys.ARROW_DOWN)
    assert js(browser, "return document.activeElement.dataset.move") == second
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    ready(browser)
    assert history(browser) == [second]
    first = browser.find_elements(By.CSS_SELECTOR, "#moves li")[0].get_attribute("data-move")
    assert js(browser, "return document.activeElement.dataset.move") == first  # keep playing
    last = browser.find_elements(By.CSS_SELECTOR, "#moves li")[-1].get_attribute("data-move")
    browser.switch_to.active_element.send_keys(Keys.END, Keys.ENTER)
    ready(browser)
    assert history(browser) == [second, last]
    assert severe_logs(browser) == []


# -- PostgreSQL --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pg_base() -> Iterator[str]:
    with pg_database() as url:
        solved(url, (SOLVES[0],))
        with served(url) as (address, _proc):
            yield address


def test_on_postgresql_the_tiered_replay_and_play_on_the_board(
    pg_base: str, browser: webdriver.Chrome
) -> None:
    check_tiered_replay(pg_base, browser)
    check_grid_play(pg_base, browser)
    assert severe_logs(browser) == []
