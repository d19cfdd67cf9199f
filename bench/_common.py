"""Shared helpers of the benchmark scripts (not a benchmark itself: run_all.py runs ``bench_*.py``).

* :func:`synthetic` — the paper's §5.1 Poisson data from :mod:`dpfed_core.data.synthetic` when present,
  else a local stand-in with the same recipe (noted in every result that used it).
* :func:`outputs` — result file names (``<name>.json|md|png``, ``<name>_quick.*`` in quick mode).
* :func:`md_table`, :func:`fig`, :func:`save_fig` — small markdown tables and small PNGs (matplotlib).
* :func:`machine` — the environment block every result document carries.
* :func:`run_point` — run a function of a bench module in a fresh subprocess and return its JSON
  result plus the child's peak RSS (for memory measurements that one process cannot pollute).
"""
from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from dpfed_core.evaluation.code_version import engine_fingerprint  # noqa: E402
from dpfed_core.evaluation.cost import time_reference_work  # noqa: E402

DATA = Path(os.environ.get("DPFED_DATA", ROOT.parent / "shared" / "data"))
ML100K = DATA / "ml-100k"
EICU = DATA / "eicu-demo"


# ------------------------------------------------------------------------------------ registry
def ensure_methods() -> list[str]:
    """Import every optional engine module that registers methods; return the method names."""
    import importlib

    for mod in ("dpfed_core.federation.dp_prototypes", "dpfed_core.data.synthetic"):
        try:
            importlib.import_module(mod)
        except ImportError:
            pass
    from dpfed_core.methods import available_methods

    return available_methods()


def has_dp() -> bool:
    return "dp-prototypes" in ensure_methods()


# ------------------------------------------------------------------------------------ data
SYNTH_NOTE = ""


