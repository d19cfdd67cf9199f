"""End-to-end: the real app (``streamlit run app.py``) in headless Chromium, driven by Playwright.

Every page that computes (Federate, Evaluate, Recommend, Trade-off, Privacy audit) runs the
same configuration twice in one session and once more in a second session (the results cache is shared
between sessions) without an exception; the History page reopens results after a reload and in the
second session; an upload with hostile entity / item names renders them as text and makes the browser
fetch nothing; and no request of the whole walk leaves the machine (icons and fonts are self-hosted).

Uses Debian's ``/usr/bin/chromium`` (Playwright's own browser download is never used); skipped without
it locally, fails in CI. Writes only under pytest's temporary directory (server log, SQLite store);
documentation screenshots are made by ``make screenshots`` (docs/make_screenshots.py), not here.
"""
from __future__ import annotations

import re
import time
from urllib.parse import urlparse

import pytest
from conftest import CHROMIUM_ARGS
from e2e_server import streamlit_server

pytestmark = pytest.mark.e2e
VIEW_W, VIEW_H = 1280, 900


#: The server's store file (set by the fixture): the budget test reads it.
STATE: dict = {}


@pytest.fixture(scope="module")
def server(browser_path, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("e2e")
    STATE["store"] = workdir / "store.sqlite3"
    with streamlit_server(workdir) as (url, t_health):
        yield url, t_health


def _hostile_csv(path):
    """Three hospitals, one of them named with a Markdown image link and an HTML tag."""
    evil = "![x](http://198.51.100.7/pixel.png) <img src=http://198.51.100.7/i.png>"
    rows = ["patient,item,rating,hospital"]  # "rating": the value kind is declared by the column's name
    for h, name in (("A", "Hospital A"), ("B", "Hospital B"), ("C", evil)):
        for i in range(14):
            for j in range(8):
                if (i + 2 * j) % 3:
                    item = f"drug {j}" if j else "[click](http://198.51.100.7/x)"
                    rows.append(f'p{h}{i},"{item}",{(i + j) % 5 + 1},"{name}"')
    path.write_text("\n".join(rows) + "\n")
    return path


class Walker:
    """A person in one browser context (one Streamlit session)."""

    def __init__(self, context, url):
        self.page = context.new_page()
        self.page.set_default_timeout(60_000)
        self.url = url

    def idle(self, timeout=120_000):
        """Until the script run is over (Streamlit's 'running' widget is gone)."""
        self.page.wait_for_timeout(300)
        self.page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=timeout)

    def nav(self, label):
        self.page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=label, exact=True).click()
        self.idle()

    def click(self, name):
        self.page.get_by_role("button", name=name, exact=name == "Open").first.click()
        self.idle(180_000)

    def fill(self, label, value):
        box = self.page.get_by_label(label, exact=True)
        box.fill(value)
        box.press("Enter")
        self.idle()

    def compare_on_evaluate(self):
        """On Evaluate: press the comparison button only if this render asks for it. Under load a
        stale render (the previous page's, or the last Evaluate render whose button was pressed)
        can still be on screen for a moment, so wait for this page's own state first."""
        from playwright.sync_api import expect

        p = self.page
        expect(p.get_by_role("heading", name="Evaluate").first).to_be_visible()
        self.idle()
        asked = p.get_by_text("Not run yet")
        expect(asked.or_(p.get_by_text("the federation is")).first).to_be_visible()
        if asked.count():
            self.click("comparison")

    def clean(self, where):
        n = self.page.locator('[data-testid="stException"]').count()
        assert n == 0, f"a traceback on {where}: {self.page.locator('[data-testid=stException]').first.inner_text()}"


