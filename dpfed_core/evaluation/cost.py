"""How long a run, a comparison or a sweep will take on the loaded data, before it starts, and how
much is left while it runs.

The model is measured, not assumed: ``bench/bench_cost_model.py`` runs each method on data of
different shapes and records the seconds of each stage of a run — round 1 at the entities, the
server, round 2 at the entities, other fitting (the references' own fits) and evaluation — from the
run's own timings. :func:`fit` gives each (method, observation mode, stage) non-negative coefficients
of that stage's cost terms (:data:`FEATURES`: a constant, interactions, entities × items, …);
:func:`predict_run` sums the stages on the loaded data's shape. A comparison is the sum of its runs; a
sweep is every point of its grid — each run after the first on a split at the share of its time the
benchmark measured after another run had made the sites' own fits (:func:`predict_each`). The benchmark's result file states how often a prediction fell
within 2× of the measured time for a run the fit had not seen (leave-one-out).

While a run goes, :class:`RunClock` turns the engine's progress events into the stage being worked
on ("round 1 · hospital 03 (4/30)") and the time left: the predicted seconds of the stages still to
come, scaled by how fast this run has gone so far against its prediction.

Times are wall seconds on the benchmark's machine when nothing else runs, scaled to this machine: the
benchmark records how long the engine's own reference work (:func:`reference_seconds`: the site model's fit
of a fixed matrix) took there, this process times the same work once, and every prediction is multiplied by
the ratio when it lies beyond what one machine's speed varies by (:func:`machine_factor`; the machines this
ran on differed by 1.6–3× for the same code). A busy machine is
slower still, which the stated bound (:func:`busy_factor`) and the running clock (after the first stage)
take into account.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Iterable

import numpy as np

#: The measurement (written by bench/bench_cost_model.py).
COST_FILE = Path(__file__).resolve().parents[2] / "bench" / "results" / "cost_model.json"
STAGES = ("round1", "server", "round2", "other", "evaluate")
STAGE_NAMES = {"round1": "round 1 at each entity", "server": "server", "round2": "round 2 at each entity",
               "other": "fitting", "evaluate": "evaluation"}
#: Cost terms of each stage, as functions of the data's shape (n users, m items, H entities, nnz
#: interactions, t test users) and of the iterations (it, relative to 100): per-entity work over its
#: interactions, its items and item pairs; the server's work over items; evaluation over test users × items.
FEATURES = {
    "round1": ["1", "H", "nnz", "H*m", "H*m*m/1e3", "n*k*m/1e3"],
    "server": ["1", "m", "m*m/1e3", "m*m*m/1e6"],
    "round2": ["1", "H*it", "nnz*it", "H*m*it", "n*it", "n*m*it/1e3"],
    "other": ["1", "H*it", "nnz*it", "n*it", "H*m*it", "n*m*it/1e3"],
    "evaluate": ["1", "t*m/1e3", "nnz"],
}
#: Noise coordinates a DP run draws, as a function of the data's shape: every number an entity
#: sends in round 1 carries its own noise (a catalogue's bucket counts, popularity, co-occurrence
#: entries, prototype sums). Production draws them with OpenDP's exact samplers, far slower than the
#: simulation's NumPy; a run's production time is its simulation time plus these coordinates times
#: the sampler's measured µs per coordinate (bench/results/samplers.json).
#: s: the items whose releases are shared — every item of a declared catalogue, else the DP
#: selection's expected count (:mod:`dpfed_core.evaluation.catalogue_forecast`, the estimate the
#: CLI and the pages print before a run); c: s capped at the co-occurrence release's item cap
#: (dp-cooccurrence's ``max_items``); sel: 1 when a DP selection runs (each entity's share of its
#: bucket histogram is noised too).
NOISE_FEATURES = ["H", "H*s", "H*c*c", "H*k*m", "H*sel"]
#: The co-occurrence release's item cap when the configuration does not set one (dp-cooccurrence's default).
CO_OCCURRENCE_CAP = 600
SAMPLERS_FILE = COST_FILE.parent / "samplers.json"
#: What decides whether two runs of one command share the sites' own fits (``models.blend.SITE_FITS``, kept
#: in the process): the split (seed, test fraction, entries hidden per user) and the own model's settings.
SHARED_FIT_SETTINGS = ("seed", "test_fraction", "n_hidden", "rank", "lam", "mode", "max_iter")
#: A method reads (and so makes) the sites' own fits when, run after another's, it took at most this share of
#: its time alone in the benchmark.
SHARED_FIT_GAIN = 0.9
#: µs per coordinate of OpenDP's float Gaussian when the samplers' measurement is missing: its one-thread
#: cost there (11.6 at 10^4 coordinates; above 2^15, the draw runs on two threads).
DEFAULT_US_PER_COORD = 12.0


def noise_coordinates(messages: list[dict]) -> int:
    """Numbers the entities sent the server in round 1 (each drawn with its own noise in a DP run)."""
    total = 0
    for m in messages or []:
        if m.get("receiver") == "server" and int(m.get("round", 0)) == 1:
            total += int(np.prod([int(x) for x in (m.get("shape") or [1])]))
    return total


def drawn_coordinates(method: str, coordinates: float, shape: dict) -> float:
    """Of ``coordinates`` numbers the entities send in round 1, how many a production run in this
    process draws noise for: every one, except for a method whose shares' noise is drawn once per sum
    (:func:`~dpfed_core.federation.summable.draws_noise_once`: one vector for the H entities' shares)."""
    from dpfed_core.federation.summable import draws_noise_once

    return coordinates / max(float(shape["H"]), 1.0) if draws_noise_once(method) else coordinates


#: Times the reference work is repeated; the fastest counts (other work on the machine only slows it; on
#: a shared virtual machine one repeat varies by ±50 %, the fastest of seven by ~±15 %).
REFERENCE_REPEATS = 7
#: The bounds of :func:`machine_factor`: beyond them the ratio says more of the moment than of the machine.
MACHINE_FACTOR_RANGE = (0.125, 8.0)
#: Ratios of reference work one machine gives by itself: the same work timed every 0.3 s in one process took
#: 20–39 ms on the 2-core virtual machine the benchmarks ran on, and one process's timing (the fastest of
#: :data:`REFERENCE_REPEATS`) against the benchmark's median ranged 0.71–1.3. Inside this band the hints stay in
#: the benchmark's seconds; the machines this project ran on differed by 1.6–3× for the same code.
SAME_MACHINE_BAND = (2 / 3, 1.5)


def _reference_matrix():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    return sp.random(400, 300, density=0.05, format="csr", random_state=rng,
                     data_rvs=lambda k: rng.integers(1, 6, k).astype(np.float64))


@functools.lru_cache(maxsize=1)
def reference_seconds() -> float:
    """This machine's :func:`time_reference_work`, timed once per process (the benchmarks record the median
    of several timings over their course with their measurements)."""
    return time_reference_work()


def time_reference_work() -> float:
    """CPU seconds this machine takes for a fixed piece of the engine's own work: the site model's HALS
    fit (:func:`~dpfed_core.models.factorization.fit_nmf`) of a fixed 400 × 300 sparse matrix of ratings at
    rank 8, 8 iterations in observed mode and 30 in zero mode (no stopping rule, so the work is the same
    everywhere), BLAS on one thread as the fits run it; the fastest of :data:`REFERENCE_REPEATS` (~20–35 ms
    each on a 2-core virtual machine whose speed varies by ±30 % from one second to the next, as the runs'
    own do)."""
    import time

    from dpfed_core.models.factorization import fit_nmf, single_threaded_blas

    X = _reference_matrix()
    best = math.inf
    with single_threaded_blas():
        for _ in range(REFERENCE_REPEATS):
            t0 = time.process_time()
            fit_nmf(X, 8, mode="observed", max_iter=8, tol=0.0, rng=np.random.default_rng(1))
            fit_nmf(X, 8, mode="zero", max_iter=30, tol=0.0, rng=np.random.default_rng(1))
            best = min(best, time.process_time() - t0)
    return max(best, 1e-6)


def machine_factor(doc: dict | None) -> float:
    """How many times longer this machine takes than the one that measured ``doc`` (a benchmark's result
    document): the ratio of :func:`reference_seconds` here to the one the document records
    (``machine.reference_s``), within :data:`MACHINE_FACTOR_RANGE`; 1 when the document records none or the
    ratio lies within what one machine's speed varies by (:data:`SAME_MACHINE_BAND`)."""
    try:
        theirs = float(((doc or {}).get("machine") or {})["reference_s"])
    except (KeyError, TypeError, ValueError):
        return 1.0
    if not math.isfinite(theirs) or theirs <= 0:
        return 1.0
    ratio = reference_seconds() / theirs
    if SAME_MACHINE_BAND[0] <= ratio <= SAME_MACHINE_BAND[1]:
        return 1.0
    lo, hi = MACHINE_FACTOR_RANGE
    return float(min(max(ratio, lo), hi))


def speed_note(path: Path | None = None) -> str:
    """What the time hints were scaled by, when they were (:func:`machine_factor`): "scaled to this machine:
    it took 2.3× the benchmark machine's time for the engine's reference work"; empty otherwise."""
    f = machine_factor(_load(str(path or COST_FILE)))
    if f == 1.0:
        return ""
    return (f"scaled to this machine: it took {f:.2g}× the benchmark machine's time for the engine's "
            f"reference work")


@functools.lru_cache(maxsize=2)
def us_per_coordinate(path: str | None = None) -> float:
    """OpenDP's float Gaussian, µs per noise coordinate on this machine, from the samplers' benchmark
    (the slowest of the samplers the methods use: a bound for the Laplace ones), scaled by
    :func:`machine_factor` of its document."""
    try:
        doc = json.loads(Path(path or SAMPLERS_FILE).read_text(encoding="utf-8"))
        vals = [r["opendp_us_per_coord"] for r in doc["samplers"] if "Gaussian" in r["sampler"]]
        return float(np.median(vals)) * machine_factor(doc) if vals else DEFAULT_US_PER_COORD
    except (OSError, ValueError, KeyError, TypeError):
        return DEFAULT_US_PER_COORD


#: Below this a prediction is said as "under 1 s": fixed costs (threads, imports) dominate there.
FLOOR_SECONDS = 1.0


def format_seconds(s: float) -> str:
    """Seconds for people: "12 s", "3 min 05 s", "1 h 02 min"."""
    # decided on the rounded seconds, so 59.6 s reads "1 min 00 s" as 60.2 s does, not "60 s"
    if round(s) < 60:
        return f"{s:.0f} s"
    m, sec = divmod(int(round(s)), 60)
    return f"{m} min {sec:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def shape_of(ds, config=None) -> dict:
    """The shape of a dataset the cost terms read (sizes only; a local estimate, nothing released).
    With a run's ``config`` also the items its releases share (``s``) and whether a DP catalogue
    selection runs (``sel``): a run without a declared catalogue shares the selection's expected
    items, a declared catalogue its own items — not all of the data's."""
    out = {"n": int(ds.n_users), "m": int(ds.n_items), "H": int(ds.n_entities), "nnz": int(ds.X.nnz)}
    if config is None:
        return out
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue

    from dpfed_core.errors import DpfedError

    try:
        forecast = forecast_catalogue(ds, config)
    except DpfedError:  # a configuration the run itself will refuse, naming why: no selection to time
        forecast = None
    selected = forecast is not None and forecast.expected_items is not None
    # a declared catalogue that leaves some of the data's items out shares its own items only
    declared = ds.shared_columns
    shares = out["m"] if declared is None else len(declared)
    return {**out, "s": float(forecast.expected_items) if selected else float(shares), "sel": int(selected)}


def run_shapes(ds, configs: Iterable) -> list[dict]:
    """:func:`shape_of` for each of these runs (the selection's forecast computed once per setting
    that moves it)."""
    seen: dict = {}
    out = []
    for c in configs:
        d = c.to_dict() if hasattr(c, "to_dict") else dict(c)
        key = (d.get("method"), str(d.get("epsilon")), str(d.get("delta")), d.get("aggregation"),
               d.get("max_dropouts"))
        if key not in seen:
            seen[key] = shape_of(ds, c)
        out.append(seen[key])
    return out


def _terms(stage: str, shape: dict, config: dict | None = None) -> np.ndarray:
    cfg = config or {}
    names = NOISE_FEATURES if stage == "noise" else FEATURES[stage]
    shared = float(shape.get("s", shape["m"]))
    params = {}
    for name in ("prototype_params", "method_params", "params"):  # a RunConfig's dict, or a bench point's
        if isinstance(cfg.get(name), dict):
            params.update(cfg[name])
    cap = params.get("max_items", CO_OCCURRENCE_CAP)
    cap = float(cap) if isinstance(cap, (int, float)) and not isinstance(cap, bool) else CO_OCCURRENCE_CAP
    env = {"n": float(shape["n"]), "m": float(shape["m"]), "H": float(shape["H"]), "nnz": float(shape["nnz"]),
           "t": float(shape["n"]) * float(cfg.get("test_fraction", 0.2)),
           "it": float(cfg.get("max_iter", 100)) / 100.0, "k": float(cfg.get("k", 10)),
           "s": shared, "c": min(shared, cap), "sel": float(shape.get("sel", 0))}
    return np.array([eval(f, {"__builtins__": {}}, env) for f in names], dtype=float)  # noqa: S307


def stage_seconds(timings: dict, wall: float) -> dict:
    """A run's measured seconds per stage from its document's ``timings``; ``other`` is the rest of
    ``wall`` (the references' own fits, the split), so the stages add up to ``wall``."""
    t = {k: float(v) for k, v in (timings or {}).items() if isinstance(v, (int, float))}
    r1 = sum(v for k, v in t.items() if k.startswith("round1_") and k != "round1_total")
    out = {"round1": r1, "server": t.get("server_fit", 0.0), "round2": t.get("round2_local_fit", 0.0),
           "evaluate": t.get("evaluate", 0.0)}
    out["other"] = max(float(wall) - sum(out.values()), 0.0)
    return out


def _key(method: str, mode: str) -> str:
    return f"{method}|{mode}"


def fit(points: list[dict]) -> dict:
    """Per (method, mode, stage): non-negative coefficients of :data:`FEATURES` fitted to the measured
    stage seconds, each point weighted by 1 / its seconds (relative error), columns scaled to unit
    size. A stage that took no time in any point gets zeros."""
    from scipy.optimize import nnls

    groups: dict[str, list[dict]] = {}
    for p in points:
        groups.setdefault(_key(p["method"], p["mode"]), []).append(p)
    model = {}
    for key, pts in groups.items():
        model[key] = {}
        for stage in STAGES:
            y = np.array([p["stages"].get(stage, 0.0) for p in pts], dtype=float)
            if not np.any(y > 1e-3):
                model[key][stage] = [0.0] * len(FEATURES[stage])
                continue
            A = np.array([_terms(stage, p["shape"], {"max_iter": p.get("max_iter", 100), "k": p.get("k", 10)})
                          for p in pts])
            w = 1.0 / np.maximum(y, 1.0)  # relative error above 1 s; below it fixed costs are noise
            scale = np.maximum(np.abs(A * w[:, None]).max(axis=0), 1e-12)
            coef, _ = nnls((A * w[:, None]) / scale, y * w)
            model[key][stage] = (coef / scale).tolist()
        # The noise a run draws and what drawing it in production costs do not depend on the
        # observation mode: both are fitted on the method's runs in every mode, so a mode measured
        # on few shapes (observed mode: ratings) does not extrapolate them from one data set.
        same_method = [p for p in points if p["method"] == pts[0]["method"]]
        coords = np.array([float(p.get("noise_coordinates", 0)) for p in same_method])
        if np.any(coords > 0):
            A = np.array([_terms("noise", p["shape"], {"k": p.get("k", 10), "params": p.get("params", {})})
                          for p in same_method])
            w = 1.0 / np.maximum(coords, 1.0)
            scale = np.maximum(np.abs(A * w[:, None]).max(axis=0), 1e-12)
            coef, _ = nnls((A * w[:, None]) / scale, coords * w)
            model[key]["noise"] = (coef / scale).tolist()
        shared = shared_fractions(pts)
        if shared is not None:
            model[key]["shared"] = shared
        prod = [p for p in same_method if "production_wall" in p]
        if prod:
            # what production noise adds to round 1: per noise coordinate (the sampler) and per entity
            # (its mechanisms' set-up: calibration, selection), fitted on the runs measured both ways
            y = np.array([max(p["production_stages"]["round1"] - p["stages"]["round1"], 0.0) for p in prod])
            A = np.array([[drawn_coordinates(p["method"], float(p.get("noise_coordinates", 0)), p["shape"]) * 1e-6,
                           float(p["shape"]["H"]), 1.0] for p in prod])
            w = 1.0 / np.maximum(y, 1.0)
            scale = np.maximum(np.abs(A * w[:, None]).max(axis=0), 1e-12)
            coef, _ = nnls((A * w[:, None]) / scale, y * w)
            model[key]["production"] = (coef / scale).tolist()
    return model


def shared_fractions(points: list[dict]) -> dict | None:
    """Per stage, the share of its time alone a run takes right after another run of the command made the
    sites' own fits (the points' ``shared_stages``, measured by the benchmark after a dp-cooccurrence run on
    the same split and own-model settings): the sum over the points of the seconds after, over the sum
    alone, at most 1; None when no point was measured so. A stage under 10 ms in every point keeps 1."""
    pts = [p for p in points if isinstance(p.get("shared_stages"), dict)]
    if not pts:
        return None
    out = {}
    for stage in STAGES:
        alone = sum(float(p["stages"].get(stage, 0.0)) for p in pts)
        after = sum(float(p["shared_stages"].get(stage, 0.0)) for p in pts)
        out[stage] = min(after / alone, 1.0) if alone > 0.01 * len(pts) else 1.0
    alone = sum(sum(p["stages"].values()) for p in pts)
    out["total"] = min(sum(sum(p["shared_stages"].values()) for p in pts) / alone, 1.0) if alone > 0 else 1.0
    return out


def leave_one_out(points: list[dict]) -> list[float | None]:
    """Each point's total predicted by the model fitted without it (None when no other point of its
    method and mode remains)."""
    out = []
    for i, p in enumerate(points):
        rest = [q for j, q in enumerate(points) if j != i]
        model = fit(rest)
        pred = _predict(model, p["method"], p["mode"], p["shape"], {"max_iter": p.get("max_iter", 100),
                                                                     "k": p.get("k", 10)})
        out.append(None if pred is None else sum(pred.values()))
    return out


def _predict(model: dict, method: str, mode: str, shape: dict, config: dict | None = None,
             factor: float = 1.0) -> dict | None:
    coef = model.get(_key(method, mode)) or model.get(_key(method, "zero" if mode == "observed" else "observed"))
    if coef is None:
        return None
    out = {stage: factor * max(float(np.dot(coef[stage], _terms(stage, shape, config))), 0.0) for stage in STAGES}
    return _with_production_noise(out, coef, shape, {**(config or {}), "method": method}, factor)


def _with_production_noise(stages: dict, coef: dict, shape: dict, config: dict | None, factor: float = 1.0) -> dict:
    """Round 1 of a production DP run (not a simulation, finite ε) plus its noise draws' time (the
    measured part in the benchmark machine's seconds times ``factor``)."""
    c = config or {}
    eps = c.get("epsilon", math.inf)
    eps = math.inf if eps in (None, "inf") else float(eps)
    if "noise" not in coef or c.get("simulation", True) or not math.isfinite(eps):
        return stages
    coords = drawn_coordinates(c.get("method", ""), max(float(np.dot(coef["noise"], _terms("noise", shape, c))), 0.0),
                               shape)
    if "production" in coef:  # measured: seconds per million coordinates, per entity, fixed
        a, b, c0 = coef["production"]
        extra = factor * (a * coords * 1e-6 + b * float(shape["H"]) + c0)
        # never below the sampler's own cost of the coordinates (measured by bench_samplers)
        extra = max(extra, coords * us_per_coordinate() * 1e-6)
    else:
        extra = coords * us_per_coordinate() * 1e-6
    return {**stages, "round1": stages["round1"] + extra}


@functools.lru_cache(maxsize=2)
def _load(path: str) -> dict | None:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc.get("model"), dict) else None


