"""End-to-end, one walk per user, on a fresh server in headless Chromium: what each reads.

* the analyst: the time a run will take and what it spends are on screen before the click; the
  run's status names its outcome; the headline holds the ranking metrics of a ranking model; the run
  document prints the CLI command that reproduces it; Evaluate states the comparisons' time;
* the compliance officer: the ledger's chart is each entity's composed guarantee; the public report
  opens on the plain-language first screen (who sees what, ε for one person, the coalition figure
  beside the main one) and holds no utility number;
* the clinician: the disclaimer on clinical data, each suggestion explained in words.

Debian's ``/usr/bin/chromium`` (skipped without it locally); writes only under pytest's temporary
directory.
"""
from __future__ import annotations

import re

import pytest
from conftest import CHROMIUM_ARGS
from e2e_server import streamlit_server

pytestmark = pytest.mark.e2e
VIEW_W, VIEW_H = 1280, 900


@pytest.fixture(scope="module")
def chromium(browser_path):
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=300_000)  # a run can take a minute on a busy shared machine
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(browser_path), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


def _opened(browser, workdir):
    """A fresh server on ``workdir`` (its own store and run cache) and a page open on its home page."""
    from contextlib import contextmanager

    from playwright.sync_api import expect

    @contextmanager
    def opened():
        with streamlit_server(workdir) as (url, _):
            ctx = browser.new_context(viewport={"width": VIEW_W, "height": VIEW_H}, accept_downloads=True)
            page = ctx.new_page()
            page.set_default_timeout(300_000)
            page.goto(url)
            expect(page.get_by_text("Where to start")).to_be_visible()
            yield page, workdir
            ctx.close()

    return opened()


@pytest.fixture(scope="module")
def browser_page(chromium, tmp_path_factory):
    with _opened(chromium, tmp_path_factory.mktemp("e2e-users")) as opened:
        yield opened


@pytest.fixture
def fresh_page(chromium, tmp_path_factory):
    """A server of the walk's own: what it reads before its first click must not depend on whether
    another walk, run first on the same worker, already made the same run (then it is cached)."""
    with _opened(chromium, tmp_path_factory.mktemp("e2e-fresh")) as opened:
        yield opened


def _idle(page):
    page.wait_for_timeout(300)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="hidden", timeout=600_000)


def _nav(page, label):
    page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name=label, exact=True).click()
    _idle(page)


def _run_once(page):
    """The session's run: the walks share one server per worker, and the runner may hand a walk to
    another worker (a fresh server and session), so a walk that reads a run makes it when there is none."""
    from playwright.sync_api import expect

    _nav(page, "Federate")
    # the page drawn before its button is read (on a busy machine the status widget can show late)
    expect(page.get_by_role("button", name=re.compile(r"^Run federation"))).to_be_visible()
    if page.get_by_role("button", name=re.compile(r"^Run federation \(spends")).count():
        page.get_by_role("button", name=re.compile(r"^Run federation")).click()
        _idle(page)
    expect(page.get_by_role("tab", name="Privacy ledger")).to_be_visible()


def _no_traceback(page, where):
    assert page.locator('[data-testid="stException"]').count() == 0, f"a traceback on {where}"


