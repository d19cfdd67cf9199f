"""Xin & Jaakkola (2014), *Controlling privacy in recommender systems* (NIPS) — ``seeds/002_…``,
notes in ``research/xin_fcf.md`` Part A.

Two tiers of users: a few **public** users share all their ratings with an untrusted server; the
many **private** users share nothing (or, in the paper's §4 extension, one privatised vector).

* The server learns the item model (μ, V) from the public users by EM on the trace-norm objective
  (their Eq. 2): E-step = complete each public user's centred row with Eq. 4, M-step = soft-threshold
  the singular values of the completed rows (Soft-Impute), notes A.3.1.
* Every private user receives (μ, V, ρ) and predicts **locally** with Eq. 4, which by the
  push-through identity is ridge regression of the user factor on V (notes A.2):
  u = (V_φᵀV_φ + ρI)⁻¹ V_φᵀ (y_φ − μ_φ), x̂ = μ + V u.

Scaling. The paper writes Σ = (X̂ᵀX̂)^{1/2}/√(mn) and ρ = τ/√(mn); Eq. 4's predictions are invariant
to scaling Σ and ρ together, so here Σ = (X̂ᵀX̂)^{1/2} = V Vᵀ and ρ = τ (one hyper-parameter τ, the
singular-value threshold).

Private-user mechanisms of §4 (PMC, PMD) give only *first-order (marginal) deniability* — every
coordinate of the released vector has a fixed marginal — and are **not differential privacy**; PMC
reveals sign(r − μ) for every item up to one global flip. They are streamed as in the paper (§A.3.6):
private users in descending order of #ratings, the server's M-step refreshed after every ``w = 20``
private users with public weight 1 and private weight 1/2, public users re-completed each time.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import check_params
from dpfed_core.methods.comparison.specs import XIN_PARAMETERS as PARAMETERS
from dpfed_core.errors import ConfigError
from dpfed_core.models.ridge import ridge_solve

from dpfed_core.methods.comparison.specs import PRIVACY_MECH, PRIVACY_PUBLIC  # noqa: E402,F401
PRIVACY_FULL = "non-private (all users' ratings pooled at the server)"


# ============================================================================ selection
def select_public_users(X: sp.csr_matrix, fraction: float = 0.01, n_public: int | None = None,
                        how: str = "heaviest", rng: np.random.Generator | None = None) -> np.ndarray:
    """Indices of the public users: the ``n_public`` (default ⌈fraction·n⌉, at least 1) users with the
    most ratings ("heaviest", the paper's choice, ties by index) or uniformly at random."""
    n = X.shape[0]
    k = n_public if n_public is not None else max(1, int(math.ceil(fraction * n)))
    if not 1 <= k <= n:
        raise ConfigError(f"n_public, the number of public users, must be between 1 and the {n} users of the data, "
                          f"got {k}", param="prototype_params")
    if how == "heaviest":
        return np.sort(np.argsort(-np.diff(sp.csr_matrix(X).indptr), kind="stable")[:k])
    if how == "random":
        rng = np.random.default_rng() if rng is None else rng
        return np.sort(rng.choice(n, k, replace=False))
    raise ConfigError(f"public-user selection must be 'heaviest' or 'random', got {how!r}")


# ============================================================================ core steps
def local_factors(X: sp.csr_matrix, mu: np.ndarray, V: np.ndarray, rho: float) -> np.ndarray:
    """Eq. 4 as ridge (push-through): u_i = (V_φᵀV_φ + ρI)⁻¹ V_φᵀ (y_φ − μ_φ) for every row of X
    (its stored entries are the observed ratings φ_i). Rows without ratings get u = 0 (x̂ = μ).
    Returns (n, r)."""
    X = sp.csr_matrix(X)
    n, r = X.shape[0], V.shape[1]
    Uf = np.zeros((n, r))
    if r == 0:
        return Uf
    eye = rho * np.eye(r)
    for i in range(n):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        if hi == lo:
            continue
        idx = X.indices[lo:hi]
        Vp = V[idx]
        Uf[i] = ridge_solve(Vp.T @ Vp + eye, Vp.T @ (X.data[lo:hi] - mu[idx]))
    return Uf


def complete_rows(X: sp.csr_matrix, mu: np.ndarray, V: np.ndarray, rho: float) -> np.ndarray:
    """E-step: centred rows with observed entries kept and missing ones filled by Eq. 4 (n, m)."""
    X = sp.csr_matrix(X)
    C = local_factors(X, mu, V, rho) @ V.T if V.shape[1] else np.zeros(X.shape)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    C[rows, X.indices] = X.data - mu[X.indices]
    return C


def shrink_step(rows: np.ndarray, weights: np.ndarray | None, tau: float,
                max_rank: int | None = None) -> np.ndarray:
    """M-step: V = Q_r diag(√(d − τ)₊) from the thin SVD of the stacked √w_i r̃_i rows (so that
    V Vᵀ = (X̂ᵀX̂)^{1/2} of the singular-value-thresholded matrix X̂ = SVT_τ). Returns (m, r)."""
    A = rows if weights is None else rows * np.sqrt(np.asarray(weights, dtype=float))[:, None]
    n, m = A.shape
    if min(n, m) <= 200:
        _, d, Qt = np.linalg.svd(A, full_matrices=False)
    else:
        # Through the smaller Gram matrix: an exact eigendecomposition that is ~50× faster than a
        # full SVD at MovieLens size; only singular values above τ (≫ rounding) are used.
        if n <= m:
            w, Ul = np.linalg.eigh(A @ A.T)
            order = np.argsort(w)[::-1]
            d = np.sqrt(np.maximum(w[order], 0.0))
            big = d > max(tau, 1e-12)
            Qt = np.zeros((len(d), m))
            Qt[big] = (Ul[:, order[big]].T @ A) / d[big][:, None]
        else:
            w, Qv = np.linalg.eigh(A.T @ A)
            order = np.argsort(w)[::-1]
            d = np.sqrt(np.maximum(w[order], 0.0))
            Qt = Qv[:, order].T
    keep = d > tau
    if max_rank is not None:
        keep[max_rank:] = False
    return Qt[keep].T * np.sqrt(d[keep] - tau)


def item_means(X: sp.csr_matrix) -> np.ndarray:
    """μ: item means over X's ratings, the global mean for items X never rated (notes A.7.3)."""
    X = sp.csr_matrix(X)
    cnt = np.diff(X.tocsc().indptr)
    s = np.asarray(X.sum(axis=0)).ravel()
    glob = float(X.data.mean()) if X.nnz else 0.0
    return np.where(cnt > 0, s / np.maximum(cnt, 1), glob)


def fit_em(X: sp.csr_matrix, tau: float, *, mu: np.ndarray | None = None, max_rank: int | None = 50,
           max_iter: int = 100, tol: float = 1e-4, extra_rows: np.ndarray | None = None,
           extra_weights: np.ndarray | None = None, V0: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """EM / Soft-Impute for the trace-norm model on the rows of X (public users).

    ``extra_rows`` (k, m): frozen, already-centred rows (private users' released vectors) that enter
    every M-step with ``extra_weights`` but are never re-completed. Returns (μ, V, iterations).
    Stops at the first iteration whose completed rows C (the E-step's centred rows) differ from the
    previous iteration's by less than ``tol`` relative to them, ‖C − C_prev‖_F / ‖C_prev‖_F < ``tol``
    (so at the earliest at iteration 2), or after ``max_iter`` iterations.
    """
    X = sp.csr_matrix(X)
    mu = item_means(X) if mu is None else mu
    V = np.zeros((X.shape[1], 0)) if V0 is None else V0
    prev = None
    it = 0
    for it in range(1, max_iter + 1):
        C = complete_rows(X, mu, V, tau)
        rows, w = C, None
        if extra_rows is not None and len(extra_rows):
            rows = np.vstack([C, extra_rows])
            w = np.concatenate([np.ones(len(C)), np.asarray(extra_weights, dtype=float)])
        V = shrink_step(rows, w, tau, max_rank)
        if prev is not None:
            change = np.linalg.norm(C - prev) / max(np.linalg.norm(prev), 1e-300)
            if change < tol:
                break
        prev = C
    return mu, V, it


# ============================================================================ mechanisms (not DP)
def pmc_release(r_centred: np.ndarray, rng: np.random.Generator, h: float | None = None) -> np.ndarray:
    """PMC (Thm 4.2): u = ±h·sign(r − μ) with a fair random global sign, h = mean|r − μ| unless a
    public h is given. Coordinates with r − μ = 0 get a random sign (keeps Var[u_i] = h²).
    **Not DP**: reveals sign(r − μ) for every item up to one global flip."""
    r = np.asarray(r_centred, dtype=float)
    z = np.sign(r)
    zero = z == 0
    if zero.any():
        z[zero] = rng.choice([-1.0, 1.0], size=int(zero.sum()))
    hh = float(np.mean(np.abs(r))) if h is None else float(h)
    return rng.choice([-1.0, 1.0]) * hh * z


def pmd_release(r_full: np.ndarray, mu: np.ndarray, values: np.ndarray, rng: np.random.Generator,
                sweeps: int = 2, tries: int = 5) -> np.ndarray:
    """PMD (§4, Eq. 8 approximation): K = |S| candidate vectors whose every coordinate is a
    permutation of S (so each released coordinate is exactly uniform on S), improved by greedy
    random swaps that lower L = (1/K) Σ_j ‖a_j a_jᵀ − r′r′ᵀ‖²_F (a_j = x^j − μ, r′ = r − μ), using
    the O(1) swap update of notes A.3.4; one candidate is released uniformly. Returns the released
    centred vector x − μ. **Not DP** (first-order deniability only)."""
    S = np.asarray(values, dtype=float)
    K, m = len(S), len(r_full)
    rp = np.asarray(r_full, dtype=float) - mu
    # K × m candidates, each column an independent random permutation of S.
    cand = S[np.argsort(rng.random((K, m)), axis=0)]
    A = cand - mu[None, :]
    nrm = np.sum(A * A, axis=1)
    dot = A @ rp

    def loss(nv, dv):
        return nv * nv - 2 * dv * dv

    for _ in range(sweeps):
        for i in rng.permutation(m):
            for _ in range(tries):
                p, q = rng.choice(K, 2, replace=False)
                a, b = A[p, i], A[q, i]
                np_, nq = nrm[p] - a * a + b * b, nrm[q] - b * b + a * a
                dp, dq = dot[p] + (b - a) * rp[i], dot[q] + (a - b) * rp[i]
                if loss(np_, dp) + loss(nq, dq) < loss(nrm[p], dot[p]) + loss(nrm[q], dot[q]):
                    A[p, i], A[q, i] = b, a
                    nrm[p], nrm[q], dot[p], dot[q] = np_, nq, dp, dq
    return A[rng.integers(K)]


# ============================================================================ estimator
@dataclass
class XinJaakkola:
    """Two-tier recommender of Xin & Jaakkola (2014).

    Parameters
    ----------
    public_fraction : float — share of users that are public (default 0.01); ``n_public`` overrides.
    public_selection : {"heaviest", "random"}.
    tau : float — singular-value threshold τ (= ridge ρ of Eq. 4 in this scaling).
    max_rank : int — cap on the rank of V.  max_iter, tol : EM stopping.
    mechanism : {"none", "pmc", "pmd", "full"} — "none": public-only (private users release nothing);
        "pmc"/"pmd": the streamed §4 protocol; "full": Full EM over every user (non-private reference).
    batch : int — private users per server update (w = 20).  private_weight : float — 1/2.
    pmd_sweeps, pmd_tries : PMD search budget.  values : PMD's rating set S (default 1..5; the engine
    takes 1..value bound for ratings and needs it given for other data).
    random_state : seed or Generator.

    Attributes: ``mu_`` (m,), ``V_`` (m, r), ``U_`` (n, r) local factors, ``public_`` (indices),
    ``messages_`` (list of (round, who, content, n_floats)), ``rounds_``, ``downloaded_`` (n,): the
    columns of the (μ, V) each private user downloaded to complete its row before its release
    (1 + the rank of V then; 0 for a user who released nothing).
    """

    public_fraction: float = 0.01
    n_public: int | None = None
    public_selection: str = "heaviest"
    tau: float = 10.0
    max_rank: int | None = 50
    max_iter: int = 100
    tol: float = 1e-4
    mechanism: str = "none"
    batch: int = 20
    private_weight: float = 0.5
    pmd_sweeps: int = 2
    pmd_tries: int = 5
    values: tuple = (1.0, 2.0, 3.0, 4.0, 5.0)
    random_state: object = None

    def fit(self, X: sp.spmatrix) -> "XinJaakkola":
        if self.mechanism not in ("none", "pmc", "pmd", "full"):
            raise ConfigError(f"mechanism must be 'none', 'pmc', 'pmd' or 'full', got {self.mechanism!r}")
        if not self.tau > 0:
            raise ConfigError(f"τ must be positive, got {self.tau}")
        S = np.asarray(self.values, dtype=float)
        if self.mechanism == "pmd" and (len(S) < 2 or len(np.unique(S)) != len(S)):
            # K = |S| candidates, each coordinate a permutation of S: a swap needs two of them, and a
            # repeated value would be released more often than the others
            raise ConfigError(f"PMD's rating set values needs at least two distinct numbers, each given once; "
                              f"got {', '.join(f'{v:g}' for v in S) or 'none'}", param="prototype_params")
        X = sp.csr_matrix(X, dtype=np.float64)
        rng = self.random_state if isinstance(self.random_state, np.random.Generator) \
            else np.random.default_rng(self.random_state)
        n, m = X.shape
        self.rounds_ = 0
        self.downloaded_ = np.zeros(n, dtype=np.int64)
        if self.mechanism == "full":
            self.public_ = np.arange(n)
        else:
            self.public_ = select_public_users(X, self.public_fraction, self.n_public, self.public_selection, rng)
        Xp = X[self.public_]
        mu, V, it = fit_em(Xp, self.tau, max_rank=self.max_rank, max_iter=self.max_iter, tol=self.tol)
        self.em_iterations_ = it
        self.messages_ = [(1, "public users", "all ratings of the public users", int(Xp.nnz))]
        if self.mechanism in ("pmc", "pmd"):
            mu, V = self._stream(X, Xp, mu, V, rng)
        self.mu_, self.V_ = mu, V
        self.messages_.append((self.rounds_ + 2, "server", "(μ, V) broadcast to every private user",
                               int(mu.size + V.size)))
        self.U_ = local_factors(X, mu, V, self.tau)
        return self

    def _stream(self, X, Xp, mu, V, rng):
        """§A.3.6: private users in descending #ratings; after every ``batch`` of them the server
        re-runs the M-step on public rows (weight 1, re-completed) and frozen private rows."""
        private = np.setdiff1d(np.arange(X.shape[0]), self.public_)
        private = private[np.argsort(-np.diff(X.indptr)[private], kind="stable")]
        released: list[np.ndarray] = []
        S = np.asarray(self.values, dtype=float)
        for start in range(0, len(private), self.batch):
            users = private[start:start + self.batch]
            # Each private user downloads the current (μ, V), completes its own row locally, then releases.
            self.downloaded_[users] = 1 + V.shape[1]
            self.messages_.append((self.rounds_ + 1, "server", f"(μ, V) to each of {len(users)} private users",
                                   len(users) * (mu.size + V.size)))
            full = complete_rows(X[users], mu, V, self.tau) + mu[None, :]
            for k in range(len(users)):
                r = full[k]
                if self.mechanism == "pmc":
                    released.append(pmc_release(r - mu, rng))
                else:
                    # Completion must land in S (notes A.7.4): round and clip.
                    r_s = S[np.argmin(np.abs(r[:, None] - S[None, :]), axis=1)]
                    released.append(pmd_release(r_s, mu, S, rng, self.pmd_sweeps, self.pmd_tries))
            self.rounds_ += 1
            self.messages_.append((self.rounds_ + 1, f"{len(users)} private users",
                                   f"one {self.mechanism.upper()} vector each (not DP)", len(users) * X.shape[1]))
            rows = np.vstack(released)
            # μ stays the public users' means: private vectors carry no first-order information.
            mu, V, _ = fit_em(Xp, self.tau, mu=mu, max_rank=self.max_rank, max_iter=3, tol=self.tol,
                              extra_rows=rows, extra_weights=np.full(len(rows), self.private_weight), V0=V)
        return mu, V

    def predict(self, users: np.ndarray, items: np.ndarray) -> np.ndarray:
        return self.mu_[items] + np.einsum("ij,ij->i", self.U_[users], self.V_[items])

    def factors_uv(self) -> tuple[np.ndarray, np.ndarray]:
        """U = [1, u_i], V = [μ, V] so that U @ Vᵀ = μ + V u (Eq. 4 predictions, unclipped)."""
        n = self.U_.shape[0]
        return np.column_stack([np.ones(n), self.U_]), np.column_stack([self.mu_, self.V_])


# ============================================================================ engine methods


def check_pmd_scale(dataset, config) -> None:
    """PMD releases values of a finite scale S (notes A.7.4): ratings data has one (1 … its bound);
    counts or implicit data have none, and the 1..5 default would round every completion onto a scale
    the data does not use, so ``values`` must be given. Reads only the data's declared kind of value."""
    if dataset.value_kind == "ratings" or (config.params or {}).get("values") is not None:
        return
    raise ConfigError(f"{config.method} releases values of a finite rating scale, which "
                      f"{dataset.value_kind} data does not have: give its parameter values "
                      "(e.g. values=0,1,2,3,4,5) or use xin-pmc", param="prototype_params")


def _make_fit(mechanism: str):
    def fit(dataset, train, config, rng, progress):
        from dpfed_core.privacy.ledger import PrivacyLedger
        from dpfed_core.methods.registry import MethodResult
        from dpfed_core.federation.messages import SERVER, Message
        params = {k: v for k, v in check_params(PARAMETERS, config.params, config.method).items()
                  if v is not None or k in ("max_rank", "n_public")}
        if "values" not in params and dataset.value_kind == "ratings":
            params["values"] = tuple(float(v) for v in range(1, int(dataset.value_max) + 1))
        if mechanism == "pmd":
            check_pmd_scale(dataset, config)
        t0 = time.perf_counter()
        model = XinJaakkola(mechanism=mechanism, random_state=rng, **params).fit(train)
        U, V = model.factors_uv()
        ledger = PrivacyLedger(math.inf, 0.0)
        ent_of = dataset.entity_of_user
        messages = []
        public_set = set(model.public_.tolist())
        for h, name in enumerate(dataset.entity_names):
            rows = np.flatnonzero(ent_of == h)
            pub = [r for r in rows if r in public_set]
            if pub:
                block = train[pub]
                messages.append(Message(1, name, SERVER, f"all ratings of {len(pub)} public users",
                                        (len(pub), dataset.n_items),
                                        int(block.data.nbytes + block.indices.nbytes + block.indptr.nbytes),
                                        copies=len(pub)))
                ledger.spend(name, "public users", "raw ratings of public users (no privacy)", math.inf)
            if mechanism in ("pmc", "pmd"):
                n_priv = len(rows) - len(pub)
                if n_priv:
                    # each private user downloads the (μ, V) of its batch before its release: one copy per user
                    cols = model.downloaded_[[r for r in rows if r not in public_set]]
                    ranks = sorted({int(c) - 1 for c in cols})
                    said = f"rank {ranks[0]}" if len(ranks) == 1 else f"rank {ranks[0]} to {ranks[-1]} as V grew"
                    messages.append(Message(2, SERVER, name, f"(μ, V) item model to each of {n_priv} private users "
                                            f"before its release ({said})", (n_priv, dataset.n_items, int(cols.max())),
                                            int(cols.sum()) * dataset.n_items * 8, copies=n_priv))
                    messages.append(Message(2, name, SERVER, f"{n_priv} {mechanism.upper()} vectors (not DP)",
                                            (n_priv, dataset.n_items), n_priv * dataset.n_items * 8, copies=n_priv))
                    ledger.spend(name, "private users", f"{mechanism.upper()} release (not DP)", math.inf)
            messages.append(Message(3, SERVER, name, "(μ, V) item model", (dataset.n_items, V.shape[1]),
                                    int(V.nbytes)))
        notes = [f"Xin & Jaakkola: {len(model.public_)} public users ({model.public_selection}); "
                 f"rank of V = {model.V_.shape[1]}; τ = {model.tau}."]
        progress("xin_done", method=config.method)
        return MethodResult(U, V, ledger, messages, {"xin_fit": time.perf_counter() - t0}, model,
                            {"notes": notes, "public_users": model.public_})
    return fit