def measured_model(path: Path | None = None) -> dict | None:
    """The fitted model of the benchmark's result file, or None without one."""
    doc = _load(str(path or COST_FILE))
    return doc["model"] if doc else None


def _measured_here(doc: dict, method: str, mode: str, shape: dict, c: dict) -> dict | None:
    """The mean measured stages of this very run (method, mode, data shape, iterations, k) when the
    benchmark ran it: the bundled samples, the eICU demo and MovieLens 100K with their defaults."""
    # the same data with a declared catalogue and without one (a DP selection, sel = 1) are other runs
    sizes = ("n", "m", "H", "nnz")
    same = [p for p in doc.get("points", []) if p["method"] == method and p["mode"] == mode
            and all(p["shape"].get(f) == shape.get(f) for f in sizes)
            and int(p["shape"].get("sel", 0)) == int(shape.get("sel", 0))
            and int(p.get("max_iter", 100)) == int(c.get("max_iter", 100))
            and (p.get("k") is None or int(p["k"]) == int(c.get("k", p["k"])))]
    if not same:
        return None
    return {s: float(np.mean([p["stages"].get(s, 0.0) for p in same])) for s in STAGES}


def predict_run(shape: dict, config, path: Path | None = None) -> dict | None:
    """Predicted seconds per stage of one run of ``config`` on data of ``shape`` on this machine: the
    benchmark's measurement of this very run when it made one, else the fitted model, times
    :func:`machine_factor`; None when the method was not measured."""
    doc = _load(str(path or COST_FILE))
    if doc is None:
        return None
    c = config.to_dict() if hasattr(config, "to_dict") else dict(config)
    mode = c.get("mode", "zero")
    f = machine_factor(doc)
    here = _measured_here(doc, c["method"], mode, shape, c)
    if here is None:
        return _predict(doc["model"], c["method"], mode, shape, c, f)
    coef = doc["model"].get(_key(c["method"], mode)) or {}
    return _with_production_noise({s: f * v for s, v in here.items()}, coef, shape, c, f)