def test_analyst_reads_time_and_spend_before_the_click_and_a_reproducible_run(fresh_page):
    from playwright.sync_api import expect

    page, _ = fresh_page
    _nav(page, "Federate")
    # before the click: the time (from the cost model, on these data) and the spend
    expect(page.get_by_text(re.compile(r"Expected time: (about|under) .*predicted for 1 run on these 2,394 users × 143 items"))
           .first).to_be_visible()
    # ε = 3 asked at δ = 1e-6; the charge is that release's ρ stated at the budget's δ = 1e-5 (2.79)
    button = page.get_by_role("button", name=re.compile(r"^Run federation \(spends ε ≈ 2\.79 per entity"))
    expect(button).to_be_visible()
    button.click()
    _idle(page)
    # the outcome, and the headline of a ranking model: MAR, not an RMSE against the counts
    expect(page.get_by_text(re.compile(r"^Done in .*DP per user")).first).to_be_visible()
    _no_traceback(page, "Federate")
    # the metrics are drawn after the outcome line: wait for them before reading (a fast run raced it)
    expect(page.locator('[data-testid="stMetricLabel"]').filter(has_text="MAR").first).to_be_visible()
    metrics = page.locator('[data-testid="stMetricLabel"]').all_inner_texts()
    assert "MAR" in metrics and "NDCG@10" in metrics and not any("RMSE" in m for m in metrics), metrics
    # the same run on the command line
    page.get_by_role("tab", name="Run document").click()
    code = page.locator('[data-testid="stCode"]').first.inner_text()
    assert code.startswith("python -m dpfed_core run --data sample:clinic --method dp-cooccurrence --epsilon 3")
    assert "--aggregation secure" in code and "--max-iter 100" in code
    # the cached result spends nothing, and says so on the button
    expect(page.get_by_role("button", name=re.compile(r"nothing new spent"))).to_be_visible()
    _nav(page, "Evaluate")
    expect(page.get_by_text(re.compile(r"Expected time: .*predicted for \d+ runs?")).first).to_be_visible()
    _no_traceback(page, "Evaluate")


def test_compliance_officer_reads_the_composed_guarantee_and_a_public_report_in_plain_words(browser_page):
    from playwright.sync_api import expect

    page, workdir = browser_page
    _run_once(page)
    page.get_by_role("tab", name="Privacy ledger").click()
    expect(page.get_by_text("ε per entity (composed guarantee)").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"A stage's column is what it would cost alone")).first).to_be_visible()
    assert page.get_by_text("stacked").count() == 0
    _nav(page, "Privacy audit")
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download the public report").click()
    path = workdir / "public.html"
    dl.value.save_as(path)
    report = page.context.new_page()
    report.goto(path.as_uri())
    first = report.locator("section#overview")
    expect(first.get_by_role("heading", name="In plain words")).to_be_visible()
    # the two guarantees as equally prominent figures, ε explained for one person, who sees what
    figures = first.locator(".figure .num").all_inner_texts()
    assert len(figures) == 2 and all(f.startswith("ε = ") for f in figures), figures
    assert "colluding" in first.inner_text() or "collude" in first.inner_text()
    expect(first.get_by_text(re.compile(r"^What ε means for one person\. .* times .*more likely because one "
                                        r"given person"))).to_be_visible()
    expect(first.get_by_text("only the sum over entities", exact=False)).to_be_visible()
    # no number computed on the private data in the public version
    util = report.locator("section#utility").inner_text()
    assert "Withheld from this public version" in util and not re.search(r"0\.\d{4}", util)
    assert report.locator("section#utility table").count() == 0
    report.close()


def test_clinician_reads_each_suggestion_explained_in_words(browser_page):
    from playwright.sync_api import expect

    page, _ = browser_page
    _run_once(page)
    _nav(page, "Recommend")
    expect(page.get_by_text("Decision support, not clinical advice").first).to_be_visible()
    expect(page.get_by_text(re.compile(r"“Why” counts, among up to 40 stays")).first).to_be_visible()
    expect(page.get_by_text("Federated model", exact=False).first).to_be_visible()
    _no_traceback(page, "Recommend")
    # the grids are drawn on a canvas; their accessible copy holds the cells' text
    grids = page.locator('[data-testid="stDataFrame"]')
    cells = []
    for i in range(grids.count()):
        grids.nth(i).scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        cells += grids.nth(i).locator("[role=gridcell], td").all_inner_texts()
    why = [c for c in cells if c.startswith("seen with ")]
    assert len(why) >= 10 and all(re.fullmatch(r"seen with \d+ of \d+ similar stays.*", c) for c in why), cells[:40]
