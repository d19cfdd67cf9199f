"""Dashboard-facing helpers that are not Streamlit-specific.

The Streamlit pages (``app.py``, ``pages/``) only lay out widgets; everything they show is computed
here or in the engine, so it can be tested without a browser and reused by reports. Nothing in this
module computes a model: runs go through :func:`dpfed_core.evaluation.experiments.run_method` / ``sweep``.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError, DataError
from dpfed_core.evaluation.experiments import LOWER_IS_BETTER, crossing_epsilon, make_split, sweep_table
from dpfed_core.methods import METHODS, MethodResult, available_methods
from dpfed_core.federation.protocol import recommend_from_factors, user_row
from dpfed_core.federation.prototypes import PROTOTYPE_METHODS

#: The headline DP method of the app: the one that measures best (bench/results/utility.md, issue 15):
#: summable DP co-occurrence. "dp-gaussian" / "dp-prototypes" are the paper's prototypes.
DP_METHOD = "dp-cooccurrence"
#: Methods shown beside the federated model on the Evaluate page (issue 4); dp-popularity is the
#: one-line DP baseline every DP method must beat (issue 15).
BASE_REFERENCES = ("individual", "dp-popularity", "central", "random-v", "popularity")
#: Plain explanation of the secure-aggregation toggle (Federate page).
AGGREGATION_HELP = (
    "Secure aggregation: the entities' releases are added up by a cryptographic protocol, so the server "
    "sees only the total, never one hospital's numbers. Each entity then adds only its share of the noise "
    "(σ/√H), and the total carries the full noise once instead of H times: far better recommendations at "
    "the same ε. The price is trust: the guarantee against the server holds if the entities follow the "
    "protocol; if the server and all other entities collude, only an entity's own share protects it, "
    "and the ledger states that weaker ε too. Applies to summable methods (dp-cooccurrence, "
    "dp-popularity). In this app the sum is formed in-process; the real protocol runs in the Flower "
    "deployment.")
#: When another regime favours another method (Federate page).
REGIME_NOTE = (
    "Which DP method when (bench/results/utility.md, 3 seeds): dp-cooccurrence measures best on all four "
    "federations tested and beats the DP popularity list at every ε ≥ 0.3. Many small entities (eICU "
    "hospitals, ~13 stays each): it beats the entities on their own from ε = 0.1 with or without secure "
    "aggregation — most of that gain is popularity (global DP + each entity's own), which small entities "
    "cannot estimate alone. Few large entities (MovieLens ZIP areas, ~100 users each): their own models are "
    "strong, so the federation pays only from ε = 10 with secure aggregation and not at finite ε without it; "
    "prefer secure aggregation there. The paper's prototypes (dp-gaussian) lose to the DP popularity list "
    "at most ε: use them to compare with the paper.")
#: Default ε grid of the trade-off sweep (log-spaced, plus the non-private limit).
DEFAULT_EPS_GRID = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0, math.inf)
DEFAULT_SWEEP_SEEDS = (0, 1, 2)
#: Entities below this many users get a warning on the Data page: with a 20 % test split they
#: have too few training users for a handful of prototypes and one or two test users.
SMALL_ENTITY_USERS = 20

METRIC_SHORT = {
    "train_rmse": "train RMSE", "test_rmse": "test RMSE", "mar": "MAR",
    "precision_at_10": "P@10", "recall_at_10": "R@10", "ndcg_at_10": "NDCG@10",
}
METRIC_LABELS = {
    "train_rmse": "train RMSE",
    "test_rmse": "test RMSE",
    "mar": "MAR (mean average rank; 0 = top, 0.5 = random)",
    "precision_at_10": "precision@10",
    "recall_at_10": "recall@10",
    "ndcg_at_10": "NDCG@10",
}

SAMPLES = {
    "sample:clinic": "Clinic sample — ICU stays × lab and medication names, hospitals as entities",
    "sample:synthetic": "Synthetic sample — the paper's Poisson model (§5.1), 10 entities",
}
DEFAULT_SAMPLE = "sample:clinic"


# ------------------------------------------------------------------------------ methods
def ensure_methods_registered() -> None:
    """Import the optional method modules so that their registries are filled.

    The DP method registers itself on import; the engine may not import it yet, so the dashboard
    does, without failing if a helper's module is still missing or broken.
    """
    for mod in ("dpfed_core.federation.dp_prototypes",):
        if mod not in sys.modules:
            try:
                importlib.import_module(mod)
            except Exception:  # a module under construction must not take the app down
                pass


def method_catalogue() -> pd.DataFrame:
    """One row per registered method: name, label, privacy model, whether it uses ε / k."""
    ensure_methods_registered()
    rows = []
    for name in available_methods():
        s = METHODS[name]
        rows.append({"method": name, "label": s.label, "privacy": s.privacy,
                     "uses_epsilon": s.uses_epsilon, "uses_k": s.uses_k, "description": s.description})
    return pd.DataFrame(rows)


def is_summable(method: str) -> bool:
    """A summable-release method (its releases add up; secure aggregation applies)."""
    from dpfed_core.federation.summable import SUMMABLE_METHODS

    return method in SUMMABLE_METHODS


def federated_methods() -> list[str]:
    """Methods that run the federation protocol (prototype and summable methods), DP method first."""
    ensure_methods_registered()
    names = [m for m in available_methods() if METHODS[m].uses_k or is_summable(m)]
    return sorted(names, key=lambda m: (m != DP_METHOD, not METHODS[m].uses_epsilon, m))


def default_method() -> str:
    names = federated_methods()
    return names[0] if names else "kmeans"


def privacy_of(method: str) -> str:
    ensure_methods_registered()
    return METHODS[method].privacy if method in METHODS else "?"


def label_of(method: str) -> str:
    ensure_methods_registered()
    return METHODS[method].label if method in METHODS else method


@dataclass(frozen=True)
class ParamInfo:
    """An advanced parameter of a prototype method, read from its constructor's signature."""

    name: str
    default: Any
    kind: str  # "int" | "float" | "optional_int" | "optional_float" | "bool" | "choice" | "text" | "other"
    doc: str
    choices: tuple = ()


