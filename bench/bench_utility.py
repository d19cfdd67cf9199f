"""A federation that pays against going alone: the recommended DP method against ``local``
(each entity's own NMF + own popularity + public item features, weights on a local hold-out),
``individual``, exact pooled ``popularity``, ``central`` and ``dp-popularity``, with and without
secure aggregation, on eight federations.

Federations: ``sample:clinic`` (30 hospitals); the eICU demo's medication table by hospital and by
region, each with the demo's drug vocabulary declared as the formulary and without one (the run then
selects its catalogue by DP: federation-wide under secure aggregation, per entity without it);
MovieLens 100K by ZIP digit, occupation and age band (``u.item``'s genres and decade as public item
features, loaded by default).

Every run: zero mode (SPEC §1: ranking claims on MovieLens use zero mode), MAR (lower is better;
0.5 = random order), δ = 1e-6, rank 10, three seeds, simulation noise (reproducible, no privacy
claim), every method of a seed on the same split. DP methods at ε ∈ {1, 3}.

"Beats": the mean paired difference (method − reference, per seed) is below zero by more
than its sd over seeds; "loses" when above zero by more than its sd; "inconclusive" otherwise.

    .venv/bin/python bench/bench_utility.py [--quick] [--seeds 3] [--jobs 1] [--data clinic,...]
    .venv/bin/python bench/bench_utility.py --report-only      # from the rows log of an earlier run

Writes bench/results/utility.json and utility.md (``utility_quick.*`` with --quick). Real data is read
from ../shared/data and never written anywhere.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, md_table, outputs, write_results  # noqa: E402

DATASETS = ["clinic", "eicu-hospital", "eicu-hospital-nofml", "eicu-region", "eicu-region-nofml",
            "ml-zip", "ml-occupation", "ml-age",
            # large vocabularies without a declared catalogue: what a new user uploads
            "eicu-hospital-raw", "eicu-region-raw", "ml-occupation-long", "ml-occupation-long-declared", "zipf-2000",
            # hierarchical names (class|ingredient|product), as treatment and diagnosis tables write them
            "eicu-hospital-paths", "eicu-region-paths",
            # held out: tables and federations no default or rule of the site's model was chosen on
            "eicu-hospital-route", "eicu-region-route", "ml-gender-long", "zipf-3000",
            # a second held-out set: new entity lists, many tiny entities, deeper name paths
            "eicu-unit-paths", "ml-age-long", "zipf-paths-tiny",
            # ... and the same three with their items declared: what not declaring a catalogue costs
            "eicu-unit-paths-declared", "ml-age-long-declared", "zipf-paths-tiny-declared"]
#: The held-out federations (`--data` them together: `utility_heldout.md`, `utility_heldout2.md`).
HELD_OUT = ["eicu-hospital-route", "eicu-region-route", "ml-gender-long", "zipf-3000",
            "eicu-unit-paths", "ml-age-long", "zipf-paths-tiny"]
#: Federations without a declared catalogue (the DP selection decides what is shared).
NO_CATALOGUE = {"eicu-hospital-nofml", "eicu-region-nofml", "eicu-hospital-raw", "eicu-region-raw",
                "ml-occupation-long", "zipf-2000", "eicu-hospital-paths", "eicu-region-paths", *HELD_OUT}
LABEL = {"clinic": "sample:clinic (30 hospitals)",
         "eicu-hospital": "eICU medication by hospital, formulary declared",
         "eicu-hospital-nofml": "eICU medication by hospital, no formulary",
         "eicu-region": "eICU medication by region, formulary declared",
         "eicu-region-nofml": "eICU medication by region, no formulary",
         "ml-zip": "MovieLens 100K by ZIP digit", "ml-occupation": "MovieLens 100K by occupation",
         "ml-age": "MovieLens 100K by age band",
         "eicu-hospital-raw": "eICU medication by hospital, raw drug strings, no catalogue",
         "eicu-region-raw": "eICU medication by region, raw drug strings, no catalogue",
         "eicu-hospital-paths": "eICU medication by hospital, names class|ingredient|drug string, no catalogue",
         "eicu-region-paths": "eICU medication by region, names class|ingredient|drug string, no catalogue",
         "ml-occupation-long": "MovieLens 100K by occupation as a long table (no u.item)",
         "ml-occupation-long-declared": "the same long table with its catalogue declared (--items)",
         "zipf-2000": "synthetic Zipf catalogue, 2,400 items, 12 entities, no catalogue",
         "eicu-hospital-route": "eICU medication orders by hospital, items drug string | route (~3,100), no catalogue",
         "eicu-region-route": "eICU medication orders by region, items drug string | route (~3,100), no catalogue",
         "ml-gender-long": "MovieLens 100K by gender as a long table (no u.item)",
         "zipf-3000": "synthetic Zipf catalogue, 3,000 items, 8 entities (another draw), no catalogue",
         "eicu-unit-paths": "eICU medication by ICU unit type, names class|ingredient|drug string, no catalogue",
         "ml-age-long": "MovieLens 100K by age band as a long table (no u.item)",
         "zipf-paths-tiny": ("synthetic Zipf catalogue of 4,000 names group|family|item, 40 entities of 8–120 "
                             "users, no catalogue"),
         "eicu-unit-paths-declared": "the same eICU table by unit type with its names declared as the catalogue",
         "ml-age-long-declared": "the same MovieLens long table by age band with its catalogue declared (--items)",
         "zipf-paths-tiny-declared": "the same synthetic catalogue of name paths with its names declared"}
EPS = [1.0, 3.0]
#: On the federations without a catalogue the targets also ask for ε = 0.3.
EPS_NO_CATALOGUE = [0.3, 1.0, 3.0]
RECOMMENDED = "dp-cooccurrence"
CEILING = f"{RECOMMENDED} without noise (ceiling)"
#: A DP design between the baseline and the recommended method: the summed DP popularity blended into
#: each entity's own model (``dp-popularity --param local_blend=true``) — what the co-occurrence adds
#: beyond it is the difference of the two rows.
POP_BLENDED = "dp-popularity blended with local"
#: (row label, method, aggregation, ε values[, method parameters])
DP_CONFIGS = [(f"{RECOMMENDED} secure", RECOMMENDED, "secure", EPS),
              (f"{RECOMMENDED} none", RECOMMENDED, "none", EPS),
              ("dp-popularity secure", "dp-popularity", "secure", [1.0]),
              ("dp-popularity none", "dp-popularity", "none", [1.0]),
              (f"{POP_BLENDED} secure", "dp-popularity", "secure", EPS, {"local_blend": True}),
              # the same design with no noise (ε = ∞, a non-private diagnostic): the most this
              # federation's releases can add to `local` at any ε
              (CEILING, RECOMMENDED, "secure", [math.inf]),
              # user-level DP ALS (Chien et al. 2021): the DP design nearest to a pooled factorisation
              ("dp-als secure", "dp-als", "secure", EPS),
              ("dp-als none", "dp-als", "none", [3.0])]
REFS = ["local", "individual", "popularity", "central"]
#: ``local`` fitted on every entity's users as one (no federation, no privacy: a non-private
#: diagnostic on the same split): whether anything pooled at all helps the entities' users.
POOLED = "local on all entities pooled (diagnostic)"
#: The large-vocabulary federations run only the rows their targets read (the others' are on the
#: eight federations above): the fair ``local``, exact popularity, the recommended method and dp-als.
FOCUSED = {"eicu-hospital-raw", "eicu-region-raw", "ml-occupation-long", "ml-occupation-long-declared", "zipf-2000",
           "eicu-hospital-paths", "eicu-region-paths", *HELD_OUT,
           "eicu-unit-paths-declared", "ml-age-long-declared", "zipf-paths-tiny-declared"}
FOCUS_REFS = ["local", "popularity"]
FOCUS_ROWS = {f"{RECOMMENDED} secure", f"{RECOMMENDED} none", "dp-als secure", "dp-als none"}
#: Rows that are not DP runs: no ε, no ledger check.
NON_DP = {*REFS, POOLED}


def load(name: str):
    from _common import eicu
    from _common import ML100K

    from dpfed_core.data.movielens import load_movielens

    if name == "ml-occupation-long":
        return movielens_long("occupation")
    if name.endswith("-declared"):  # the same table, its item names declared as the catalogue
        return dataclasses.replace(load(name[: -len("-declared")]), item_source="declared")
    if name == "zipf-2000":
        return zipf_federation()
    if name == "zipf-3000":
        return zipf_federation(n_items=3000, n_entities=8, seed=29)
    if name == "ml-gender-long":
        return movielens_long("gender")
    if name == "ml-age-long":
        return movielens_long("age")
    if name == "zipf-paths-tiny":
        return zipf_paths_federation()
    if name.endswith("-raw") or name.endswith("-paths") or name.endswith("-route"):
        entity = {"eicu-hospital": "hospitalid", "eicu-region": "region", "eicu-unit": "unittype"}
        return eicu_raw(entity[name.rsplit("-", 1)[0]], paths=name.endswith("-paths"), route=name.endswith("-route"))
    if name.startswith("ml-"):
        return load_movielens(ML100K, federation=name[3:])
    if name.startswith("eicu-"):
        entity = "hospitalid" if name.startswith("eicu-hospital") else "region"
        return eicu(entity, declared_catalogue=not name.endswith("-nofml"))
    from dpfed_core.data.loaders import load_data

    return load_data("sample:clinic")


#: Age bands of the MovieLens long table by age (public, chosen without looking at the ages).
AGE_BANDS = [0, 18, 25, 35, 45, 56, 200]
AGE_LABELS = ["under 18", "18-24", "25-34", "35-44", "45-55", "56 and over"]


def movielens_long(federation: str):
    """MovieLens 100K as an uploaded long table would arrive: ``u.data`` + ``u.user``, items named by
    their ids, no ``u.item`` (so no declared catalogue and no item features). Built in memory."""
    import pandas as pd
    import scipy.sparse as sp
    from _common import ML100K

    from dpfed_core.data.dataset import FederatedDataset

    r = pd.read_csv(ML100K / "u.data", sep="\t", names=["u", "i", "v", "t"])
    users = pd.read_csv(ML100K / "u.user", sep="|", names=["u", "age", "gender", "occupation", "zip"],
                        encoding="latin-1")
    uid = np.sort(r["u"].unique())
    iid = np.sort(r["i"].unique())
    X = sp.csr_matrix((r["v"].astype(float), (np.searchsorted(uid, r["u"]), np.searchsorted(iid, r["i"]))),
                      shape=(uid.size, iid.size))
    if federation == "age":  # public bands, not the ages seen
        users = users.assign(age=pd.cut(users["age"], AGE_BANDS, right=False, labels=AGE_LABELS).astype(str))
    label = users.set_index("u").loc[uid, federation].astype(str).to_numpy()
    occupations = (list(AGE_LABELS) if federation == "age"  # public: MovieLens' own lists
                   else sorted(users[federation].astype(str).unique()))
    return FederatedDataset.from_parts(X, label, user_ids=uid.astype(str), item_ids=iid.astype(str),
                                       item_names=iid.astype(str), value_kind="ratings", value_max=5.0,
                                       name=f"ml-100k long table by {federation}", item_source="data",
                                       entities=occupations)


#: eICU's ICU unit types (its documentation's list: public metadata, as the hospital table is).
EICU_UNIT_TYPES = {"Med-Surg ICU", "MICU", "SICU", "Cardiac ICU", "CCU-CTICU", "CTICU", "CSICU", "Neuro ICU"}


def eicu_raw(entity: str, paths: bool = False, route: bool = False):
    """The eICU demo's medication table with its drug strings as recorded (no normalisation: ~1,400
    names, the vocabulary a new user uploads), stays × drugs counts, federated by hospital or region
    (the hospital table's list: public metadata). Built in memory; cancelled orders and rows without a
    drug name dropped. ``paths``: each name written as the path ``class G|ingredient H|drug string``
    from the table's own therapeutic class (``gtc``) and ingredient code (``drughiclseqno``), the way
    eICU's treatment and diagnosis tables write their names (``cardiovascular|shock|…``). ``route``:
    each item is an order's drug string and route as recorded (``drug string | route``, ~3,100 names)."""
    import pandas as pd
    import scipy.sparse as sp
    from _common import EICU

    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.data.eicu import EICU_VALUE_MAX

    m = pd.read_csv(EICU / "medication.csv.gz", usecols=["patientunitstayid", "drugname", "drugordercancelled",
                                                         "gtc", "drughiclseqno", "routeadmin"], low_memory=False)
    m = m[m["drugname"].notna() & (m["drugordercancelled"].astype(str).str.lower() != "yes")]
    if route:
        m = m.assign(drugname=m["drugname"].astype(str) + " | " + m["routeadmin"].fillna("no route").astype(str))
    if paths:
        hicl = m["drughiclseqno"].map(lambda v: "unknown" if pd.isna(v) else str(int(v)))
        m = m.assign(drugname="class " + m["gtc"].fillna(0).astype(int).astype(str) + "|ingredient " + hicl
                     + "|" + m["drugname"].astype(str))
    p = pd.read_csv(EICU / "patient.csv.gz", usecols=["patientunitstayid", "hospitalid", "unittype"])
    h = pd.read_csv(EICU / "hospital.csv.gz", usecols=["hospitalid", "region"])
    h["region"] = h["region"].fillna("unknown").astype(str)
    stays = np.sort(p["patientunitstayid"].unique())
    names = np.sort(m["drugname"].astype(str).unique())
    c = m.groupby(["patientunitstayid", "drugname"]).size().reset_index(name="n")
    X = sp.csr_matrix((c["n"].astype(float), (np.searchsorted(stays, c["patientunitstayid"]),
                                              np.searchsorted(names, c["drugname"].astype(str)))),
                      shape=(stays.size, names.size))
    hosp = p.set_index("patientunitstayid").loc[stays, "hospitalid"]
    if entity == "region":
        label = h.set_index("hospitalid").reindex(hosp.to_numpy())["region"].fillna("unknown").astype(str).to_numpy()
        declared = sorted(set(h["region"]) | {"unknown"})
    elif entity == "unittype":
        label = p.set_index("patientunitstayid").loc[stays, "unittype"].fillna("unknown").astype(str).to_numpy()
        declared = sorted(EICU_UNIT_TYPES | set(label) | {"unknown"})
    else:
        label = np.array([f"hospital {x}" for x in hosp.to_numpy()])
        declared = sorted({f"hospital {x}" for x in h["hospitalid"]} | set(label))
    value_max = float(EICU_VALUE_MAX["medication"])
    kind = "paths" if paths else "routes" if route else "raw strings"
    return FederatedDataset.from_parts(X, label, user_ids=stays.astype(str), item_ids=names, item_names=names,
                                       value_kind="counts", value_max=value_max, item_source="data",
                                       name=f"eICU medication {kind} by {entity}",
                                       entities=declared)


def zipf_federation(n_items: int = 2400, n_entities: int = 12, seed: int = 11):
    """A synthetic catalogue of ``n_items`` items with Zipf(1.1) popularity, 12 entities of 60–600
    users, each user ~12 items drawn from a mixture of a global Zipf law and the entity's own taste
    (its own random permutation of the popularity ranks): large vocabulary, long tail, no catalogue."""
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n_items + 1) ** 1.1
    base /= base.sum()
    rows, labels = [], []
    for h in range(n_entities):
        n = int(g.integers(60, 601))
        own = base[g.permutation(n_items)]
        p = 0.6 * base + 0.4 * own
        k = np.maximum(1, g.poisson(12, size=n))
        for u in range(n):
            items = np.unique(g.choice(n_items, size=int(k[u]), p=p))
            rows.append(items)
            labels.append(f"site {h:02d}")
    indptr = np.r_[0, np.cumsum([r.size for r in rows])]
    X = sp.csr_matrix((np.ones(indptr[-1]), np.concatenate(rows), indptr), shape=(len(rows), n_items))
    names = np.array([f"item {j:04d}" for j in range(n_items)])
    return FederatedDataset.from_parts(X, np.array(labels), item_ids=names, item_names=names, value_kind="implicit",
                                       value_max=1.0, name="synthetic Zipf catalogue", item_source="data")


