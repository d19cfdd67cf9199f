"""End-to-end: the real app (``streamlit run app.py``) driven in headless Chromium with Playwright.

Walks a person's path — Home → Data (upload a CSV, then the clinic sample) → Federate → Evaluate →
Recommend → Trade-off — asserting on visible text, and saves a screenshot of every page into
``docs/screenshots/``. Uses Debian's ``/usr/bin/chromium`` (Playwright's own browser download is
never used). Without it the test is skipped locally and fails in CI (env ``CI`` set), where
``.ci/run`` installs it.

Timings (server start → health, Home interactive, federation run, sweep) are printed and written to
``tests/artifacts/e2e_timings.json``.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import CHROMIUM_ARGS

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "docs" / "screenshots"
ARTIFACTS = REPO / "tests" / "artifacts"

pytestmark = pytest.mark.e2e
VIEW_W, VIEW_H = 1280, 860


def _shrink_png(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:  # Pillow comes with Streamlit; without it the PNG stays as taken
        return
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(browser_path):
    """``streamlit run app.py`` on a free port; yields (base url, seconds until healthy)."""
    port = _free_port()
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "e2e_server.log", "w")
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}; see {ARTIFACTS / 'e2e_server.log'}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.time() > deadline:
                pytest.fail("streamlit did not become healthy within 60 s")
            time.sleep(0.1)
        yield url, time.perf_counter() - t0, t0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _csv(path: Path) -> Path:
    rows = ["patient,item,value,hospital"]
    for h in "ABC":
        for i in range(14):
            for j in range(8):
                if (i + 2 * j) % 3:
                    rows.append(f"p{h}{i},drug {j},{(i + j) % 5 + 1},Hospital {h}")
    path.write_text("\n".join(rows) + "\n")
    return path


def test_browser_walkthrough(server, browser_path, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=30_000)
    url, t_health, t_start = server
    SHOTS.mkdir(parents=True, exist_ok=True)
    timings = {"server_healthy_s": round(t_health, 2)}

    def wait_idle(page, timeout=120_000):
        """Until the script run is over (Streamlit's 'running' widget is gone)."""
        page.wait_for_timeout(300)
        page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=timeout)

    def shot(page, name):
        """The whole page: Streamlit scrolls inside its main container, so the viewport is grown to
        the content's height first. Saved as a 256-colour PNG to keep the docs light."""
        wait_idle(page)
        height = page.evaluate(
            "() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
            " return m ? m.scrollHeight : document.body.scrollHeight; }")
        page.set_viewport_size({"width": VIEW_W, "height": int(min(max(height, VIEW_H), 4000))})
        page.wait_for_timeout(1200)  # let Plotly redraw at the new size
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path))
        page.set_viewport_size({"width": VIEW_W, "height": VIEW_H})
        _shrink_png(path)

    def nav(page, label):
        page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=label, exact=True).click()
        wait_idle(page)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(browser_path), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": VIEW_W, "height": VIEW_H})
        page.set_default_timeout(60_000)

        # --- Home
        t0 = time.perf_counter()
        page.goto(url)
        expect(page.get_by_text("Where to start")).to_be_visible()
        # server start → healthy, plus first request → Home usable (the browser's own launch excluded)
        timings["home_interactive_after_request_s"] = round(time.perf_counter() - t0, 2)
        timings["home_interactive_from_server_start_s"] = round(t_health + time.perf_counter() - t0, 2)
        expect(page.get_by_text("The two rounds")).to_be_visible()
        page.locator('[data-testid="stGraphVizChart"] svg').wait_for(timeout=60_000)
        shot(page, "1_home")

        # --- Data: upload a CSV (mapping guessed from the header), then the clinic sample
        nav(page, "Data")
        expect(page.get_by_text("Loaded: ")).to_be_visible()
        page.get_by_text("Upload CSV / Parquet").click()
        wait_idle(page)
        page.locator('input[type="file"]').set_input_files(str(_csv(tmp_path / "hospitals.csv")))
        expect(page.get_by_text("Map the columns")).to_be_visible()
        page.get_by_role("button", name="Build entities").click()
        expect(page.get_by_text("Loaded hospitals.csv: 42 users")).to_be_visible()
        expect(page.get_by_text("Hospital C").first).to_be_visible()
        shot(page, "2_data_upload")
        page.get_by_text("Bundled sample").click()
        wait_idle(page)
        page.get_by_role("button", name="Load sample").click()
        expect(page.get_by_text("Loaded sample: clinic")).to_be_visible()
        shot(page, "2_data")

        # --- Federate
        nav(page, "Federate")
        t0 = time.perf_counter()
        page.get_by_role("button", name="Run federation").click()
        expect(page.get_by_text("Done in")).to_be_visible(timeout=60_000)
        timings["federation_run_in_browser_s"] = round(time.perf_counter() - t0, 2)
        expect(page.get_by_text("Guarantee (ledger)").first).to_be_visible()
        shot(page, "3_federate")
        page.get_by_role("tab", name="Privacy ledger").click()
        expect(page.get_by_text("ε spent per entity and stage").first).to_be_visible()
        shot(page, "3_federate_ledger")

        # --- Evaluate
        nav(page, "Evaluate")
        expect(page.get_by_text("Per entity")).to_be_visible(timeout=120_000)
        expect(page.get_by_role("button", name="Download all metrics (CSV)")).to_be_visible()
        shot(page, "4_evaluate")

        # --- Recommend
        nav(page, "Recommend")
        expect(page.get_by_text("Individual model").first).to_be_visible()
        expect(page.get_by_text("What the user already has")).to_be_visible()
        shot(page, "5_recommend")

        # --- Trade-off (default grid and seeds)
        nav(page, "Trade-off")
        t0 = time.perf_counter()
        page.get_by_role("button", name="Run sweep").click()
        expect(page.get_by_text("Crossing ε (MAR)")).to_be_visible(timeout=180_000)
        timings["default_sweep_in_browser_s"] = round(time.perf_counter() - t0, 2)
        shot(page, "6_tradeoff")
        # the same page in the dark theme (Streamlit follows the system's colour scheme)
        page.emulate_media(color_scheme="dark")
        page.wait_for_timeout(1000)
        shot(page, "6_tradeoff_dark")
        page.emulate_media(color_scheme="light")
        # a revisit is instant: the sweep is cached in the session
        nav(page, "Home")
        nav(page, "Trade-off")
        t0 = time.perf_counter()
        expect(page.get_by_text("Crossing ε (MAR)")).to_be_visible(timeout=10_000)
        timings["sweep_revisit_s"] = round(time.perf_counter() - t0, 2)

        # no traceback anywhere on the way
        assert page.locator('[data-testid="stException"]').count() == 0
        browser.close()

    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "e2e_timings.json").write_text(json.dumps(timings, indent=2))
    print("\nE2E timings:", timings)
    assert timings["federation_run_in_browser_s"] < 30