#: Constructor arguments the Federate page sets through its main controls.
_MAIN_PARAMS = {"self", "k", "value_max", "epsilon", "delta", "split"}


def _param_docs(cls) -> dict[str, str]:
    """First paragraph of each parameter in a numpydoc "Parameters" section."""
    doc = inspect.getdoc(cls) or ""
    out: dict[str, str] = {}
    cur = None
    in_params = False
    for line in doc.splitlines():
        if line.strip() == "Parameters":
            in_params = True
            continue
        if not in_params:
            continue
        if line.strip().startswith("Attributes") or line.strip().startswith("Returns"):
            break
        if line and not line.startswith(" ") and ":" in line:
            cur = line.split(":")[0].strip()
            out[cur] = ""
        elif cur and line.strip() and not set(line.strip()) <= {"-"}:
            out[cur] = (out[cur] + " " + line.strip()).strip()
    return out


def prototype_method_params(method: str) -> list[ParamInfo]:
    """The advanced parameters of a prototype method (bounds, grids, variants), read from its class
    so the page follows the method as it evolves."""
    ensure_methods_registered()
    from dpfed_core.federation.summable import SUMMABLE_METHODS

    cls = PROTOTYPE_METHODS.get(method) or SUMMABLE_METHODS.get(method)
    if cls is None:
        return []
    docs = _param_docs(cls)
    out = []
    # summable methods take the trust model, rank, λ and iterations from the page's main controls
    main = _MAIN_PARAMS | ({"aggregation", "max_dropouts", "rank", "lam", "max_iter"}
                           if method in SUMMABLE_METHODS else set())
    for name, p in inspect.signature(cls.__init__).parameters.items():
        if name in main or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        d = p.default
        doc = docs.get(name, "")
        if isinstance(d, bool):
            kind = "bool"
        elif isinstance(d, int):
            kind = "int"
        elif isinstance(d, float):
            kind = "float"
        elif isinstance(d, str):
            kind = "choice"
        elif d is None:
            ann = str(p.annotation)
            kind = "optional_int" if "int" in ann else "optional_float" if "float" in ann else "other"
        else:
            kind = "other"
        choices: tuple = ()
        if kind == "choice":
            import re
            # Choices documented as {"a", "b"} in the class docstring.
            m = re.search(r"\{([^}]*)\}", docs.get(name, "") or "")
            raw = re.search(rf"{name}\s*:\s*\{{([^}}]*)\}}", inspect.getdoc(cls) or "")
            src = raw.group(1) if raw else (m.group(1) if m else "")
            choices = tuple(c.strip().strip("'\"") for c in src.split(",") if c.strip())
            if d not in choices:  # the docstring may lag behind the signature
                choices = (d, *choices)
            if len(choices) == 1:
                kind = "text"  # choices not documented: a free text box with the default
        out.append(ParamInfo(name, d, kind, doc, choices))
    return out


