"""The reading page in a real headless Chromium (Debian's package, driven by Playwright), as a reader
meets it: type, submit, read the pinned verse with its reference, open the context with the keyboard."""

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
import uvicorn

from citebible_pipeline.api.app import create_app
from citebible_pipeline.query import Engine

pytestmark = pytest.mark.slow
CHROMIUM = os.environ.get("CITEBIBLE_CHROMIUM", "/usr/bin/chromium")
SHOTS = Path(os.environ.get("CITEBIBLE_SCREENSHOT_DIR", Path(__file__).parent / "screenshots"))


@pytest.fixture(scope="module")
def base_url(full_db):
    engine = Engine(full_db["url"], llm=None)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(lambda: engine), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert shutil.which(CHROMIUM) or Path(CHROMIUM).exists(), f"{CHROMIUM} missing: apt-get install -y chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        yield b
        b.close()


def test_type_submit_and_open_the_context_with_the_keyboard(browser, base_url):
    page = browser.new_page(viewport={"width": 390, "height": 844})  # a phone
    page.goto(base_url + "/")
    page.fill("#q", "My mother is dying and I'm angry at God")
    page.press("#q", "Enter")
    page.wait_for_selector("article.result")
    first = page.locator("article.result").first
    ref = first.locator(".ref-line .ref").inner_text()
    assert ref and any(ch.isdigit() for ch in ref)
    assert first.locator(".pinned .ref").inner_text()  # the pinned verse carries its own reference
    details, summary = first.locator("details"), first.locator("summary")
    assert details.evaluate("d => d.open") is False
    summary.focus()
    page.keyboard.press("Enter")
    assert details.evaluate("d => d.open") is True
    assert ref in summary.inner_text() and first.locator(".context p").count() >= 1
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "reading-page-expanded.png"), full_page=True)
    page.keyboard.press("Space")
    assert details.evaluate("d => d.open") is False
    assert ref in summary.inner_text() and first.locator(".ref-line .ref").is_visible()
    page.keyboard.press(" ")
    assert details.evaluate("d => d.open") is True
    # no horizontal scrolling at phone width
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    page.close()


def test_abstention_and_reference_pages(browser, base_url):
    page = browser.new_page()
    page.goto(base_url + "/")
    page.fill("#q", "cheapest flights to Rome next weekend")
    page.press("#q", "Enter")
    page.wait_for_selector(".abstained")
    assert "No passage fits" in page.inner_text(".abstained")
    page.fill("#q", "Ps 23")
    page.click("button[type=submit]")
    page.wait_for_selector("article.result")
    assert page.inner_text("article.result .ref-line .ref") == "Psalm 23"
    assert "Yahweh is my shepherd" in page.inner_text("article.result .passage")
    page.close()


def test_page_works_with_scripts_off(browser, base_url):
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(base_url + "/?q=the+armor+of+God")
    assert page.locator("article.result").count() >= 1
    page.locator("summary").first.click()
    assert page.locator("details").first.get_attribute("open") is not None
    ctx.close()
