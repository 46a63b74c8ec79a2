"""The browser of the explorer's tests: Debian's headless Chromium driven by Selenium.
After every test that used it, its console must hold no JavaScript error."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.explorer.helpers import CHROMEDRIVER, CHROMIUM, leaving, requested, severe_logs


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    assert shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER), (
        "chromium and chromium-driver are needed: apt-get install -y chromium chromium-driver"
    )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--window-size=1200,800",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(autouse=True)
def _no_javascript_error(request: pytest.FixtureRequest) -> Iterator[None]:
    """No page a test opened logged a JavaScript error (a failed request the test
    provoked, logged by the browser as a network error, is the test's own to check), and
    no request left this machine (the explorer works offline: issue 47)."""
    driver: webdriver.Chrome | None = None
    if "browser" in request.fixturenames:
        opened: webdriver.Chrome = request.getfixturevalue("browser")
        requested(opened)  # what earlier tests asked is theirs
        driver = opened
    yield
    if driver is not None:
        errors = [e for e in severe_logs(driver) if e.get("source") != "network"]
        assert errors == [], errors
        urls = requested(driver)
        assert urls, "the test's pages made no request at all: is the log read?"
        assert leaving(urls) == [], leaving(urls)
