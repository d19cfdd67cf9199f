"""Screenshots of the dashboard for the docs (``make screenshots``): the only thing that writes into
``docs/screenshots/``. Not a test — the browser tests write only under a temporary directory.

Starts the app on a free port with a throw-away store, walks Home → Data → Federate (its ledger and
the run's CLI command) → Evaluate → Recommend → the public report → Trade-off → History in headless Chromium (Debian's ``/usr/bin/chromium``) and saves one
256-colour PNG per page.

    python docs/make_screenshots.py [--out docs/screenshots]
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from e2e_server import streamlit_server  # noqa: E402

VIEW_W, VIEW_H = 1280, 860


def _shrink_png(path: Path) -> None:
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as im:
        small = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    args = ap.parse_args(argv)
    from playwright.sync_api import expect, sync_playwright

    if not CHROMIUM.exists():
        print(f"error: {CHROMIUM} is missing (install Debian's chromium)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    expect.set_options(timeout=600_000)  # runs with production noise on a shared machine
    with tempfile.TemporaryDirectory() as tmp, streamlit_server(Path(tmp)) as (url, _):
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            page = browser.new_page(viewport={"width": VIEW_W, "height": VIEW_H}, accept_downloads=True)
            page.set_default_timeout(120_000)

            def idle():
                page.wait_for_timeout(300)
                page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=600_000)

            def shot(name):
                idle()
                h = page.evaluate("() => { const m = document.querySelector('[data-testid=\"stMain\"]');"
                                  " return m ? m.scrollHeight : document.body.scrollHeight; }")
                page.set_viewport_size({"width": VIEW_W, "height": int(min(max(h, VIEW_H), 4000))})
                page.wait_for_timeout(1200)
                path = args.out / f"{name}.png"
                tmp_png = Path(tmp) / f"{name}.png"
                page.screenshot(path=str(tmp_png))
                _shrink_png(tmp_png)
                tmp_png.replace(path)  # whole file or nothing
                page.set_viewport_size({"width": VIEW_W, "height": VIEW_H})
                print("wrote", path.relative_to(REPO) if path.is_relative_to(REPO) else path)

            def shot_file(name):  # a page outside Streamlit (the downloaded report): the whole page
                path = args.out / f"{name}.png"
                tmp_png = Path(tmp) / f"{name}.png"
                page.screenshot(path=str(tmp_png), clip={"x": 0, "y": 0, "width": VIEW_W, "height": 1400},
                                full_page=True)
                _shrink_png(tmp_png)
                tmp_png.replace(path)
                print("wrote", path.relative_to(REPO) if path.is_relative_to(REPO) else path)

            def nav(label):
                page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=label, exact=True).click()
                idle()

            page.goto(url)
            expect(page.get_by_text("Where to start")).to_be_visible()
            shot("1_home")
            nav("Data")
            shot("2_data")
            nav("Federate")
            page.get_by_role("button", name="Run federation").click()
            expect(page.get_by_text("Done in").first).to_be_visible()
            shot("3_federate")
            page.get_by_role("tab", name="Privacy ledger").click()
            shot("3_federate_ledger")
            page.get_by_role("tab", name="Run document").click()
            shot("3_federate_cli")
            nav("Evaluate")
            if page.get_by_role("button", name=re.compile(r"^Run \d+ comparison")).count():
                page.get_by_role("button", name=re.compile(r"^Run \d+ comparison")).first.click()
                idle()
            expect(page.get_by_role("heading", name="Per entity")).to_be_visible()
            shot("4_evaluate")
            nav("Recommend")
            expect(page.get_by_text("Individual model", exact=True).first).to_be_visible()
            shot("5_recommend")
            nav("Privacy audit")
            with page.expect_download() as dl:
                page.get_by_role("button", name="Download the public report").click()
            report = Path(tmp) / "public.html"
            dl.value.save_as(report)
            nav_back = page.url
            page.goto(report.as_uri())
            page.wait_for_timeout(1500)
            shot_file("7_report_public")
            page.goto(nav_back)
            idle()
            nav("Trade-off")
            # a demo-sized sweep (two ε, one seed): the default grid is the full study
            for label, value in (("ε grid (comma-separated, inf = non-private)", "1, 3"), ("Seeds", "0")):
                box = page.get_by_label(label, exact=True)
                box.fill(value)
                box.press("Enter")
                idle()
            page.get_by_role("button", name=re.compile(r"^Run sweep")).click()
            expect(page.get_by_text("Crossing ε (MAR)").first).to_be_visible()
            shot("6_tradeoff")
            page.emulate_media(color_scheme="dark")
            page.wait_for_timeout(1000)
            shot("6_tradeoff_dark")
            page.emulate_media(color_scheme="light")
            nav("History")
            shot("8_history")
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
