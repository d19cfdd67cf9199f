"""Friedman, Berkovsky & Kaafar (2016), *A differential privacy framework for matrix factorization
recommender systems* (UMUAI 26(5)) — ``seeds/003_…``, notes in ``research/friedman.md``.

**Trust model.** A trusted central curator holds every raw rating and runs the whole pipeline;
guarantees are **rating-level** (neighbouring datasets differ in one rating), never user-level:

* ``"bounded"`` ("value" privacy): one rating *value* changes; which (user, item) pairs are rated,
  and all counts, are public.
* ``"unbounded"`` ("existence" privacy): one rating is added or removed; counts are private too.

These ε are therefore **not comparable one-for-one with our user-level, federated ε** — a user with
n_u ratings gets only n_u·ε for the whole profile by group privacy. Every method here says so.

Pipeline (paper §4):

1. *Private global effects* (Alg. 1–2, McSherry & Mironov 2009): noisy global average, β-stabilised
   noisy item averages clamped to [r_min, r_max], noisy global average of the residuals, β-stabilised
   noisy user averages clamped to [−2, 2].
2. *Residual clamping* (Eq. 7): r̃ = clamp(r − IAvg(i) − UAvg(u), −B, B), B = 1.
3. One private factorisation of r̃, with ε_MF = 0.7·ε (§5.2 budget split):
   ISGD (input perturbation, Alg. 3 / §4.2 unbounded), PSGD (stochastic gradient perturbation,
   Alg. 4 / Alg. 5), PALS (ALS with output perturbation, Alg. 6 / Table 1).
4. Prediction r̂ = IAvg(i) + UAvg(u) + p_u·q_i, clamped to [r_min, r_max] by :meth:`predict`
   (the engine's ``U @ V.T`` cannot clamp; see :meth:`FriedmanMF.factors`).

Every ambiguity of the paper is resolved as in ``research/friedman.md`` §11 (cited as "pitfall N").

**SGD deviation (documented).** The paper's SGD visits one rating at a time. A Python loop over
~10⁵ ratings × 20 epochs is too slow, so by default ratings are visited in shuffled *mini-batches*
whose per-rating updates are summed (``np.add.at``) — sequential SGD to first order in γ (γ = 0.01,
so the difference is O(γ²) per collision, and collisions are rare for batches ≪ #users). Privacy is
unaffected: in PSGD each rating is still touched once per epoch with its own Laplace noise, and the
factors a batch reads depend only on earlier noisy outputs (adaptive composition). ``batch_size=1``
runs the exact one-rating-at-a-time algorithm (used by the tests to check the equivalence).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import check_params
from dpfed_core.methods.comparison.specs import FRIEDMAN_PARAMETERS as PARAMETERS
from dpfed_core.errors import ConfigError
from dpfed_core.models.ridge import ridge_solve
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.privacy.mechanisms import laplace_noise

CURATOR = "curator"
PRIVACY = ("rating-level DP, trusted central curator — not comparable one-for-one with "
           "user-level federated ε")
PRIVACY_UNBOUNDED_CLAIMED = PRIVACY + " (unbounded PSGD/PALS: guarantee as claimed by the paper)"
VARIANTS = ("bounded", "unbounded")
ALGORITHMS = ("isgd", "psgd", "pals")

#: §5.2 budget split (MovieLens): (global avg for items, item avgs, global avg for users,
#: user avgs, factorisation). The paper gives 0.02ε for "the global averages" of both algorithms,
#: split evenly here (pitfall 2).
SPLIT_MF = (0.01, 0.14, 0.01, 0.14, 0.70)
#: §5.4 split for private global effects alone (pitfall 25): 0.02 global, 0.54 items, 0.44 users.
SPLIT_GE = (0.01, 0.54, 0.01, 0.44, 0.0)


# ============================================================================ data helpers
@dataclass(frozen=True)
class Ratings:
    """Ratings in coordinate form: ``users``, ``items`` (int64, shape (N,)), ``values`` (float64)."""

    users: np.ndarray
    items: np.ndarray
    values: np.ndarray
    n_users: int
    n_items: int

    @classmethod
    def from_matrix(cls, X: sp.spmatrix) -> "Ratings":
        """Stored entries of a sparse user × item matrix (explicit zeros are not ratings)."""
        C = sp.coo_matrix(X)
        keep = C.data != 0
        return cls(C.row[keep].astype(np.int64), C.col[keep].astype(np.int64),
                   C.data[keep].astype(np.float64), C.shape[0], C.shape[1])

    @property
    def n(self) -> int:
        return len(self.values)

    def user_counts(self) -> np.ndarray:
        return np.bincount(self.users, minlength=self.n_users)

    def item_counts(self) -> np.ndarray:
        return np.bincount(self.items, minlength=self.n_items)

    def with_values(self, values: np.ndarray) -> "Ratings":
        return Ratings(self.users, self.items, np.asarray(values, dtype=np.float64), self.n_users, self.n_items)


def _spend(ledger: PrivacyLedger | None, stage: str, mechanism: str, eps: float,
           sensitivity: float, scale: float, note: str = "") -> None:
    if ledger is not None:
        ledger.spend(CURATOR, stage, mechanism, eps, 0.0, sensitivity, scale, note)


def _share(eps: float, share: float) -> float:
    """A stage's ε: its share of the total; of ε = inf a positive share is inf, a zero share stays 0 (the
    stage's refusal, as at a finite ε) rather than inf · 0 = nan."""
    if share == 0:
        return 0.0
    return math.inf if math.isinf(eps) else eps * share