def _each(shape: dict | list[dict], configs: list) -> list[dict]:
    """One shape per run: ``shape`` itself for every run, or the list :func:`run_shapes` made."""
    if isinstance(shape, dict):
        return [shape] * len(configs)
    if len(shape) != len(configs):
        raise ValueError(f"{len(shape)} shapes for {len(configs)} runs")
    return list(shape)


def shares_fits(model: dict | None, method: str, mode: str) -> dict | None:
    """The method's measured fractions of its time alone after another run's own fits
    (:func:`shared_fractions`) when it reads those fits — it gained in the benchmark —, else None."""
    coef = (model or {}).get(_key(method, mode)) or {}
    shared = coef.get("shared")
    return shared if isinstance(shared, dict) and float(shared.get("total", 1.0)) <= SHARED_FIT_GAIN else None


def after_shared_fits(stages: dict, shared: dict) -> dict:
    """A run's predicted ``stages`` when an earlier run of its command made the sites' own fits: each stage at
    its method's measured share (``shared``, from :func:`shares_fits`)."""
    return {stage: v * float(shared.get(stage, 1.0)) for stage, v in stages.items()}


def predict_each(shape: dict | list[dict], configs: Iterable, path: Path | None = None) -> list[dict | None]:
    """Predicted seconds per stage of each of these runs one after the other (a run, a comparison, a sweep;
    None for a method not measured). The runs of one command share the sites' own fits: a run after one that
    made them — an earlier run of the list on the same split and own-model settings
    (:data:`SHARED_FIT_SETTINGS`) whose method reads them — is predicted at its measured share of its time
    alone (:func:`shared_fractions`), as the benchmark timed it after a dp-cooccurrence run."""
    doc = _load(str(path or COST_FILE))
    model = doc["model"] if doc else None
    configs = list(configs)
    made: set[tuple] = set()
    out = []
    for sh, c in zip(_each(shape, configs), configs):
        p = predict_run(sh, c, path)
        d = c.to_dict() if hasattr(c, "to_dict") else dict(c)
        shared = shares_fits(model, d["method"], d.get("mode", "zero"))
        key = tuple(str(d.get(k)) for k in SHARED_FIT_SETTINGS)
        if p is not None and shared is not None and key in made:
            p = after_shared_fits(p, shared)
        if shared is not None:
            made.add(key)
        out.append(p)
    return out