def zipf_paths_federation(n_groups: int = 8, n_families: int = 10, n_leaves: int = 50, n_entities: int = 40,
                          seed: int = 53):
    """A synthetic catalogue of ``group|family|item`` names (8 × 10 × 50 = 4,000 leaves), Zipf(1.1)
    popularity over the leaves, ``n_entities`` entities of 8–120 users (most of them too small for a
    per-entity release), each user ~10 leaves drawn mostly inside two families of their own (the
    taste a name hierarchy describes) and otherwise from the global law."""
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    g = np.random.default_rng(seed)
    n_items = n_groups * n_families * n_leaves
    base = 1.0 / np.arange(1, n_items + 1) ** 1.1
    base = base[g.permutation(n_items)]
    base /= base.sum()
    family_of = np.arange(n_items) // n_leaves
    rows, labels = [], []
    for h in range(n_entities):
        n = int(g.integers(8, 121))
        fav = g.choice(n_groups * n_families, size=3, replace=False)  # the entity's favourite families
        for _ in range(n):
            mine = g.choice(fav, size=2, replace=False)
            inside = np.isin(family_of, mine)
            p = 0.3 * base + 0.7 * np.where(inside, base, 0.0) / base[inside].sum()
            items = np.unique(g.choice(n_items, size=max(1, int(g.poisson(10))), p=p))
            rows.append(items)
            labels.append(f"site {h:02d}")
    indptr = np.r_[0, np.cumsum([r.size for r in rows])]
    X = sp.csr_matrix((np.ones(indptr[-1]), np.concatenate(rows), indptr), shape=(len(rows), n_items))
    j = np.arange(n_items)
    names = np.array([f"group {a}|family {a}.{b}|item {a}.{b}.{c}" for a, b, c in
                      zip(j // (n_families * n_leaves), (j // n_leaves) % n_families, j % n_leaves)])
    return FederatedDataset.from_parts(X, np.array(labels), item_ids=names, item_names=names, value_kind="implicit",
                                       value_max=1.0, name="synthetic Zipf catalogue of name paths",
                                       item_source="data")


def run_unit(name: str, seed: int, quick: bool = False, focus_all: bool = False) -> list[dict]:
    """Every method of one (federation, seed) on that seed's split (``focus_all``: only the rows the
    site targets read, on every federation)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method

    ds = load(name)
    base = RunConfig(seed=seed, delta=1e-6, rank=10, mode="zero", simulation=True)
    split = make_split(ds, base)
    rows = []

    def one(label: str, cfg: RunConfig, data=None) -> None:
        t = time.perf_counter()
        d, res = run_method(ds if data is None else data, cfg, split)
        cat = res.extra.get("catalogue") if isinstance(res.extra, dict) else None
        eps = d["privacy"]["epsilon"]
        if math.isfinite(cfg.epsilon) and label not in NON_DP:  # the ledger holds what was asked
            assert eps <= cfg.epsilon * (1 + 1e-9), (label, cfg.epsilon, eps)
        rows.append({"data": name, "seed": seed, "method": label,
                     "epsilon": math.inf if label in NON_DP else cfg.epsilon, "mar": d["overall"]["mar"],
                     "entity_mar": {e["name"]: e["mar"] for e in d["entities"] if e.get("n_test_users")},
                     "items_kept": None if cat is None else int(len(cat)), "n_items": ds.n_items,
                     "warnings": [w["code"] for w in d.get("warnings", [])],
                     "seconds": time.perf_counter() - t})

    focus = focus_all or name in FOCUSED
    for ref in (FOCUS_REFS if focus else REFS):
        one(ref, base.replace(method=ref))
    if not focus:
        # the same split and test users; one entity holding everyone (contiguous rows: one slice)
        pooled = dataclasses.replace(ds, entity_of_user=np.zeros_like(ds.entity_of_user), entity_names=["all"])
        one(POOLED, base.replace(method="local"), pooled)
    for label, meth, agg, eps_list, *params in DP_CONFIGS:
        if focus and label not in FOCUS_ROWS:
            continue
        if name in NO_CATALOGUE and label in (f"{RECOMMENDED} secure", f"{RECOMMENDED} none"):
            eps_list = EPS_NO_CATALOGUE
        for e in (eps_list[:1] if quick else eps_list):
            one(label, base.replace(method=meth, epsilon=e, aggregation=agg,
                                    prototype_params=dict(params[0]) if params else {}))
    print(f"{name} seed {seed} done", flush=True)
    return rows


def _unit_child(args_tuple):
    return run_unit(*args_tuple)


# ------------------------------------------------------------------------------------ analysis
def paired(rows: list[dict], data: str, a: tuple, b: tuple) -> dict | None:
    """Paired per-seed difference of MAR between (method, ε) ``a`` and ``b`` on ``data``."""
    def by_seed(key):
        return {r["seed"]: r["mar"] for r in rows if r["data"] == data and r["method"] == key[0]
                and (key[1] is None or r["epsilon"] == key[1])}
    sa, sb = by_seed(a), by_seed(b)
    seeds = sorted(set(sa) & set(sb))
    if not seeds:
        return None
    d = np.array([sa[s] - sb[s] for s in seeds])
    sd = float(d.std(ddof=1)) if d.size > 1 else 0.0
    mean = float(d.mean())
    verdict = ("beats" if mean < -sd and d.size > 1 else "loses" if mean > sd and d.size > 1 else "inconclusive")
    return {"diff": mean, "sd": sd, "n": int(d.size), "verdict": verdict}


def summary_table(rows: list[dict], data: str) -> list[dict]:
    out = []
    keys = sorted({(r["method"], r["epsilon"]) for r in rows if r["data"] == data},
                  key=lambda k: (k[0] not in REFS, k[0], k[1]))
    for meth, e in keys:
        v = np.array([r["mar"] for r in rows if r["data"] == data and r["method"] == meth and r["epsilon"] == e])
        kept = [r["items_kept"] for r in rows if r["data"] == data and r["method"] == meth and r["epsilon"] == e
                and r.get("items_kept") is not None]
        row = {"method": meth, "ε": "—" if math.isinf(e) else f"{e:g}", "MAR mean": f"{v.mean():.4f}",
               "sd": f"{v.std(ddof=1):.4f}" if v.size > 1 else "—", "seeds": int(v.size),
               "items kept": "—" if not kept else f"{min(kept)}–{max(kept)}" if min(kept) != max(kept) else str(kept[0])}
        for ref in ("local", "popularity"):
            p = None if meth in REFS else paired(rows, data, (meth, e), (ref, None))
            row[f"vs {ref}"] = "—" if p is None else f"{p['diff']:+.4f} ± {p['sd']:.4f} ({p['verdict']})"
        hh = None if meth in REFS else helped_hurt(rows, data, (meth, e))
        row["entities helped / hurt vs local"] = "—" if hh is None else f"{hh[0]} / {hh[1]} of {hh[2]}"
        out.append(row)
    return out


def helped_hurt(rows: list[dict], data: str, key: tuple) -> tuple[int, int, int] | None:
    """(entities whose MAR the method improves on ``local``'s, entities it worsens, entities with test
    users), each entity's paired difference averaged over the seeds both were measured on."""
    def per(method, eps):
        return {r["seed"]: r.get("entity_mar") or {} for r in rows if r["data"] == data and r["method"] == method
                and (eps is None or r["epsilon"] == eps)}
    a, b = per(*key), per("local", None)
    seeds = sorted(set(a) & set(b))
    if not seeds:
        return None
    diffs: dict[str, list[float]] = {}
    for s_ in seeds:
        for ent, v in a[s_].items():
            if ent in b[s_] and v is not None and b[s_][ent] is not None:
                diffs.setdefault(ent, []).append(v - b[s_][ent])
    means = [float(np.mean(v)) for v in diffs.values()]
    return sum(m < -1e-12 for m in means), sum(m > 1e-12 for m in means), len(means)


def _best_dp(rows, data, agg, eps_max):
    """The recommended method's paired comparison vs local and popularity at each ε ≤ eps_max."""
    label = f"{RECOMMENDED} {agg}"
    return {e: (paired(rows, data, (label, e), ("local", None)), paired(rows, data, (label, e), ("popularity", None)))
            for e in EPS if e <= eps_max}


def targets(rows: list[dict], datasets: list[str]) -> list[dict]:
    """The targets of a federation that pays (declared catalogues), each met or missed with its figure."""
    out = []

    def add(target, figure, met):
        out.append({"target": target, "measured": figure, "verdict": "met" if met else "**missed**"})

    def fmt(p):
        return "no data" if p is None else f"{p['diff']:+.4f} ± {p['sd']:.4f} ({p['verdict']})"

    for data in ("eicu-hospital", "eicu-region"):
        if data not in datasets:
            continue
        pl, pp = _best_dp(rows, data, "secure", 1.0)[1.0]
        add(f"{LABEL[data]}, secure, ε = 1: {RECOMMENDED} beats local and exact popularity",
            f"vs local {fmt(pl)}; vs popularity {fmt(pp)}",
            bool(pl and pp and pl["verdict"] == "beats" and pp["verdict"] == "beats"))
        res = _best_dp(rows, data, "none", 3.0)
        ok = [e for e, (pl_, _) in res.items() if pl_ and pl_["verdict"] == "beats"]
        add(f"{LABEL[data]}, no secure aggregation: beats local at some ε ≤ 3",
            "; ".join(f"ε = {e:g}: {fmt(p)}" for e, (p, _) in res.items()), bool(ok))
    for data in ("clinic", "ml-occupation"):
        if data not in datasets:
            continue
        res = _best_dp(rows, data, "secure", 3.0)
        ok = [e for e, (pl_, _) in res.items() if pl_ and pl_["verdict"] == "beats"]
        add(f"{LABEL[data]}, secure: beats local at some ε ≤ 3",
            "; ".join(f"ε = {e:g}: {fmt(p)}" for e, (p, _) in res.items()), bool(ok))
    if "ml-zip" in datasets:
        v = [r["mar"] for r in rows if r["data"] == "ml-zip" and r["method"] == f"{RECOMMENDED} secure"
             and r["epsilon"] == 1.0]
        if v:
            m = float(np.mean(v))
            add(f"{LABEL['ml-zip']} with public features, secure, ε = 1: MAR ≤ 0.092",
                f"{m:.4f} ± {float(np.std(v, ddof=1)) if len(v) > 1 else 0.0:.4f}", m <= 0.092)
    if "eicu-hospital-nofml" in datasets:
        sel = [r for r in rows if r["data"] == "eicu-hospital-nofml" and r["method"] == f"{RECOMMENDED} secure"
               and r["epsilon"] == 1.0]
        if sel:
            kept = [r["items_kept"] for r in sel]
            m = float(np.mean([r["mar"] for r in sel]))
            add(f"{LABEL['eicu-hospital-nofml']}, secure, ε = 1: ≥ 100 items kept and MAR ≤ 0.25",
                f"items kept {min(kept)}–{max(kept)} of {sel[0]['n_items']}; MAR {m:.4f}",
                min(kept) >= 100 and m <= 0.25)
    return out


def site_targets(rows: list[dict], datasets: list[str]) -> list[dict]:
    """The targets of a site that keeps what it knows: on every federation without a declared catalogue
    the recommended method is never worse than the fair ``local`` at any ε ≥ 0.3 under either trust
    model; the long MovieLens table matches its declared-catalogue twin at ε = 1; the recommended method
    beats ``local`` on eICU by hospital (ε = 1) and the clinic sample (ε = 3), secure; something is
    learned without secure aggregation on eICU by region (ε = 3, MAR < 0.40); and dp-als' verdict
    against ``local`` on every federation."""
    out = []

    def add(target, figure, met):
        out.append({"target": target, "measured": figure, "verdict": "met" if met else "**missed**"})

    def fmt(p):
        return "no data" if p is None else f"{p['diff']:+.4f} ± {p['sd']:.4f} ({p['verdict']})"

    for data in sorted(NO_CATALOGUE & set(datasets)):
        worse = []
        seen = []
        for agg in ("secure", "none"):
            for e in EPS_NO_CATALOGUE:
                p = paired(rows, data, (f"{RECOMMENDED} {agg}", e), ("local", None))
                if p is None:
                    continue
                seen.append(f"{agg} ε={e:g}: {p['diff']:+.4f} ± {p['sd']:.4f}")
                if p["verdict"] == "loses":
                    worse.append(f"{agg} ε={e:g}")
        if seen:
            add(f"{LABEL[data]}: {RECOMMENDED} never worse than local (ε ≥ 0.3, both trust models)",
                "; ".join(seen) + (f" — worse at {', '.join(worse)}" if worse else ""), not worse)
    for declared in [d for d in datasets if d.endswith("-declared") and d[: -len("-declared")] in datasets]:
        # a table without a catalogue against the same table with its items declared, secure, ε = 1 (the
        # target names the MovieLens long table; the other pairs say what not declaring costs elsewhere)
        data = declared[: -len("-declared")]
        a = [r["mar"] for r in rows if r["data"] == data and r["method"] == f"{RECOMMENDED} secure"
             and r["epsilon"] == 1.0]
        b = [r["mar"] for r in rows if r["data"] == declared and r["method"] == f"{RECOMMENDED} secure"
             and r["epsilon"] == 1.0]
        if a and b:
            d = float(np.mean(a)) - float(np.mean(b))
            add(f"{LABEL[data]}, secure, ε = 1: within 0.005 of the same table with its catalogue declared",
                f"{np.mean(a):.4f} vs {np.mean(b):.4f} (difference {d:+.4f})", abs(d) <= 0.005)
    for data, e in (("eicu-hospital", 1.0), ("clinic", 3.0)):
        if data in datasets:
            p = paired(rows, data, (f"{RECOMMENDED} secure", e), ("local", None))
            add(f"{LABEL[data]}, secure, ε = {e:g}: {RECOMMENDED} beats the fair local", fmt(p),
                bool(p and p["verdict"] == "beats"))
    for data in ("eicu-region-nofml", "eicu-region-raw"):
        v = [r["mar"] for r in rows if r["data"] == data and r["method"] == f"{RECOMMENDED} none" and r["epsilon"] == 3.0]
        if v:
            add(f"{LABEL[data]}, no secure aggregation, ε = 3: something learned (MAR < 0.40)",
                f"MAR {np.mean(v):.4f}", float(np.mean(v)) < 0.40)
    for data in datasets:
        for agg, e in (("secure", 1.0), ("secure", 3.0), ("none", 3.0)):
            p = paired(rows, data, (f"dp-als {agg}", e), ("local", None))
            if p is not None:
                out.append({"target": f"{LABEL[data]}: dp-als {agg} ε = {e:g} against local", "measured": fmt(p),
                            "verdict": p["verdict"]})
    return out


def snr_diagnostic(name: str, epsilons=EPS) -> list[dict]:
    """Why the co-occurrence can add little (non-private diagnostic, computed by the benchmark, never by
    the mechanism): the eigenvalues of the exact co-occurrence sum Σ_h X̃_hᵀX̃_h on the items the method
    keeps, against the noise edge √(2M)·σ_sum the server thresholds at, per ε and trust model."""
    import math as _m

    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.federation.summable import DPCooccurrence, _unit_rows

    ds = load(name)
    split = make_split(ds, RunConfig(seed=0))
    m = DPCooccurrence()
    Xn = _unit_rows(split.train, ds.value_max)
    pop = np.asarray(Xn.sum(0)).ravel()
    items = np.sort(np.argsort(-pop, kind="stable")[: m.max_items])
    Xs = _unit_rows(Xn[:, items], 1.0)
    C = (Xs.T @ Xs).toarray()
    w = np.linalg.eigvalsh(C)[::-1]
    off = C[np.triu_indices(C.shape[0], 1)]
    per_user = np.diff(split.train.indptr)
    H, M = ds.n_entities, items.size
    out = []
    for e in epsilons:
        row = {"federation": LABEL[name], "ε": f"{e:g}", "top eigenvalues": ", ".join(f"{x:.0f}" for x in w[:3])}
        for agg in ("secure", "none"):
            plan = DPCooccurrence(epsilon=e, delta=1e-6, aggregation=agg).budget(H)
            sigma_sum = plan["sigma"]["co-occurrence"] / plan["divisor"] * _m.sqrt(H)
            edge = _m.sqrt(2 * M) * sigma_sum
            row[f"noise edge ({agg})"] = f"{edge:.0f}"
            row[f"directions above it ({agg})"] = int((w > edge).sum())
            if agg == "secure":
                # entry by entry: an off-diagonal entry's noise sd is σ_sum/√2 (the release's scale)
                row["items a user (median)"] = f"{np.median(per_user[per_user > 0]):.0f}"
                row["entry 99th percentile"] = f"{np.percentile(off, 99):.2f}"
                row["entry noise sd (secure)"] = f"{sigma_sum / _m.sqrt(2):.2f}"
                row["item pairs above 2 sd (secure)"] = f"{int((off > 2 * sigma_sum / _m.sqrt(2)).sum())} of {off.size}"
        out.append(row)
    return out


def _effect_lines(effects: dict, what: str) -> list[str]:
    """One bullet per federation with a paired effect (``paired``'s dict; None where not measured)."""
    return [f"- {LABEL[d]}: {what} = {p['diff']:+.4f} ± {p['sd']:.4f} ({p['verdict']})"
            for d, p in effects.items() if p]


def report(rows: list[dict], datasets: list[str], env: dict, seconds: float | None, quick: bool,
           note: str = "", skip_diagnostic: bool = False) -> str:
    made = (f"Written by `bench/bench_utility.py --report-only` from the rows log on commit {env.get('git_commit')}"
            " (where the rows were measured: below)." if seconds is None else
            f"Generated by `bench/bench_utility.py{' --quick' if quick else ''}` in {seconds / 60:.1f} min on "
            f"{env.get('cpus')} cores ({env.get('cpu')}), commit {env.get('git_commit')}, load average at start "
            f"{env.get('loadavg_1m_at_start'):.1f} (other work shared the machine: the seconds columns are upper "
            "bounds).")
    lines = ["# A federation that pays against going alone", "", made, "",
             "Settings: zero mode, MAR (lower is better, 0.5 = random), rank 10, δ = 1e-6, simulation noise "
             "(reproducible, no privacy claim), every method of a seed on the same split; "
             f"{len({r['seed'] for r in rows})} seeds. `local` = each entity's own NMF + own popularity + public "
             "item features (where the loader knows them: MovieLens genres and decade, eICU drug-name tokens), "
             "weights on a local hold-out; nothing leaves the entity. "
             f"`{RECOMMENDED}` round 2 blends the same local parts with the federation's broadcast V and DP "
             "popularity. Without a declared formulary the DP run selects which items the federation shares: "
             "federation-wide over 4096 public hash buckets (one secure sum under secure aggregation, the "
             "entities' full-noise histograms summed without it); each entity still scores every item it holds, "
             "mapping the shared keys onto the item names it knows. Every release of an entity (the catalogue's "
             "histogram, each stage of round 1) leaves out the one training entry per user its round 2 "
             "validates on, and on that hold-out the federation's parts reach only the items the reduced rows "
             "name (`models/blend.py`: `released_rows`, `known_only`). Nested evidence: an entity with 20 or "
             "more hold-out users first chooses its own blend exactly as `local` does, and the federation's parts "
             "enter only where they beat the better of that blend and the empirical-Bayes default by one "
             "standard error; a smaller entity keeps the default, its popularity shrunk toward the DP popularity "
             "on the items the federation speaks of (`shrunk_popularity`). With --focus only the rows the targets "
             "read are run (local, exact popularity, the recommended method, dp-als).",
             "", "Paired effects: MAR(method) − MAR(reference) per seed, mean ± sd over seeds; \"beats\" = "
             "below zero by more than the sd, \"loses\" = above zero by more than the sd, else inconclusive.", "",
             "Differences from the paper (SPEC): zero mode throughout; ranking metric MAR rather than RMSE; "
             "the recommended method is the summable co-occurrence release, not the paper's prototypes.", "",
             *([note, ""] if note else []),
             "## Targets", ""]
    lines.append(md_table(targets(rows, datasets)))
    site = site_targets(rows, datasets)
    if site:
        lines += ["", "## A site keeps what it knows: targets on federations without a declared catalogue", "",
                  "Each entity's model spans every item it has rows for; the DP catalogue decides only what the "
                  "federation shares. `local` is fitted by the very routine of round 2 (same parts, same "
                  "one-standard-error rule). Paired over the seeds run; \"worse\" = the paired mean above zero by "
                  "more than its sd.", "", md_table(site)]
    diag = [r for d in ("eicu-hospital", "eicu-region", "clinic", "ml-occupation") if d in datasets
            for r in snr_diagnostic(d)] if not skip_diagnostic else []
    pop_vs_local = {d: paired(rows, d, ("popularity", None), ("local", None)) for d in datasets}
    lines += ["", "## Why targets are missed (measured)", "",
              "1. **How much the co-occurrence can carry.** Directions of the exact co-occurrence sum above "
              "the noise edge the server thresholds at (non-private diagnostic on seed 0's training rows; the "
              "mechanism never computes it). Only these directions can reach the broadcast V; everything else "
              "the federation adds is the DP popularity. Entry by entry: every user's row has ℓ2 norm 1, so a "
              "user with k items adds 1/k to each of its k² pairs; an item-item model reads the entries, and "
              "only the pairs above about twice the per-entry noise sd are resolved at that ε.", "",
              md_table(diag), "",
              "2. **What going alone already has.** Exact pooled popularity against `local` (paired, 3 seeds) — "
              "the most a popularity release can add on top of an entity's own model:", ""]
    lines += _effect_lines(pop_vs_local, "popularity − local")
    ceiling = {d: paired(rows, d, (CEILING, math.inf), ("local", None)) for d in datasets}
    if any(ceiling.values()):
        lines += ["", f"3. **The ceiling of this design.** `{RECOMMENDED}` with no noise at all (ε = ∞: exact "
                  "popularity and co-occurrence sums, the same server steps and round-2 blend; a non-private "
                  "diagnostic) against `local` — the most its releases can add at any ε:", ""]
        lines += _effect_lines(ceiling, "ceiling − local")
    pooled = {d: paired(rows, d, (POOLED, None), ("local", None)) for d in datasets}
    if any(pooled.values()):
        lines += ["", "4. **Whether pooling helps at all.** `local` fitted on every entity's users as one "
                  "(all data in one place, no privacy; a non-private diagnostic on the same split and test users) "
                  "against `local` per entity — where it does not help, the entities differ more than they share, "
                  "and no federation of their data can be expected to beat `local` by much:", ""]
        lines += _effect_lines(pooled, "pooled − local")
    blended = {e: {d: paired(rows, d, (f"{RECOMMENDED} secure", e), (f"{POP_BLENDED} secure", e)) for d in datasets}
               for e in EPS}
    if any(v for per in blended.values() for v in per.values()):
        lines += ["", f"5. **What the co-occurrence adds beyond the DP popularity.** `{RECOMMENDED}` against the summed "
                  "DP popularity blended into each entity's own model the same way (`dp-popularity --param "
                  "local_blend=true`), both with secure aggregation at the same ε: the popularity release of the "
                  "first gets half the budget, the second all of it.", ""]
        for e, per in blended.items():
            lines += [f"At ε = {e:g}:", ""] + _effect_lines(per, f"{RECOMMENDED} − {POP_BLENDED}") + [""]
    lines += ["", "6. **Reading** (of the lists above). Where `local` already beats exact popularity (eICU "
              "by region: a few large regions), a DP release has little to add that the hold-out can find, and "
              "the round-2 blend falls back to the entity's own parts. Where exact popularity beats `local` (eICU "
              "by hospital: many hospitals of a few stays), the secure sum carries the popularity, and the "
              "co-occurrence adds only the few directions above its noise edge. Without secure aggregation every "
              "entity adds the full σ, so the summed noise grows with the number of entities (see the "
              "`dp-popularity none` rows). The ceiling (3.) bounds what any ε can give this design: where it is "
              "itself within a sd or two of `local` (a few large entities), no DP setting can beat `local` by a "
              "margin three seeds resolve; where it is well ahead (many small entities), the gap between the "
              "ceiling and the ε rows is the price of the noise. Where pooling everyone's data in one model (4.) "
              "is itself worse than each entity alone (eICU by region), the entities' users differ too much for "
              "shared statistics to carry more than the ceiling shows.", ""]
    for data in datasets:
        if not any(r["data"] == data for r in rows):
            continue
        lines += ["", f"## {LABEL[data]}", ""]
        lines.append(md_table(summary_table(rows, data)))
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="1 seed, ε = 1 only")
    ap.add_argument("--seeds", type=int, default=5,
                    help="seeds 0 … N − 1 (3 and 4 were never used to choose a default)")
    ap.add_argument("--name", default="utility", help="results name under bench/results (default utility)")
    ap.add_argument("--jobs", type=int, default=1, help="worker processes over (federation, seed)")
    ap.add_argument("--data", default=",".join(DATASETS))
    ap.add_argument("--seed-list", help="comma-separated seeds to run (instead of 0 … --seeds − 1), e.g. to "
                                        "split a long run over processes; their rows logs are merged with --logs")
    ap.add_argument("--log", help="rows log to write (default bench/results/utility.rows.jsonl)")
    ap.add_argument("--logs", help="with --report-only: comma-separated rows logs to merge")
    ap.add_argument("--note", help="a sentence for the report's header (e.g. where and when the rows were measured)")
    ap.add_argument("--focus", action="store_true",
                    help="only the rows the site targets read (local, popularity, the recommended method, dp-als)")
    ap.add_argument("--report-only", action="store_true",
                    help="write the report from the rows log of an earlier (possibly unfinished) run")
    args = ap.parse_args()
    datasets = [d for d in args.data.split(",") if d]
    unknown = sorted(set(datasets) - set(DATASETS))
    if unknown:
        ap.error(f"--data: unknown federation(s) {unknown}; choose from {', '.join(DATASETS)}")
    seeds = ([int(x) for x in args.seed_list.split(",")] if args.seed_list
             else list(range(1 if args.quick else args.seeds)))
    out = outputs(args.name, args.quick)
    log = Path(args.log) if args.log else out["json"].with_suffix(".rows.jsonl")
    env = machine()
    t0 = time.perf_counter()
    if args.report_only:
        logs = [Path(x) for x in args.logs.split(",")] if args.logs else [log]
        rows = [json.loads(line) for lg in logs for line in lg.read_text().splitlines() if line.strip()]
        for r in rows:
            r["epsilon"] = float(r["epsilon"])
    else:
        from dpfed_core.evaluation.experiments import json_safe

        rows = []
        log.write_text("")
        units = [(d, s, args.quick, args.focus) for s in seeds for d in datasets]

        def keep(part):
            rows.extend(part)
            with log.open("a") as f:
                for r in part:
                    f.write(json.dumps(json_safe(r)) + "\n")

        if args.jobs > 1:
            import multiprocessing as mp

            with mp.get_context("fork").Pool(args.jobs) as pool:
                for part in pool.imap_unordered(_unit_child, units):
                    keep(part)
        else:
            for u in units:
                keep(run_unit(*u))
    md = report(rows, datasets, env, None if args.report_only else time.perf_counter() - t0, args.quick,
                args.note or "", skip_diagnostic=not any(d in datasets for d in ("eicu-hospital", "eicu-region",
                                                                                 "clinic", "ml-occupation")))
    write_results(out["json"].with_suffix(""), {"machine": env, "rows": rows, "datasets": datasets,
                                                "targets": targets(rows, datasets),
                                                "site_targets": site_targets(rows, datasets)}, md)


if __name__ == "__main__":
    main()