def _scale(sensitivity: float, eps: float) -> float:
    """Laplace / Gamma scale S/ε; 0 for ε = inf (the exact, non-private answer)."""
    if math.isinf(eps):
        return 0.0
    if eps <= 0:
        raise ConfigError(f"every stage needs a positive ε share, got {eps}")
    return sensitivity / eps


# ============================================================================ mechanisms
def knorm_noise(n: int, d: int, l2_sensitivity: float, epsilon: float,
                rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """n i.i.d. vectors of the K-norm ("Gamma") mechanism for the L2 norm (Hardt & Talwar 2010;
    the paper's Theorem 2): b = r·α, r uniform on the unit sphere of ℝ^d, α ~ Γ(shape=d, scale=S₂/ε).

    * Sensitivity: ``l2_sensitivity`` = S₂, the largest L2 distance one rating moves the vector.
    * Privacy map: the density ∝ exp(−ε‖b‖₂/S₂), so the release is ε-DP (pure).

    Returns ``(noise (n, d), Gamma scale S₂/ε)``; zeros for ε = inf.
    """
    scale = _scale(l2_sensitivity, epsilon)
    if scale == 0 or n == 0:
        return np.zeros((n, d)), scale
    z = rng.standard_normal((n, d))
    z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-300)
    return z * rng.gamma(shape=d, scale=scale, size=n)[:, None], scale


def knorm_noise_rows(d: int, scales: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """K-norm noise with a per-row Gamma scale (PALS: the scale depends on n_u or n_i)."""
    scales = np.asarray(scales, dtype=np.float64)
    n = len(scales)
    out = np.zeros((n, d))
    live = scales > 0
    if live.any():
        z = rng.standard_normal((int(live.sum()), d))
        z /= np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-300)
        out[live] = z * rng.gamma(shape=d, scale=scales[live])[:, None]
    return out


def _project_rows(F: np.ndarray, rows: np.ndarray | slice, max_norm: float | None) -> None:
    """In place: rescale rows of F whose L2 norm exceeds ``max_norm`` back onto the ball."""
    if max_norm is None or not math.isfinite(max_norm):
        return
    sub = F[rows]
    nrm = np.linalg.norm(sub, axis=1)
    big = nrm > max_norm
    if big.any():
        sub[big] *= (max_norm / nrm[big])[:, None]
        F[rows] = sub


# ============================================================================ global effects
@dataclass
class GlobalEffects:
    """Fitted averages. ``item_avg`` (n_items,), ``user_avg`` (n_users,) in rating units;
    prediction = ``item_avg[i] + user_avg[u]`` (the residual global average is *not* added, §4.1)."""

    global_avg: float
    item_avg: np.ndarray
    global_resid_avg: float
    user_avg: np.ndarray


def global_average(R: Ratings) -> float:
    """Non-private global mean (Table 3 "GA")."""
    return float(R.values.mean()) if R.n else 0.0


def item_average(R: Ratings) -> np.ndarray:
    """Non-private item means, the global mean for items without ratings (Table 3 "IA")."""
    cnt = R.item_counts()
    s = np.bincount(R.items, weights=R.values, minlength=R.n_items)
    return np.where(cnt > 0, s / np.maximum(cnt, 1), global_average(R))


def exact_global_effects(R: Ratings) -> GlobalEffects:
    """Non-private global effects (Table 3 "GE"): item mean plus the user mean of the item
    residuals, no stabilisers (pitfall 27); users without ratings get 0."""
    ia = item_average(R)
    resid = R.values - ia[R.items]
    cnt = R.user_counts()
    s = np.bincount(R.users, weights=resid, minlength=R.n_users)
    ua = np.where(cnt > 0, s / np.maximum(cnt, 1), 0.0)
    return GlobalEffects(global_average(R), ia, float(resid.mean()) if R.n else 0.0, ua)


def _noisy_average(sums: np.ndarray, counts: np.ndarray, prior: float, beta: float,
                   sum_scale: float, count_scale: float, rng: np.random.Generator) -> np.ndarray:
    """(Σ + β·prior + Lap(sum_scale)) / (count + Lap(count_scale) + β), unclamped.

    The denominator is floored at 1 (post-processing) so a noisy count cannot flip its sign."""
    sums = np.asarray(sums, dtype=np.float64)
    noisy_sum = sums + laplace_noise(sum_scale, sums.shape, rng)
    noisy_cnt = np.asarray(counts, dtype=np.float64) + laplace_noise(count_scale, sums.shape, rng)
    return (noisy_sum + beta * prior) / np.maximum(noisy_cnt + beta, 1.0)


