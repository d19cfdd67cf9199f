"""Dashboard-facing helpers that are not Streamlit-specific.

The Streamlit pages (``app.py``, ``pages/``) only lay out widgets; everything they show is computed
here or in the engine, so it can be tested without a browser and reused by reports. Nothing in this
module computes a model: runs go through :func:`dpfed_core.evaluation.experiments.run_method` / ``sweep``.
"""
from __future__ import annotations

import hashlib
import importlib
import json
import math
import sys
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


def method_parameters(method: str) -> list:
    """The Advanced panel's parameters of a method: its declared
    :class:`~dpfed_core.config.Param` list (budget splits have their own control), read as data —
    the same declaration ``--param`` checking and ``python -m dpfed_core methods`` read."""
    ensure_methods_registered()
    spec = METHODS.get(method)
    if spec is None:
        return []
    return [p for p in spec.parameters if p.advanced and p.kind != "mapping"]


def parameter_value(param, text_or_value):
    """A control's value as the parameter's type, or a :class:`ConfigError` naming the control."""
    return param.coerce(text_or_value)


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
        from dpfed_core.data.inputs import strict_float

        t = str(text).strip().lower().replace(" ", "")
        if t in ("inf", "∞", "infinity", "+inf", "none", "non-private"):
            return math.inf
        try:
            value = strict_float(t)
        except ValueError:
            raise ConfigError(f"ε must be a positive number or ∞ (type 'inf'), got {text!r}", param="epsilon") from None
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
    """A comma-separated ε grid such as ``0.1, 1, 10, inf``; a repeated value is refused, as on the
    command line (:func:`~dpfed_core.evaluation.experiments.check_grid`: one policy)."""
    from dpfed_core.evaluation.experiments import check_grid

    parts = [p for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ConfigError("the ε grid is empty; give e.g. 0.1, 1, 10, inf", param="epsilons")
    return sorted(check_grid([parse_epsilon(p) for p in parts], "epsilons"))


def parse_seeds(text: str) -> list[int]:
    """Comma-separated whole seeds; a repeated seed is refused, as on the command line."""
    from dpfed_core.data.inputs import strict_int
    from dpfed_core.evaluation.experiments import check_grid

    try:
        seeds = [strict_int(p) for p in str(text).replace(";", ",").split(",") if p.strip()]
    except ValueError:
        raise ConfigError(f"seeds must be whole numbers separated by commas, got {text!r}", param="seeds") from None
    if not seeds:
        raise ConfigError("give at least one seed, e.g. 0, 1, 2", param="seeds")
    return check_grid(seeds, "seeds")


# ------------------------------------------------------------------------------ data
def _hash_strings(h, values) -> None:
    """Feed a sequence of ids / names into ``h`` unambiguously (length-prefixed, so ("ab", "c")
    and ("a", "bc") differ)."""
    for v in values:
        b = str(v).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)


def dataset_fingerprint(ds: FederatedDataset) -> str:
    """A content hash of the *whole* dataset: the cache key of everything computed from it.

    Covers every value and position of X (the CSR arrays with their dtypes and shape), every user id,
    item id and item name, the entity of every user and the entity names, the value kind and bound,
    the dataset's name and its notes. Two uploads that differ anywhere get different keys, so one
    person's cached results are never served for another person's data.
    """
    h = hashlib.sha256()
    X = ds.X
    for arr in (X.data, X.indices, X.indptr, np.asarray(ds.entity_of_user)):
        a = np.ascontiguousarray(arr)
        h.update(str(a.dtype).encode())
        h.update(len(a.tobytes()).to_bytes(8, "little"))
        h.update(a.tobytes())
    for seq in (ds.user_ids, ds.item_ids, ds.item_names, ds.entity_names, ds.notes):
        h.update(b"\x1e" + len(seq).to_bytes(8, "little"))
        _hash_strings(h, seq)
    h.update(json.dumps([ds.value_kind, float(ds.value_max), list(X.shape), ds.name]).encode())
    return h.hexdigest()[:32]


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
    names = ", ".join(f"{escape_md(r.entity)} ({r.users} users)" for r in bad.head(8).itertuples())
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
def broadcast_factors(result: MethodResult) -> tuple[np.ndarray, int]:
    """(the item factors the server broadcast, the number of entity-local columns the entities keep
    beside them, all entities together): a summable method's entities keep columns of their own,
    which never left them."""
    local = sum(result.entity_factors().local_widths)
    public = getattr(result.model, "public_", None)
    if public is not None and "V" in public:
        return np.asarray(public["V"]), local
    return np.asarray(result.V), local


