"""A real browser for the console's tests: Debian's chromium driven by Debian's chromedriver.

Nothing downloads a browser: the executables are ``/usr/bin/chromium`` and
``/usr/bin/chromedriver`` (``ALMANAC_CHROMIUM`` / ``ALMANAC_CHROMEDRIVER`` override them), and
Selenium's own driver manager is kept offline. Without them the browser tests skip, unless
``ALMANAC_REQUIRE_BROWSER=1`` (CI), where they fail. Screenshots go to ``test-artifacts/console/``
(``ALMANAC_TEST_ARTIFACTS`` overrides the folder).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from almanac.console.server import ConsoleServer

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("ALMANAC_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("ALMANAC_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1100",
)
"""Headless on a machine with no network: background fetches off (they fail, many at a time)."""


def artifacts() -> Path:
    folder = Path(os.environ.get("ALMANAC_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "console"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def require_browser() -> None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if missing:
        message = (
            f"no browser for the console tests: {', '.join(missing)} "
            "(apt-get install chromium chromium-driver)"
        )
        if os.environ.get("ALMANAC_REQUIRE_BROWSER") == "1":
            pytest.fail(message + " (ALMANAC_REQUIRE_BROWSER=1)", pytrace=False)
        pytest.skip(message)


@contextmanager
def chromium(profile: Path) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"  # Selenium Manager must never fetch a driver or browser
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve ``app`` on a free loopback port (as ``almanac dev`` does); yield its base URL."""
    server = ConsoleServer(app, "127.0.0.1", _free_port()).start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


def wait_for(condition: Callable[[], object], what: str, seconds: float = 15) -> None:
    """Poll ``condition`` until it is true, for at most ``seconds``.

    An element the live refresh replaced is read again, and one not there yet (the page is
    still loading a form's answer) is waited for, like a false condition.
    """
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    deadline = time.monotonic() + seconds
    while True:
        try:
            if condition():
                return
        except (StaleElementReferenceException, NoSuchElementException):
            pass  # swapped in mid-read, or not loaded yet: find it again
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds}s waiting for {what}")
        time.sleep(0.05)
