"""The dashboard's defaults and advice, read from one measurement (issue 25 item 1).

``bench/bench_dashboard_defaults.py`` measures dp-cooccurrence with and without secure aggregation
over a grid of rank and ε against ``local`` and ``individual`` on the bundled clinic sample and writes
its chosen default with the reason into ``bench/results/dashboard_defaults.json``. The Federate page's
defaults (method, aggregation, rank, ε), its advice text and its time hints come from that file; the
advice sentence is produced by :func:`dpfed_core.evaluation.verdicts.sweep_verdict_sentence`, the
function the Trade-off page and the CLI use for a sweep, so advice and verdict cannot disagree. When
no DP setting beat ``local`` the advice says so instead of claiming it.

Without the file (an installed package without the benchmark results) the engine's plain defaults
are used and the advice says that nothing was measured: no number is invented.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.verdicts import BASELINE_NAMES, format_epsilon, sweep_verdict_sentence
from dpfed_core.methods import METHODS
from dpfed_core.ui.catalogue import default_method

#: The measurement the defaults come from (committed with the benchmark script).
DEFAULTS_FILE = Path(__file__).resolve().parents[2] / "bench" / "results" / "dashboard_defaults.json"
MEASUREMENT_NAME = "bench/results/dashboard_defaults.md"


@functools.lru_cache(maxsize=4)
def _read(path: str) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def measured_defaults(path: Path | None = None) -> dict | None:
    """The benchmark's document (``defaults``, ``settings``, ``cpu_seconds_per_run`` …), or None."""
    doc = _read(str(path or DEFAULTS_FILE))
    return doc if doc and isinstance(doc.get("defaults"), dict) else None


def _epsilon(value) -> float:
    return math.inf if value in ("inf", None) else float(value)


def chosen_setting(doc: dict) -> dict | None:
    """The measured setting the defaults name (its MAR, verdict counts, single-run words)."""
    d = doc["defaults"]
    for s in doc.get("settings", []):
        if (s["method"], s["aggregation"], int(s["rank"]), _epsilon(s["epsilon"])) == \
                (d["method"], d["aggregation"], int(d["rank"]), _epsilon(d["epsilon"])):
            return s
    return None


def default_config(ds: FederatedDataset, method: str | None = None, path: Path | None = None) -> RunConfig:
    """The Federate page's starting configuration.

    Method, aggregation, rank and ε from the measurement (:data:`DEFAULTS_FILE`) when it names this
    method (or no method is asked for); k about a fifth of the smallest entity's training users (at
    most 20; prototype methods only); mode ``observed`` for ratings (RMSE headline), ``zero`` otherwise
    (ranking headline, as measured); δ = 1e-6.
    """
    sizes = np.bincount(ds.entity_of_user, minlength=ds.n_entities)
    smallest_train = int(max(1, math.floor(sizes.min() * 0.8))) if len(sizes) else 1
    k = int(min(20, max(2, smallest_train // 5)))
    doc = measured_defaults(path)
    measured = doc["defaults"] if doc else None
    if method is None:
        method = measured["method"] if measured and measured["method"] in METHODS else default_method()
    uses_eps = METHODS.get(method) is not None and METHODS[method].uses_epsilon
    from_file = measured is not None and measured["method"] == method
    return RunConfig(
        method=method,
        epsilon=(_epsilon(measured["epsilon"]) if from_file else 1.0) if uses_eps else math.inf,
        delta=float(measured.get("delta", 1e-6)) if from_file else 1e-6,
        k=k,
        rank=int(measured["rank"]) if from_file else 5,
        lam=0.1,
        mode="observed" if ds.value_kind == "ratings" else "zero",
        seed=0,
        max_iter=100,
        aggregation=measured["aggregation"] if from_file else "none",
    )


def default_verdict(doc: dict) -> dict | None:
    """The chosen setting's verdict over seeds, in the shape the verdict sentences read."""
    s = chosen_setting(doc)
    if s is None:
        return None
    return {"H": int(s["H"]), "eps": _epsilon(s["epsilon"]), "metric": s.get("metric", "mar"),
            "mode": s.get("mode", "zero"), "no_test_users": [], "seeds": int(s["seeds"]),
            "baselines": {b: dict(r) for b, r in s["verdict"].items()}}


def advice_text(path: Path | None = None) -> str:
    """The Federate page's advice, generated from the measurement: what the defaults are, why, and
    what they measured against local and individual — or that no DP setting beat local."""
    doc = measured_defaults(path)
    if doc is None:
        return ("No measurement of the defaults was found (bench/results/dashboard_defaults.json); run "
                "bench/bench_dashboard_defaults.py to measure which setting wins on the sample.")
    d = doc["defaults"]
    s = chosen_setting(doc)
    v = default_verdict(doc)
    agg = "with secure aggregation" if d["aggregation"] == "secure" else "without secure aggregation"
    head = (f"Defaults measured on {doc['data']} ({doc['entities']} entities, {len(doc['seeds'])} seeds, "
            f"{doc['mode']} mode, MAR; {MEASUREMENT_NAME}): {d['method']} {agg}, rank {d['rank']}, "
            f"ε = {format_epsilon(_epsilon(d['epsilon']))}. ")
    if s is None or v is None:
        return head + "The measured setting is missing from the file; rerun the benchmark."
    numbers = (f"Mean MAR {s['mar_mean']:.4f} against {s['local_mar_mean']:.4f} for {BASELINE_NAMES['local']} "
               f"and {s['individual_mar_mean']:.4f} for {BASELINE_NAMES['individual']}. ")
    if not d.get("beats_local"):
        return (head + "No measured DP setting beat the entities alone (local) on this sample; these defaults "
                "are the best measured, not a win. " + numbers + sweep_verdict_sentence(v))
    return head + numbers + sweep_verdict_sentence(v) + f" Chosen as {d['reason']}."


def measured_seconds(method: str, ds: FederatedDataset | None = None, path: Path | None = None) -> float | None:
    """A run's expected duration from the benchmark's measured CPU seconds (median) on the sample,
    scaled by the dataset's interactions (the methods are linear in them); None when not measured."""
    doc = measured_defaults(path)
    if doc is None:
        return None
    t = (doc.get("cpu_seconds_per_run") or {}).get(method)
    if not t:
        return None
    scale = 1.0
    if ds is not None and doc.get("interactions"):
        scale = max(1.0, float(ds.X.nnz) / float(doc["interactions"]))
    return float(t["median"]) * scale


def time_hint(method: str, ds: FederatedDataset | None = None, history_seconds: float | None = None,
              path: Path | None = None) -> str:
    """"about 4 s (measured …)" from the last run of this method in this session, else the benchmark;
    never a promise that was not measured."""
    from dpfed_core.ui.jobs import format_seconds

    if history_seconds is not None and history_seconds > 0:
        return f"about {format_seconds(history_seconds)} (the last run of {method} here)"
    t = measured_seconds(method, ds, path)
    if t is None:
        return "duration not measured for this method yet"
    return f"about {format_seconds(t)} (measured on the bundled sample, scaled by the number of interactions)"