def server_view(result: MethodResult) -> pd.DataFrame:
    """What the server learned of a summable run, one row per quantity: the secure sums' public
    post-processing (popularity, selected items, kept eigen-directions and noise edge, V)."""
    public = dict(getattr(result.model, "public_", {}) or {})
    rows = []
    for key, value in public.items():
        arr = np.asarray(value)
        rows.append({"quantity": key, "shape": "×".join(map(str, arr.shape)) or "scalar",
                     "value": (f"{float(arr):.4g}" if arr.ndim == 0 else
                               f"min {arr.min():.3g}, max {arr.max():.3g}" if arr.size else "empty")})
    return pd.DataFrame(rows)


def has_prototypes(result: MethodResult) -> bool:
    """The run released prototypes (a prototype method): the server saw stacked rows P."""
    return bool(getattr(result.model, "releases_", None))


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
    """The run's privacy statement, computed from its ledger, with the assumptions it rests on."""
    p = doc["privacy"]
    if not p["private"]:
        return f"**Not private.** {escape_md(p['label'])}."
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
    items, scores = recommend_from_factors(ds, split.train, result.entity_factors(), None, entity, user, n, True)
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


# ------------------------------------------------------------------------------ job keys
def run_key(ds: FederatedDataset, config: RunConfig) -> str:
    """Cache key of one run: the whole dataset's content hash and the whole configuration."""
    return "run:" + hashlib.sha256((dataset_fingerprint(ds) + config_key(config)).encode()).hexdigest()


def sweep_key(ds: FederatedDataset, config: RunConfig, epsilons, seeds, references) -> str:
    body = json.dumps([dataset_fingerprint(ds), config_key(config), [format_epsilon(e) for e in epsilons],
                       list(map(int, seeds)), list(references)])
    return "sweep:" + hashlib.sha256(body.encode()).hexdigest()


def generic_key(kind: str, ds: FederatedDataset, *parts) -> str:
    from dpfed_core.evaluation.experiments import json_safe

    body = json.dumps([dataset_fingerprint(ds), json_safe(list(parts))], sort_keys=True, default=str)
    return f"{kind}:" + hashlib.sha256(body.encode()).hexdigest()


# ------------------------------------------------------------------------------ budget checks
#: Largest finite ε the dashboard accepts: beyond it (ε, δ)-DP says nothing a reader could use, and
#: the calibrations of some mechanisms lose floating-point meaning (ε ≈ 1e30 broke a root finder).
from dpfed_core.config import MAX_EPSILON as MAX_FINITE_EPSILON  # noqa: E402  (RunConfig's own limit)
#: δ at or above this is refused (a 1 % chance of failure is no guarantee); issue 11.
MAX_DELTA = 1e-2


