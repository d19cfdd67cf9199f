"""DP partition selection of the item catalogue, for data without a declared public catalogue.

SPEC rev. 2: the item catalogue (and so every message's shape) must come from public inputs or from a
DP release charged to the ledger; rev. 4: it decides only what the federation *shares* — each entity
keeps every item it has rows for (:class:`~dpfed_core.models.shared_items.SharedItems`). When the data owner declares no item list
(MovieLens' ``u.item``, a formulary given with ``--items``), each entity releases the set of items
that pass a noisy threshold on its own users; the catalogue is the union of the entities' released
sets (post-processing). This runs inside the run, on the training rows, charged to the run's
ledger — never in a loader, which has no budget.

Mechanism (per entity; Korolova et al. 2009, Gopi et al. 2020 "Laplace thresholding", here with
the discrete Laplace so that integer counts leave no floating-point artefact):

1. *Contribution bound.* Each user keeps at most ``c`` of their items (a uniformly random subset
   when they have more), so one user changes at most ``c`` item counts, each by at most 1.
2. *Noisy counts of non-empty items.* For every item with at least one contributing user,
   ñ_i = n_i + Z_i, Z_i discrete Laplace with scale b = c / ε (P(Z = z) ∝ exp(−|z|/b)), drawn by
   :func:`dpfed_core.privacy.mechanisms.count_mechanism` (OpenDP, OS entropy outside simulation).
3. *Threshold.* Item i is released iff ñ_i ≥ 1 + K, with the integer
   K = ⌈b · ln(c / (δ · (1 + e^(−1/b))))⌉.

Neighbouring relation: one user of the entity added or removed (unbounded, user-level).
Sensitivity: L0 = c items, L∞ = 1 per item, hence L1 = c on the vector of counts.
Privacy map: items counted in both datasets — the discrete Laplace mechanism on an
L1-sensitivity-c integer vector with scale b = c/ε: ε-DP. Items that exist only because of the
added user (count 1, at most c of them) — each is released with probability
P(Z ≥ K) = e^(−K/b) / (1 + e^(−1/b)) ≤ δ/c by the choice of K, so together they add at most δ.
Total: (ε, δ)-DP per entity; entities hold disjoint users, so the union over entities is (ε, δ)-DP
by parallel composition, and the catalogue (the union) is post-processing.

**Federation-wide selection under secure aggregation** (:func:`select_catalogue_secure`).
Per-entity selection needs each hospital's own noisy count to clear a threshold of order
(c/ε)·ln(c/δ); with hospitals of 2–27 stays nothing ever passes. Under secure aggregation the
entities instead sum one vector over a *public key space* — B hash buckets of the item names (a
keyed-free public hash, :func:`item_buckets`; the bucket of a name needs no private input) — and the
server thresholds the noisy federation-wide count:

1. *Keys of an item.* An item's key is the bucket of its full name. Optionally (``levels`` > 0; off
   by default, see :data:`SECURE_CATALOGUE_LEVELS` for the measurement) a name written as a path of
   ``|``-separated levels (``cardiovascular|shock|vasopressors|norepinephrine``) also has the buckets
   of its first ``levels`` proper prefixes (``cardiovascular``, ``cardiovascular|shock``, …;
   :func:`item_bucket_levels`): a coarse level is held by every user of any item under it, so it
   clears the threshold where its rare leaves do not, and a leaf that does not pass is then shared
   through its deepest released ancestor (:func:`item_keys`).
2. *Contribution bound and weights* (the weighted Gaussian of Gopi et al., ICML 2020, "Differentially
   Private Set Union"). A user's items are mapped to all their keys' buckets; each user keeps at
   most ``c`` distinct buckets (a uniformly random subset when more) and gives each kept bucket the
   weight 1/√k, k the number it kept, so every user's vector has L2 norm exactly 1. Against unit
   weights with L2 sensitivity √c this never loses: a user with k ≤ c buckets adds 1/√k ≥ 1/√c of
   the noise's scale to each, a user with more adds exactly what unit weights did.
3. *Secure sum.* Entity h sends w_h + N(0, σ²/(H − d)) over all B buckets (every bucket, empty or
   not: the vector's shape is the public B); the server learns Σ_h, carrying noise of variance ≥ σ².
4. *Threshold.* The server keeps the buckets whose noisy total is ≥ z·σ_sum, z chosen so that
   :data:`SECURE_CATALOGUE_PHANTOM_SHARE` of the B buckets would pass on noise alone (phantom keys
   cost message size, not privacy); the released keys are the catalogue, broadcast to every entity.
   Every later message is shaped by the number of released keys, a DP output. Items sharing a
   released bucket share one key (and so one row of V): with m items in B buckets about m/B of
   them collide.

**Federation-wide selection without secure aggregation** (the same two functions, divisor 1). Each
entity releases its own noisy bucket histogram w_h + N(0, σ²) — the full σ, so the server seeing
every release individually learns each at (ε, δ) — and the server sums them: the sum carries noise
σ·√H while the weights add up over every entity, so an item held by enough users across the
federation clears z·σ·√H where no entity's own few users would clear a per-entity threshold.

Neighbouring relation: one user added or removed (user-level). Sensitivity: a user's weights depend
on that user's items alone (no weight depends on another user), and their vector has L2 norm 1 —
L2 sensitivity 1 of the summed vector. Privacy map: OpenDP's zCDP map of its float Gaussian at σ on
B coordinates, ρ recorded on the ledger row (it composes with the method's Gaussian releases by
adding ρ); (ε, δ) against the server. Against the server together with every other entity only the
entity's own share σ/√(H − d) protects it (ρ·(H − d), in the row's note). The threshold and the
mapping of keys back to an entity's own items are post-processing.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.privacy import mechanisms as mech
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.privacy.statement import epsilon_that_holds

#: Default share of the run's ε and δ spent on the catalogue when one is needed.
CATALOGUE_EPSILON_SHARE = 0.2
CATALOGUE_DELTA_SHARE = 0.5
#: Default contribution bound c (items per user counted by the selection).
CATALOGUE_MAX_ITEMS_PER_USER = 4
#: Federation-wide selection (secure aggregation): share of the run's zCDP budget ρ spent on it
#: (the rest goes to the method), its public key space B, and its contribution bound c. With
#: L2-normalised weights the bound is a utility choice, not a privacy one (the sensitivity is 1
#: whatever c is): a larger c spreads a user's unit of weight thinner. Not tuned on any table:
#: c = 16 is the order of a typical record's distinct items (an ICU stay's drugs, a viewer's month
#: of films), B = 4096 keeps OpenDP's exact sampler at ≈ 0.25 s per entity and collisions at ≈ m/B
#: of m items.
SECURE_CATALOGUE_RHO_SHARE = 0.4
SECURE_CATALOGUE_BUCKETS = 4096
SECURE_CATALOGUE_MAX_ITEMS_PER_USER = 16
#: Coarse ``|`` levels of a hierarchical item name that are keys of their own (the first ones: the
#: coarsest levels are held by the most users). Public: a property of the naming scheme, not the data.
#: 0 by default: on eICU medication written class|ingredient|drug string, sharing a leaf through its
#: kept ancestor made the recommended method worse than going alone where the flat selection is not
#: (bench/results/utility_sites.md, "hierarchical names"): one shared row of V for a whole class
#: blurs the ranking of the site's own items, and the coarse keys take weight from the leaves.
SECURE_CATALOGUE_LEVELS = 0
HIERARCHY_SEPARATOR = "|"
#: L2 sensitivity of the summed bucket weights: every user's weights have L2 norm 1 (_unit_norm_rows).
SECURE_CATALOGUE_SENSITIVITY = 1.0
#: Share of the B buckets expected to pass the threshold on noise alone (phantom keys).
SECURE_CATALOGUE_PHANTOM_SHARE = 0.01


def selection_threshold(epsilon: float, delta: float, max_items: int) -> tuple[float, int]:
    """(discrete Laplace scale b, integer K) of the selection at (ε, δ) with contribution bound c:
    an item is released iff its noisy count is ≥ 1 + K (see the module doc for the proof)."""
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ConfigError(f"catalogue selection needs a finite ε > 0, got {epsilon}", param="epsilon")
    if not 0 < delta < 1:
        raise ConfigError("the DP catalogue selection needs δ > 0 (a new item appears with probability δ); "
                          "raise delta or declare the item catalogue with items=<file>", param="delta")
    c = int(max_items)
    if c < 1:
        raise ConfigError(f"the catalogue's items per user must be ≥ 1, got {max_items}")
    b = c / epsilon
    k = math.ceil(b * math.log(c / (delta * (1.0 + math.exp(-1.0 / b)))))
    return b, max(k, 0)


def new_item_release_probability(b: float, k: int) -> float:
    """P(Z ≥ K) for discrete Laplace Z of scale b: the chance that an item held by one user only is
    released (must be ≤ δ/c)."""
    return math.exp(-k / b) / (1.0 + math.exp(-1.0 / b)) if k >= 1 else 1.0


def _bounded_rows(X: sp.csr_matrix, c: int, rng: np.random.Generator) -> sp.csr_matrix:
    """Binary rows with at most ``c`` non-zeros each (a uniform random subset of longer rows)."""
    X = sp.csr_matrix(X)
    n = X.shape[0]
    nnz_row = np.diff(X.indptr)
    rows = np.repeat(np.arange(n), nnz_row)
    key = rng.random(X.nnz)
    order = np.lexsort((key, rows))
    pos = np.empty(X.nnz, dtype=np.int64)
    pos[order] = np.arange(X.nnz) - np.repeat(X.indptr[:-1], nnz_row)
    keep = pos < c
    return sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], X.indices[keep])), shape=X.shape)


@dataclass
class CatalogueRelease:
    """What the selection released. columns : sorted item indices of the catalogue (the union).
    per_entity : {entity: released item indices}. scale, threshold : b and the smallest released
    noisy count 1 + K."""

    columns: np.ndarray
    per_entity: dict[str, np.ndarray] = field(default_factory=dict)
    scale: float = math.nan
    threshold: float = math.nan


def select_catalogue(
    X: sp.csr_matrix,
    slices: list[slice],
    entity_names: list[str],
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    max_items: int = CATALOGUE_MAX_ITEMS_PER_USER,
) -> CatalogueRelease:
    """Run the selection for every entity on its rows ``X[slices[h]]`` and charge (ε, δ) per entity
    to ``ledger`` (stage ``catalogue``). Returns the union of the released item sets."""
    b, k = selection_threshold(epsilon, delta, max_items)
    released: dict[str, np.ndarray] = {}
    for name, sl in zip(entity_names, slices):
        Xb = _bounded_rows(X[sl], int(max_items), rng)
        counts = np.asarray(Xb.sum(axis=0)).ravel()
        present = np.flatnonzero(counts > 0)  # only non-empty items are enumerated (δ covers new ones)
        keep = mech.partition_selection(counts[present], int(max_items), epsilon, delta, 1 + k, rng,
                                        ledger=ledger.for_entity(name), stage="catalogue",
                                        note=f"items with noisy user count ≥ {1 + k} (≤ {int(max_items)} "
                                             "items per user)")
        released[name] = present[keep]
    cols = np.unique(np.concatenate([v for v in released.values()] or [np.zeros(0, np.int64)])).astype(np.int64)
    return CatalogueRelease(cols, released, b, float(1 + k))


# ----------------------------------------------------------------------------- federation-wide
def _bucket_of(text: str, n_buckets: int, person: bytes) -> int:
    import hashlib

    d = hashlib.blake2b(text.encode("utf-8"), digest_size=8, person=person).digest()
    return int.from_bytes(d, "little") % n_buckets


def _check_buckets(n_buckets: int) -> int:
    b = int(n_buckets)
    if b < 2:
        raise ConfigError(f"the catalogue's bucket count must be ≥ 2, got {n_buckets}", param="catalogue_buckets")
    return b


def item_buckets(item_names, n_buckets: int) -> np.ndarray:
    """The public hash bucket (0 … B − 1) of each item name: BLAKE2b of the name's UTF-8 bytes with a
    fixed public personalisation, so every entity computes the same key for the same name without
    any shared secret or private input."""
    b = _check_buckets(n_buckets)
    # one hash per catalogue item, never per user × item
    return np.fromiter((_bucket_of(str(name), b, b"dpfed-catalog1") for name in item_names), dtype=np.int64,
                       count=len(item_names))


def item_bucket_levels(item_names, n_buckets: int, levels: int = SECURE_CATALOGUE_LEVELS) -> np.ndarray:
    """Every key bucket of each item, deepest first: an (n_items × (1 + ``levels``)) array whose
    column 0 is :func:`item_buckets` (the full name) and whose next columns are the buckets of the
    name's proper ``|`` prefixes from the deepest kept level to the coarsest, −1 where the name has
    no such level. Only the first ``levels`` levels are keys (``a|b|c|d`` with 3 levels: ``a|b|c``,
    ``a|b``, ``a``). A prefix is hashed with its own public personalisation, so a coarse level never
    shares a bucket with a full name by construction (only by a hash collision)."""
    b = _check_buckets(n_buckets)
    L = int(levels)
    if L < 0:
        raise ConfigError(f"the catalogue's hierarchy levels must be ≥ 0, got {levels}")
    out = np.full((len(item_names), 1 + L), -1, dtype=np.int64)
    out[:, 0] = item_buckets(item_names, b)
    if L == 0:
        return out
    for j, name in enumerate(item_names):  # one pass per catalogue item, never per user × item
        parts = str(name).split(HIERARCHY_SEPARATOR)
        depth = min(len(parts) - 1, L)  # proper prefixes only: the full name is column 0
        for lvl in range(depth, 0, -1):
            out[j, 1 + depth - lvl] = _bucket_of(HIERARCHY_SEPARATOR.join(parts[:lvl]), b, b"dpfed-catlevel")
    return out


def secure_threshold_z(n_buckets: int, phantom_share: float = SECURE_CATALOGUE_PHANTOM_SHARE) -> float:
    """z with P(N(0, 1) ≥ z) = ``phantom_share``: a bucket no user holds passes the threshold z·σ_sum
    with that probability."""
    from statistics import NormalDist

    if not 0 < phantom_share < 0.5:
        raise ConfigError(f"the phantom share must be in (0, 0.5), got {phantom_share}")
    return NormalDist().inv_cdf(1.0 - float(phantom_share))


@dataclass
class SecureCatalogueRelease:
    """What the federation-wide selection released.

    keys : (K,) sorted released bucket ids (the catalogue; its size K shapes every later message).
    item_key : (n_items,) position in ``keys`` of each item's bucket, −1 when its bucket was not
        released (each entity computes this for its own items: post-processing).
    sigma : σ of the secure sum (the guarantee against the server); sigma_sum : the public standard
    deviation of the sum actually formed; threshold : the smallest released noisy total.
    """

    keys: np.ndarray
    item_key: np.ndarray
    n_buckets: int
    sigma: float
    sigma_sum: float
    threshold: float
    coalition_epsilon: float = math.inf

    @property
    def columns(self) -> np.ndarray:
        """Item indices (of the full item axis) whose bucket was released."""
        return np.flatnonzero(self.item_key >= 0)

    def key_matrix(self) -> sp.csr_matrix:
        """(n_items × K) 0/1 matrix mapping each item of a released bucket to its key."""
        return key_matrix(self.item_key, self.keys.size)


def key_matrix(item_key: np.ndarray, n_keys: int) -> sp.csr_matrix:
    """(n_items × ``n_keys``) 0/1 matrix mapping item j to key ``item_key[j]`` (no 1 where −1)."""
    item_key = np.asarray(item_key, dtype=np.int64)
    rows = np.flatnonzero(item_key >= 0)
    return sp.csr_matrix((np.ones(rows.size), (rows, item_key[rows])), shape=(item_key.size, int(n_keys)))


def on_item_axis(factors: np.ndarray, item_key: np.ndarray) -> np.ndarray:
    """Rows of ``factors`` (K × w, one per released key) put on the item axis: item j takes row
    ``item_key[j]``, zero where −1 (the dense form of ``EntityFactors.on_keys`` for one entity)."""
    item_key = np.asarray(item_key, dtype=np.int64)
    out = np.zeros((item_key.size, np.shape(factors)[1]))
    rows = np.flatnonzero(item_key >= 0)
    out[rows] = np.asarray(factors, dtype=np.float64)[item_key[rows]]
    return out


def _as_levels(bucket: np.ndarray) -> np.ndarray:
    """``bucket`` as an (n_items × levels) array: a flat (n_items,) array is one level."""
    bucket = np.asarray(bucket, dtype=np.int64)
    return bucket[:, None] if bucket.ndim == 1 else bucket


def _bucket_rows(X: sp.csr_matrix, bucket: np.ndarray, n_buckets: int) -> sp.csr_matrix:
    """0/1 users × B matrix: which buckets each user's items' keys fall in (distinct buckets; every
    level of :func:`item_bucket_levels` counts)."""
    X = sp.csr_matrix(X)
    levels = _as_levels(bucket)
    Xb = sp.csr_matrix((np.ones(X.nnz), X.indices.copy(), X.indptr.copy()), shape=X.shape)
    item, lvl = np.nonzero(levels >= 0)
    H = sp.csr_matrix((np.ones(item.size), (item, levels[item, lvl])), shape=(levels.shape[0], n_buckets))
    B = sp.csr_matrix(Xb @ H)
    B.data[:] = 1.0
    return B


def _unit_norm_rows(B: sp.csr_matrix) -> sp.csr_matrix:
    """Each row's non-zeros set to 1/√k (k its non-zeros): every user's vector has L2 norm 1 (or 0)."""
    B = sp.csr_matrix(B, copy=True)
    k = np.diff(B.indptr)
    B.data = np.repeat(1.0 / np.sqrt(np.maximum(k, 1)), k)
    return B


def _secure_sigma(rho: float, n_buckets: int) -> float:
    """σ of the secure sum at zCDP ρ: OpenDP's float Gaussian on ``n_buckets`` coordinates at L2
    sensitivity :data:`SECURE_CATALOGUE_SENSITIVITY`."""
    from dpfed_core.privacy.noise import gaussian_float_sigma_for_rho

    if not (math.isfinite(rho) and rho > 0):
        raise ConfigError(f"the federation-wide catalogue needs a finite ρ > 0, got {rho}", param="epsilon")
    return gaussian_float_sigma_for_rho(rho, SECURE_CATALOGUE_SENSITIVITY, int(n_buckets))


def secure_catalogue_share(
    X: sp.csr_matrix,
    bucket: np.ndarray,
    rho: float,
    delta: float,
    rng: np.random.Generator,
    ledger,
    *,
    divisor: float,
    n_buckets: int = SECURE_CATALOGUE_BUCKETS,
    max_items: int = SECURE_CATALOGUE_MAX_ITEMS_PER_USER,
    grid: float | None = None,
) -> tuple[np.ndarray, float]:
    """One entity's share of the federation-wide catalogue's secure sum (module doc), the one code the
    in-process run and a deployment node run: its users' L2-normalised weights over the ``n_buckets``
    public buckets (``bucket``: the key buckets of each column of ``X``, from
    :func:`item_bucket_levels`, or a flat :func:`item_buckets`) plus its Gaussian noise share
    σ/``divisor``, charged ρ on ``ledger`` (an entity's ledger view, stage ``catalogue``). ``grid``:
    round the share to this public grid (SecAgg+ carries multiples of it exactly; post-processing).
    Returns ``(share (n_buckets,) in user weights, ε against the server with every other entity)``."""
    from dpfed_core.privacy.noise import zcdp_epsilon

    c = int(max_items)
    if c < 1:
        raise ConfigError(f"the catalogue's items per user must be ≥ 1, got {max_items}")
    nb = int(n_buckets)
    sigma = _secure_sigma(rho, nb)
    sens = SECURE_CATALOGUE_SENSITIVITY
    eps_row = zcdp_epsilon(rho, delta)
    eps_c = zcdp_epsilon(rho * divisor * divisor, delta) if divisor > 1 else eps_row
    if divisor > 1:
        note = (f"federation-wide catalogue: unit-norm user weights (≤ {c} buckets per user) over {nb} public hash "
                f"buckets, noise share σ/{divisor:.3g} of a secure sum (σ={sigma:.4g}); against the server with all "
                f"other entities: ε={epsilon_that_holds(eps_c)}, δ={delta:.3g}")
        name = f"{mech.SECURE_SHARE} (catalogue)"
    else:
        note = (f"federation-wide catalogue without secure aggregation: unit-norm user weights (≤ {c} buckets per user) "
                f"over {nb} public hash buckets with the full σ={sigma:.4g} on the entity's own release; the server "
                "sums the entities' releases")
        name = "Gaussian (own release, catalogue)"
    counts = np.asarray(_unit_norm_rows(_bounded_rows(_bucket_rows(X, bucket, nb), c, rng)).sum(axis=0)).ravel()
    noisy, _ = mech.gaussian_mechanism(counts, sens, eps_row, delta, rng, ledger=ledger,
                                       stage="catalogue", note=note, sigma=sigma, divisor=divisor, mechanism=name)
    if grid is not None:
        noisy = np.round(noisy / grid) * grid
    return noisy, eps_c


def secure_catalogue_keys(
    total: np.ndarray,
    rho: float,
    n_contributors: int,
    *,
    divisor: float,
    n_buckets: int = SECURE_CATALOGUE_BUCKETS,
    phantom_share: float = SECURE_CATALOGUE_PHANTOM_SHARE,
) -> tuple[np.ndarray, float, float, float]:
    """The server's step (post-processing of the secure sum ``total``, user weights per bucket): the
    buckets whose noisy total is ≥ z·σ_sum. Returns ``(sorted released keys, σ, σ_sum, threshold)``;
    every input is public (ρ, the number of shares summed, the divisor and the catalogue's constants)."""
    sigma, sigma_sum, threshold = secure_catalogue_threshold(rho, n_contributors, divisor=divisor,
                                                             n_buckets=n_buckets, phantom_share=phantom_share)
    keys = np.flatnonzero(np.asarray(total) >= threshold).astype(np.int64)
    return keys, sigma, sigma_sum, threshold


def secure_catalogue_threshold(
    rho: float,
    n_contributors: int,
    *,
    divisor: float,
    n_buckets: int = SECURE_CATALOGUE_BUCKETS,
    phantom_share: float = SECURE_CATALOGUE_PHANTOM_SHARE,
) -> tuple[float, float, float]:
    """``(σ, σ_sum, threshold)`` of the server's step on a sum of ``n_contributors`` shares, each with
    noise σ/``divisor``: σ_sum = σ·√n_contributors/divisor and the threshold z·σ_sum. Public inputs
    only, so the forecast before a run states the very threshold the run applies."""
    sigma = _secure_sigma(rho, n_buckets)
    sigma_sum = sigma * math.sqrt(int(n_contributors)) / divisor
    return sigma, sigma_sum, float(secure_threshold_z(int(n_buckets), phantom_share) * sigma_sum)


def item_keys(bucket: np.ndarray, keys: np.ndarray, n_buckets: int) -> np.ndarray:
    """Position in ``keys`` of each item's deepest released key: its full name's bucket if released,
    else its deepest released ``|`` level (``bucket`` from :func:`item_bucket_levels`, deepest
    first; a flat :func:`item_buckets` array is the full names only). −1: none was released."""
    pos = np.full(int(n_buckets), -1, dtype=np.int64)
    pos[np.asarray(keys, dtype=np.int64)] = np.arange(len(keys))
    levels = _as_levels(bucket)
    at = np.where(levels >= 0, pos[np.maximum(levels, 0)], -1)
    found = at >= 0
    first = np.argmax(found, axis=1)
    return np.where(found.any(axis=1), at[np.arange(at.shape[0]), first], -1).astype(np.int64)


def select_catalogue_secure(
    X: sp.csr_matrix,
    slices: list[slice],
    entity_names: list[str],
    item_names,
    rho: float,
    delta: float,
    rngs,
    ledger: PrivacyLedger,
    *,
    divisor: float,
    n_buckets: int = SECURE_CATALOGUE_BUCKETS,
    max_items: int = SECURE_CATALOGUE_MAX_ITEMS_PER_USER,
    phantom_share: float = SECURE_CATALOGUE_PHANTOM_SHARE,
    grid: float | None = None,
    levels: int = SECURE_CATALOGUE_LEVELS,
    noise_once: bool = False,
) -> SecureCatalogueRelease:
    """The federation-wide DP catalogue (module doc) in this process: every entity's
    :func:`secure_catalogue_share` (its own stream ``rngs[h]``; a single generator is spawned into one
    per entity), their sum, and the server's :func:`secure_catalogue_keys`. ``divisor`` = √(H − d),
    the secure sum's share divisor. A deployment runs the same two functions on the nodes and the
    server, the sum formed by SecAgg+.

    ``noise_once`` (production streams, secure aggregation): this process forms the sum, so the
    entities' exact histograms are summed and the sum gets one OpenDP Gaussian of variance
    H·σ²/divisor² ≥ σ² (:class:`~dpfed_core.privacy.noise.SumNoise`: every share but the last is zeros;
    rounding the noisy sum is post-processing); every entity's ledger row is the same as without it."""
    from dpfed_core.privacy.noise import pooled_streams

    if isinstance(rngs, np.random.Generator):
        rngs = rngs.spawn(len(slices))
    if noise_once:
        rngs = pooled_streams(rngs[:len(slices)])
    nb = int(n_buckets)
    bucket = item_bucket_levels(item_names, nb, levels)
    total = np.zeros(nb)
    eps_c = math.inf
    for h, (name, sl) in enumerate(zip(entity_names, slices)):
        share, eps_c = secure_catalogue_share(X[sl], bucket, rho, delta, rngs[h], ledger.for_entity(name),
                                              divisor=divisor, n_buckets=nb, max_items=max_items, grid=grid)
        total += share
    if noise_once:
        rngs[0].sum_noise.check_complete()
    keys, sigma, sigma_sum, threshold = secure_catalogue_keys(total, rho, len(slices), divisor=divisor,
                                                              n_buckets=nb, phantom_share=phantom_share)
    return SecureCatalogueRelease(keys, item_keys(bucket, keys, nb), nb, sigma, sigma_sum, threshold, eps_c)