def predict_runs(shape: dict | list[dict], configs: Iterable, path: Path | None = None) -> float | None:
    """Predicted seconds of several runs one after the other (a comparison, a sweep: :func:`predict_each`);
    None when any of them was not measured. ``shape``: one for all runs, or one per run (:func:`run_shapes`)."""
    each = predict_each(shape, configs, path)
    return None if any(p is None for p in each) else sum(sum(p.values()) for p in each)


def sweep_configs(config, epsilons: Iterable[float], seeds: Iterable[int], references: Iterable[str],
                  done: Iterable = ()) -> list:
    """The runs of a sweep, as :func:`dpfed_core.evaluation.experiments.sweep` makes them (its one job
    list, :func:`~dpfed_core.evaluation.experiments.sweep_jobs`, per seed): the method at every ε (once
    for a method without ε), each DP reference at every ε, every other reference once. ``done``: job
    keys a resumed document already holds — kept, not run again, so not predicted."""
    from dpfed_core.evaluation.experiments import job_key, sweep_jobs

    done = set(done)
    jobs = sweep_jobs(config.method, epsilons, references)
    return [config.replace(method=m, epsilon=e, seed=int(s)) for s in seeds for m, e in jobs
            if job_key(m, e, int(s), config.method) not in done]


def estimate_text(seconds: float | None) -> str:
    """"about 12 s", "under 2 s" (fixed costs dominate below :data:`FLOOR_SECONDS`), or "duration not
    measured for this method yet"."""
    if seconds is None:
        return "duration not measured for this method yet"
    if seconds < FLOOR_SECONDS:
        return f"under {FLOOR_SECONDS:g} s"
    return f"about {format_seconds(seconds)}"


