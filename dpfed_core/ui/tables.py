"""Result documents and fitted models as tables and sentences for the pages (metrics, ledger,
messages, prototypes, recommendations' context)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.data.split import Split
from dpfed_core.evaluation.experiments import sweep_table
from dpfed_core.evaluation.verdicts import TIE_FRACTION, compare_one, format_epsilon
from dpfed_core.evaluation.verdicts import metric_at as verdict_metric_at
from dpfed_core.federation.protocol import user_row
from dpfed_core.federation.summable import release_words
from dpfed_core.methods import MethodResult
from dpfed_core.models.blend import MIN_EVIDENCE_USERS
from dpfed_core.reporting.report_format import shape_text
from dpfed_core.ui.inputs import escape_md

METRIC_LABELS = {
    "train_rmse": "train RMSE",
    "test_rmse": "test RMSE",
    "mar": "MAR (mean average rank; 0 = top, 0.5 = random)",
    "precision_at_10": "precision@10",
    "recall_at_10": "recall@10",
    "ndcg_at_10": "NDCG@10",
}


def metric_at(metric: str, labels: dict[str, str] | None = None) -> str:
    """A metric's label from ``labels`` (default :data:`METRIC_LABELS`), a ranking metric at its own N
    included (``precision_at_5`` → "precision@5", as the report's
    :func:`~dpfed_core.reporting.report_sections.metric_label`); an unknown name as it is."""
    return verdict_metric_at(metric, METRIC_LABELS if labels is None else labels)


def progress_text(event: str, info: dict) -> str | None:
    """A sentence for each protocol event (for ``st.status``), None for events not worth a line."""
    ent = info.get("entity")
    pos = f" ({info['index'] + 1}/{info['total']})" if "index" in info and "total" in info else ""
    if event == "round1_start":
        if info.get("stage"):  # a summable method: one release (share) per stage
            return f"Round 1 · entity **{ent}**{pos} computes its DP {release_words(info['stage'])} on its own training data…"
        return f"Round 1 · entity **{ent}**{pos} computes its prototypes on its own training data…"
    # with a DP-selected catalogue the columns of what is sent and of V are shared keys, not items
    cols = "shared keys" if info.get("keys") else "items"
    if event == "round1_done":
        shape = info.get("shape")
        return f"Round 1 · **{ent}** sent {shape[0]} prototypes × {shape[1]} {cols} to the server" if shape else None
    if event == "server_start" and info.get("stage"):
        return f"Server · adds up the {release_words(info['stage'], plural=True)} (post-processing, no privacy cost)…"
    if event == "server_start":
        return f"Server · fitting V on {info.get('n_prototypes', '?')} stacked prototypes (no privacy cost)…"
    if event == "server_done":
        shape = info.get("shape")
        return f"Server · V ready ({shape[0]} {cols} × {shape[1]} factors)" if shape else "Server · V ready"
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


#: Warnings after which a run learned nothing (an error outcome); the others qualify a success.
LEARNED_NOTHING = ("empty-catalogue", "chance-ranking")


def run_outcome(doc: dict, seconds: float) -> tuple[str, str]:
    """(state, label) of a finished run for its status box: ``"complete"`` (a green check) for a run
    that learned something — with "1 warning, see below" when some entities have no test users —
    and ``"error"`` only for a run that learned nothing (an empty DP catalogue, a chance ranking)."""
    from dpfed_core.ui.jobs import format_seconds

    warns = doc.get("warnings") or []
    took = format_seconds(seconds) if seconds >= 1 else f"{seconds:.2f} s"
    if any(w.get("code") in LEARNED_NOTHING for w in warns):
        return "error", f"Finished in {took}, but learned nothing — see below"
    if warns:
        n = len(warns)
        return "complete", f"Done in {took} — {doc['privacy']['label']} ({n} warning{'s' if n > 1 else ''}, see below)"
    return "complete", f"Done in {took} — {doc['privacy']['label']}"


def headline_metrics(mode: str, top_n: int = 10) -> list[tuple[str, str, str]]:
    """(key, label, help) of the metrics a run's headline shows, the ranking ones at the run's N
    (``top_n``). Zero mode fits which items a user has (a ranking model): its RMSE against the values is
    not a measure of it and is not headlined. Observed mode fits the values of observed entries: RMSE
    first, then the ranking metrics."""
    n = int(top_n)
    top = "ten" if n == 10 else f"{n}"
    ranking = [("mar", "MAR", "Mean average rank of the hidden items: 0 = ranked first, 0.5 = random order."),
               (f"ndcg_at_{n}", f"NDCG@{n}", f"Hidden items near the top of the {top} recommendations (1 = perfect)."),
               (f"precision_at_{n}", f"precision@{n}",
                f"Share of the {top} recommendations that were hidden items.")]
    if mode == "observed":
        return [("test_rmse", "test RMSE", "Error of the predicted values of the hidden entries (the data's "
                                           "scale).")] + ranking[:2]
    return ranking


#: Said under the headline of a zero-mode run on ratings, where the RMSE would mislead.
RMSE_NOT_HEADLINED = ("Zero mode ranks items (absent = 0), so its predictions are not on the values' scale: the "
                      "test RMSE (in the run document and on the Evaluate page) does not measure this model.")


def has_prototypes(result: MethodResult) -> bool:
    """The run released prototypes (a prototype method): the server saw stacked rows P."""
    return bool(getattr(result.model, "releases_", None))


def messages_table(doc: dict) -> pd.DataFrame:
    """The run's message log, one row per logged message; ``copies`` is how many times it was sent (one
    per user for a per-user download or upload; 1 in a document that does not say)."""
    df = pd.DataFrame(doc.get("messages", []),
                      columns=["round", "sender", "receiver", "content", "shape", "bytes", "copies"])
    if not df.empty:
        df["shape"] = df["shape"].map(shape_text)
        df["copies"] = df["copies"].fillna(1).astype(int)
    return df


def broadcast_words(doc: dict) -> str:
    """Where the run's item model went, as its message log says: "broadcast to every entity in round r"
    (the last round the server sent the entities something), or that no entity received it when the
    log has no message from the server (a central curator keeps the model it fits)."""
    from dpfed_core.federation.messages import SERVER

    rounds = [int(m.get("round", 0)) for m in doc.get("messages") or [] if m.get("sender") == SERVER]
    if not rounds:
        return "kept where it was fitted: no entity received it (the message log has no message to them)"
    return f"broadcast to every entity in round {max(rounds)}"


def ledger_table(doc: dict) -> pd.DataFrame:
    df = pd.DataFrame(doc["privacy"]["ledger"])
    if df.empty:
        return pd.DataFrame(columns=["entity", "stage", "mechanism", "epsilon", "delta",
                                     "sensitivity", "noise_scale", "note"])
    return df


def per_stage_table(doc: dict) -> pd.DataFrame:
    """ε per (entity, stage) as a wide table: one row per entity, one column per stage (what the stage
    would cost alone), then the entity's ε and δ as the accountant composed them — never the stages'
    sum, which overstates the spend when Gaussian stages compose under zCDP."""
    df = pd.DataFrame(doc["privacy"]["per_stage"])
    if df.empty:
        return df
    wide = df.pivot_table(index="entity", columns="stage", values="epsilon", aggfunc="sum", sort=False)
    wide.columns = [f"{c} (alone)" for c in wide.columns]
    per = {e["entity"]: e for e in doc["privacy"].get("per_entity") or []}
    if per:
        wide["ε (composed)"] = [float(per.get(e, {}).get("epsilon", math.nan)) for e in wide.index]
        wide["δ (composed)"] = [float(per.get(e, {}).get("delta", math.nan)) for e in wide.index]
        wide["composed by"] = [str(per.get(e, {}).get("accountant", "")) for e in wide.index]
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
                f"differential-privacy guarantee holds (configured budget ({format_epsilon(p['epsilon'])}, "
                f"{p['delta']:.3g})). {FLOAT_SAMPLER_NOTE}")
    text = (f"**{GUARANTEE_NAME.capitalize()}: ({format_epsilon(p['epsilon'])}, {p['delta']:.3g})-DP** for every user "
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
        where = ("formed in-process (the cryptographic protocol runs in the Flower deployment)"
                 if trust.get("in_process", True) else
                 "formed by Flower's SecAgg+ (the server held masked vectors and their sum only)")
        text += (f"\n\n**Secure aggregation**: this guarantee holds against the server if the entities follow "
                 f"the protocol; against the server colluding with all other entities, each entity's own "
                 f"noise share gives ({format_epsilon(c['epsilon'])}, {c['delta']:.3g})-DP. In this run the sum was "
                 f"{where}.")
        if trust.get("noise"):
            text += (" Its noise was drawn once, on the sum of the entities' exact shares, with the variance their "
                     "noise shares would add up to; no entity's share carried noise of its own here, so the "
                     "coalition figure is what each entity's own share gives when deployed.")
    elif trust:
        text += "\n\nNo secure aggregation: every entity added the full noise to its own release."
    return text


def broadcast_column_names(parts: tuple | None, n_columns: int) -> list[str]:
    """Names of the broadcast V's columns: its item factors ("factor 1", …) and the column of the DP
    popularity, where the method puts one (``parts``: its ``broadcast_parts``, (factor slice, popularity
    column))."""
    fac, pop = parts if parts is not None else (slice(0, n_columns), None)
    names = [f"column {c + 1}" for c in range(n_columns)]
    if fac is not None:
        for i, c in enumerate(range(*fac.indices(n_columns))):
            names[c] = f"factor {i + 1}"
    if pop is not None:
        names[pop] = "DP popularity"
    return names


def top_columns(P: np.ndarray, n: int) -> np.ndarray:
    """Indices of the n items with the largest total mass in P (columns to show in a heatmap)."""
    mass = np.abs(np.asarray(P)).sum(axis=0)
    n = min(n, P.shape[1])
    return np.argsort(-mass, kind="stable")[:n]


def top_items_per_factor(V: np.ndarray, item_names: np.ndarray, n: int = 8,
                         columns: list[str] | None = None) -> pd.DataFrame:
    """The n items with the largest loading on each column of V (fewer rows when the data has fewer
    items; "—" where an item does not load on the column at all: nothing to rank it by). ``columns``:
    the columns' names (:func:`broadcast_column_names`), "factor 1", … by default."""
    V = np.asarray(V)
    n = min(n, V.shape[0])
    names = columns or [f"factor {f + 1}" for f in range(V.shape[1])]
    cols = {}
    for f in range(V.shape[1]):
        order = np.argsort(-V[:, f], kind="stable")[:n]
        cols[names[f]] = [f"{item_names[j]} ({V[j, f]:.2f})" if V[j, f] != 0 else "—" for j in order]
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
    """The metric columns of a :func:`metrics_frame`, the ranking ones at whatever N the runs measured."""
    ranked = {c.rpartition("_at_")[0]: c for c in map(str, df.columns) if c.rpartition("_at_")[2].isdigit()}
    return [c for c in ("train_rmse", "test_rmse", "mar", *(ranked.get(b, f"{b}_at_10")
                                                            for b in ("precision", "recall", "ndcg")))
            if c in df.columns]