def private_global_effects(
    R: Ratings,
    eps_global_items: float,
    eps_items: float,
    eps_global_users: float,
    eps_users: float,
    rng: np.random.Generator,
    *,
    variant: str = "bounded",
    beta_m: float = 15.0,
    beta_u: float = 15.0,
    r_min: float = 1.0,
    r_max: float = 5.0,
    user_clamp: float = 2.0,
    ledger: PrivacyLedger | None = None,
) -> GlobalEffects:
    """Private item and user averages (paper Alg. 1 and 2).

    Bounded (value) DP — counts |R|, |R_j|, |R_v| are public; one rating value changes:

    * GAvg = (ΣR + Lap(Δr/ε₁)) / |R|; sensitivity of the sum Δr = r_max − r_min. ε₁-DP.
    * IAvg(j) = (Σ_{R_j} r + β_m·GAvg + Lap(Δr/ε₂)) / (|R_j| + β_m), clamped to [r_min, r_max].
      One rating lies in one item, so all items together are ε₂-DP (parallel composition).
    * On residuals r' = r − IAvg(i) (IAvg already released, so one rating still moves one residual
      by ≤ Δr): GAvg' with ε₁', UAvg(v) with β_u and ε₂', clamped to [−``user_clamp``, ``user_clamp``].

    Unbounded (existence) DP — one rating added or removed; every count is private (pitfall 4):
    each average's budget is split 50/50 between its sum (sensitivity max|value|: r_max for raw
    ratings, Δr for residuals, which lie in [−Δr, Δr]) and its count (sensitivity 1).

    Total cost: ε₁ + ε₂ + ε₁' + ε₂' (sequential composition), each spent in ``ledger``.
    ``eps_* = inf`` gives the exact β-stabilised averages (recorded as a non-private spend).
    """
    if variant not in VARIANTS:
        raise ConfigError(f"variant must be 'bounded' or 'unbounded', got {variant!r}")
    if not r_max > r_min:
        raise ConfigError(f"need r_max > r_min, got [{r_min}, {r_max}]")
    dr = r_max - r_min
    n_items, n_users = R.n_items, R.n_users
    bounded = variant == "bounded"

    def scales(eps: float, sum_sens: float) -> tuple[float, float, float]:
        """(sum scale, count scale, sum sensitivity) for one average with budget eps."""
        if bounded:
            return _scale(sum_sens, eps), 0.0, sum_sens
        half = eps / 2
        return _scale(sum_sens, half), _scale(1.0, half), sum_sens

    # --- Algorithm 1: item averages
    s_sens = dr if bounded else max(abs(r_min), abs(r_max))
    ss, cs, _ = scales(eps_global_items, s_sens)
    g = float(_noisy_average(np.array([R.values.sum()]), np.array([R.n]), 0.0, 0.0, ss, cs, rng)[0])
    _spend(ledger, "global average (items)", _mech_name(bounded), eps_global_items, s_sens, ss,
           "" if bounded else f"sum Lap({ss:.4g}) + count Lap({cs:.4g}), ε split 50/50")
    ss, cs, _ = scales(eps_items, s_sens)
    sums = np.bincount(R.items, weights=R.values, minlength=n_items)
    ia = np.clip(_noisy_average(sums, R.item_counts(), g, beta_m, ss, cs, rng), r_min, r_max)
    _spend(ledger, "item averages", _mech_name(bounded), eps_items, s_sens, ss,
           f"one draw per item (parallel composition over items), β_m={beta_m}"
           + ("" if bounded else f"; counts Lap({cs:.4g})"))

    # --- Algorithm 2: user averages of the item residuals
    resid = R.values - ia[R.items]
    r_sens = dr  # residuals lie in [r_min − r_max, r_max − r_min]
    ss, cs, _ = scales(eps_global_users, r_sens)
    g2 = float(_noisy_average(np.array([resid.sum()]), np.array([R.n]), 0.0, 0.0, ss, cs, rng)[0])
    _spend(ledger, "global average (users)", _mech_name(bounded), eps_global_users, r_sens, ss,
           "of the residuals r − IAvg(i)")
    ss, cs, _ = scales(eps_users, r_sens)
    usums = np.bincount(R.users, weights=resid, minlength=n_users)
    ua = np.clip(_noisy_average(usums, R.user_counts(), g2, beta_u, ss, cs, rng), -user_clamp, user_clamp)
    _spend(ledger, "user averages", _mech_name(bounded), eps_users, r_sens, ss,
           f"one draw per user (parallel composition over users), β_u={beta_u}"
           + ("" if bounded else f"; counts Lap({cs:.4g})"))
    return GlobalEffects(g, ia, g2, ua)


def _mech_name(bounded: bool) -> str:
    return "Laplace (noisy sum)" if bounded else "Laplace (noisy sum and noisy count)"


def clamp_residuals(R: Ratings, ge: GlobalEffects, B: float = 1.0) -> Ratings:
    """Eq. 7: r̃ = clamp(r − IAvg(i) − UAvg(u), −B, B) (post-processing of the released averages)."""
    return R.with_values(np.clip(R.values - ge.item_avg[R.items] - ge.user_avg[R.users], -B, B))