def busy_factor() -> float:
    """How much slower than measured a run may be now: the 1-minute load average over the cores
    this process may use (1 on an idle machine, at most 4). Other work on the machine shares its
    cores; the measurements were taken with some of it running too, so this is a bound, not a fit."""
    import os

    try:
        load = os.getloadavg()[0]
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    except (OSError, AttributeError):
        return 1.0
    return float(min(max(load / max(cores, 1), 1.0), 4.0))


def estimate_with_load(seconds: float | None) -> str:
    """:func:`estimate_text`, and how long it may take while the machine is busy (when it is)."""
    text = estimate_text(seconds)
    f = busy_factor()
    if seconds is not None and f >= 1.5 and seconds * f >= FLOOR_SECONDS:
        text += f" (up to {format_seconds(seconds * f)} while this machine is as busy as now: other work uses its cores)"
    return text


def within_2x(predicted: float, measured: float) -> bool:
    """The claim a prediction makes, checked: within a factor 2 of the measurement, where "under
    1 s" holds for anything measured under 2 s."""
    if predicted < FLOOR_SECONDS:
        return measured < 2 * FLOOR_SECONDS
    return 0.5 <= predicted / max(measured, 1e-9) <= 2.0


class RunClock:
    """The stage a computation is in and the time left, from the engine's progress events and the
    predicted seconds of each stage of each of its runs (``plan``: one :func:`predict_run` per run, in
    order; a run, a comparison's runs, a sweep's points). Written by the computation's thread, read
    by the page's or the terminal's."""

    def __init__(self, plan: list[dict | None], labels: list[str] | None = None) -> None:
        self.plan = list(plan) or [None]
        self.labels = list(labels or [])
        self.stage = "starting"
        self.where = "starting"
        self.done_runs = 0
        self._stage_frac = 0.0
        self._stage_key: str | None = None

    @property
    def measured(self) -> bool:
        return all(p is not None for p in self.plan)

    @property
    def total(self) -> float | None:
        return sum(sum(p.values()) for p in self.plan) if self.measured else None

    def event(self, event: str, **info) -> None:
        pos = f" ({info['index'] + 1}/{info['total']})" if "index" in info and info.get("total") else ""
        ent = info.get("entity")
        frac = None
        if "index" in info and info.get("total"):
            frac = (int(info["index"]) + (1 if event.endswith("_done") else 0)) / float(info["total"])
        if event.startswith("round1") or event == "catalogue_start":
            self._set("round1", f"round 1 · {ent}{pos}" if ent else "round 1 (DP item selection)", frac)
        elif event.startswith("server") or event in ("broadcast", "public_broadcast"):
            self._set("server", "server (post-processing, no privacy cost)",
                      1.0 if event in ("server_done", "broadcast") else 0.0)
        elif event.startswith("round2"):
            self._set("round2", f"round 2 · {ent}{pos}" if ent else "round 2", frac)
        elif event == "individual_entity":
            self._set("other", f"fitting · {ent}{pos}" if ent else "fitting", frac)
        elif event == "central_start":
            self._set("other", "fitting the pooled model", 0.0)
        elif event == "evaluate_start":
            self._set("evaluate", "evaluation on the held-out entries", 0.0)
        elif event == "evaluate_done":
            self._next_run(self.done_runs + 1)
        elif event == "sweep_step":
            self._next_run(int(info.get("done", self.done_runs + 1)))
            nxt = self.labels[self.done_runs] if self.done_runs < len(self.labels) else ""
            self.where = f"point {self.done_runs + 1}/{len(self.plan)}" + (f": {nxt}" if nxt else "")

    def _next_run(self, done: int) -> None:
        self.done_runs = min(done, len(self.plan))
        self._stage_key, self._stage_frac = None, 0.0
        nxt = self.labels[self.done_runs] if self.done_runs < len(self.labels) else ""
        self.where = f"next: {nxt}" if nxt else ""

    def _set(self, stage: str, where: str, frac: float | None) -> None:
        if stage != self._stage_key:
            self._stage_key, self._stage_frac = stage, 0.0
        self.stage, self.where = STAGE_NAMES[stage], where
        if frac is not None:
            self._stage_frac = max(self._stage_frac, min(float(frac), 1.0))

    def predicted_done(self) -> float | None:
        """Predicted seconds of the work done so far: finished runs, the stages of this run before
        the current one, and the current stage's finished share."""
        if not self.measured:
            return None
        done = sum(sum(p.values()) for p in self.plan[:self.done_runs])
        if self._stage_key is not None and self.done_runs < len(self.plan):
            cur = self.plan[self.done_runs]
            for s in STAGES:
                if s == self._stage_key:
                    done += cur[s] * self._stage_frac
                    break
                done += cur[s]
        return done

    def fraction(self) -> float | None:
        d, total = self.predicted_done(), self.total
        if d is None or not total:
            return None
        return min(d / total, 0.99)

    def seconds_left(self, elapsed: float) -> float | None:
        """Predicted seconds still to go, scaled by this computation's speed so far (once a tenth of
        the predicted work is done; the factor clamped to 4× either way); at least the overrun when
        it is already slower than predicted."""
        d, total = self.predicted_done(), self.total
        if d is None or total is None:
            return None
        left = max(total - d, 0.0)
        if d >= 0.1 * total and d > 0:
            left *= min(max(elapsed / d, 0.25), 4.0)
        return left

    def text(self, elapsed: float) -> str:
        """e.g. "round 1 · hospital 03 (4/30) · 3 s elapsed · about 5 s left"."""
        left = self.seconds_left(elapsed)
        head = f"run {min(self.done_runs + 1, len(self.plan))}/{len(self.plan)} · " \
            if len(self.plan) > 1 and not self.where.startswith("point") else ""
        eta = "time left not predicted (method not measured)" if left is None else \
            f"about {format_seconds(left)} left"
        return f"{head}{self.where or self.stage} · {format_seconds(elapsed)} elapsed · {eta}"


