"""Regenerate the committed sample datasets, deterministically.

    python sample_data/generate.py              # rewrite sample_data/synthetic.csv.gz and clinic.csv.gz
    python sample_data/generate.py --out DIR    # write them somewhere else
    python sample_data/generate.py --check      # regenerate in a temporary folder and compare

Both files are long tables (one row per non-zero (user, item) count), gzip-compressed with a fixed
header (mtime 0, no file name) so that the same code, seed and library versions give the same
bytes. See README.md in this folder for what the data mean.
"""
from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # run as a script from a clone: import the repository's engine

from dpfed_core.data.samples import SAMPLES  # noqa: E402
from dpfed_core.data.synthetic import make_clinic, make_poisson  # noqa: E402

#: Seeds of the committed files (changing one changes the data: regenerate and commit both).
SYNTHETIC_SEED = 20200501
CLINIC_SEED = 20200502

#: Generator settings of the synthetic sample: paper §5.1 model at dashboard size.
SYNTHETIC_PARAMS = dict(
    n_users=2000, n_items=200, n_entities=10, rank=5, density=0.05, interaction_sd=2.0,
    item_sd=0.5, entity_effect=0.3, entity_item_sd=0.3, sizes="varied",
    value_max=SAMPLES["synthetic"]["value_max"],
)  # fmt: skip
#: Generator settings of the clinic sample.
CLINIC_PARAMS = dict(
    n_hospitals=30, n_patients=2400, min_hospital=30, intensity=0.4, habit_sd=0.2, off_formulary=0.15,
    value_max=SAMPLES["clinic"]["value_max"],
)  # fmt: skip


def build_synthetic() -> pd.DataFrame:
    """The synthetic sample as a long table: user, item, count, entity."""
    ds = make_poisson(**SYNTHETIC_PARAMS, rng=np.random.default_rng(SYNTHETIC_SEED))
    coo = ds.X.tocoo()
    order = np.lexsort((coo.col, coo.row))  # by user then item: a stable, readable file
    r, c = coo.row[order], coo.col[order]
    return pd.DataFrame(
        {
            "user": ds.user_ids[r],
            "item": ds.item_names[c],
            "count": coo.data[order].astype(np.int64),
            "entity": np.asarray(ds.entity_names)[ds.entity_of_user[r]],
        }
    )


def build_clinic() -> pd.DataFrame:
    """The clinic sample as a long table: patient_id, item, count, hospital, region."""
    return make_clinic(np.random.default_rng(CLINIC_SEED), **CLINIC_PARAMS)


def to_gzip_csv(df: pd.DataFrame) -> bytes:
    """CSV text (UTF-8, '\\n' line ends) gzip-compressed with a fixed header: reproducible bytes."""
    text = df.to_csv(index=False, lineterminator="\n").encode("utf-8")
    return gzip.compress(text, compresslevel=9, mtime=0)


def write_all(out_dir: Path) -> dict[str, Path]:
    """Write both samples into ``out_dir``; return {name: path}."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, build in (("synthetic", build_synthetic), ("clinic", build_clinic)):
        path = out_dir / SAMPLES[name]["file"]
        path.write_bytes(to_gzip_csv(build()))
        out[name] = path
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=HERE, help="output folder (default: sample_data/)")
    ap.add_argument("--check", action="store_true", help="regenerate into a temporary folder and compare")
    args = ap.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = write_all(Path(tmp))
            bad = []
            for name, p in fresh.items():
                committed = HERE / p.name
                if not committed.is_file():
                    bad.append(f"{committed.name} missing")
                elif gzip.decompress(committed.read_bytes()) != gzip.decompress(p.read_bytes()):
                    bad.append(f"{committed.name} differs from a fresh generation")
            for b in bad:
                print(b, file=sys.stderr)
            print("sample files reproduce" if not bad else "sample files are stale: run generate.py")
            return 1 if bad else 0
    for name, path in write_all(args.out).items():
        print(f"{name}: {path} ({path.stat().st_size / 1e3:.0f} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