def budget_split_defaults(method: str) -> dict[str, float]:
    """The DP method's default ε shares per stage (its module's ``DEFAULT_SPLIT``), or {}."""
    ensure_methods_registered()
    cls = PROTOTYPE_METHODS.get(method)
    if cls is None or not getattr(cls, "private", False):
        return {}
    mod = sys.modules.get(cls.__module__)
    return dict(getattr(mod, "DEFAULT_SPLIT", {}) or {})


def budget_plan(method: str, dataset: FederatedDataset, config: RunConfig) -> pd.DataFrame:
    """ε per stage the DP method *plans* to spend for this config (before running), if it can say."""
    cls = PROTOTYPE_METHODS.get(method)
    if cls is None or not getattr(cls, "private", False) or not hasattr(cls, "budget_plan"):
        return pd.DataFrame(columns=["stage", "epsilon"])
    params = dict(config.prototype_params)
    params.setdefault("epsilon", config.epsilon)
    params.setdefault("delta", config.delta)
    obj = cls(k=config.k, value_max=dataset.value_max, **params)
    plan = obj.budget_plan(dataset.n_items)
    return pd.DataFrame([{"stage": k, "epsilon": v} for k, v in plan.items() if v > 0])


# ------------------------------------------------------------------------------ ε
def parse_epsilon(text: str | float) -> float:
    """A typed ε: a positive number, or ``inf`` / ``∞`` / ``none`` for a non-private run."""
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        t = str(text).strip().lower().replace(" ", "")
        if t in ("inf", "∞", "infinity", "+inf", "none", "non-private"):
            return math.inf
        try:
            value = float(t)
        except ValueError:
            raise ConfigError(f"ε must be a positive number or ∞ (type 'inf'), got {text!r}") from None
    if math.isnan(value) or value <= 0:
        raise ConfigError(
            f"ε must be a positive number (or ∞ for a non-private run), got {text}; typical private "
            "values are 0.1 to 10"
        )
    return value


def format_epsilon(eps: float | str | None) -> str:
    if eps is None:
        return "—"
    if isinstance(eps, str):
        eps = float(eps)
    return "∞" if math.isinf(eps) else f"{eps:g}"