#: The deployment benchmark (bench/bench_deployment.py): in-process against deployed seconds per run.
DEPLOYMENT_FILE = COST_FILE.parent / "deployment.json"


def deployment_overhead(n_entities: int, engine: str = "deployment", path: Path | None = None
                        ) -> tuple[float, float, float] | None:
    """Seconds Flower adds to a run of ``n_entities`` entities under ``engine`` (starting and stopping its
    processes, the messages, every secure sum's key exchange): ``(seconds, a, b)`` of the least-squares
    line a + b·H through the deployment benchmark's (deployed − in-process) wall seconds of that engine,
    every method's rows together, times :func:`machine_factor` of its document. None without the
    benchmark's rows."""
    try:
        doc = json.loads(Path(path or DEPLOYMENT_FILE).read_text(encoding="utf-8"))
        rows, f = doc["rows"], machine_factor(doc)
        pts = np.array([(float(r["entities"]), float(r["deployment_s"]) - float(r["in_process_s"]))
                        for r in rows if r.get("engine") == engine], dtype=float)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if pts.shape[0] < 2 or np.unique(pts[:, 0]).size < 2:
        return None
    b, a = f * np.polyfit(pts[:, 0], pts[:, 1], 1)
    return max(float(a + b * int(n_entities)), 0.0), float(a), float(b)