def is_clinical(ds: FederatedDataset) -> bool:
    """Clinical data (ICU stays: the eICU loader or the bundled clinic sample): only there do the
    pages speak of stays, patients and clinicians."""
    name = str(ds.name).lower()
    return name.startswith("eicu") or name.startswith("sample: clinic") or name.startswith("clinic")


def unit_word(ds: FederatedDataset, plural: bool = True) -> str:
    """What one row of the data is called on the pages: "stays" on clinical data, else "users"."""
    return ("stays" if plural else "stay") if is_clinical(ds) else ("users" if plural else "user")


#: Scores closer than this (relative to the largest) are one score: the list would be an arbitrary order.
FLAT_SCORES = 1e-9


def cannot_rank(scores: np.ndarray, model: str, unit: str = "user") -> str | None:
    """Why a model's top-N for one user is no ranking (None when it is one): every candidate has the
    same score — zero when the model learned nothing that applies to this user — so its order would
    be the items' order in the catalogue, not advice."""
    s = np.asarray(scores, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return f"The {model} has no item left to suggest for this {unit}."
    spread = float(s.max() - s.min())
    if spread <= FLAT_SCORES * max(1.0, float(np.abs(s).max())):
        why = ("gives every item a score of 0: it learned nothing that applies to this " + unit
               if float(np.abs(s).max()) <= FLAT_SCORES else "gives every candidate item the same score")
        return (f"The {model} cannot rank items for this {unit}: it {why}. A list would only repeat the "
                "items in catalogue order, so none is shown.")
    return None


def similar_evidence(ds: FederatedDataset, split: Split, entity: str, user: str | int, items, k: int = 40) -> list[str]:
    """For each recommended item, in words: how many of the ``k`` most similar {stays|users} of the same
    entity (cosine similarity of their training rows, computed inside the entity) have it, e.g.
    "seen with 12 of 40 similar stays". The entity's own data, as the entity itself would compute it."""
    sl = ds.entity_slices()[ds.entity_index(entity)]
    row = user_row(ds, entity, user)
    X = split.train[sl.start:sl.stop].tocsr().astype(float)
    me = split.train[row].astype(float)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    mine = float(np.sqrt(me.multiply(me).sum()))
    unit = unit_word(ds)
    if mine == 0:
        return [f"no training data for this {unit_word(ds, False)} to compare" for _ in items]
    sim = np.asarray((X @ me.T).todense()).ravel() / np.maximum(norms * mine, 1e-12)
    sim[row - sl.start] = -1.0  # not itself
    order = np.argsort(-sim, kind="stable")
    near = order[: min(int(k), int((sim > 0).sum()))]
    if len(near) == 0:
        return [f"no similar {unit} at this entity" for _ in items]
    has = (X[near][:, np.asarray(items, dtype=int)] > 0).sum(axis=0)
    has = np.asarray(has).ravel()
    return [f"seen with {int(c)} of {len(near)} similar {unit}" for c in has]


def dp_excluded_items(ds: FederatedDataset, result: MethodResult) -> np.ndarray | None:
    """Items the run's DP catalogue selection left out (indices), or None when the run selected no
    catalogue (a declared catalogue, a non-private method): the federated model knows nothing of them."""
    cols = (getattr(result, "extra", None) or {}).get("catalogue")
    if cols is None:
        return None
    keep = np.zeros(ds.n_items, dtype=bool)
    keep[np.asarray(cols, dtype=int)] = True
    return np.flatnonzero(~keep)


def declared_outside_items(ds: FederatedDataset, result: MethodResult) -> np.ndarray | None:
    """Items of the data outside a declared catalogue that leaves some out (indices), or None when the
    run shared every item it had or selected its catalogue by DP: never shared, so the federation's
    part knows nothing of them; each entity's own part scores those it has rows for."""
    extra = getattr(result, "extra", None) or {}
    if not extra.get("catalogue_declared") or extra.get("catalogue_item_key") is None:
        return None
    return np.flatnonzero(np.asarray(extra["catalogue_item_key"]) < 0)


def names_known_to(ds: FederatedDataset, split: Split, result: MethodResult, entity: str) -> np.ndarray:
    """(items,) bool: the item names this entity knows — those it holds training rows for, and the public
    ones every entity knows: a declared catalogue, the names a DP selection by name released, the items of
    a public item-feature table. A federation-wide DP catalogue releases hash keys, never names: an item
    only other entities hold is unknown here, whatever key it falls in."""
    from dpfed_core.models.shared_items import known_items

    sl = ds.entity_slices()[ds.entity_index(entity)]
    known = known_items(split.train[sl]).copy()
    if ds.item_source == "declared":
        known[:ds.n_items if ds.n_declared is None else ds.n_declared] = True
    extra = getattr(result, "extra", None) or {}
    if extra.get("catalogue") is not None and extra.get("catalogue_keys") is None:
        known[np.asarray(extra["catalogue"], dtype=np.int64)] = True
    if ds.item_features is not None:
        known |= np.any(np.asarray(ds.item_features) != 0, axis=1)
    return known


def key_partners(ds: FederatedDataset, result: MethodResult, known: np.ndarray | None = None) -> dict[int, list[str]]:
    """Items whose key in a federation-wide DP catalogue also stands for other items of the data (a
    public hash bucket several names fall in, or a coarse level of their names): item index → the other
    names, so the page can say the federation's part for the item is theirs together. ``known`` (bool,
    items): name only the partners an entity knows (:func:`names_known_to`) — a key is a hash, and a name
    only other entities hold never reaches it. Empty for a declared catalogue, a per-entity selection
    (items by name) or no selection."""
    extra = getattr(result, "extra", None) or {}
    if extra.get("catalogue_declared") or extra.get("catalogue_keys") is None \
            or extra.get("catalogue_item_key") is None:
        return {}
    key = np.asarray(extra["catalogue_item_key"], dtype=np.int64)
    items = np.flatnonzero(key >= 0)
    nameable = np.ones(ds.n_items, dtype=bool) if known is None else np.asarray(known, dtype=bool)
    out: dict[int, list[str]] = {}
    for _, group in pd.Series(items, index=key[items]).groupby(level=0):
        if group.size > 1:
            for j in group.to_numpy()[nameable[group.to_numpy()]]:
                others = [str(ds.item_names[i]) for i in group.to_numpy() if i != j and nameable[i]]
                if others:
                    out[int(j)] = others
    return out


def unshared_items_notes(ds: FederatedDataset, result: MethodResult, units: str) -> list[str]:
    """The Recommend page's note on each kind of item the federation never shared — left out by the DP
    catalogue selection, or outside a declared catalogue — naming the first eight (Markdown)."""
    out = []
    for unshared, what, own, fix in (
            (dp_excluded_items(ds, result),
             f"were left out of the shared catalogue by the DP selection** (too few {units} across the entities "
             "had them to pass the noise threshold at this ε): the shared part of the model knows nothing of them",
             "still scores", "Declaring the item list (a formulary) on the Data page shares every item."),
            (declared_outside_items(ds, result),
             "are not in the declared item catalogue**, so they were never shared: the federation's part of the "
             "model knows nothing of them",
             "scores", "Adding them to the item catalogue on the Data page shares them.")):
        if unshared is None or not len(unshared):
            continue
        names = ", ".join(escape_md(str(x)) for x in ds.item_names[unshared[:8]])
        out.append(f"**{len(unshared)} of {ds.n_items} items {what} — {names}{' …' if len(unshared) > 8 else ''}. "
                   f"Each entity's own part {own} those it has rows for (marked in “why”). {fix}")
    return out


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


def user_history(ds: FederatedDataset, split: Split, entity: str, user: str | int) -> pd.DataFrame:
    """What the user already has: training entries and the entries hidden for testing."""
    row = user_row(ds, entity, user)
    parts = []
    for mat, kind in ((split.train, "training data"), (split.test, "hidden (test)")):
        r = mat[row]
        for j, v in zip(r.indices, r.data):
            parts.append({"item": ds.item_names[j], "value": float(v), "status": kind})
    df = pd.DataFrame(parts, columns=["item", "value", "status"])
    return df.sort_values(["status", "value"], ascending=[True, False], ignore_index=True)


def entity_test_users(ds: FederatedDataset, split: Split, entity: str) -> np.ndarray:
    """Rows of the entity's test users (its held-out data), in the split's order."""
    sl = ds.entity_slices()[ds.entity_index(entity)]
    return np.asarray([u for u in split.test_users if sl.start <= u < sl.stop], dtype=int)


def entity_set_metrics(ds: FederatedDataset, split: Split, result: MethodResult, entity: str, n: int = 10) -> dict:
    """Mean Jaccard / F1 / PR-AUC over the entity's test users (its held-out data)."""
    from dpfed_core.evaluation.metrics import set_metrics

    users = entity_test_users(ds, split, entity)
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


#: The Recommend page's word on one entity needs its difference beyond this many standard errors of the
#: paired difference over that entity's own test users (two-sided, 95 %); inside them it says so instead.
ENTITY_Z = 1.96


def entity_paired_spread(ds: FederatedDataset, split: Split, fed: MethodResult, alone: MethodResult, entity: str,
                         n: int = 10, events: bool = False) -> dict:
    """Standard error of the federated − alone difference of each measure over the entity's own test users,
    paired (the same users, the same hidden entries): ``{"mar": se, "pr_auc": se or None, "n": users,
    "mar_diff": the difference itself}`` (None where fewer than 2 test users or no hidden entry).

    MAR is a ratio of sums over users (Σ rank-weighted hidden entries / Σ hidden entries, the same
    denominators for both lists), so its difference D = Σ x_u / Σ d_u with x_u the per-user difference of
    numerators; its standard error is the ratio estimator's, sqrt(n/(n − 1) · Σ (x_u − D·d_u)²) / Σ d_u.
    PR-AUC (event data) is a mean over users: the sd of the per-user differences / √n."""
    from dpfed_core.evaluation.metrics import ranking_metrics, set_metrics

    users = entity_test_users(ds, split, entity)
    out = {"mar": None, "pr_auc": None, "n": int(users.size), "mar_diff": None}
    if users.size < 2:
        return out
    train, test = split.train[users], split.test[users]
    s_fed, s_alone = fed.entity_factors().scores(users), alone.entity_factors().scores(users)
    a, b = ranking_metrics(s_fed, train, test, n), ranking_metrics(s_alone, train, test, n)
    den = a["mar_den"]
    if den.sum() > 0:
        x = a["mar_num"] - b["mar_num"]
        d = x.sum() / den.sum()
        out["mar_diff"] = float(d)
        out["mar"] = float(math.sqrt(users.size / (users.size - 1) * np.sum((x - d * den) ** 2)) / den.sum())
    if events:
        diff = set_metrics(s_fed, train, test, n)["pr_auc"] - set_metrics(s_alone, train, test, n)["pr_auc"]
        diff = diff[np.isfinite(diff)]
        if diff.size >= 2:
            out["pr_auc"] = float(np.std(diff, ddof=1) / math.sqrt(diff.size))
    return out


def entity_against_alone(fed_mar: float | None, alone_mar: float | None, fed_set: dict | None = None,
                         alone_set: dict | None = None, spread: dict | None = None) -> dict:
    """One entity's federated list against its list alone on its held-out data, by the verdicts' rule
    (:func:`~dpfed_core.evaluation.verdicts.compare_one`): ``{"mar": word or None, "pr_auc": word or None,
    "worse": [phrases], "better": [phrases], "noise": [phrases]}`` — a phrase such as "MAR 0.122 vs 0.117"
    for each measure whose word is worse or better (PR-AUC only for event data, ``*_set`` from
    :func:`entity_set_metrics`). With ``spread`` (:func:`entity_paired_spread`) a difference within
    :data:`ENTITY_Z` standard errors is "noise", not a word, and every phrase states its ± at 95 %."""
    values = {"mar": (fed_mar, alone_mar)}
    if fed_set and alone_set:
        values["pr_auc"] = (fed_set["pr_auc"], alone_set["pr_auc"])
    words = {"pr_auc": None, **{k: compare_one(f, b, k) for k, (f, b) in values.items()}}
    se = {k: (spread or {}).get(k) for k in values}
    for k, (f, b) in values.items():
        if words[k] in ("better", "worse") and se[k] is not None and abs(float(f) - float(b)) <= ENTITY_Z * se[k]:
            words[k] = "noise"

    def phrase(k: str) -> str:
        f, b = values[k]
        pm = f", ± {ENTITY_Z * se[k]:.3f} at 95 %" if se[k] is not None else ""
        return f"{'MAR' if k == 'mar' else 'PR-AUC'} {f:.3f} vs {b:.3f}{pm}"

    return {**words, **{w: [phrase(k) for k, v in words.items() if v == w] for w in ("worse", "better", "noise")}}


def few_test_users_text(entity_md: str, n_test: int, unit: str, units: str, alone_name: str,
                        fed_mar: float | None, alone_mar: float | None) -> str:
    """What the Recommend page says of an entity with fewer test users than the blend's evidence rule:
    no verdict for it alone, and how the Evaluate page and the command line still count it — its direction
    is one entity's in their sign test across entities, which is what makes a few noisy entities evidence."""
    def mar(x: float | None) -> str:
        return f"{x:.3f}" if x is not None and math.isfinite(float(x)) else "undefined"

    return (f"{entity_md} has **{n_test} test {units if n_test != 1 else unit}**: too few held-out users (under "
            f"{MIN_EVIDENCE_USERS}) to tell the federated list from {alone_name} here — MAR {mar(fed_mar)} vs "
            f"{mar(alone_mar)}; no verdict for this entity alone. The Evaluate page and the command line count its "
            "direction as one entity's in their verdict across entities (a sign test over every entity measured), "
            "where one small entity's noise cannot decide it.")


def entity_standing_banner(cmp: dict, n_test: int, entity_md: str, unit: str, units: str, alone_name: str,
                           fed_mar: float | None, alone_mar: float | None,
                           n_hidden: int) -> tuple[str, str, str] | None:
    """The Recommend page's word on one entity's federated list against the entity alone (``cmp`` from
    :func:`entity_against_alone`): ``(streamlit call, text, icon)``, or None when there is nothing to say.
    No test users or under the blend's evidence rule: no verdict (information); the two measures of event
    data disagreeing: neither word (a warning naming both); else worse, better or tied."""
    if cmp["mar"] is None:
        # an entity without test users has no held-out data: no verdict, never a green "win"
        return ("info", f"{entity_md} has **no test users**: there is no held-out data to compare the two lists on, "
                f"so there is no verdict for this entity. A test {unit} needs more than {n_hidden} entries: lower "
                "“Hidden entries per test user” when its users hold fewer, or raise “Test users per entity” (both "
                "Advanced, on the Federate page).", ":material/info:")
    if n_test < MIN_EVIDENCE_USERS:
        # a handful of held-out users is no evidence either way (the blend's own rule): no verdict, only numbers
        return ("info", few_test_users_text(entity_md, n_test, unit, units, alone_name, fed_mar, alone_mar),
                ":material/info:")
    if cmp["worse"] and cmp["better"]:
        # two measures disagree: neither word is this entity's verdict (Evaluate's uses its chosen metric)
        return ("warning", f"For {entity_md}, the two measures disagree on its held-out data: the federated list is "
                f"better than {alone_name} by {'; '.join(cmp['better'])} and worse by {'; '.join(cmp['worse'])} "
                "(lower MAR / higher PR-AUC is better). The Evaluate page judges each entity by its chosen metric.",
                ":material/balance:")
    if cmp.get("noise") and not cmp["worse"] and not cmp["better"]:
        # a difference inside the entity's own paired noise is no verdict: a clinician would act on a coin flip
        return ("info", f"For {entity_md}, the federated list and {alone_name} differ by less than their noise on "
                f"its {n_test} held-out {units if n_test != 1 else unit} ({'; '.join(cmp['noise'])}): no verdict "
                "for this entity alone. The Evaluate page and the command line count its direction as one entity's "
                "in their sign test across entities.", ":material/info:")
    if cmp["worse"]:
        return ("error", f"**For {entity_md}, the federated list is worse than {alone_name}** on its held-out data "
                f"({'; '.join(cmp['worse'])}; lower MAR / higher PR-AUC is better). Prefer this entity's own list "
                "here, or a larger ε.", ":material/report:")
    if cmp["better"]:
        return ("success", f"For {entity_md}, the federated list ranks this entity's held-out items better than "
                f"{alone_name} ({'; '.join(cmp['better'])}).", ":material/check_circle:")
    if cmp["mar"] == "tie":
        return ("info", f"For {entity_md}, the federated list ranks this entity's held-out items as well as "
                f"{alone_name} (MAR {fed_mar:.3f} vs {alone_mar:.3f}, within {100 * TIE_FRACTION:g} %): the "
                "federation adds nothing measurable here.", ":material/info:")
    return None


def sweep_frame(sweep_doc: dict, metric: str) -> pd.DataFrame:
    return pd.DataFrame(sweep_table(sweep_doc, metric))


def shareable_document(doc: dict) -> dict:
    """The run document as downloaded: the server's budget-store path (an absolute path of the
    machine running the dashboard) reduced to the file's name; everything else as computed."""
    from pathlib import PurePath

    out = dict(doc)
    odo = doc.get("odometer")
    if isinstance(odo, dict) and odo.get("store"):
        out["odometer"] = {**odo, "store": PurePath(str(odo["store"])).name}
    return out


def document_json(doc: dict) -> str:
    """The run document as a download: strict JSON (∞ written as the string "inf") of
    :func:`shareable_document`."""
    import json

    from dpfed_core.evaluation.experiments import json_safe

    return json.dumps(json_safe(shareable_document(doc)), indent=2, allow_nan=False)


def stored_run_summary(doc: dict) -> str:
    """One line for a stored run the pages cannot reopen: its method, where it ran, its privacy label
    and its headline metrics (:func:`headline_metrics` of its mode), as the run measured them."""
    method = (doc.get("method") or {}).get("name", "?")
    dep = doc.get("deployment")
    where = f"a Flower deployment of {dep.get('supernodes')} SuperNodes" if isinstance(dep, dict) else "in one process"
    o = doc.get("overall") or {}
    config = doc.get("config") or {}
    metrics = ", ".join(f"{label} {o[k]:.4f}" for k, label, _ in headline_metrics(config.get("mode"),
                                                                                   config.get("top_n", 10))
                        if isinstance(o.get(k), (int, float)) and math.isfinite(o[k]))
    label = (doc.get("privacy") or {}).get("label", "")
    return escape_md(f"{method}, {where}: {label}" + (f" — {metrics}" if metrics else ""))


NO_TEST_USERS = "no test users"


def undefined_as_words(wide: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """A per-entity metric table for display: numbers to ``digits`` decimals, an undefined value (an
    entity without test users, NaN) as "no test users" — never "nan", never coloured as a win."""
    out = wide.astype(float).map(lambda x: NO_TEST_USERS if not math.isfinite(x) else f"{x:.{digits}f}")
    return out