def _local_poisson(n_users, n_items, n_entities, rank, rng, signal_sd=1.0, offset=-1.0, block=None):
    """Stand-in for dpfed_core.data.synthetic: X ~ Poisson(exp(offset + signal_sd·U Vᵀ/√ℓ)), U, V ~ N(0, 1),
    users spread uniformly over the entities; generated in row blocks (never n × m at once)."""
    from dpfed_core.data.dataset import FederatedDataset

    V = rng.standard_normal((n_items, rank))
    block = block or max(1, int(2_000_000 // max(n_items, 1)))
    parts = []
    for s in range(0, n_users, block):
        b = min(block, n_users - s)
        Z = offset + signal_sd * (rng.standard_normal((b, rank)) @ V.T) / math.sqrt(rank)
        parts.append(sp.csr_matrix(rng.poisson(np.exp(Z)).astype(np.float64)))
    X = sp.vstack(parts, format="csr") if parts else sp.csr_matrix((0, n_items))
    labels = np.array([f"entity {h:03d}" for h in range(n_entities)])[np.arange(n_users) % n_entities]
    return FederatedDataset.from_parts(X, labels, value_kind="counts", value_max=20.0,
                                       name=f"local Poisson stand-in {n_users}×{n_items}, {n_entities} entities",
                                       notes=["bench/_common.py stand-in generator (dpfed_core.data.synthetic absent)"])


#: Synthetic data's catalogue: the generator's own item list, fixed before any user exists.
GENERATOR_ITEMS_NOTE = ("item catalogue: the generator's own item list, declared as public (it is fixed "
                        "before any user is drawn), so no share of ε goes to selecting items")


def declare_generator_items(ds):
    """The synthetic generator's item list is public by construction: mark it declared, so a DP run
    spends its whole budget on the method (no DP catalogue selection, which the paper has not)."""
    import dataclasses

    return dataclasses.replace(ds, item_source="declared")


def synthetic(n_users: int, n_items: int = 500, n_entities: int = 10, seed: int = 0, **kw):
    """The paper's synthetic Poisson data with the generator's item list declared
    (:data:`GENERATOR_ITEMS_NOTE`). Uses ``dpfed_core.data.synthetic.make_poisson`` if it exists."""
    global SYNTH_NOTE
    rng = np.random.default_rng(seed)
    try:
        from dpfed_core.data import synthetic as syn  # noqa: F401
    except ImportError:
        SYNTH_NOTE = "dpfed_core.data.synthetic was absent: bench/_common.py's stand-in generator was used"
        return declare_generator_items(_local_poisson(n_users, n_items, n_entities, kw.pop("rank", 10), rng, **kw))
    SYNTH_NOTE = "dpfed_core.data.synthetic.make_poisson"
    import inspect

    params = inspect.signature(syn.make_poisson).parameters
    args = dict(kw)
    names = {"n_users": n_users, "n_items": n_items, "n_entities": n_entities}
    for k, v in names.items():
        if k in params:
            args[k] = v
    return declare_generator_items(syn.make_poisson(**args, rng=rng))


def movielens():
    from dpfed_core.data.movielens import load_movielens

    return load_movielens(ML100K, federation="zip")


#: Stated on every page that reports eICU results: where the benchmark's item catalogue comes from.
EICU_CATALOGUE_NOTE = (
    "eICU demo: the demo ships no formulary, so the benchmark declares the demo's own medication names "
    "as the hospitals' formulary (a public list in a real deployment, declared with --items). A DP run "
    "without a declared list selects the items it shares by a DP release (federation-wide with secure "
    "aggregation, per entity without, which at the demo's hospital sizes keeps no item); each hospital "
    "still scores the items it has rows for with its own model (utility_sites.md)."
)


def eicu(entity: str = "hospitalid", declared_catalogue: bool = True):
    """The eICU demo by ``entity``; with ``declared_catalogue`` (default) its medication names are
    declared as the formulary (:data:`EICU_CATALOGUE_NOTE`), else the catalogue is left to the run."""
    from dpfed_core.data.eicu import load_eicu

    ds = load_eicu(EICU, entity=entity)
    if not declared_catalogue:
        return ds
    return load_eicu(EICU, entity=entity, items=[str(n) for n in ds.item_names])


# ------------------------------------------------------------------------------------ verdicts
def count_verdict(signs: list[str], want: str, unit: str = "") -> str:
    """Verdict of a claim judged at several points (ranks, ε values, …), each point's paired effect
    classified as ``want`` (holds there), the opposite sign (contradicted) or "~" (inside the noise
    over seeds). All one way: holds / does not hold / inconclusive; otherwise the counts."""
    n = len(signs)
    held = sum(x == want for x in signs)
    against = sum(x not in (want, "~") for x in signs)
    noise = n - held - against
    if n and held == n:
        return "holds"
    if n and against == n:
        return "does not hold"
    if held == 0 and against == 0:
        return "inconclusive (inside the noise)"
    if held == 0:
        return f"does not hold (contradicted at {against} of {n}{unit}, inside the noise at {noise})"
    if against == 0:
        return f"partly holds (holds at {held} of {n}{unit}, inside the noise at {noise})"
    return f"mixed: holds at {held} of {n}{unit}, contradicted at {against}, inside the noise at {noise}"


# ------------------------------------------------------------------------------------ outputs
def outputs(name: str, quick: bool) -> dict[str, Path]:
    stem = f"{name}_quick" if quick else name
    RESULTS.mkdir(parents=True, exist_ok=True)
    return {"json": RESULTS / f"{stem}.json", "md": RESULTS / f"{stem}.md", "stem": stem,
            "png": lambda tag="": RESULTS / (f"{stem}_{tag}.png" if tag else f"{stem}.png")}


#: The engine's reference work (``cost.time_reference_work``) timed in this benchmark's process, once per
#: :func:`sample_reference`: a shared virtual machine's speed varies by ±30 % from one second to the next, so a
#: benchmark samples it between its measurements and records the median (:func:`machine`), the speed its
#: measurements were taken at; the product scales them to its own machine by it.
REFERENCE_SAMPLES: list[float] = []


def sample_reference() -> float:
    REFERENCE_SAMPLES.append(time_reference_work())
    return REFERENCE_SAMPLES[-1]


def machine() -> dict:
    import joblib
    import scipy
    import sklearn

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, timeout=10).stdout.strip() or None
    except Exception:  # noqa: BLE001
        commit = None
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    sample_reference()
    return {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "joblib": joblib.__version__, "cpus": os.cpu_count(),
            "cpu": cpu, "mem_gib": mem, "platform": platform.platform(), "git_commit": commit,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "loadavg_1m_at_start": os.getloadavg()[0],
            "engine_fingerprint": engine_fingerprint(),
            "reference_s": float(np.median(REFERENCE_SAMPLES)),
            "reference_samples": len(REFERENCE_SAMPLES)}


def write_doc(path: Path, doc: dict) -> None:
    from dpfed_core.evaluation.experiments import json_safe

    path.write_text(json.dumps(json_safe(doc), indent=1, allow_nan=False))


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it: an interrupted run never
    leaves a half-written result."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def write_results(out: str | Path, doc: dict, markdown: str) -> None:
    """Write ``<out>.json`` (strict JSON) and ``<out>.md`` beside it, and print the markdown."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_doc(out.with_suffix(".json"), doc)
    out.with_suffix(".md").write_text(markdown)
    print(markdown)


def md_table(rows: list[dict], cols: list[str] | None = None, fmt: dict | None = None) -> str:
    if not rows:
        return "(no rows)\n"
    cols = cols or list(rows[0])
    fmt = fmt or {}

    def cell(c, v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "—"  # not measured: a format would print 'nan'
        if c in fmt:
            try:
                return fmt[c].format(v)
            except (ValueError, TypeError):
                return str(v)
        if isinstance(v, float):
            if math.isinf(v):
                return "∞"
            if math.isnan(v):
                return "—"
            return f"{v:.4g}"
        return str(v)

    def esc(text: str) -> str:  # a "|" inside a cell (e.g. a name path class|ingredient) would end it
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(map(esc, cols)) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(esc(cell(c, r.get(c))) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def fig(ncols: int = 1, nrows: int = 1, w: float = 4.2, h: float = 3.0):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 8, "axes.titlesize": 9, "legend.fontsize": 7, "lines.markersize": 4})
    f, ax = plt.subplots(nrows, ncols, figsize=(w * ncols, h * nrows), squeeze=False)
    return f, ax


def save_fig(f, path: Path) -> Path:
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    for a in f.axes:
        if a.get_xscale() == "log":
            a.xaxis.set_minor_formatter(NullFormatter())
        if a.get_yscale() == "log":
            a.yaxis.set_minor_formatter(NullFormatter())
    f.tight_layout()
    f.savefig(path, dpi=72)
    plt.close(f)
    return path


def fit_slope(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log10(x[ok]), np.log10(y[ok]), 1)[0])


# ------------------------------------------------------------------------------------ subprocess
def run_point(module: str, func: str, kwargs: dict, timeout: float = 1800, python: str | None = None,
              env: dict | None = None) -> dict:
    """Run ``bench/<module>.py``'s ``func(**kwargs)`` in a fresh interpreter. The function returns a
    JSON-able dict; the child adds ``peak_rss_mib`` (the child's own VmHWM: ru_maxrss would carry a vforking parent's
    high-water mark into the child) and ``wall_s``.
    On failure returns ``{"error": ..., "returncode": ...}`` (e.g. killed for memory)."""
    code = (
        "import json, sys, time\n"
        f"sys.path.insert(0, {str(BENCH)!r}); sys.path.insert(0, {str(ROOT)!r})\n"
        f"import {module} as m\n"
        "t0 = time.perf_counter()\n"
        f"out = m.{func}(**json.loads(sys.argv[1]))\n"
        "out['wall_s'] = time.perf_counter() - t0\n"
        "import os; out['loadavg_1m'] = os.getloadavg()[0]\n"
        "out['peak_rss_mib'] = int(open('/proc/self/status').read().split('VmHWM:')[1].split()[0]) / 1024\n"
        "from dpfed_core.evaluation.experiments import json_safe\n"
        "print('@@RESULT@@' + json.dumps(json_safe(out)))\n"
    )
    cmd = [python or sys.executable, "-c", code, json.dumps(kwargs)]
    full_env = {**os.environ, **(env or {})}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=full_env)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout after {timeout:.0f} s", "returncode": None}
    for line in p.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    tail = (p.stderr or "").strip().splitlines()[-5:]
    return {"error": " / ".join(tail) or f"exit code {p.returncode}", "returncode": p.returncode}


def fmt_s(x) -> str:
    return "—" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.3g}"
