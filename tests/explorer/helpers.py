"""Helpers of the browser tests: the headless Chromium session, waits on the page's
ready flags, and the browser's console log."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 120  # seconds: a generous limit for a loaded 2-core machine
SCREENSHOTS = os.environ.get("NEGAGRAPH_SCREENSHOTS")  # a directory, to refresh docs/


def ready(driver: webdriver.Chrome) -> None:
    """Wait until the page has settled: its position and graph drawn, or a failure shown."""
    WebDriverWait(driver, WAIT).until(
        lambda d: d.execute_script(
            "return document.body.dataset.ready === '1'"
            " && document.getElementById('graph').dataset.ready === '1'"
        )
    )


def load(driver: webdriver.Chrome, url: str) -> None:
    """Open *url* and wait until the page has drawn its position and graph."""
    driver.get(url)
    ready(driver)


def severe_logs(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    """The console's errors since the last read (reading empties the log)."""
    logs: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return [e for e in logs if e["level"] in ("SEVERE", "ERROR")]


LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def requested(driver: webdriver.Chrome) -> list[str]:
    """The URLs the browser asked for since the last read (Chromium's performance log:
    every request a page made, scripts, styles and fonts included; reading empties it)."""
    logs: list[dict[str, Any]] = driver.get_log("performance")  # type: ignore[no-untyped-call]
    urls = []
    for entry in logs:
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(str(message["params"]["request"]["url"]))
    return urls


def leaving(urls: list[str]) -> list[str]:
    """Those of *urls* addressed to another host than this machine's loopback (the
    page's own ``data:`` and ``blob:`` URLs stay in the browser)."""
    return [
        u
        for u in urls
        if urlsplit(u).scheme not in ("data", "blob", "about")
        and urlsplit(u).hostname not in LOCAL_HOSTS
    ]


def screenshot(driver: webdriver.Chrome, name: str) -> None:
    if SCREENSHOTS:
        driver.save_screenshot(str(Path(SCREENSHOTS) / f"explorer-{name}.png"))


def node(driver: webdriver.Chrome, position: str) -> dict[str, Any]:
    data: dict[str, Any] = driver.execute_script(
        "return window.explorer.cy.getElementById(arguments[0]).data()", position
    )
    return data


def text(driver: webdriver.Chrome, element_id: str) -> str:
    """The text of element *element_id* ("" when it is hidden)."""
    found: str = driver.execute_script(
        "const e = document.getElementById(arguments[0]); return e.hidden ? '' : e.innerText",
        element_id,
    )
    return found