def test_every_computing_page_twice_and_in_a_second_session(server, browser_path, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=300_000)  # one run can take a minute or more on a busy shared machine
    url, _ = server
    host = urlparse(url).netloc
    requests: list[str] = []

    def log_request(req):
        requests.append(req.url)

    def computing_walk(w: Walker, session: str, twice: bool):
        """Federate, Evaluate, Recommend, Trade-off, Privacy audit with fixed settings."""
        p = w.page
        w.nav("Federate")
        for i in range(2 if twice else 1):
            w.click("Run federation")
            expect(p.get_by_text("Done in").first).to_be_visible()
            w.clean(f"Federate run {i + 1} ({session})")
        if twice or session == "second":
            expect(p.get_by_text("(this or another session)").first).to_be_visible()
        for i in range(2 if twice else 1):  # Evaluate computes on a click only
            w.nav("Evaluate")
            w.compare_on_evaluate()
            expect(p.get_by_text("the federation is").first).to_be_visible()
            w.clean(f"Evaluate {i + 1} ({session})")
        for i in range(2 if twice else 1):
            w.nav("Recommend")
            expect(p.get_by_text("Decision support, not clinical advice").first).to_be_visible()
            expect(p.get_by_text("its own model and its own popularity, from this entity's data only").first)\
                .to_be_visible()
            w.clean(f"Recommend {i + 1} ({session})")
        w.nav("Trade-off")
        w.fill("ε grid (comma-separated, inf = non-private)", "1, inf")
        w.fill("Seeds", "0, 1")
        for i in range(2 if twice else 1):
            # grid 2 × seeds 2 + the default reference lines (individual, central, random-v, popularity …)
            expect(p.get_by_role("button", name="Run sweep")).not_to_have_text("Run sweep (4 runs)")
            w.click("Run sweep")
            # a sweep of 14 runs takes minutes on a busy shared machine
            expect(p.get_by_text("Crossing ε (MAR)").first).to_be_visible(timeout=600_000)
            expect(p.get_by_text("the federation is").first).to_be_visible()
            expect(p.get_by_text("Smallest ε on the grid").or_(p.get_by_text("No ε on this grid")).first).to_be_visible()
            w.clean(f"Trade-off run {i + 1} ({session})")
        w.nav("Privacy audit")
        w.fill("ε grid for DP methods", "1")
        runs = p.get_by_label("Runs per class", exact=True)
        runs.fill("20")
        runs.press("Enter")
        w.idle()
        for i in range(2 if twice else 1):
            w.click("Run audit")
            expect(p.get_by_text("ε lower bound").first).to_be_visible()
            w.clean(f"Privacy audit run {i + 1} ({session})")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(browser_path), args=CHROMIUM_ARGS, headless=True)
        try:
            # ---------------------------------------------------------- session 1
            ctx1 = browser.new_context(viewport={"width": VIEW_W, "height": VIEW_H})
            ctx1.on("request", log_request)
            w1 = Walker(ctx1, url)
            w1.page.goto(url)
            expect(w1.page.get_by_text("Where to start")).to_be_visible()
            w1.idle()
            t0 = time.perf_counter()
            computing_walk(w1, "first", twice=True)
            t_first = time.perf_counter() - t0

            # sidebar status on a page that stops early (no run on History is needed)
            w1.nav("History")
            side = w1.page.locator('[data-testid="stSidebar"]')
            expect(side.get_by_text("Last run:")).to_be_visible()
            expect(side.get_by_text("Data:")).to_be_visible()
            # reload: the session is new, the history is not
            w1.page.reload()
            w1.idle()
            w1.nav("History")
            table = w1.page.locator('[data-testid="stDataFrame"]').first
            expect(table).to_be_visible()
            w1.page.get_by_role("combobox", name="Result").click()
            w1.page.get_by_role("option", name="· run ·").first.click()
            w1.idle()
            w1.page.keyboard.press("Escape")
            w1.page.locator('[data-testid="stButton"]').get_by_text("Open", exact=True).click()
            w1.idle()
            expect(w1.page.get_by_text("reopened").first).to_be_visible()
            w1.nav("Recommend")
            expect(w1.page.get_by_text("its own model and its own popularity, from this entity's data only").first)\
                .to_be_visible()
            w1.clean("Recommend after reopening a stored run")

            # ---------------------------------------------------------- session 2 (shared cache)
            ctx2 = browser.new_context(viewport={"width": VIEW_W, "height": VIEW_H})
            ctx2.on("request", log_request)
            w2 = Walker(ctx2, url)
            w2.page.goto(url)
            w2.idle()
            t0 = time.perf_counter()
            computing_walk(w2, "second", twice=False)
            t_second = time.perf_counter() - t0

            # ---------------------------------------------------------- hostile names in an upload
            w2.nav("Data")
            w2.page.get_by_text("Upload CSV / Parquet").click()
            w2.idle()
            w2.page.locator('input[type="file"]').set_input_files(str(_hostile_csv(tmp_path / "evil.csv")))
            expect(w2.page.get_by_text("Map the columns")).to_be_visible()
            # a long table without a declared entity list: accept reading it from the data,
            # or the DP run below is refused
            w2.page.get_by_text("Read the entity list from the data", exact=True).click()
            w2.idle()
            w2.click("Build entities")
            expect(w2.page.get_by_text("Loaded evil.csv").first).to_be_visible()
            # shown as text, never as an image or a link
            expect(w2.page.get_by_text("pixel.png").first).to_be_visible()
            assert w2.page.locator('img[src*="198.51.100.7"]').count() == 0
            assert w2.page.locator('a[href*="198.51.100.7"]').count() == 0
            # the new upload's history is its own
            w2.nav("History")
            expect(w2.page.get_by_text("Nothing stored for this dataset yet")).to_be_visible()
            w2.nav("Federate")
            w2.click("Run federation")
            # a tiny hostile upload may learn nothing: then the run ends with a warning banner, never
            # a green check — either way the run must finish
            expect(w2.page.get_by_text(re.compile(r"Done in|Finished in .*, but learned nothing")).first).to_be_visible()
            w2.page.get_by_role("tab", name="What the server saw").click()
            w2.page.wait_for_timeout(500)
            w2.nav("Evaluate")
            w2.compare_on_evaluate()  # computed on a click only
            expect(w2.page.get_by_text("the federation is").first).to_be_visible()
            assert w2.page.locator('img[src*="198.51.100.7"]').count() == 0
            w2.clean("pages with hostile names")
        finally:
            browser.close()

    off_host = [u for u in requests if urlparse(u).scheme in ("http", "https", "ws", "wss")
                and urlparse(u).netloc != host]
    assert off_host == [], f"requests left the machine: {sorted(set(off_host))[:10]}"
    assert not any("198.51.100.7" in u for u in requests)
    print(f"\nE2E: first session {t_first:.1f} s, second session {t_second:.1f} s, {len(requests)} requests")


