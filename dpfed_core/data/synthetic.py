"""Synthetic data: the paper's §5.1 Poisson factor model, and an eICU-like clinic generator.

Poisson model (Ribero et al. 2020, §5.1)
-----------------------------------------
The paper draws U (n × ℓ) and V (m × ℓ) with i.i.d. N(0, 1) entries and X ~ Poisson(exp(U Vᵀ)) with
ℓ = 100. Then ``U Vᵀ`` has standard deviation √ℓ = 10, so ``exp`` reaches e^40 and the counts are
astronomically large or overflow. We keep the model's form and rescale it:

    η_ij = b + a_j + e_{h(i), j} + u_i · v_j,        X_ij ~ Poisson(exp(η_ij)), clipped to value_max

- ``u_i, v_j ~ N(0, σ² I_ℓ)`` with ``σ² = interaction_sd / √ℓ``, so ``sd(u_i · v_j) =
  interaction_sd`` whatever ℓ is (ℓ = 100 works, as in the paper);
- ``a_j ~ N(0, item_sd²)``: item popularity (real catalogues have popular and rare items);
- entity differences, so that federation matters: each entity h has a mean user taste μ_h and the
  user factors are ``u_i = √ρ μ_h + √(1 − ρ) z_i`` (ρ = ``entity_effect``, same marginal variance),
  plus entity-specific item offsets ``e_{h,j} ~ N(0, entity_item_sd²)`` (local tastes); the item
  factors V are shared by all entities, which is what federation learns;
- the base offset ``b`` is solved numerically (Brent's method on a calibration sample of users) so
  that the expected fraction of non-zero cells equals ``density``;
- counts are clipped to the declared public bound ``value_max`` (``clip=True``) so that the bound
  the DP mechanisms rely on holds exactly; with ``clip=False`` the notes report exceedances.

The matrix is generated in row chunks and kept sparse: the paper's size (100,000 × 500, ℓ = 100,
10 entities, :data:`PAPER`) takes about 3 s and ~40 MB.

Clinic generator
----------------
:func:`make_clinic` simulates ICU unit stays in hospitals grouped in US regions, with lab and
medication counts from a case-mix model (see its docstring). ``sample_data/generate.py`` uses both.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError

__all__ = ["make_poisson", "make_clinic", "PAPER", "CLINIC_ITEMS", "REGIONS", "entity_sizes"]

#: The paper's §5.1 size: 100,000 users, 500 items, ℓ = 100, 10 equally sized entities.
PAPER: dict = {"n_users": 100_000, "n_items": 500, "n_entities": 10, "rank": 100, "sizes": "uniform"}


def _as_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise ConfigError(f"rng must be a numpy Generator, an int seed or None; got {type(rng).__name__}")


def entity_sizes(
    n: int, n_entities: int, sizes: str | Sequence[float], rng: np.random.Generator, min_size: int = 1
) -> np.ndarray:
    """Users per entity, summing to ``n``.

    ``"uniform"``: as equal as possible (the paper). ``"varied"``: log-normal weights (sd 0.6) with a
    floor of 30 % of the mean, so sizes differ by up to ~6× as hospitals or regions do. A sequence:
    relative weights (or exact sizes if they sum to n). Rounding uses largest remainders.
    """
    if isinstance(sizes, str):
        if sizes == "uniform":
            w = np.ones(n_entities)
        elif sizes == "varied":
            w = np.maximum(np.exp(rng.normal(0.0, 0.6, n_entities)), 0.3)
        else:
            raise ConfigError(f"sizes must be 'uniform', 'varied' or a list of weights; got {sizes!r}")
    else:
        w = np.asarray(sizes, dtype=float)
        if w.shape != (n_entities,) or np.any(w <= 0) or not np.all(np.isfinite(w)):
            raise ConfigError(f"sizes must be {n_entities} positive numbers")
    raw = w / w.sum() * n
    out = np.floor(raw).astype(np.int64)
    out[np.argsort(-(raw - out), kind="stable")[: n - out.sum()]] += 1
    if out.min() < min_size:
        raise ConfigError(
            f"an entity would get {out.min()} users (< {min_size}); use more users or fewer entities"
        )
    return out


def make_poisson(
    n_users: int = 2000,
    n_items: int = 200,
    n_entities: int = 10,
    *,
    rank: int = 5,
    density: float | None = 0.05,
    interaction_sd: float = 2.0,
    item_sd: float = 0.5,
    entity_effect: float = 0.3,
    entity_item_sd: float = 0.3,
    sizes: str | Sequence[float] = "varied",
    value_max: float = 10.0,
    clip: bool = True,
    rng: np.random.Generator | int | None = None,
    chunk_rows: int = 8192,
    name: str | None = None,
    return_factors: bool = False,
) -> FederatedDataset | tuple[FederatedDataset, dict]:
    """Poisson factor data of the paper §5.1, rescaled (see the module docstring for the model).

    Parameters
    ----------
    n_users, n_items, n_entities : sizes (paper: 100,000, 500, 10 — see :data:`PAPER`).
    rank : ℓ, the latent dimension of U and V (paper: 100).
    density : target expected fraction of non-zero cells, in (0, 1), reached by a base offset b in
        the log rate; ``None`` = no offset (b = 0), the paper's literal link X ~ Poisson(exp(U Vᵀ)).
    interaction_sd, item_sd, entity_item_sd : standard deviations (in log-rate units) of the
        interaction term u·v, the item popularity and the entity-specific item offsets.
    entity_effect : ρ ∈ [0, 1), the share of user-factor variance common to an entity.
        ``entity_effect=0, entity_item_sd=0, sizes="uniform"`` is the paper's i.i.d. split.
    sizes : "uniform", "varied" or per-entity weights (see :func:`entity_sizes`).
    value_max : declared public bound of one count. ``clip``: clip counts to it.
    rng : a numpy Generator (or an int seed); the output is a deterministic function of it.

    Returns
    -------
    FederatedDataset, X of shape (n_users, n_items), counts; entities "entity 01" … With
    ``return_factors`` also a dict with U (n × ℓ), V (m × ℓ), item offsets a (m,), entity item
    offsets E (H × m), base offset b and the rows' entity index (rows in dataset order).
    """
    g = _as_rng(rng)
    for nm, v in (("n_users", n_users), ("n_items", n_items), ("n_entities", n_entities), ("rank", rank)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ConfigError(f"{nm} must be a positive whole number, got {v!r}")
    if density is not None and not 0 < density < 1:
        raise ConfigError(f"density must be in (0, 1), got {density}")
    if not 0 <= entity_effect < 1:
        raise ConfigError(f"entity_effect must be in [0, 1), got {entity_effect}")
    if min(interaction_sd, item_sd, entity_item_sd) < 0:
        raise ConfigError("standard deviations must be ≥ 0")
    if not (np.isfinite(value_max) and value_max > 0):
        raise ConfigError(f"value_max must be a positive number, got {value_max}")
    if n_entities > n_users:
        raise ConfigError(f"{n_entities} entities need at least as many users (got {n_users})")

    n_per = entity_sizes(n_users, n_entities, sizes, g)
    ent = np.repeat(np.arange(n_entities), n_per)  # rows already in entity order
    sigma = np.sqrt(interaction_sd / np.sqrt(rank))
    V = g.normal(0.0, sigma, (n_items, rank))
    a = g.normal(0.0, item_sd, n_items)
    E = g.normal(0.0, entity_item_sd, (n_entities, n_items))
    mu = g.normal(0.0, sigma, (n_entities, rank))
    Z = g.normal(0.0, sigma, (n_users, rank))
    U = np.sqrt(entity_effect) * mu[ent] + np.sqrt(1.0 - entity_effect) * Z

    # calibrate the base offset b on a random sample of users (≤ ~200,000 cells, enough for the
    # density to ±0.1 % and cheap at any size): E[1 − exp(−exp(b + η))] = density
    n_cal = min(n_users, max(200, 200_000 // n_items))
    cal = np.sort(g.choice(n_users, size=n_cal, replace=False))
    eta_cal = (a + E[ent[cal]] + U[cal] @ V.T).ravel()

    def _excess(b: float) -> float:
        return float(np.mean(-np.expm1(-np.exp(np.minimum(b + eta_cal, 50.0))))) - density

    from scipy.optimize import brentq  # deferred: only a density target needs the root finder

    b = 0.0 if density is None else brentq(_excess, -60.0, 20.0, xtol=1e-10)

    # CSR built chunk by chunk: a chunk's non-zeros come out of np.nonzero in row-major order, which is
    # CSR order, so no COO triplets (two int64 arrays per non-zero) and no conversion are needed — at
    # 10^7 users × 500 items the COO route held ~21 GiB
    indices_l, vals_l, row_nnz = [], [], np.zeros(n_users, dtype=np.int64)
    n_over = 0
    for start in range(0, n_users, chunk_rows):
        stop = min(start + chunk_rows, n_users)
        eta = U[start:stop] @ V.T
        eta += a
        eta += E[ent[start:stop]]
        eta += b
        np.minimum(eta, 30.0, out=eta)  # exp(30) ≈ 1e13 is far above any bound; keeps poisson() finite
        counts = g.poisson(np.exp(eta))
        r, c = np.nonzero(counts)
        v = counts[r, c].astype(np.float64)
        n_over += int(np.count_nonzero(v > value_max))
        if clip:
            np.minimum(v, value_max, out=v)
        row_nnz[start:stop] = np.bincount(r, minlength=stop - start)
        indices_l.append(c.astype(np.int32 if n_items < 2**31 else np.int64))
        vals_l.append(v)
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(row_nnz, out=indptr[1:])
    del row_nnz
    indices = np.concatenate(indices_l)
    del indices_l
    data = np.concatenate(vals_l)
    del vals_l
    if indptr[-1] < 2**31 and n_items < 2**31:
        indptr, indices = indptr.astype(np.int32), indices.astype(np.int32, copy=False)
    else:
        indices = indices.astype(np.int64, copy=False)
    X = sp.csr_matrix((data, indices, indptr), shape=(n_users, n_items))
    X.has_sorted_indices = True
    notes = [
        f"synthetic Poisson factor model (paper §5.1, rescaled): ℓ={rank}, sd(u·v)={interaction_sd}, "
        f"item sd={item_sd}, entity effect ρ={entity_effect}, entity item sd={entity_item_sd}, "
        f"base offset b={b:.3f} for target density {density if density is None else format(density, 'g')}; realised density "
        f"{X.nnz / (n_users * n_items):.4f}",
    ]
    if n_over:
        notes.append(
            f"{n_over} counts exceeded the declared bound {value_max:g}"
            + (" and were clipped to it" if clip else "; they are kept (DP mechanisms clip)")
        )
    width = len(str(n_entities))
    ds = FederatedDataset.from_parts(
        X,
        np.array([f"entity {h + 1:0{max(width, 2)}d}" for h in range(n_entities)])[ent],
        user_ids=np.char.add("u", np.char.zfill(np.arange(n_users).astype(str), len(str(n_users)))),
        item_ids=np.char.add("i", np.char.zfill(np.arange(n_items).astype(str), len(str(n_items)))),
        item_names=np.char.add("item ", np.char.zfill(np.arange(n_items).astype(str), len(str(n_items)))),
        value_kind="counts",
        value_max=value_max,
        name=name or f"synthetic Poisson {n_users}×{n_items}, {n_entities} entities",
        notes=notes,
    )
    ds = dataclasses.replace(ds, generated=True)  # drawn from the public model: no one's records
    if return_factors:
        return ds, {"U": U, "V": V, "a": a, "E": E, "b": b, "entity": ent}
    return ds


# ====================================================================== the clinic generator
REGIONS = ("Midwest", "Northeast", "South", "West")

#: Conditions (case-mix groups) of the clinic model: prior share of ICU stays and length-of-stay
#: factor. Shares are typical of US ICU admissions (sepsis, respiratory failure and cardiac
#: diagnoses dominate).
CONDITIONS: dict[str, tuple[float, float]] = {
    "sepsis": (0.16, 1.4),
    "acute coronary syndrome": (0.11, 0.8),
    "heart failure": (0.09, 1.1),
    "respiratory failure": (0.14, 1.5),
    "cardiac surgery": (0.06, 0.9),
    "GI bleed": (0.08, 0.9),
    "diabetic ketoacidosis": (0.06, 0.7),
    "stroke": (0.10, 1.1),
    "trauma": (0.08, 1.2),
    "overdose/withdrawal": (0.12, 0.8),
}

# Items: name → (kind, base events/day in every stay, {condition: extra events/day}).
# Rates are illustrative orders of magnitude (daily panels, q6h glucose in DKA, …), not clinical facts.
_I = {
    # ---- labs
    "BMP": ("lab", 1.0, {"diabetic ketoacidosis": 3.0, "sepsis": 0.6}),
    "CBC with differential": ("lab", 0.9, {"GI bleed": 2.0, "trauma": 1.0, "sepsis": 0.4}),
    "magnesium": ("lab", 0.6, {"cardiac surgery": 0.8, "overdose/withdrawal": 0.5}),
    "phosphate": ("lab", 0.4, {"diabetic ketoacidosis": 1.5}),
    "ionized calcium": ("lab", 0.05, {"cardiac surgery": 2.0, "trauma": 1.0, "GI bleed": 0.6}),
    "glucose (fingerstick)": ("lab", 0.8, {"diabetic ketoacidosis": 5.0, "cardiac surgery": 2.0, "sepsis": 0.8}),
    "PT/INR": ("lab", 0.3, {"GI bleed": 1.2, "cardiac surgery": 1.0, "trauma": 0.8, "stroke": 0.5}),
    "PTT": ("lab", 0.15, {"acute coronary syndrome": 1.5, "cardiac surgery": 1.0, "stroke": 0.3}),
    "fibrinogen": ("lab", 0.02, {"trauma": 0.8, "cardiac surgery": 0.6, "GI bleed": 0.3}),
    "D-dimer": ("lab", 0.02, {"respiratory failure": 0.2}),
    "lactate": ("lab", 0.1, {"sepsis": 1.8, "trauma": 0.8, "GI bleed": 0.4}),
    "arterial blood gas": ("lab", 0.1, {"respiratory failure": 2.2, "cardiac surgery": 1.5, "sepsis": 0.6, "diabetic ketoacidosis": 0.5}),
    "venous blood gas": ("lab", 0.05, {"diabetic ketoacidosis": 1.5, "overdose/withdrawal": 0.3}),
    "troponin I": ("lab", 0.08, {"acute coronary syndrome": 1.6, "heart failure": 0.5, "cardiac surgery": 0.5}),
    "troponin T": ("lab", 0.0, {}),  # substitute of troponin I (hospital formulary)
    "CK-MB": ("lab", 0.02, {"acute coronary syndrome": 0.8}),
    "BNP": ("lab", 0.03, {"heart failure": 0.9, "respiratory failure": 0.2}),
    "NT-proBNP": ("lab", 0.0, {}),
    "lipid panel": ("lab", 0.01, {"acute coronary syndrome": 0.35, "stroke": 0.35}),
    "hemoglobin A1c": ("lab", 0.02, {"acute coronary syndrome": 0.3, "stroke": 0.3, "diabetic ketoacidosis": 0.4}),
    "TSH": ("lab", 0.04, {"heart failure": 0.2, "stroke": 0.1}),
    "liver function panel": ("lab", 0.15, {"sepsis": 0.5, "GI bleed": 0.6, "overdose/withdrawal": 0.6}),
    "lipase": ("lab", 0.04, {"diabetic ketoacidosis": 0.5, "overdose/withdrawal": 0.3}),
    "ammonia": ("lab", 0.01, {"GI bleed": 0.3, "overdose/withdrawal": 0.2}),
    "albumin": ("lab", 0.1, {"sepsis": 0.2}),
    "procalcitonin": ("lab", 0.02, {"sepsis": 0.6, "respiratory failure": 0.3}),
    "C-reactive protein": ("lab", 0.03, {"sepsis": 0.3}),
    "blood culture": ("lab", 0.05, {"sepsis": 0.9, "respiratory failure": 0.3}),
    "urine culture": ("lab", 0.04, {"sepsis": 0.5}),
    "sputum culture": ("lab", 0.01, {"respiratory failure": 0.5, "sepsis": 0.2}),
    "urinalysis": ("lab", 0.08, {"sepsis": 0.4, "diabetic ketoacidosis": 0.3}),
    "MRSA nasal PCR": ("lab", 0.08, {"respiratory failure": 0.2}),
    "influenza PCR": ("lab", 0.01, {"respiratory failure": 0.4}),
    "C. difficile toxin": ("lab", 0.01, {"sepsis": 0.1}),
    "beta-hydroxybutyrate": ("lab", 0.0, {"diabetic ketoacidosis": 1.2}),
    "serum osmolality": ("lab", 0.01, {"diabetic ketoacidosis": 0.4, "stroke": 0.3, "overdose/withdrawal": 0.3}),
    "urine drug screen": ("lab", 0.02, {"overdose/withdrawal": 0.9, "trauma": 0.3}),
    "ethanol level": ("lab", 0.01, {"overdose/withdrawal": 0.8, "trauma": 0.5}),
    "acetaminophen level": ("lab", 0.0, {"overdose/withdrawal": 0.8}),
    "salicylate level": ("lab", 0.0, {"overdose/withdrawal": 0.6}),
    "CK (total)": ("lab", 0.02, {"trauma": 0.4, "overdose/withdrawal": 0.3}),
    "type and screen": ("lab", 0.03, {"GI bleed": 0.8, "trauma": 0.7, "cardiac surgery": 0.6}),
    "hemoglobin (point of care)": ("lab", 0.02, {"GI bleed": 1.5, "cardiac surgery": 0.8}),
    "anti-Xa heparin level": ("lab", 0.0, {"acute coronary syndrome": 0.3}),
    "vancomycin trough": ("lab", 0.0, {"sepsis": 0.4}),
    "digoxin level": ("lab", 0.0, {"heart failure": 0.08}),
    "cortisol": ("lab", 0.0, {"sepsis": 0.15}),
    "ferritin": ("lab", 0.01, {"GI bleed": 0.15}),
    "iron panel": ("lab", 0.01, {"GI bleed": 0.15}),
    "LDH": ("lab", 0.01, {"sepsis": 0.05}),
    "uric acid": ("lab", 0.01, {}),
    "urine sodium": ("lab", 0.01, {"heart failure": 0.1}),
    "CSF analysis": ("lab", 0.0, {"stroke": 0.05}),
    # ---- medications
    "potassium chloride": ("med", 0.5, {"diabetic ketoacidosis": 1.5, "heart failure": 0.5}),
    "magnesium sulfate": ("med", 0.25, {"cardiac surgery": 0.6, "overdose/withdrawal": 0.3}),
    "calcium gluconate": ("med", 0.04, {"cardiac surgery": 0.4, "trauma": 0.3}),
    "sodium phosphate": ("med", 0.05, {"diabetic ketoacidosis": 0.4}),
    "sodium chloride 0.9%": ("med", 0.5, {"sepsis": 1.2, "diabetic ketoacidosis": 1.2, "GI bleed": 0.4}),
    "lactated Ringer's": ("med", 0.0, {}),  # substitute of sodium chloride 0.9%
    "dextrose 50%": ("med", 0.05, {"diabetic ketoacidosis": 0.3, "overdose/withdrawal": 0.1}),
    "sodium bicarbonate": ("med", 0.02, {"diabetic ketoacidosis": 0.3, "overdose/withdrawal": 0.2, "sepsis": 0.1}),
    "acetaminophen": ("med", 0.6, {"trauma": 0.6, "cardiac surgery": 0.8}),
    "ondansetron": ("med", 0.35, {"GI bleed": 0.3, "diabetic ketoacidosis": 0.4}),
    "prochlorperazine": ("med", 0.0, {}),
    "pantoprazole": ("med", 0.5, {"GI bleed": 2.0, "sepsis": 0.2}),
    "famotidine": ("med", 0.0, {}),
    "heparin": ("med", 0.6, {"acute coronary syndrome": 1.5}),
    "enoxaparin": ("med", 0.0, {}),
    "insulin lispro": ("med", 0.25, {"diabetic ketoacidosis": 1.0, "cardiac surgery": 0.5}),
    "insulin aspart": ("med", 0.0, {}),
    "insulin regular infusion": ("med", 0.0, {"diabetic ketoacidosis": 2.0, "cardiac surgery": 0.8}),
    "insulin glargine": ("med", 0.05, {"diabetic ketoacidosis": 0.4}),
    "furosemide": ("med", 0.15, {"heart failure": 1.8, "cardiac surgery": 0.6, "respiratory failure": 0.3}),
    "bumetanide": ("med", 0.0, {}),
    "spironolactone": ("med", 0.01, {"heart failure": 0.3}),
    "metoprolol": ("med", 0.25, {"acute coronary syndrome": 1.0, "heart failure": 0.5, "cardiac surgery": 0.8}),
    "diltiazem": ("med", 0.03, {"heart failure": 0.2}),
    "amiodarone": ("med", 0.02, {"cardiac surgery": 0.6, "heart failure": 0.3}),
    "digoxin": ("med", 0.0, {"heart failure": 0.1}),
    "aspirin": ("med", 0.15, {"acute coronary syndrome": 1.0, "stroke": 0.6, "cardiac surgery": 0.8}),
    "clopidogrel": ("med", 0.02, {"acute coronary syndrome": 0.8, "stroke": 0.2}),
    "ticagrelor": ("med", 0.0, {"acute coronary syndrome": 0.2}),
    "atorvastatin": ("med", 0.15, {"acute coronary syndrome": 0.8, "stroke": 0.8, "cardiac surgery": 0.6}),
    "nitroglycerin": ("med", 0.02, {"acute coronary syndrome": 1.0, "heart failure": 0.3}),
    "lisinopril": ("med", 0.04, {"heart failure": 0.4, "acute coronary syndrome": 0.3}),
    "norepinephrine": ("med", 0.02, {"sepsis": 1.5, "cardiac surgery": 0.4}),
    "vasopressin": ("med", 0.0, {"sepsis": 0.4}),
    "phenylephrine": ("med", 0.01, {"cardiac surgery": 0.4, "stroke": 0.1}),
    "epinephrine": ("med", 0.0, {"cardiac surgery": 0.3, "sepsis": 0.05}),
    "dobutamine": ("med", 0.0, {"heart failure": 0.25}),
    "vancomycin": ("med", 0.1, {"sepsis": 1.4, "respiratory failure": 0.6}),
    "piperacillin-tazobactam": ("med", 0.05, {"sepsis": 1.5, "respiratory failure": 0.7}),
    "cefepime": ("med", 0.0, {}),
    "ceftriaxone": ("med", 0.04, {"respiratory failure": 0.7, "sepsis": 0.4}),
    "azithromycin": ("med", 0.01, {"respiratory failure": 0.6}),
    "metronidazole": ("med", 0.01, {"sepsis": 0.3}),
    "cefazolin": ("med", 0.01, {"cardiac surgery": 1.2, "trauma": 0.5}),
    "fluconazole": ("med", 0.0, {"sepsis": 0.1}),
    "propofol": ("med", 0.03, {"respiratory failure": 1.0, "cardiac surgery": 0.6, "trauma": 0.4}),
    "dexmedetomidine": ("med", 0.0, {}),
    "lorazepam": ("med", 0.08, {"overdose/withdrawal": 1.8, "stroke": 0.1}),
    "midazolam": ("med", 0.0, {}),
    "fentanyl": ("med", 0.15, {"respiratory failure": 0.8, "trauma": 1.0, "cardiac surgery": 0.8}),
    "morphine": ("med", 0.0, {}),
    "hydromorphone": ("med", 0.0, {}),
    "oxycodone": ("med", 0.05, {"trauma": 0.6, "cardiac surgery": 0.4}),
    "haloperidol": ("med", 0.03, {"overdose/withdrawal": 0.3, "sepsis": 0.05}),
    "quetiapine": ("med", 0.02, {"overdose/withdrawal": 0.2}),
    "naloxone": ("med", 0.01, {"overdose/withdrawal": 0.6}),
    "thiamine": ("med", 0.03, {"overdose/withdrawal": 1.0}),
    "folic acid": ("med", 0.02, {"overdose/withdrawal": 0.7}),
    "multivitamin": ("med", 0.03, {"overdose/withdrawal": 0.6}),
    "nicotine patch": ("med", 0.04, {"overdose/withdrawal": 0.3, "respiratory failure": 0.1}),
    "activated charcoal": ("med", 0.0, {"overdose/withdrawal": 0.12}),
    "N-acetylcysteine": ("med", 0.0, {"overdose/withdrawal": 0.25}),
    "albuterol": ("med", 0.06, {"respiratory failure": 1.2}),
    "ipratropium-albuterol": ("med", 0.03, {"respiratory failure": 1.5}),
    "methylprednisolone": ("med", 0.01, {"respiratory failure": 0.8}),
    "hydrocortisone": ("med", 0.0, {"sepsis": 0.3}),
    "dexamethasone": ("med", 0.0, {"stroke": 0.1}),
    "levetiracetam": ("med", 0.01, {"stroke": 0.6, "trauma": 0.4}),
    "nicardipine": ("med", 0.0, {"stroke": 0.8}),
    "labetalol": ("med", 0.03, {"stroke": 0.8}),
    "hydralazine": ("med", 0.04, {"stroke": 0.3, "heart failure": 0.1}),
    "mannitol": ("med", 0.0, {"stroke": 0.2, "trauma": 0.1}),
    "sodium chloride 3%": ("med", 0.0, {"stroke": 0.25, "trauma": 0.2}),
    "alteplase": ("med", 0.0, {"stroke": 0.15}),
    "octreotide": ("med", 0.0, {"GI bleed": 0.5}),
    "packed red blood cells": ("med", 0.02, {"GI bleed": 1.2, "trauma": 0.6, "cardiac surgery": 0.4}),
    "fresh frozen plasma": ("med", 0.0, {"GI bleed": 0.3, "trauma": 0.3}),
    "platelet transfusion": ("med", 0.0, {"trauma": 0.15, "cardiac surgery": 0.15}),
    "phytonadione": ("med", 0.01, {"GI bleed": 0.3}),
    "tranexamic acid": ("med", 0.0, {"trauma": 0.3, "cardiac surgery": 0.2}),
    "tetanus toxoid": ("med", 0.0, {"trauma": 0.5}),
    "docusate": ("med", 0.25, {"trauma": 0.3, "cardiac surgery": 0.3}),
    "senna": ("med", 0.0, {}),
    "polyethylene glycol": ("med", 0.0, {}),
    "lactulose": ("med", 0.01, {"GI bleed": 0.3}),
    "sucralfate": ("med", 0.01, {"GI bleed": 0.3}),
    "chlorhexidine oral rinse": ("med", 0.03, {"respiratory failure": 1.0}),
    "warfarin": ("med", 0.02, {"heart failure": 0.1}),
    "levothyroxine": ("med", 0.05, {}),
    "sodium polystyrene sulfonate": ("med", 0.01, {"heart failure": 0.05}),
}  # fmt: skip

CLINIC_ITEMS: tuple[str, ...] = tuple(_I)

#: Interchangeable items: each hospital's formulary or ordering protocol prefers one of each group
#: (with the given odds); the others are used rarely there. This is the main realistic source of
#: hospital-to-hospital differences beyond case mix.
SUBSTITUTES: list[tuple[tuple[str, ...], tuple[float, ...]]] = [
    (("troponin I", "troponin T"), (0.65, 0.35)),
    (("BNP", "NT-proBNP"), (0.6, 0.4)),
    (("sodium chloride 0.9%", "lactated Ringer's"), (0.7, 0.3)),
    (("pantoprazole", "famotidine"), (0.6, 0.4)),
    (("heparin", "enoxaparin"), (0.55, 0.45)),
    (("ondansetron", "prochlorperazine"), (0.8, 0.2)),
    (("insulin lispro", "insulin aspart"), (0.5, 0.5)),
    (("furosemide", "bumetanide"), (0.75, 0.25)),
    (("propofol", "dexmedetomidine"), (0.6, 0.4)),
    (("lorazepam", "midazolam"), (0.6, 0.4)),
    (("fentanyl", "morphine", "hydromorphone"), (0.5, 0.3, 0.2)),
    (("piperacillin-tazobactam", "cefepime"), (0.6, 0.4)),
    (("docusate", "senna", "polyethylene glycol"), (0.4, 0.35, 0.25)),
]

#: Case-mix multipliers by region (e.g. more diabetes and heart failure in the South, more
#: cardiac surgery referrals in the Northeast, more overdoses and trauma in the West).
REGION_MIX: dict[str, dict[str, float]] = {
    "Midwest": {"respiratory failure": 1.3, "sepsis": 1.1, "overdose/withdrawal": 1.2},
    "Northeast": {"cardiac surgery": 1.6, "acute coronary syndrome": 1.2, "trauma": 0.7},
    "South": {"diabetic ketoacidosis": 1.6, "heart failure": 1.3, "stroke": 1.2, "overdose/withdrawal": 0.8},
    "West": {"overdose/withdrawal": 1.5, "trauma": 1.3, "heart failure": 0.8},
}

#: Specialty centres: the condition mix multipliers of a hospital with that specialty.
SPECIALTIES: dict[str, dict[str, float]] = {
    "cardiac surgery centre": {"cardiac surgery": 7.0, "acute coronary syndrome": 2.0},
    "trauma centre": {"trauma": 5.0, "stroke": 1.5},
    "stroke centre": {"stroke": 4.0},
    "liver/GI unit": {"GI bleed": 4.0, "overdose/withdrawal": 1.5},
}


def make_clinic(
    rng: np.random.Generator | int | None = None,
    *,
    n_hospitals: int = 30,
    n_patients: int = 2400,
    min_hospital: int = 30,
    specialties: Sequence[str] = (
        "cardiac surgery centre", "cardiac surgery centre", "trauma centre", "trauma centre",
        "stroke centre", "liver/GI unit",
    ),
    intensity: float = 0.4,
    habit_sd: float = 0.2,
    off_formulary: float = 0.15,
    value_max: float = 20.0,
) -> pd.DataFrame:
    """Simulate eICU-like unit stays: a long table of (patient, item, count, hospital, region).

    The model, per stay i in hospital h of region r:

    - hospitals: sizes log-normal (sd 0.7, floor ``min_hospital``) — a few large teaching hospitals
      and many small community ones; regions assigned round-robin in shuffled order; the largest
      hospitals get the ``specialties``, one each (with fewer hospitals than specialties, the first ones
      listed);
    - primary condition c_i ~ π_h ∝ global shares (:data:`CONDITIONS`) × region multipliers
      (:data:`REGION_MIX`) × specialty multipliers × a hospital's own Dirichlet(20·π) deviation; with
      probability 0.35 a secondary condition from the same mix at half weight;
    - length of stay L_i ~ LogNormal(log 2.2 days, 0.55) × the condition's factor, in [0.5, 21] days;
      a severity s_i ~ Gamma(4, 1/4) (mean 1) scales all rates;
    - hospital habits: an ordering intensity κ_h ~ LogNormal(0, 0.25), a per-(hospital, item) habit
      factor LogNormal(0, ``habit_sd``), and one preferred item per group of :data:`SUBSTITUTES`
      (the others used at ``off_formulary`` times the rate);
    - count_ij ~ Poisson(intensity · L_i · s_i · κ_h · habit_hj · formulary_hj · (base_j + rate_cj
      + ½ rate_c'j)),
      clipped to ``value_max`` (the declared public bound); zeros are not written.

    Returns the rows sorted by hospital, patient and item, with integer counts. Deterministic in rng.
    """
    g = _as_rng(rng)
    conds = list(CONDITIONS)
    items = list(_I)
    C, M = len(conds), len(items)
    if n_hospitals < 2 or n_patients < n_hospitals * min_hospital:
        raise ConfigError(f"need ≥ 2 hospitals and ≥ {min_hospital} patients per hospital")

    # ---- item profiles: base (M,), per-condition rates (C, M)
    base = np.array([_I[it][1] for it in items])
    prof = np.zeros((C, M))
    for j, it in enumerate(items):
        for c, r in _I[it][2].items():
            prof[conds.index(c), j] = r
    # substitutes take their group leader's profile (the formulary decides who gets used)
    for group, _ in SUBSTITUTES:
        lead = items.index(group[0])
        for other in group[1:]:
            base[items.index(other)] = base[lead]
            prof[:, items.index(other)] = prof[:, lead]

    # ---- hospitals
    w = np.maximum(np.exp(g.normal(0.0, 0.7, n_hospitals)), 1e-3)
    extra = n_patients - n_hospitals * min_hospital
    raw = w / w.sum() * extra
    sizes = np.floor(raw).astype(np.int64)
    sizes[np.argsort(-(raw - sizes), kind="stable")[: extra - sizes.sum()]] += 1
    sizes += min_hospital
    region_of = np.array(REGIONS)[g.permutation(np.arange(n_hospitals) % len(REGIONS))]
    spec_of = np.array([""] * n_hospitals, dtype=object)
    # specialties go to the largest hospitals (tertiary centres are big), one each: with fewer hospitals than
    # specialties, the first ones listed
    k = min(len(specialties), n_hospitals)
    big = np.argsort(-sizes, kind="stable")[:k]
    spec_of[big] = list(specialties)[:k]

    share = np.array([CONDITIONS[c][0] for c in conds])
    los_factor = np.array([CONDITIONS[c][1] for c in conds])
    mix = np.empty((n_hospitals, C))
    for h in range(n_hospitals):  # 30 hospitals: a loop over entities, not over data rows
        m = share.copy()
        for c, f in REGION_MIX[region_of[h]].items():
            m[conds.index(c)] *= f
        for c, f in SPECIALTIES.get(spec_of[h], {}).items():
            m[conds.index(c)] *= f
        m /= m.sum()
        mix[h] = g.dirichlet(20.0 * m)
    kappa = np.exp(g.normal(0.0, 0.25, n_hospitals))
    habit = np.exp(g.normal(0.0, habit_sd, (n_hospitals, M)))
    formulary = np.ones((n_hospitals, M))
    for group, odds in SUBSTITUTES:
        idx = np.array([items.index(x) for x in group])
        pref = g.choice(len(group), size=n_hospitals, p=np.asarray(odds))
        formulary[:, idx] = off_formulary
        formulary[np.arange(n_hospitals), idx[pref]] = 1.0

    # ---- patients
    hosp = np.repeat(np.arange(n_hospitals), sizes)
    n = len(hosp)
    cum = np.cumsum(mix, axis=1)[hosp]
    c1 = np.minimum((g.random(n)[:, None] > cum).sum(axis=1), C - 1)
    c2 = np.minimum((g.random(n)[:, None] > cum).sum(axis=1), C - 1)
    has2 = (g.random(n) < 0.35) & (c2 != c1)
    los = np.clip(np.exp(g.normal(np.log(2.2), 0.55, n)) * los_factor[c1], 0.5, 21.0)
    sev = g.gamma(4.0, 0.25, n)
    per_day = base + prof[c1] + 0.5 * prof[c2] * has2[:, None]
    rate = (intensity * los * sev * kappa[hosp])[:, None] * habit[hosp] * formulary[hosp] * per_day
    counts = np.minimum(g.poisson(rate), value_max).astype(np.int64)

    r, j = np.nonzero(counts)
    hosp_names = np.array([f"hospital {h + 1:02d}" for h in range(n_hospitals)])
    pid = np.array([f"P{i + 1:05d}" for i in range(n)])
    return pd.DataFrame(
        {
            "patient_id": pid[r],
            "item": np.array(items)[j],
            "count": counts[r, j],
            "hospital": hosp_names[hosp[r]],
            "region": region_of[hosp[r]],
        }
    )


def reexport(ds: FederatedDataset, *, pseudonyms: bool = False, reorder: bool = False, add: int = 0,
             remove: int = 0, relabel: str | None = None, seed: int = 0,
             name: str = "re-export") -> FederatedDataset:
    """The same people exported again, as a data owner might (for the tests and benchmarks of the
    odometer's people fingerprint): new pseudonyms, rows in another order, ``add`` interactions added
    and ``remove`` removed at random, entity names with the prefix ``relabel``. Values keep their kind
    and bound; the item ids stay (they are the public catalogue)."""
    rng = np.random.default_rng(seed)
    X = ds.X.tocoo()
    rows, cols, vals = X.row.copy(), X.col.copy(), X.data.copy()
    if remove:
        keep = np.ones(rows.size, bool)
        keep[rng.choice(rows.size, remove, replace=False)] = False
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    if add:
        rows = np.concatenate([rows, rng.integers(0, ds.n_users, add)])
        cols = np.concatenate([cols, rng.integers(0, ds.n_items, add)])
        vals = np.concatenate([vals, np.ones(add)])
    Y = sp.coo_matrix((vals, (rows, cols)), shape=ds.X.shape).tocsr()
    Y.sum_duplicates()
    names = np.asarray(ds.entity_names, dtype=object)[ds.entity_of_user].astype(str)
    if relabel:
        names = np.char.add(relabel, names)
    uid = np.asarray(ds.user_ids).astype(str)
    if pseudonyms:
        uid = np.array([f"p{h:08x}" for h in rng.permutation(10 ** 7)[: ds.n_users]])
    order = rng.permutation(ds.n_users) if reorder else np.arange(ds.n_users)
    return FederatedDataset.from_parts(Y[order], names[order], user_ids=uid[order], item_ids=ds.item_ids,
                                       value_kind=ds.value_kind, value_max=ds.value_max, name=name)