def check_budget(epsilon_text: str | float, delta_text: str | float, *, eps_control: str = "ε",
                 delta_control: str = "δ") -> tuple[float, float, list[str]]:
    """Validate a typed (ε, δ) before a run: returns (ε, δ, warnings) or raises ConfigError whose
    message names the page control that fixes it."""
    eps = parse_epsilon(epsilon_text)
    if math.isfinite(eps) and eps > MAX_FINITE_EPSILON:
        raise ConfigError(f"{eps_control}: ε = {eps:g} is above {MAX_FINITE_EPSILON:g}, where a DP guarantee "
                          "no longer means anything; type inf for the non-private limit or a value "
                          "between 0.01 and 100.")
    try:
        delta = float(str(delta_text).strip())
    except ValueError:
        raise ConfigError(f"{delta_control}: δ must be a number such as 1e-6, got {str(delta_text)!r}") from None
    if math.isnan(delta) or delta < 0:
        raise ConfigError(f"{delta_control}: δ must be ≥ 0, got {delta_text}; a usual choice is 1e-6.")
    if delta >= MAX_DELTA and math.isfinite(eps):
        raise ConfigError(f"{delta_control}: δ = {delta:g} is refused: a chance of {delta:.0%} that the "
                          "guarantee fails is no guarantee. Use δ well below 1/(number of users of an "
                          "entity), e.g. 1e-6.")
    warnings = []
    if math.isfinite(eps) and delta > 1e-4:
        warnings.append(f"δ = {delta:g} is large: it should be well below 1/(number of users of the "
                        "largest entity); 1e-6 is usual.")
    if math.isfinite(eps) and eps > 100:
        warnings.append(f"ε = {eps:g} is far above the usual private range (0.1–10): the guarantee is "
                        "formally true but weak.")
    return eps, delta, warnings


# ------------------------------------------------------------------------------ messages
#: Engine parameter names → the dashboard control that sets them (Data / Federate pages). Errors from
#: the engine name code parameters; the pages show them in their own words.
CONTROL_NAMES = {
    "drop_missing": "“Rows with a missing value” on the Data page",
    "exclude_entities": "“Leave out entities” on the Data page",
    "items": "“Item catalogue” on the Data page",
    "entities": "“Declared entity list” on the Data page",
    "entities_from_data": "“Read the entity list from the data” on the Data page",
    "item_features": "“Item features” on the Data page",
    "encoding": "“Text encoding” on the Data page",
    "events": "“Event tables (items)” on the Data page",
    "top_n": "“Top-N” on the Recommend page",
    "prototype_params": "the method's parameters (Advanced) on the Federate page",
    "entity_transform": "“Derived as” (federation key) on the Data page",
    "entity_from": "“Entity from column” on the Data page",
    "entity_col": "“Entity from column” on the Data page",
    "small_entities": "“Entities below the minimum” on the Data page",
    "min_entity_users": "“Minimum users per entity” on the Data page",
    "value_max": "“Declared maximum of one value (public bound)” on the Data page",
    "over_max": "“Declared maximum of one value (public bound)” on the Data page",
    "value_kind": "“Values are” on the Data page",
    "value_col": "“Value” on the Data page",
    "user_col": "“User” on the Data page",
    "item_col": "“Item” on the Data page",
    "item_name_col": "“Item name” on the Data page",
    "duplicates": "“Repeated (user, item) rows” on the Data page",
    "sep": "the file's separator (re-save it as comma- or tab-separated)",
    "event_table": "“Event tables (items)” on the Data page",
    "federation": "“Federation key” on the Data page",
    "epsilon": "“ε per entity” on the Federate page",
    "epsilons": "“ε grid” on the Trade-off page",
    "seeds": "“Seeds” on the Trade-off page",
    "delta": "“δ” on the Federate page",
    "k": "“k (prototypes per entity)” on the Federate page",
    "rank": "“rank ℓ” on the Federate page",
    "lam": "“λ (ridge)” on the Federate page",
    "split": "“Budget split” (Advanced) on the Federate page",
    "test_fraction": "“Test users per entity” (Advanced) on the Federate page",
    "n_hidden": "“Hidden entries per test user” (Advanced) on the Federate page",
    "max_iter": "“Server / MF iterations” (Advanced) on the Federate page",
}