def _n_releases() -> int:
    import sqlite3

    path = STATE.get("store")
    if path is None or not path.exists():
        return 0
    with sqlite3.connect(path) as con:
        return int(con.execute("SELECT COUNT(*) FROM releases").fetchone()[0])


def test_opening_every_page_charges_nothing_and_the_sweep_button_states_its_charge(server, browser_path):
    """After one run, visiting every page releases nothing (the store's release count does
    not move), and every button that releases says what it will charge before it runs."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=60_000)
    url, _ = server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(browser_path), args=CHROMIUM_ARGS, headless=True)
        try:
            w = Walker(browser.new_context(viewport={"width": VIEW_W, "height": VIEW_H}), url)
            w.page.goto(url)
            w.idle()
            w.nav("Federate")
            run = w.page.get_by_role("button", name="Run federation")
            # a fresh configuration states its charge; one an earlier test ran is cached and spends nothing
            expect(run).to_contain_text(re.compile(r"spends ε ≈|nothing new spent"))
            before_run = _n_releases()
            w.click("Run federation")
            expect(w.page.get_by_text("Done in").first).to_be_visible()
            after_run = _n_releases()
            assert after_run >= before_run            # a run from the cache (an earlier test) is no new release
            for label in ("Evaluate", "Recommend", "Trade-off", "Privacy audit", "History", "Data", "Federate"):
                w.nav(label)
                w.clean(label)
                if label == "Trade-off":
                    # the default sweep's ε = ∞ point and exact references are non-private: said as such
                    expect(w.page.get_by_role("button", name="Run sweep")).to_contain_text(
                        re.compile(r"spends ε = ∞: non-private releases.*its DP releases alone ε ≈"))
                if label == "Evaluate":
                    buttons = w.page.get_by_role("button", name="comparison")
                    if buttons.count():
                        expect(buttons.first).to_contain_text(re.compile(r"spends ε (≈|= ∞)"))
                if label == "Privacy audit":
                    expect(w.page.get_by_role("button", name="Run audit")).to_contain_text("ε")
            assert _n_releases() == after_run, "merely opening the pages released something"
        finally:
            browser.close()