def parse_grid(text: str) -> list[float]:
    """A comma-separated ε grid such as ``0.1, 1, 10, inf``."""
    parts = [p for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ConfigError("the ε grid is empty; give e.g. 0.1, 1, 10, inf")
    return sorted({parse_epsilon(p) for p in parts})


def parse_seeds(text: str) -> list[int]:
    try:
        seeds = [int(p) for p in str(text).replace(";", ",").split(",") if p.strip()]
    except ValueError:
        raise ConfigError(f"seeds must be whole numbers separated by commas, got {text!r}") from None
    if not seeds:
        raise ConfigError("give at least one seed, e.g. 0, 1, 2")
    return list(dict.fromkeys(seeds))


# ------------------------------------------------------------------------------ data
def dataset_fingerprint(ds: FederatedDataset) -> str:
    """A content hash of a dataset: the cache key of everything computed from it."""
    h = hashlib.sha1()
    X = ds.X
    for arr in (X.data, X.indices, X.indptr, ds.entity_of_user):
        h.update(np.ascontiguousarray(arr).tobytes())
    h.update(json.dumps([list(ds.entity_names), ds.value_kind, ds.value_max, list(X.shape),
                         ds.user_ids[:50].tolist(), ds.item_names[:50].tolist()]).encode())
    return h.hexdigest()[:16]


def config_key(config: RunConfig) -> str:
    """The full configuration (seed, split, budget split included) as a canonical string."""
    from dpfed_core.evaluation.experiments import json_safe

    return json.dumps(json_safe(config.to_dict()), sort_keys=True)


def entity_table(ds: FederatedDataset, small: int = SMALL_ENTITY_USERS) -> pd.DataFrame:
    """Per-entity users, items, interactions and density, with a flag for too-small entities."""
    df = pd.DataFrame(ds.summary())
    df["too_small"] = df["users"] < small
    return df


def small_entity_warning(ds: FederatedDataset, small: int = SMALL_ENTITY_USERS) -> str | None:
    df = entity_table(ds, small)
    bad = df[df["too_small"]]
    if bad.empty:
        return None
    names = ", ".join(f"{r.entity} ({r.users} users)" for r in bad.head(8).itertuples())
    more = f" and {len(bad) - 8} more" if len(bad) > 8 else ""
    return (f"{len(bad)} of {len(df)} entities have fewer than {small} users: {names}{more}. "
            "With 20 % of users held out for testing they have very few training users for their "
            "prototypes (and k is capped by their size); consider a coarser federation key or a "
            "declaration that leaves them out (“Leave out entities”); no entity is dropped for its true size.")


def dataset_overview(ds: FederatedDataset) -> dict:
    return {
        "name": ds.name, "users": ds.n_users, "items": ds.n_items, "entities": ds.n_entities,
        "interactions": int(ds.X.nnz), "density": float(ds.X.nnz / max(ds.n_users * ds.n_items, 1)),
        "value_kind": ds.value_kind, "value_max": ds.value_max,
    }


def default_config(ds: FederatedDataset, method: str | None = None) -> RunConfig:
    """Defaults that give a meaningful picture in a few seconds on this dataset.

    k: about a fifth of the smallest entity's training users (at most 20) so even the smallest
    entity clusters its users instead of copying them; rank 5 (small samples have few strong
    factors); mode ``observed`` for ratings (RMSE headline), ``zero`` otherwise (ranking headline).
    ε = 1, δ = 1e-6 for the DP method.
    """
    sizes = np.bincount(ds.entity_of_user, minlength=ds.n_entities)
    smallest_train = int(max(1, math.floor(sizes.min() * 0.8))) if len(sizes) else 1
    k = int(min(20, max(2, smallest_train // 5)))
    method = method or default_method()
    return RunConfig(
        method=method,
        epsilon=1.0 if METHODS.get(method) is not None and METHODS[method].uses_epsilon else math.inf,
        delta=1e-6,
        k=k,
        rank=5,
        lam=0.1,
        mode="observed" if ds.value_kind == "ratings" else "zero",
        seed=0,
        max_iter=100,
    )


def upload_columns(data: bytes, filename: str) -> pd.DataFrame:
    """Read an uploaded table (without changing it) to offer its columns for mapping."""
    from dpfed_core.data.loaders import read_table

    df, _label, _ = read_table(bytes(data), filename=filename, what="uploaded table")
    if df.shape[1] < 3:
        raise DataError(
            f"{filename} has {df.shape[1]} column(s) ({', '.join(map(str, df.columns))}); a long table "
            "needs at least a user, an item and an entity column (and usually a value column). "
            "Check the separator (comma, semicolon, tab)."
        )
    return df


def guess_column(columns: list[str], *hints: str) -> str | None:
    low = {c.lower(): c for c in columns}
    for h in hints:
        for lc, c in low.items():
            if lc == h:
                return c
    for h in hints:
        for lc, c in low.items():
            if h in lc:
                return c
    return None


# ------------------------------------------------------------------------------ progress
def progress_text(event: str, info: dict) -> str | None:
    """A sentence for each protocol event (for ``st.status``), None for events not worth a line."""
    ent = info.get("entity")
    pos = f" ({info['index'] + 1}/{info['total']})" if "index" in info and "total" in info else ""
    if event == "round1_start":
        if info.get("stage"):  # a summable method: one release (share) per stage
            return f"Round 1 · entity **{ent}**{pos} computes its DP {info['stage']} release on its own training data…"
        return f"Round 1 · entity **{ent}**{pos} computes its prototypes on its own training data…"
    if event == "round1_done":
        shape = info.get("shape")
        return f"Round 1 · **{ent}** sent {shape[0]} prototypes × {shape[1]} items to the server" if shape else None
    if event == "server_start" and info.get("stage"):
        return f"Server · adds up the {info['stage']} releases (post-processing, no privacy cost)…"
    if event == "server_start":
        return f"Server · fitting V on {info.get('n_prototypes', '?')} stacked prototypes (no privacy cost)…"
    if event == "server_done":
        shape = info.get("shape")
        return f"Server · V ready ({shape[0]} items × {shape[1]} factors)" if shape else "Server · V ready"
    if event == "broadcast":
        return f"Round 2 · server broadcasts V to {info.get('receivers', '?')} entities"
    if event == "round2_start":
        return f"Round 2 · **{ent}**{pos} fits its own user factors with V fixed (nothing leaves)…"
    if event == "round2_done":
        return None
    if event == "individual_entity":
        return f"Individual · **{ent}**{pos} fits its own model"
    if event == "central_start":
        return "Central · pooling every entity's training data at the server (non-private)…"
    if event == "evaluate_start":
        return f"Evaluating {info.get('method', '')} on the held-out entries…"
    if event == "evaluate_done":
        return "Evaluation done"
    return None


# ------------------------------------------------------------------------------ results
def is_federated(result: MethodResult) -> bool:
    return result.model is not None and hasattr(result.model, "releases_")


def messages_table(doc: dict) -> pd.DataFrame:
    df = pd.DataFrame(doc.get("messages", []),
                      columns=["round", "sender", "receiver", "content", "shape", "bytes"])
    if not df.empty:
        df["shape"] = df["shape"].map(lambda s: " × ".join(str(x) for x in s))
    return df


def ledger_table(doc: dict) -> pd.DataFrame:
    df = pd.DataFrame(doc["privacy"]["ledger"])
    if df.empty:
        return pd.DataFrame(columns=["entity", "stage", "mechanism", "epsilon", "delta",
                                     "sensitivity", "noise_scale", "note"])
    return df


def per_stage_table(doc: dict) -> pd.DataFrame:
    """ε per (entity, stage) as a wide table: one row per entity, one column per stage, + total."""
    df = pd.DataFrame(doc["privacy"]["per_stage"])
    if df.empty:
        return df
    wide = df.pivot_table(index="entity", columns="stage", values="epsilon", aggfunc="sum", sort=False)
    wide["total ε"] = wide.sum(axis=1)
    dl = df.groupby("entity", sort=False)["delta"].sum()
    wide["total δ"] = dl.reindex(wide.index)
    return wide.reset_index()


def guarantee_text(doc: dict) -> str:
    p = doc["privacy"]
    if not p["private"]:
        return f"**Not private.** {p['label']}."
    from dpfed_core.privacy.noise import PRODUCTION_SAMPLER_LABEL, SIMULATION_LABEL
    from dpfed_core.privacy.statement import FLOAT_SAMPLER_NOTE, GUARANTEE_NAME

    if p.get("simulation"):
        return (f"**{SIMULATION_LABEL}.** The noise of this run is a function of the seed, so no "
                f"differential-privacy guarantee holds (configured budget ({p['epsilon']:.4g}, "
                f"{p['delta']:.3g})). {FLOAT_SAMPLER_NOTE}")
    text = (f"**{GUARANTEE_NAME.capitalize()}: ({p['epsilon']:.4g}, {p['delta']:.3g})-DP** for every user "
            f"of every entity (requested ε = {format_epsilon(p['requested_epsilon'])}, δ = "
            f"{p['requested_delta']:.3g}). Sequential composition within an entity, parallel "
            "across entities; the server's fit and round 2 are post-processing. Assumptions: "
            + " ".join(f"({i}) {a}" for i, a in enumerate(p.get("assumptions") or [], 1)))
    if any(x != PRODUCTION_SAMPLER_LABEL for x in p.get("samplers") or []):
        text += f" {FLOAT_SAMPLER_NOTE}"
    for w in p.get("warnings") or []:
        text += f"\n\n⚠️ {w}"
    trust = p.get("trust")
    if trust and trust.get("aggregation") == "secure":
        c = trust["against_server_and_other_entities"]
        text += (f"\n\n**Secure aggregation**: this guarantee holds against the server if the entities follow "
                 f"the protocol; against the server colluding with all other entities, each entity's own "
                 f"noise share gives ({c['epsilon']:.4g}, {c['delta']:.3g})-DP. In this run the sum was "
                 "formed in-process (the cryptographic protocol runs in the Flower deployment).")
    elif trust:
        text += "\n\nNo secure aggregation: every entity added the full noise to its own release."
    return text


def top_columns(P: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n items with the largest total mass in P (columns to show in a heatmap)."""
    mass = np.abs(np.asarray(P)).sum(axis=0)
    n = min(n, P.shape[1])
    return np.argsort(-mass, kind="stable")[:n]


def top_items_per_factor(V: np.ndarray, item_names: np.ndarray, n: int = 8) -> pd.DataFrame:
    """The n items with the largest loading on each latent factor."""
    cols = {}
    for f in range(V.shape[1]):
        order = np.argsort(-V[:, f], kind="stable")[:n]
        cols[f"factor {f + 1}"] = [f"{item_names[j]} ({V[j, f]:.2f})" for j in order]
    return pd.DataFrame(cols, index=pd.RangeIndex(1, n + 1, name="rank"))


def prototype_summary(result: MethodResult, ds: FederatedDataset) -> pd.DataFrame:
    """Per entity: prototypes sent, their size, whether cluster sizes were sent too (from the
    message log: the server receives them only when it weights by them)."""
    sent_sizes = {m.sender for m in result.messages if m.round == 1 and "cluster sizes" in m.content}
    rows = []
    for name, rel in zip(ds.entity_names, result.model.releases_):
        P = rel.prototypes
        rows.append({"entity": name, "prototypes": P.shape[0], "items": P.shape[1],
                     "non-zeros per prototype": float((P > 0).sum(axis=1).mean()) if len(P) else 0.0,
                     "cluster sizes sent": "yes" if name in sent_sizes else "no"})
    return pd.DataFrame(rows)


def metrics_frame(docs: dict[str, dict]) -> pd.DataFrame:
    """Long table: one row per (method, entity or 'overall') with all metrics and the privacy model."""
    rows = []
    for method, doc in docs.items():
        for scope in [*doc["entities"], doc["overall"]]:
            row = {"method": method, "label": doc["method"]["label"],
                   "privacy": doc["method"]["privacy_model"], "guarantee": doc["privacy"]["label"],
                   "entity": scope["name"]}
            row.update({k: v for k, v in scope.items() if k != "name"})
            rows.append(row)
    return pd.DataFrame(rows)


def metric_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in ("train_rmse", "test_rmse", "mar", "precision_at_10", "recall_at_10",
                        "ndcg_at_10") if c in df.columns]


# ------------------------------------------------------------------------------ recommend
def entity_users(ds: FederatedDataset, entity: str, test_users_only: np.ndarray | None = None) -> list[str]:
    """User ids of an entity (test users first, since their hidden items make a useful check)."""
    sl = ds.entity_slices()[ds.entity_index(entity)]
    ids = ds.user_ids[sl].tolist()
    if test_users_only is not None:
        tu = set(int(i) for i in test_users_only if sl.start <= i < sl.stop)
        first = [ids[i - sl.start] for i in sorted(tu)]
        rest = [u for j, u in enumerate(ids) if (sl.start + j) not in tu]
        return first + rest
    return ids


def user_history(ds: FederatedDataset, split, entity: str, user: str | int) -> pd.DataFrame:
    """What the user already has: training entries and the entries hidden for testing."""
    row = user_row(ds, entity, user)
    parts = []
    for mat, kind in ((split.train, "training data"), (split.test, "hidden (test)")):
        r = mat[row]
        for j, v in zip(r.indices, r.data):
            parts.append({"item": ds.item_names[j], "value": float(v), "status": kind})
    df = pd.DataFrame(parts, columns=["item", "value", "status"])
    return df.sort_values(["status", "value"], ascending=[True, False], ignore_index=True)


def recommend_table(ds: FederatedDataset, split, result: MethodResult, entity: str, user: str | int,
                    n: int = 10) -> pd.DataFrame:
    """Top-n unseen items for a user from any fitted model (U, V), with names and scores, and whether
    each one is among the user's hidden test entries (a hit)."""
    items, scores = recommend_from_factors(ds, split.train, result.U, result.V, entity, user, n, True)
    row = user_row(ds, entity, user)
    hidden = set(split.test[row].indices.tolist())
    return pd.DataFrame({
        "rank": np.arange(1, len(items) + 1),
        "item": ds.item_names[items],
        "score": scores.astype(float),
        "hidden test item": ["✔" if int(i) in hidden else "" for i in items],
    })


# ------------------------------------------------------------------------------ sweep
def sweep_frame(sweep_doc: dict, metric: str) -> pd.DataFrame:
    return pd.DataFrame(sweep_table(sweep_doc, metric))


def sweep_crossing(sweep_doc: dict, metric: str) -> float | None:
    try:
        return crossing_epsilon(sweep_doc, metric)
    except ConfigError:
        return None


def sweep_crossing_text(sweep_doc: dict, metric: str) -> str:
    """The crossing ε as the CLI says it ("none at finite ε", "not reported: … zero mode", …)."""
    from dpfed_core.evaluation.experiments import crossing_report

    try:
        return crossing_report(sweep_doc, metric)["text"]
    except ConfigError as exc:
        return str(exc)


def better_word(metric: str) -> str:
    return "lower is better" if metric in LOWER_IS_BETTER else "higher is better"


def split_for(ds: FederatedDataset, config: RunConfig):
    """The split every method of a run with this config sees (the engine's own)."""
    return make_split(ds, config)


def default_data_path(kind: str) -> str:
    """Default text of the path box for a real loader: ``../shared/data/…`` if it exists."""
    rel = {"movielens": "../shared/data/ml-100k", "eicu": "../shared/data/eicu-demo"}[kind]
    p = Path(rel)
    return rel if p.exists() else ""