def friendly_message(exc: BaseException) -> str:
    """An engine error in the page's words: code parameter names (``drop_missing=True``,
    ``entity_transform='prefix:1'``, ``--small-entities``) replaced by the control that sets them.

    Uses the error's ``param`` attribute when the engine sets one (issue 12: errors carry the
    parameter key), and rewrites ``name=value`` / ``name`` mentions in the text otherwise.
    """
    import re

    text = " ".join(str(exc).split())
    param = getattr(exc, "param", None) or getattr(exc, "parameter", None)
    for name, control in CONTROL_NAMES.items():
        # name=value (value quoted or bare) → the control; a bare code name in backticks or quotes too
        text = re.sub(rf"`?(?<![\w-]){re.escape(name)}\s*=\s*('[^']*'|\"[^\"]*\"|[^\s,;)]+)`?",
                      lambda m, c=control: f"{c} set to {m.group(1).strip(chr(39) + chr(34))}", text)
        text = re.sub(rf"--{re.escape(name.replace('_', '-'))}\b", control, text)
        text = re.sub(rf"`{re.escape(name)}`", control, text)
        if "_" in name:  # a bare code name (whole word only; ordinary words are never rewritten)
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", control, text)
    try:  # the engine's own renderer (whole-word parameter names), when it has one
        from dpfed_core.errors import render_message

        text = render_message(text, {k: v for k, v in CONTROL_NAMES.items() if "_" in k})
    except ImportError:
        pass
    if param and param in CONTROL_NAMES and CONTROL_NAMES[param] not in text:
        text += f" (set it with {CONTROL_NAMES[param]})"
    # the message may quote user data (entity, item, file names): shown as inert text
    return escape_md(text)


def escape_md(text: object) -> str:
    """User data (entity, item, user names) as inert text inside Markdown: every Markdown and HTML
    metacharacter is backslash-escaped, so ``![x](http://…)`` or ``<img>`` in a name is shown, never
    rendered or fetched."""
    import re

    s = str(text).replace("\r", " ").replace("\n", " ")
    # Markdown/HTML metacharacters, Streamlit's ":shortcode:" / ":color[...]" directives and URL
    # autolinks (":"); quotes, dots and inner hyphens are harmless on one line and stay readable
    s = re.sub(r"([\\`*_{}\[\]()#|<>!~$&:])", r"\\\1", s)
    # Streamlit's Markdown turns URL-looking text into links even when escaped: an invisible word
    # joiner inside "://" and "www." keeps the text as it reads but never makes it a link
    s = s.replace("\\://", "\\:\u2060//").replace("www.", "www\u2060.").replace("WWW.", "WWW\u2060.")
    return re.sub(r"^([-+=>]|\d+[.)])", r"\\\1", s)


def check_data_dir(path_text: str, kind: str) -> Path:
    """Resolve a MovieLens / eICU directory typed in the Data page, or raise a DataError that never
    lists a directory (a typed home directory must not reveal what is in it)."""
    need = {"movielens": ("u.data", "ratings.dat", "ratings.csv"),
            "eicu": ("patient.csv", "patient.csv.gz")}[kind]
    box = {"movielens": "MovieLens directory", "eicu": "eICU directory"}[kind]
    text = str(path_text).strip()
    if not text:
        raise DataError(f"Type a path in “{box}”.")
    p = Path(text).expanduser()
    shown = p.name or text
    try:
        ok_dir = p.is_dir()
    except OSError:
        ok_dir = False
    if not ok_dir:
        raise DataError(f"“{box}”: {shown!r} is not a directory this server can read. Check the path.")
    try:
        has = any((p / f).is_file() for f in need)
    except OSError:
        has = False
    if not has:
        raise DataError(f"“{box}”: {shown!r} does not contain {' or '.join(need)}. Point it at the "
                        f"unpacked {'MovieLens 100K / 1M' if kind == 'movielens' else 'eICU'} directory.")
    return p