def deployment_measured_on(path: Path | None = None) -> str | None:
    """The day the deployment benchmark ran (``YYYY-MM-DD``), or None when its document does not say.
    Its overhead is Flower's processes and messages, measured with the deployment's code and Flower's
    pins, which the engine fingerprint leaves out: the estimate says when it was measured instead."""
    try:
        date = json.loads(Path(path or DEPLOYMENT_FILE).read_text(encoding="utf-8"))["machine"]["date"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return date[:10] if isinstance(date, str) and len(date) >= 10 else None


def deployment_estimate(dataset, config, engine: str = "deployment") -> str:
    """How long a run of ``config`` on Flower will take, stated before anything starts (``deploy-local``
    and the dashboard's Flower panel): the in-process run's prediction (the measured cost model) plus
    what Flower adds for this many entities (:func:`deployment_overhead`)."""
    inproc = clock_for_runs(run_shapes(dataset, [config]), [config]).total
    extra = deployment_overhead(dataset.n_entities, engine)
    head = f"{config.method} on Flower ({engine} engine)"
    if inproc is None or extra is None:
        return f"{head}: time not predicted ({'the method was not measured' if inproc is None else 'no deployment benchmark'})"
    run_s = "under 1 s" if inproc < 1 else format_seconds(inproc)
    day = deployment_measured_on()
    when = f" of {day}" if day else ""
    return (f"{head}: {estimate_with_load(inproc + extra[0])}; predicted: the in-process run's {run_s} "
            f"(measured cost model) plus Flower's start-up and messages for {dataset.n_entities} entities, "
            f"{format_seconds(extra[0])} ({extra[1]:.1f} s + {extra[2]:.2f} s per entity, fitted on the deployment "
            f"benchmark's runs{when})")


def clock_for_runs(shape: dict | list[dict], configs: list, path: Path | None = None) -> RunClock:
    """A :class:`RunClock` for these runs one after the other (``shape``: one for all, or one per run)."""
    configs = list(configs)
    return RunClock(predict_each(shape, configs, path), [_label(c) for c in configs])


def _label(c) -> str:
    eps = "" if not math.isfinite(float(c.epsilon)) else f" ε = {float(c.epsilon):g}"
    return f"{c.method}{eps}, seed {c.seed}"
