"""The committed sample datasets: they load, are small, and reproduce bit-identically from the script."""
from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpfed_core.data.samples import SAMPLE_DIR, SAMPLES, load_sample

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("samples")
    subprocess.run([sys.executable, str(REPO / "sample_data" / "generate.py"), "--out", str(out)],
                   check=True, capture_output=True)  # fmt: skip
    return out


@pytest.mark.parametrize("name", list(SAMPLES))
def test_committed_file_reproduces(regenerated, name):
    committed = (SAMPLE_DIR / SAMPLES[name]["file"]).read_bytes()
    fresh = (regenerated / SAMPLES[name]["file"]).read_bytes()
    # the CSV content must be identical; the gzip bytes too, given the same zlib (fixed header)
    assert gzip.decompress(fresh) == gzip.decompress(committed)
    assert fresh == committed


@pytest.mark.parametrize("name", list(SAMPLES))
def test_sample_small(name):
    assert (SAMPLE_DIR / SAMPLES[name]["file"]).stat().st_size < 1_500_000


def test_synthetic_sample():
    ds = load_sample("synthetic")
    # users whose 200 Poisson draws were all zero have no row in a long table
    assert 1950 <= ds.n_users <= 2000 and ds.n_items == 200 and ds.n_entities == 10
    assert ds.value_kind == "counts" and ds.value_max == 10 and ds.X.max() <= 10
    assert not ds.notes  # nothing dropped or exceeding
    sizes = np.bincount(ds.entity_of_user)
    assert sizes.min() >= 50 and sizes.max() > 3 * sizes.min()  # varied entity sizes


def test_clinic_sample():
    ds = load_sample("clinic")
    assert 25 <= ds.n_entities <= 35 and 2000 <= ds.n_users <= 5000 and 100 <= ds.n_items <= 150
    assert {"potassium chloride", "BMP", "troponin I"} <= set(ds.item_names)
    assert ds.value_max == 20 and ds.X.max() <= 20 and not ds.notes
    assert min(s["users"] for s in ds.summary()) >= 25
    by_region = load_sample("clinic", federation="region")
    assert by_region.entity_names == ["Midwest", "Northeast", "South", "West"]


def test_samples_declare_their_public_catalogue():
    """A generated sample's catalogue is the generator's item list (public by construction), so a DP
    run spends nothing on selecting items and every message has the catalogue's width."""
    import importlib.util

    from dpfed_core.data.loaders import load_data
    from dpfed_core.data.samples import sample_catalogue

    spec = importlib.util.spec_from_file_location("generate", REPO / "sample_data" / "generate.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert len(sample_catalogue("synthetic")) == gen.SYNTHETIC_PARAMS["n_items"]
    for name in ("synthetic", "clinic"):
        ds = load_data(f"sample:{name}")
        assert ds.item_source == "declared"
        assert list(ds.item_names) == sample_catalogue(name)


def test_a_sample_is_marked_generated_whatever_its_federation():
    """The samples hold no one's records: a simulation on them releases nothing about anyone."""
    assert load_sample("synthetic").generated
    by_region = load_sample("clinic", federation="region")
    assert by_region.generated and by_region.name == "sample: clinic by region"


def test_a_file_in_another_folder_under_a_samples_name_is_data_not_a_generated_sample(tmp_path):
    """Only the bundled file (or a byte copy of it) is a generated sample: another folder's file under
    the sample's name may hold anyone's records, so a simulation run on it is charged as a non-private
    release, never recorded as free."""
    import shutil

    name = SAMPLES["synthetic"]["file"]
    (tmp_path / "copy").mkdir()
    shutil.copy(SAMPLE_DIR / name, tmp_path / "copy" / name)
    assert load_sample("synthetic", sample_dir=tmp_path / "copy").generated
    with gzip.open(SAMPLE_DIR / name, "rt") as f:
        lines = f.read().splitlines()
    (tmp_path / "other").mkdir()
    with gzip.open(tmp_path / "other" / name, "wt") as f:   # the same rows, one fewer: someone's export
        f.write("\n".join(lines[:-1]) + "\n")
    ds = load_sample("synthetic", sample_dir=tmp_path / "other")
    assert not ds.generated and ds.n_users > 0