def safe_loader_message(exc: BaseException) -> str:
    """A loader error for a path box without any directory listing ("found: a, b, c …")."""
    import re

    text = str(exc)
    text = re.sub(r"\(?(found|contains|it has|files?)\s*:\s*[^.;)]*[.;)]?", "", text, flags=re.I)
    text = re.sub(r"Did you mean:[^?]*\?", "", text)
    text = re.sub(r"\s{2,}", " ", text).strip()
    return friendly_message(type(exc)(text) if isinstance(exc, DataError) else DataError(text))


# ------------------------------------------------------------------------------ mapping
def _looks_numeric(s: str) -> bool:
    try:
        float(str(s))
        return True
    except ValueError:
        return False


def headerless(columns: list[str]) -> bool:
    """True when a table's "header" is a data row: at least half the names are numbers and none is
    a usual column name (e.g. MovieLens ``u.data``: ``196 242 3 881250949``)."""
    cols = [str(c).strip() for c in columns]
    if not cols:
        return False
    numeric = sum(_looks_numeric(c) for c in cols)
    return numeric >= max(2, (len(cols) + 1) // 2)


def mapping_problems(user: str, item: str, entity: str, value: str | None, name: str | None) -> list[str]:
    """Mapping errors in the Data page's words: User, Item and Entity must be three different columns
    (a user × item table of one column against itself is a diagonal of nonsense), and the value / name
    columns must not be one of them."""
    out = []
    if user == item:
        out.append(f"“User” and “Item” are both {user!r}: choose two different columns (one row per "
                   "user–item interaction).")
    if entity == user:
        out.append(f"“Entity from column” is the user column {user!r}: every user would be their own "
                   "entity. Choose the hospital / region / site column.")
    if entity == item:
        out.append(f"“Entity from column” is the item column {item!r}: choose the column of the data "
                   "holder (hospital, region, site).")
    if value and value in (user, item, entity):
        out.append(f"“Value” {value!r} is also the user, item or entity column; choose the rating / "
                   "count column or (none) for an event log.")
    if name and name in (user, entity):
        out.append(f"“Item name” {name!r} is the user or entity column; choose the item's title / name "
                   "column or (none).")
    return out


def guess_mapping(columns: list[str]) -> dict[str, str | None]:
    """Initial guesses for User / Item / Value / Item name / Entity: distinct columns, never the same
    column twice (the guesser used to pick ``patientunitstayid`` as both User and Item)."""
    cols = [str(c) for c in columns]
    taken: set[str] = set()

    def pick(*hints: str, optional: bool = False) -> str | None:
        free = [c for c in cols if c not in taken]
        g = guess_column(free, *hints)
        if g is None and not optional:
            g = free[0] if free else None
        if g is not None:
            taken.add(g)
        return g

    out: dict[str, str | None] = {}
    out["user"] = pick("user", "user_id", "userid", "patientunitstayid", "stay", "patient", "patient_id",
                       "customer", "client")
    out["entity"] = pick("entity", "hospitalid", "hospital", "region", "bank", "site", "zip", "clinic")
    out["item"] = pick("item", "item_id", "itemid", "movie", "product", "drugname", "drug", "medication",
                       "code")
    out["value"] = pick("value", "rating", "count", "score", "amount", optional=True)
    out["name"] = pick("title", "item_name", "name", optional=True)
    return out


def bound_rule_text(value_max: float) -> str:
    """The one rule for values above the declared bound, the same in every load path."""
    return (f"One rule in every load path (upload, MovieLens, eICU): ratings above the declared maximum "
            f"({value_max:g}) are refused — the declared scale is wrong; counts above it are kept, reported "
            "in the notes and clipped to [0, bound] by every DP mechanism before any aggregate. The bound is "
            "public: take it from the scale's definition, never from the data.")


# ------------------------------------------------------------------------------ privacy statements
#: Budget-plan keys of the DP prototype methods → the stage names their ledger rows use.
PLAN_TO_LEDGER = {"counts": "recovery: counts", "support": "recovery: support", "sums": "recovery: sums",
                  "choice": "trial choice"}


def ledger_stage_name(plan_key: str) -> str:
    return PLAN_TO_LEDGER.get(plan_key, plan_key)


def budget_plans(method: str, dataset: FederatedDataset, config: RunConfig) -> dict[str, pd.DataFrame]:
    """The ε per stage the DP method plans, named as the ledger names them, for each k it may use:
    ``{"k = 1": table, "k = K": table}`` when the automatic k depends on the noisy size, else one
    table. Stages with ε = 0 are left out (they do not run and the ledger has no row for them)."""
    cls = PROTOTYPE_METHODS.get(method)
    if cls is None or not getattr(cls, "private", False) or not hasattr(cls, "budget_plan"):
        return {}
    params = dict(config.prototype_params)
    params.setdefault("epsilon", config.epsilon)
    params.setdefault("delta", config.delta)
    obj = cls(k=config.k, value_max=dataset.value_max, **params)
    ks = [int(config.k)]
    if getattr(obj, "cluster_size", None) is not None and int(config.k) > 1:
        ks = [1, int(config.k)]
    out = {}
    for k in ks:
        plan = obj.budget_plan(dataset.n_items, k)
        if k == 1:  # with one cluster every user is in it: the clustering stages do not run
            plan = {s: e for s, e in plan.items() if s not in ("candidates", "search", "choice")}
        # the size stage runs only when something uses n̂ (the method says which)
        runs_size = getattr(obj, "_size_stage_runs", lambda: True)()
        if not runs_size:
            plan.pop("size", None)
        out[f"k = {k}"] = pd.DataFrame([{"stage": ledger_stage_name(s), "epsilon": e}
                                        for s, e in plan.items() if e > 0])
    return out


def k_note(method: str, config: RunConfig) -> str:
    """Where k is set: what k means for this method (a maximum with the automatic k)."""
    cls = PROTOTYPE_METHODS.get(method)
    if cls is None:
        return ""
    try:
        obj = cls(k=config.k, value_max=1.0, **dict(config.prototype_params))
    except Exception:
        return ""
    cs = getattr(obj, "cluster_size", None)
    if getattr(cls, "private", False) and cs is not None and int(config.k) > 1:
        return (f"k = {config.k} is a **maximum**: each entity uses k_eff = clip(⌊n̂ / {cs:g}⌋, 1, {config.k}) "
                f"from its noisy user count n̂ (the *size* ledger row), so an entity with fewer than about "
                f"{2 * int(cs)} users sends **one** prototype. Post-processing of a DP release (no extra "
                "cost, never the true count); under DP one large cluster measured better than several "
                "noisy small ones. Set *cluster_size* (Advanced) to change it.")
    if not getattr(cls, "private", False):
        return f"k = {config.k} prototypes per entity (capped by the entity's number of training users)."
    return f"k = {config.k} prototypes per entity."


# ------------------------------------------------------------------------------ verdicts
def entity_verdict(docs: dict[str, dict], method: str, metric: str = "mar",
                   baselines: tuple[str, ...] = ("individual", "dp-popularity")) -> dict:
    """Per entity: does ``method`` beat each baseline on ``metric`` (one run, one split)?

    Returns ``{"H", "eps", "baselines": {b: {"better", "worse", "tie", "entities": {name: diff}}}}``;
    ``diff`` > 0 means the federation is better. A tie is |diff| < 0.5 % of the baseline's value.
    """
    fed = {e["name"]: e[metric] for e in docs[method]["entities"]}
    out = {"H": len(fed), "eps": docs[method]["privacy"]["epsilon"], "metric": metric, "baselines": {}}
    for b in baselines:
        if b not in docs:
            continue
        base = {e["name"]: e[metric] for e in docs[b]["entities"]}
        better = worse = tie = 0
        diffs = {}
        for name, v in fed.items():
            w = base.get(name)
            if v is None or w is None or not (math.isfinite(v) and math.isfinite(w)):
                continue
            d = (w - v) if metric in LOWER_IS_BETTER else (v - w)
            diffs[name] = d
            if abs(d) < 0.005 * max(abs(w), 1e-12):
                tie += 1
            elif d > 0:
                better += 1
            else:
                worse += 1
        out["baselines"][b] = {"better": better, "worse": worse, "tie": tie, "entities": diffs}
    return out


def verdict_sentence(v: dict) -> str:
    """“At ε = 1 the federation is better than going alone for 12 of 30 entities (and than DP
    popularity for 20 of 30).”"""
    eps = format_epsilon(v["eps"])
    parts = []
    names = {"individual": "going alone (individual models)", "dp-popularity": "DP popularity"}
    for b, r in v["baselines"].items():
        word = "better" if r["better"] >= r["worse"] else "worse"
        n = r["better"] if word == "better" else r["worse"]
        tie = f", {r['tie']} tied" if r["tie"] else ""
        parts.append(f"{word} than {names.get(b, b)} for **{n} of {v['H']}** entities{tie}")
    if not parts:
        return "Add *individual* to the comparison to get the verdict."
    m = METRIC_SHORT.get(v["metric"], v["metric"])
    return f"At ε = {eps} the federation is " + "; ".join(parts) + f" ({m}, held-out entries)."


def sweep_entity_verdict(sweep_doc: dict, epsilon: float, metric: str = "mar",
                         baselines: tuple[str, ...] = ("individual", "dp-popularity")) -> dict | None:
    """Like :func:`entity_verdict` on a sweep at one ε, over seeds: an entity counts as better (worse)
    when the mean difference over seeds exceeds twice its standard error; otherwise it is
    inconclusive. None when the sweep has no run at that ε."""
    method = sweep_doc["config"]["method"]

    def per_entity(m: str, eps: float | None) -> dict[str, dict[int, float]]:
        out: dict[str, dict[int, float]] = {}
        for r in sweep_doc["runs"]:
            if r["method"] != m or (eps is not None and float(r["epsilon"]) != float(eps)):
                continue
            for e in r["entities"]:
                out.setdefault(e["name"], {})[r["seed"]] = e[metric]
        return out

    fed = per_entity(method, epsilon)
    if not fed:
        return None
    res = {"H": len(fed), "eps": epsilon, "metric": metric, "baselines": {}}
    for b in baselines:
        base = per_entity(b, None)
        if not base:
            continue
        better = worse = tie = 0
        for name, by_seed in fed.items():
            seeds = [s for s in by_seed if s in base.get(name, {})]
            d = np.array([(base[name][s] - by_seed[s]) if metric in LOWER_IS_BETTER else (by_seed[s] - base[name][s])
                          for s in seeds], dtype=float)
            d = d[np.isfinite(d)]
            if len(d) == 0:
                continue
            se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else math.inf
            if abs(d.mean()) > 2 * se:
                better += d.mean() > 0
                worse += d.mean() < 0
            else:
                tie += 1
        res["baselines"][b] = {"better": int(better), "worse": int(worse), "tie": int(tie), "entities": {}}
    return res


def sweep_verdict_sentence(v: dict, n_seeds: int) -> str:
    eps = format_epsilon(v["eps"])
    names = {"individual": "going alone (individual models)", "dp-popularity": "DP popularity"}
    parts = [f"better than {names.get(b, b)} for **{r['better']} of {v['H']}** entities, worse for "
             f"{r['worse']}, inconclusive for {r['tie']}" for b, r in v["baselines"].items()]
    if not parts:
        return "Add *individual* to the reference lines to get the verdict."
    m = METRIC_SHORT.get(v["metric"], v["metric"])
    return (f"At ε = {eps} the federation is " + "; ".join(parts) +
            f" ({m}; better/worse = mean difference over {n_seeds} seeds beyond 2 standard errors).")


def pays_from_sentence(crossing: float | None, metric: str = "mar") -> str:
    m = METRIC_SHORT.get(metric, metric)
    if crossing is None:
        return f"Federation does **not pay at any ε on this grid** ({m}): individual models stay better."
    if math.isinf(crossing):
        return (f"Federation pays only **without privacy** (ε = ∞) on this grid ({m}): at every finite ε "
                "tested, individual models are better.")
    return f"Federation pays from **ε ≈ {format_epsilon(crossing)}** ({m}; at that ε and every larger one on the grid)."


def pays_from_sweep(sweep_doc: dict, metric: str = "mar") -> str:
    """The headline "federation pays from ε ≈ X" of a sweep, or why the metric cannot say it (e.g. an
    RMSE in zero mode, as the CLI reports it)."""
    from dpfed_core.evaluation.experiments import crossing_report

    try:
        rep = crossing_report(sweep_doc, metric)
    except ConfigError as exc:
        return escape_md(str(exc))
    if not rep.get("meaningful", True):
        return f"{METRIC_SHORT.get(metric, metric)}: {escape_md(rep['text'])}"
    return pays_from_sentence(rep.get("epsilon"), metric)


from dpfed_core.evaluation.planner import epsilon_for_utility, users_to_pay  # noqa: E402,F401  (the pages' API)


# ------------------------------------------------------------------------------ clinical
def user_set_metrics(ds: FederatedDataset, split, result: MethodResult, entity: str, user, n: int = 10) -> dict:
    """Jaccard, F1 and PR-AUC of this user's top-n against their hidden events (NaN if none hidden)."""
    from dpfed_core.evaluation.metrics import set_metrics

    row = user_row(ds, entity, user)
    scores = result.entity_factors().scores([row])
    out = set_metrics(scores, split.train[row:row + 1], split.test[row:row + 1], n)
    return {k: float(v[0]) for k, v in out.items()}


def entity_set_metrics(ds: FederatedDataset, split, result: MethodResult, entity: str, n: int = 10) -> dict:
    """Mean Jaccard / F1 / PR-AUC over the entity's test users (its held-out data)."""
    from dpfed_core.evaluation.metrics import set_metrics

    sl = ds.entity_slices()[ds.entity_index(entity)]
    users = np.asarray([u for u in split.test_users if sl.start <= u < sl.stop], dtype=int)
    if len(users) == 0:
        return {"jaccard": math.nan, "f1": math.nan, "pr_auc": math.nan, "n": 0}
    scores = result.entity_factors().scores(users)
    out = set_metrics(scores, split.train[users], split.test[users], n)
    return {k: float(np.nanmean(out[k])) for k in ("jaccard", "f1", "pr_auc")} | {"n": int(len(users))}


def entity_metric(doc: dict, entity: str, metric: str = "mar") -> float | None:
    for e in doc.get("entities", []):
        if e["name"] == entity:
            return e.get(metric)
    return None


def is_event_data(ds: FederatedDataset) -> bool:
    """Event data (counts of events per stay, e.g. eICU medications): the clinical set metrics apply."""
    return ds.value_kind in ("counts", "implicit")


def read_upload(data: bytes, filename: str) -> tuple[pd.DataFrame, bool]:
    """The uploaded table for the column mapper and whether its first line is data (header-less,
    e.g. MovieLens ``u.data``). A header-less table gets columns ``column 1`` … ``column N`` and keeps
    its first line as a data row; the upload itself is never changed."""
    df = upload_columns(data, filename)
    if not headerless([str(c) for c in df.columns]):
        return df, False
    first = pd.DataFrame([[str(c) for c in df.columns]], columns=df.columns)
    out = pd.concat([first, df.astype(str)], ignore_index=True)
    out.columns = [f"column {i + 1}" for i in range(out.shape[1])]
    return out, True