# ============================================================================ factorisation engines
def init_factors(n: int, m: int, d: int, rng: np.random.Generator, scale: float = 0.1,
                 p_max: float | None = None, q_max: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """P (n, d), Q (m, d) ~ N(0, scale²), projected onto the norm balls if bounds are given
    (pitfall 17: the paper leaves the initialisation unspecified)."""
    P = rng.normal(0.0, scale, size=(n, d))
    Q = rng.normal(0.0, scale, size=(m, d))
    _project_rows(P, slice(None), p_max)
    _project_rows(Q, slice(None), q_max)
    return P, Q


def auto_batch_size(n_ratings: int) -> int:
    """Mini-batch size used when ``batch_size="auto"``: ~100 batches per epoch, within [64, 4096].

    Measured on MovieLens 100K (90K training ratings, d = 3, γ = 0.01): test RMSE of clean SGD,
    ISGD (ε = 5) and PSGD (ε = 20) equal to 4 decimals for batch sizes 1, 64, 300 and 1000, while
    the one-rating loop takes ~60 s for 20 epochs against ~1.5 s at 1000."""
    return int(np.clip(n_ratings // 100, 64, 4096))


def sgd_epoch(
    R: Ratings,
    P: np.ndarray,
    Q: np.ndarray,
    lr: float,
    lam: float,
    rng: np.random.Generator,
    *,
    batch_size: int | str = "auto",
    error_noise_scale: float = 0.0,
    e_max: float | None = None,
    p_max: float | None = None,
    q_max: float | None = None,
    q_first: bool = True,
) -> None:
    """One SGD epoch over ``R`` in a fresh random order, updating P (n, d) and Q (m, d) in place.

    Per rating (paper Eq. 2 / Alg. 4 lines 4–7)::

        e  = r_ui − p_u·q_i (+ Lap(error_noise_scale))      # PSGD: noisy error
        e  = clamp(e, −e_max, e_max)                         # if e_max is given
        q_i ← q_i + lr (e p_u − λ q_i)
        p_u ← p_u + lr (e q_i − λ p_u)                      # q_first: uses the *new* q_i (Alg. 4)
        project p_u, q_i onto the p_max / q_max balls         # if given (pitfall 18: after each update)

    ``q_first=False`` is the simultaneous update of Eq. 2. With ``batch_size > 1`` the updates of a
    batch are computed from the factors before the batch and summed (see the module docstring).
    """
    N = R.n
    if N == 0:
        return
    bs = auto_batch_size(N) if batch_size == "auto" else int(batch_size)
    if bs < 1:
        raise ConfigError(f"batch_size must be ≥ 1 or 'auto', got {batch_size!r}")
    order = rng.permutation(N)
    u_all, i_all, r_all = R.users[order], R.items[order], R.values[order]
    noise = laplace_noise(error_noise_scale, N, rng) if error_noise_scale > 0 else None
    if bs == 1:
        _sgd_sequential(u_all, i_all, r_all, noise, P, Q, lr, lam, e_max, p_max, q_max, q_first)
        return
    for start in range(0, N, bs):
        sl = slice(start, start + bs)
        u, i = u_all[sl], i_all[sl]
        pu, qi = P[u], Q[i]
        e = r_all[sl] - np.einsum("ij,ij->i", pu, qi)
        if noise is not None:
            e = e + noise[sl]
        if e_max is not None:
            e = np.clip(e, -e_max, e_max)
        dq = lr * (e[:, None] * pu - lam * qi)
        if q_first:
            np.add.at(Q, i, dq)
            qi = Q[i]
        dp = lr * (e[:, None] * qi - lam * pu)
        if not q_first:
            np.add.at(Q, i, dq)
        np.add.at(P, u, dp)
        _project_rows(Q, np.unique(i), q_max)
        _project_rows(P, np.unique(u), p_max)


def _sgd_sequential(u_all, i_all, r_all, noise, P, Q, lr, lam, e_max, p_max, q_max, q_first) -> None:
    """The literal one-rating-at-a-time loop (reference for the mini-batch path)."""
    for k in range(len(r_all)):
        u, i = u_all[k], i_all[k]
        pu, qi = P[u].copy(), Q[i].copy()
        e = r_all[k] - pu @ qi
        if noise is not None:
            e += noise[k]
        if e_max is not None:
            e = min(max(e, -e_max), e_max)
        Q[i] = qi + lr * (e * pu - lam * qi)
        q_use = Q[i] if q_first else qi
        P[u] = pu + lr * (e * q_use - lam * pu)
        for F, row, bound in ((Q, i, q_max), (P, u, p_max)):
            if bound is not None:
                nrm = np.linalg.norm(F[row])
                if nrm > bound:
                    F[row] *= bound / nrm


def ridge_rows(R: Ratings, F_other: np.ndarray, lam: float, *, by: str = "user",
               count_weighted: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Exact ALS half-step: for each row (user if ``by="user"``, else item) with n ≥ 1 ratings,

        x = argmin Σ_{j∈R_row} (r − x·f_j)² + λ·n·‖x‖²   (ALS-WR, paper Eq. 12; λ‖x‖² if not weighted)
          = (F_Rᵀ F_R + λ n I)⁻¹ F_Rᵀ r.

    Rows without ratings get 0 (pitfall 13). Returns ``(X (n_rows, d), counts (n_rows,))``.
    Vectorised: per-row Gram matrices by one sparse product, then one batched solve.
    """
    rows, cols = (R.users, R.items) if by == "user" else (R.items, R.users)
    n_rows = R.n_users if by == "user" else R.n_items
    d = F_other.shape[1]
    Fc = F_other[cols]
    S = sp.csr_matrix((np.ones(R.n), (rows, np.arange(R.n))), shape=(n_rows, R.n))
    G = np.asarray(S @ (Fc[:, :, None] * Fc[:, None, :]).reshape(R.n, d * d)).reshape(n_rows, d, d)
    b = np.asarray(S @ (R.values[:, None] * Fc))
    cnt = np.bincount(rows, minlength=n_rows)
    reg = lam * (cnt if count_weighted else (cnt > 0)).astype(np.float64)
    A = G + reg[:, None, None] * np.eye(d)
    X = np.zeros((n_rows, d))
    live = cnt > 0
    if live.any():
        X[live] = ridge_solve(A[live], b[live][:, :, None])[:, :, 0]
    return X, cnt


# ============================================================================ estimators
@dataclass
class FriedmanMF:
    """Private (or, with ε = inf, clean) matrix factorisation of Friedman et al. (2016).

    Parameters
    ----------
    algorithm : {"isgd", "psgd", "pals", "ge", "als", "sgd"}
        ``isgd`` input perturbation (Alg. 3 / §4.2), ``psgd`` stochastic gradient perturbation
        (Alg. 4 / Alg. 5), ``pals`` ALS with output perturbation (Alg. 6), ``ge`` private global
        effects only (§5.4), ``als`` / ``sgd`` clean (non-private) MF on the global-effects residuals.
    epsilon : float
        *Total* rating-level ε (every reported ε of the paper is total, pitfall 26). ``inf`` = no noise.
    variant : {"bounded", "unbounded"}
    factors : int — d.  lam : float — λ (SGD: Eq. 1; ALS: count-weighted Eq. 12).
    lr : float — γ = 0.01.  iterations : int or None — epochs / ALS iterations k
        (default: 20 for ISGD and SGD, 5 for PSGD and PALS, 10 for clean ALS; pitfall 14).
    B : float — residual clamp (1).  p_max, q_max : factor norm bounds (0.4, 0.5; PSGD and PALS).
    e_max : float or None — error clamp (bounded PSGD: 2; unbounded: B + p_max·q_max).
    alpha : float — unbounded ISGD zeroing threshold (0.6).
    beta_m, beta_u : stabilisers of the private averages (not given in the paper, pitfall 1).
    split : 5-tuple of ε shares (global-items, items, global-users, users, MF); default §5.2
        (``ge``, and ``als``/``sgd`` with private preprocessing: §5.4). Only a private factorisation
        (``isgd``, ``psgd``, ``pals``) reads the fifth share: elsewhere it must be 0.
    r_min, r_max : public rating scale.  batch_size : SGD mini-batch ("auto" or int; 1 = exact).
    private_preprocessing : bool — for ``als``/``sgd``: False (default) uses exact global effects.
    random_state : seed or Generator.

    Attributes
    ----------
    ge_ : GlobalEffects.  P_ (n_users, d), Q_ (n_items, d).  ledger_ : PrivacyLedger.
    """

    algorithm: str = "isgd"
    epsilon: float = 1.0
    variant: str = "bounded"
    factors: int = 3
    lam: float = 0.06
    lr: float = 0.01
    iterations: int | None = None
    B: float = 1.0
    p_max: float = 0.4
    q_max: float = 0.5
    e_max: float | None = None
    alpha: float = 0.6
    beta_m: float = 15.0
    beta_u: float = 15.0
    split: tuple | None = None
    r_min: float = 1.0
    r_max: float = 5.0
    batch_size: int | str = "auto"
    private_preprocessing: bool = False
    random_state: object = None
    info_: dict = field(default_factory=dict, init=False, repr=False)

    # ------------------------------------------------------------------ helpers
    def _iters(self) -> int:
        if self.iterations is not None:
            return int(self.iterations)
        return {"isgd": 20, "sgd": 20, "psgd": 5, "pals": 5, "als": 10, "ge": 0}[self.algorithm]

    def _validate(self) -> None:
        if self.algorithm not in ("isgd", "psgd", "pals", "ge", "als", "sgd"):
            raise ConfigError(f"unknown Friedman algorithm {self.algorithm!r}")
        if self.variant not in VARIANTS:
            raise ConfigError(f"variant must be 'bounded' or 'unbounded', got {self.variant!r}")
        eps = float(self.epsilon)
        if math.isnan(eps) or eps <= 0:
            raise ConfigError(f"ε must be positive (or inf), got {self.epsilon}")
        if self.factors < 1:
            raise ConfigError(f"factors (d) must be ≥ 1, got {self.factors}")
        if self.algorithm == "pals" and not self.lam > 0:
            # the released argmin's sensitivity is G/(nλ): nothing bounds it without the ridge
            raise ConfigError(f"PALS needs a ridge penalty λ > 0, got λ = {self.lam}", param="lam")
        split = self._split()
        if len(split) != 5 or any(s < 0 for s in split) or sum(split) > 1 + 1e-9:
            raise ConfigError(f"split must be 5 non-negative shares summing to ≤ 1, got {split}")
        if self.algorithm not in ALGORITHMS and split[4] != 0:
            # private global effects alone fit no factors, and clean MF reads the exact ratings: a fifth
            # share would be left unspent while the global effects draw noise for only their own shares
            raise ConfigError(f"split gives the factorisation (its fifth share) {split[4]:g} of ε, but "
                              f"{self.algorithm} runs no private factorisation to spend it (only "
                              f"{', '.join(ALGORITHMS[:-1])} and {ALGORITHMS[-1]} read the fifth share): give 0 "
                              "as the fifth share of split", param="prototype_params")

    def _split(self) -> tuple:
        """The ε shares: ``split``, else §5.2's for a private factorisation and §5.4's (the whole ε to
        the global effects) when none reads the fifth share."""
        if self.split is not None:
            return self.split
        return SPLIT_MF if self.algorithm in ALGORITHMS else SPLIT_GE

    # ------------------------------------------------------------------ fit
    def fit(self, R: Ratings | sp.spmatrix) -> "FriedmanMF":
        """Fit on a ratings set (``Ratings`` or a sparse user × item matrix of ratings)."""
        self._validate()
        R = R if isinstance(R, Ratings) else Ratings.from_matrix(R)
        rng = self.random_state if isinstance(self.random_state, np.random.Generator) \
            else np.random.default_rng(self.random_state)
        eps = float(self.epsilon)
        private = self.algorithm in ("isgd", "psgd", "pals", "ge") or self.private_preprocessing
        # clean MF after private global effects reads the exact ratings: no budget can hold its spend
        clean_mf = self.algorithm in ("als", "sgd")
        self.ledger_ = PrivacyLedger(eps if private and not clean_mf else math.inf, 0.0)
        ledger = self.ledger_
        split = self._split()
        t0 = time.perf_counter()
        if private:
            e1, e2, e3, e4, _ = (_share(eps, s) for s in split)
            self.ge_ = private_global_effects(
                R, e1, e2, e3, e4, rng, variant=self.variant, beta_m=self.beta_m, beta_u=self.beta_u,
                r_min=self.r_min, r_max=self.r_max, ledger=ledger)
        else:
            self.ge_ = exact_global_effects(R)
            ledger.spend(CURATOR, "global effects", "exact averages (non-private)", math.inf)
        self.info_ = {"preprocessing_s": time.perf_counter() - t0}
        d = self.factors
        self.P_ = np.zeros((R.n_users, d))
        self.Q_ = np.zeros((R.n_items, d))
        if self.algorithm == "ge":
            return self
        eps_mf = _share(eps, split[4]) if private and not clean_mf else math.inf
        Rt = clamp_residuals(R, self.ge_, self.B) if private else R.with_values(
            R.values - self.ge_.item_avg[R.items] - self.ge_.user_avg[R.users])
        t0 = time.perf_counter()
        getattr(self, f"_fit_{self.algorithm}")(Rt, eps_mf, rng, ledger)
        self.info_["factorisation_s"] = time.perf_counter() - t0
        return self

    def _fit_sgd(self, Rt: Ratings, eps_mf: float, rng, ledger) -> None:
        """Clean SGD MF (Eq. 2 via the Alg. 4 update order) on exact residuals."""
        self.P_, self.Q_ = init_factors(Rt.n_users, Rt.n_items, self.factors, rng)
        for _ in range(self._iters()):
            sgd_epoch(Rt, self.P_, self.Q_, self.lr, self.lam, rng, batch_size=self.batch_size)
        ledger.spend(CURATOR, "factorisation", "SGD on exact residuals (non-private)", math.inf)

    def _fit_als(self, Rt: Ratings, eps_mf: float, rng, ledger) -> None:
        """Clean ALS-WR (Table 3's "Clean MF (ALS)") on exact residuals."""
        self.P_, self.Q_ = init_factors(Rt.n_users, Rt.n_items, self.factors, rng)
        for _ in range(self._iters()):
            self.P_, _ = ridge_rows(Rt, self.Q_, self.lam, by="user")
            self.Q_, _ = ridge_rows(Rt, self.P_, self.lam, by="item")
        ledger.spend(CURATOR, "factorisation", "ALS-WR on exact residuals (non-private)", math.inf)

    # --- ISGD -----------------------------------------------------------------------------------
    def _fit_isgd(self, Rt: Ratings, eps_mf: float, rng, ledger) -> None:
        """Input perturbation, then non-private SGD (γ = lr, k = 20 epochs, no norm bounds)."""
        B = self.B
        if self.variant == "bounded":
            noisy = perturb_ratings_bounded(Rt, B, eps_mf, rng, ledger)
        else:
            noisy = perturb_ratings_unbounded(Rt, B, self.alpha, eps_mf, rng, ledger)
        self.info_["training_ratings"] = noisy.n
        self.P_, self.Q_ = init_factors(Rt.n_users, Rt.n_items, self.factors, rng)
        for _ in range(self._iters()):
            sgd_epoch(noisy, self.P_, self.Q_, self.lr, self.lam, rng, batch_size=self.batch_size)

    # --- PSGD -----------------------------------------------------------------------------------
    def _fit_psgd(self, Rt: Ratings, eps_mf: float, rng, ledger) -> None:
        k = self._iters()
        B, pm, qm, d = self.B, self.p_max, self.q_max, self.factors
        dr = 2 * B
        self.P_, self.Q_ = init_factors(Rt.n_users, Rt.n_items, d, rng, p_max=pm, q_max=qm)
        if self.variant == "bounded":
            # Alg. 4. Sensitivity: one rating value moves its own error e_ui by ≤ Δr = 2B (Eq. 9),
            # and each rating is read once per epoch → Lap(k·Δr/ε) per error is ε/k-DP per epoch,
            # k epochs compose to ε. Clamping and projection are post-processing.
            e_max = 2.0 if self.e_max is None else self.e_max
            scale = _scale(dr, eps_mf / k)
            for it in range(k):
                sgd_epoch(Rt, self.P_, self.Q_, self.lr, self.lam, rng, batch_size=self.batch_size,
                          error_noise_scale=scale, e_max=e_max, p_max=pm, q_max=qm)
                ledger.spend(CURATOR, f"PSGD epoch {it + 1}", "Laplace on every error e_ui",
                             eps_mf / k, 0.0, dr, scale, "scale k·Δr/ε_MF, Δr = 2B")
            return
        # Alg. 5 (unbounded). Adding one rating adds one clamped SGD update to p_u and q_i, whose L2
        # norms are ≤ s_p = γ(e_max q_max + λ p_max), s_q = γ(e_max p_max + λ q_max) (Alg. 5 lines
        # 1–2, pitfall 7). K-norm noise with Gamma scale 2k·s/ε on every vector after every epoch:
        # ε/(2k) per factor matrix per epoch → ε in total. The argument ignores knock-on effects on
        # later updates (pitfall 9): the guarantee is *as claimed by the paper*.
        e_max = B + pm * qm if self.e_max is None else self.e_max
        s_p = self.lr * (e_max * qm + self.lam * pm)
        s_q = self.lr * (e_max * pm + self.lam * qm)
        for it in range(k):
            sgd_epoch(Rt, self.P_, self.Q_, self.lr, self.lam, rng, batch_size=self.batch_size,
                      e_max=e_max, p_max=pm, q_max=qm)
            nP, sc_p = knorm_noise(Rt.n_users, d, s_p, eps_mf / (2 * k), rng)
            self.P_ += nP
            _project_rows(self.P_, slice(None), pm)
            nQ, sc_q = knorm_noise(Rt.n_items, d, s_q, eps_mf / (2 * k), rng)
            self.Q_ += nQ
            _project_rows(self.Q_, slice(None), qm)
            ledger.spend(CURATOR, f"PSGD epoch {it + 1} (users)", "K-norm (Gamma) on every p_u",
                         eps_mf / (2 * k), 0.0, s_p, sc_p, "as claimed by the paper (Alg. 5)")
            ledger.spend(CURATOR, f"PSGD epoch {it + 1} (items)", "K-norm (Gamma) on every q_i",
                         eps_mf / (2 * k), 0.0, s_q, sc_q, "as claimed by the paper (Alg. 5)")

    # --- PALS -----------------------------------------------------------------------------------
    def _fit_pals(self, Rt: Ratings, eps_mf: float, rng, ledger) -> None:
        k = self._iters()
        B, pm, qm, lam, d = self.B, self.p_max, self.q_max, self.lam, self.factors
        self.P_, self.Q_ = init_factors(Rt.n_users, Rt.n_items, d, rng, p_max=pm, q_max=qm)
        eps_step = eps_mf / (2 * k)
        # Theorem 6 / Table 1: the gradient bound G of the changed term divided by the strong
        # convexity 2nλ of the count-weighted objective gives the argmin's L2 sensitivity:
        #   bounded:   Δp_u = q_max·2B/(n_u λ),  Δq_i = p_max·2B/(n_i λ)   (Theorem 6 — pitfall 10:
        #              the algorithm box's p_max/q_max swap is not followed)
        #   unbounded: Δp_u = [q_max(B + q_max p_max) + λ p_max]/(n_u λ), symmetric for q_i
        #              (n_u, n_i are private here; calibrating on them is the paper's gap, pitfall 12).
        if self.variant == "bounded":
            g_p, g_q = qm * 2 * B, pm * 2 * B
        else:
            g_p = qm * (B + qm * pm) + lam * pm
            g_q = pm * (B + qm * pm) + lam * qm
        label = "" if self.variant == "bounded" else "as claimed by the paper (noise calibrated on private counts)"
        def half_step(fixed, by, g, bound, who):
            """One output-perturbed ridge solve of the ``by`` factors given the other factor."""
            F, counts = ridge_rows(Rt, fixed, lam, by=by)
            sens = np.where(counts > 0, g / (np.maximum(counts, 1) * lam), 0.0)
            scales = sens / eps_step if math.isfinite(eps_step) else np.zeros_like(sens)
            F += knorm_noise_rows(d, scales, rng)
            _project_rows(F, slice(None), bound)
            ledger.spend(CURATOR, f"PALS iteration {it + 1} ({by}s)", "K-norm (Gamma) output perturbation",
                         eps_step, 0.0, g / lam, _scale(g / lam, eps_step),
                         f"per {by}: sensitivity and Gamma scale ÷ n_{who} (shown for n_{who} = 1). " + label)
            return F

        for it in range(k):
            self.P_ = half_step(self.Q_, "user", g_p, pm, "u")
            self.Q_ = half_step(self.P_, "item", g_q, qm, "i")

    # ------------------------------------------------------------------ use
    def predict(self, users: np.ndarray, items: np.ndarray, clamp: bool = True) -> np.ndarray:
        """r̂ = IAvg(i) + UAvg(u) + p_u·q_i, clamped to [r_min, r_max] (pitfall 19) unless told not to."""
        users = np.asarray(users, dtype=np.int64)
        items = np.asarray(items, dtype=np.int64)
        pred = (self.ge_.item_avg[items] + self.ge_.user_avg[users]
                + np.einsum("ij,ij->i", self.P_[users], self.Q_[items]))
        return np.clip(pred, self.r_min, self.r_max) if clamp else pred

    def factors_uv(self) -> tuple[np.ndarray, np.ndarray]:
        """(U, V) with ``U @ V.T`` = IAvg(i) + UAvg(u) + p_u·q_i (unclamped):
        U = [1, UAvg(u), p_u], V = [IAvg(i), 1, q_i]."""
        n, m = len(self.ge_.user_avg), len(self.ge_.item_avg)
        U = np.column_stack([np.ones(n), self.ge_.user_avg, self.P_])
        V = np.column_stack([self.ge_.item_avg, np.ones(m), self.Q_])
        return U, V


# ============================================================================ input perturbation
def perturb_ratings_bounded(Rt: Ratings, B: float, eps_mf: float, rng: np.random.Generator,
                            ledger: PrivacyLedger | None = None, clamp: bool = True) -> Ratings:
    """Alg. 3 lines 1–2: r' = clamp(r̃ + Lap(2B/ε), −B, B) on every observed rating.

    * Neighbouring: one rating value changes (bounded); r̃ ∈ [−B, B] so it moves by ≤ Δr = 2B.
    * Privacy map: each rating gets its own Lap(Δr/ε) → ε-DP; everything after is post-processing.
    """
    dr = 2 * B
    scale = _scale(dr, eps_mf)
    noisy = Rt.values + laplace_noise(scale, Rt.n, rng)
    if ledger is not None:
        ledger.spend(CURATOR, "input perturbation", "Laplace on every rating", eps_mf, 0.0, dr, scale,
                     "Δr = 2B; then clamp to [−B, B] and non-private SGD")
    return Rt.with_values(np.clip(noisy, -B, B) if clamp else noisy)


def perturb_ratings_unbounded(Rt: Ratings, B: float, alpha: float, eps_mf: float,
                              rng: np.random.Generator, ledger: PrivacyLedger | None = None) -> Ratings:
    """§4.2 unbounded input perturbation: every cell of the n × m matrix (missing = 0) gets
    Lap(B/ε); then Eq. 8: |r| ≤ α → dropped (missing), |r| > B → ±B.

    * Neighbouring: one rating present or absent; a present r̃ ∈ [−B, B] vs an absent 0 → the
      cell moves by ≤ B. Privacy map: Lap(B/ε) per cell → ε-DP.
    * Missing cells are sampled exactly without touching all n·m of them (pitfall 24): a missing
      cell survives the threshold with probability exp(−α/b), so K ~ Binomial(N_missing, e^{−α/b})
      cells are drawn uniformly without replacement, each with value ±(α + Exp(b)) (Laplace tail
      beyond α, memoryless), then clamped to ±B.
    """
    scale = _scale(B, eps_mf)
    n, m = Rt.n_users, Rt.n_items
    obs = Rt.values + laplace_noise(scale, Rt.n, rng)
    keep = np.abs(obs) > alpha
    users, items, vals = Rt.users[keep], Rt.items[keep], np.clip(obs[keep], -B, B)
    if scale > 0:
        p_survive = math.exp(-alpha / scale)
        observed = np.zeros(n * m, dtype=bool)
        observed[Rt.users * m + Rt.items] = True
        n_missing = n * m - int(observed.sum())
        K = int(rng.binomial(n_missing, p_survive))
        if K:
            missing = np.flatnonzero(~observed)
            cells = rng.choice(missing, size=K, replace=False)
            fake = rng.choice([-1.0, 1.0], size=K) * (alpha + rng.exponential(scale, size=K))
            users = np.concatenate([users, cells // m])
            items = np.concatenate([items, cells % m])
            vals = np.concatenate([vals, np.clip(fake, -B, B)])
    if ledger is not None:
        ledger.spend(CURATOR, "input perturbation", "Laplace on every cell (missing = 0)", eps_mf, 0.0,
                     B, scale, f"then |r| ≤ α={alpha} dropped, clamp to ±B; fake ratings sampled exactly")
    return Ratings(users.astype(np.int64), items.astype(np.int64), vals, n, m)


# ============================================================================ engine methods
def _estimator_from_config(algorithm: str, dataset, config, rng, epsilon: float) -> FriedmanMF:
    """FriedmanMF from a RunConfig: ``config.rank`` → d and ``config.lam`` → λ unless
    ``method_params`` sets ``factors``/``lam``; the scale is [1, value_max] for ratings."""
    params = {k: v for k, v in check_params(PARAMETERS, config.params, config.method).items() if v is not None}
    params.pop("solver", None)
    if isinstance(params.get("batch_size"), str) and params["batch_size"].strip() != "auto":
        try:
            params["batch_size"] = int(params["batch_size"])
        except ValueError:
            raise ConfigError(f"batch_size must be 'auto' or a whole number, got {params['batch_size']!r}",
                              param="prototype_params") from None
    params.setdefault("factors", config.rank)
    params.setdefault("lam", config.lam)
    params.setdefault("r_min", 1.0 if dataset.value_kind == "ratings" else 0.0)
    params.setdefault("r_max", float(dataset.value_max))
    if "split" in params and params["split"] is not None:
        params["split"] = tuple(params["split"])
    return FriedmanMF(algorithm=algorithm, epsilon=epsilon, random_state=rng, **params)


def _messages(dataset, train):
    from dpfed_core.federation.messages import Message
    out = []
    for name, sl in zip(dataset.entity_names, dataset.entity_slices()):
        block = train[sl]
        out.append(Message(1, name, CURATOR, "raw ratings to the trusted curator", (sl.stop - sl.start, dataset.n_items),
                           int(block.data.nbytes + block.indices.nbytes + block.indptr.nbytes)))
    return out


def _notes(config, private: bool = True) -> list[str]:
    """The run's notes; ``private``: the method releases under rating-level DP (a non-private baseline
    has no ε to qualify: its note says the curator pools every rating without protection)."""
    notes = ["Friedman et al.: centralised, rating-level DP with a trusted curator — its ε protects one "
             "rating, not one user; a user with n ratings is protected at n·ε only." if private else
             "Friedman et al.'s non-private baseline: a trusted central curator pools every rating and fits on "
             "them exactly — no privacy."]
    if config.mode == "zero":
        notes.append("Friedman et al. predict ratings; use observation mode 'observed' for a meaningful "
                      "train RMSE (zero mode counts every absent cell as a 0 rating).")
    notes.append("The engine scores by U @ Vᵀ, which cannot clamp predictions to the rating scale; "
                 "the paper-protocol benchmark (bench/bench_friedman.py) clamps.")
    return notes


def _make_fit(algorithm: str, private: bool):
    def fit(dataset, train, config, rng, progress):
        from dpfed_core.methods.registry import MethodResult
        progress("friedman_start", method=config.method)
        eps = float(config.epsilon) if private else math.inf
        t0 = time.perf_counter()
        if algorithm in ("global-average", "item-average", "global-effects"):
            R = Ratings.from_matrix(train)
            ledger = PrivacyLedger(math.inf, 0.0)
            ledger.spend(CURATOR, "averages", "exact averages (non-private)", math.inf)
            n, m = R.n_users, R.n_items
            if algorithm == "global-average":
                U, V = np.ones((n, 1)), np.full((m, 1), global_average(R))
            elif algorithm == "item-average":
                U, V = np.ones((n, 1)), item_average(R)[:, None]
            else:
                ge = exact_global_effects(R)
                U = np.column_stack([np.ones(n), ge.user_avg])
                V = np.column_stack([ge.item_avg, np.ones(m)])
            model = None
        else:
            algo = algorithm
            if algorithm == "ge-mf":
                algo = config.params.get("solver", "als")
                if algo not in ("als", "sgd"):
                    raise ConfigError(f"ge-mf solver must be 'als' or 'sgd', got {algo!r}")
            model = _estimator_from_config(algo, dataset, config, rng, eps).fit(train)
            U, V = model.factors_uv()
            ledger = model.ledger_
        progress("friedman_done", method=config.method)
        return MethodResult(U, V, ledger, _messages(dataset, train),
                            {"friedman_fit": time.perf_counter() - t0}, model,
                            {"notes": _notes(config, private), "info": getattr(model, "info_", {})})
    return fit
