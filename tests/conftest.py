"""Shared fixtures. Real data lives outside the repository (SPEC §5): ``../shared/data`` beside the
clone, or wherever ``DPFED_SHARED_DATA`` points."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("DPFED_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data not found at {SHARED_DATA} (set DPFED_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def ml100k_dir(shared_data: Path) -> Path:
    return shared_data / "ml-100k"


@pytest.fixture(scope="session")
def eicu_dir(shared_data: Path) -> Path:
    return shared_data / "eicu-demo"


#: Debian's Chromium, driven by Playwright (Playwright's own browser download is never used).
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser_path() -> Path:
    """The Chromium binary; skips without it locally, fails in CI (env ``CI`` set)."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing in CI; .ci/run should have installed chromium")
        pytest.skip(f"{CHROMIUM} not installed (install Debian's chromium to run the e2e test)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("the playwright package is missing in CI (requirements-dev.txt)")
        pytest.skip("playwright is not installed")
    return CHROMIUM


@pytest.fixture(autouse=True, scope="session")
def _private_store(tmp_path_factory):
    """Every test session charges a budget store under a temporary directory, never the user's
    (~/.local/share/dpfed): runs, sweeps and audits record into the store. Session-scoped so that it
    is in place before any module-scoped fixture (e.g. a dashboard server process) starts."""
    root = tmp_path_factory.mktemp("store")
    real = (Path.home() / ".local" / "share" / "dpfed").resolve()
    from dpfed_core.privacy import store as store_mod

    original = store_mod.Store._initialise

    def guarded(self):  # any in-process open of the real home directory's store fails its test
        assert real not in self.path.resolve().parents, f"a test opened the home directory's store {self.path}"
        return original(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DPFED_STORE", str(root / "dpfed.sqlite3"))
        mp.setenv("XDG_DATA_HOME", str(root / "xdg"))
        mp.setattr(store_mod.Store, "_initialise", guarded)
        yield
