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
