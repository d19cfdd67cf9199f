"""Federated Collaborative Filtering (FCF), Ammad-ud-din et al. 2019 (arXiv 1901.09888) —
``seeds/004_…``, notes in ``research/xin_fcf.md`` Part B — and the centralised implicit-feedback ALS
of Hu, Koren & Volinsky (2008) that it federates.

Model (Hu et al.; FCF Eqs. 1–9, dimension typos corrected). Ratings/counts r_ui ≥ 0 (N × M),
preference p_ui = [r_ui > 0], confidence c_ui = 1 + α r_ui (MovieLens is binarised first: r ∈ {0, 1}),
user factors X (N × K, row x_u), item factors Y (M × K, row y_i)::

    J(X, Y) = Σ_u Σ_i c_ui (p_ui − x_u·y_i)² + λ (Σ_u ‖x_u‖² + Σ_i ‖y_i‖²)      (over *all* N × M cells)
    x_u* = (Yᵀ C^u Y + λI)⁻¹ Yᵀ C^u p_u,  Yᵀ C^u Y = YᵀY + Σ_{i∈I_u} α r_ui y_i y_iᵀ     (Eq. 7)

* ``implicit-als`` (centralised CF): alternate the exact x_u and y_i solves (one epoch = X then Y).
* ``fcf``: each client (user) keeps r_u and x_u. An epoch = every client solves Eq. 7 with the current
  Y, then ``gd_iters`` communication rounds on Y. In each round the server sends Y, every client
  uploads its gradient contribution for **every** item (Eq. 11)::

      f(u, i) = c_ui (p_ui − x_u·y_i) x_u    → the upload is the K × M matrix F_u = x_u e_uᵀ

  and the server steps y_i with ∂J/∂y_i = −2 Σ_u f(u, i) + 2λ y_i (Eq. 12) by Adam (Eqs. 13–17).

**Why Adam, not plain gradient steps** (notes B.7.4): the gradient is a *sum* over N clients, so
the item Hessian's largest eigenvalue is ~10³ on realistic data and plain GD with the paper's
γ = 0.05 diverges (relative error 1e41 after 20 steps); it needs γ < 2/L ≈ 1e-3 and then crawls.
Adam is invariant to the gradient's scale. The paper prints the bias correction *without* the step
exponent (m̂ = m/(1−β₁), v̂ = v/(1−β₂)); that literal form with β₁ = 0.4, β₂ = 0.99, γ = 0.2 reaches
the ALS item factors to ~1e-4 within one epoch, while standard Adam oscillates — so ``adam_bias=
"paper"`` is the default. Adam's state is reset every epoch, since each epoch is a new convex
sub-problem in Y (a reconstruction; the paper is silent).

**Privacy**: none in any formal sense. Raw r_ui stay on the client, but F_u is rank one and, with Y
known to the server, reveals x_u, the exact set of items the user interacted with and (given α)
the values — see :func:`analyse_client_upload` / :func:`what_one_upload_reveals`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import check_params
from dpfed_core.methods.comparison.specs import ALS_PARAMETERS, FCF_PARAMETERS
from dpfed_core.errors import ConfigError
from dpfed_core.models.ridge import ridge_solve

from dpfed_core.methods.comparison.specs import PRIVACY_ALS_DETAIL, PRIVACY_FCF_DETAIL  # noqa: E402

PRIVACY_FCF = f"no formal privacy ({PRIVACY_FCF_DETAIL})"
PRIVACY_ALS = f"non-private ({PRIVACY_ALS_DETAIL})"



# ============================================================================ model pieces
def implicit_matrix(X: sp.spmatrix, binarize: bool = True) -> sp.csr_matrix:
    """r_ui as a csr matrix with only positive entries (binarised to 1 if ``binarize``)."""
    R = sp.csr_matrix(X, dtype=np.float64, copy=True)
    R.data[R.data < 0] = 0.0
    R.eliminate_zeros()
    if binarize:
        R.data[:] = 1.0
    return R


def solve_rows(R: sp.csr_matrix, F: np.ndarray, alpha: float, lam: float) -> np.ndarray:
    """Exact confidence-weighted ridge for every row of ``R`` given the other side's factors ``F``:

        x_u = (FᵀF + λI + Σ_{i∈I_u} α r_ui f_i f_iᵀ)⁻¹ Σ_{i∈I_u} (1 + α r_ui) f_i      (Eq. 7 / Eq. 9)

    R : (n, m) csr with r_ui > 0 on the support; F : (m, K). Returns (n, K). Vectorised: the sparse
    sum of outer products is one sparse × dense product, then one batched solve.
    """
    n, K = R.shape[0], F.shape[1]
    W = R.copy()
    W.data = alpha * W.data
    outer = (F[:, :, None] * F[:, None, :]).reshape(F.shape[0], K * K)
    A = np.asarray(W @ outer).reshape(n, K, K) + (F.T @ F + lam * np.eye(K))[None]
    C1 = R.copy()
    C1.data = 1.0 + alpha * C1.data
    b = np.asarray(C1 @ F)
    return ridge_solve(A, b[:, :, None])[:, :, 0]


def objective(R: sp.csr_matrix, X: np.ndarray, Y: np.ndarray, alpha: float, lam: float) -> float:
    """J(X, Y) over all N × M cells without densifying (Eq. 5)."""
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    s = np.einsum("ij,ij->i", X[rows], Y[R.indices])
    c = 1.0 + alpha * R.data
    # Σ_all (0 − s)² = tr((XᵀX)(YᵀY)); correct the observed cells to c(1 − s)².
    total = float(np.sum((X.T @ X) * (Y.T @ Y)))
    total += float(np.sum(c * (1 - s) ** 2 - s ** 2))
    return total + lam * (float(np.sum(X * X)) + float(np.sum(Y * Y)))


def item_gradient(R: sp.csr_matrix, X: np.ndarray, Y: np.ndarray, alpha: float, lam: float,
                  reduction: str = "sum") -> np.ndarray:
    """Server-side ∂J/∂Y = −2 Σ_u F_uᵀ + 2λY (Eq. 12), (M, K), from the sum of all clients' uploads.

    Σ_u f(u, i) = Σ_{u∈obs(i)} (1 + α r_ui) x_u − (XᵀX) y_i − Σ_{u∈obs(i)} α r_ui (x_u·y_i) x_u, so
    only the support is touched. ``reduction="mean"`` divides the client sum by N (notes B.7.4).
    Equal to the sum of :func:`client_upload` over all clients (tested).
    """
    rows = np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))
    s = np.einsum("ij,ij->i", X[rows], Y[R.indices])
    coef = (1.0 + alpha * R.data) - alpha * R.data * s
    Cm = sp.csr_matrix((coef, R.indices, R.indptr), shape=R.shape)
    agg = np.asarray(Cm.T @ X) - Y @ (X.T @ X)
    if reduction == "mean":
        agg /= max(R.shape[0], 1)
    elif reduction != "sum":
        raise ConfigError(f"grad_reduction must be 'sum' or 'mean', got {reduction!r}")
    return -2.0 * agg + 2.0 * lam * Y


def client_upload(x_u: np.ndarray, Y: np.ndarray, items: np.ndarray, values: np.ndarray,
                  alpha: float) -> np.ndarray:
    """One client's upload F_u (K × M): column i is f(u, i) = c_ui (p_ui − x_u·y_i) x_u (Eq. 11),
    for **every** item — interacted items (``items`` with r = ``values``) and all others."""
    e = -(Y @ x_u)
    e[items] = (1.0 + alpha * values) * (1.0 - Y[items] @ x_u)
    return np.outer(x_u, e)


# ============================================================================ estimators
@dataclass
class ImplicitALS:
    """Centralised implicit-feedback ALS (Hu, Koren & Volinsky 2008) — FCF's "CF" baseline.

    Parameters: ``factors`` K, ``alpha`` α, ``lam`` λ, ``epochs`` (X then Y per epoch),
    ``binarize``, ``init_scale`` (X, Y ~ N(0, init_scale²)), ``random_state``.
    Attributes: ``X_`` (N, K), ``Y_`` (M, K), ``history_`` (objective per epoch).
    """

    factors: int = 4
    alpha: float = 1.0
    lam: float = 1.0
    epochs: int = 20
    binarize: bool = True
    init_scale: float = 0.1
    random_state: object = None

    def fit(self, X: sp.spmatrix, Y0: np.ndarray | None = None) -> "ImplicitALS":
        R = implicit_matrix(X, self.binarize)
        rng = _rng(self.random_state)
        N, M = R.shape
        Y = rng.normal(0, self.init_scale, (M, self.factors)) if Y0 is None else np.array(Y0, dtype=float)
        RT = R.T.tocsr()
        self.history_ = []
        Xf = np.zeros((N, self.factors))
        for _ in range(self.epochs):
            Xf = solve_rows(R, Y, self.alpha, self.lam)
            Y = solve_rows(RT, Xf, self.alpha, self.lam)
            self.history_.append(objective(R, Xf, Y, self.alpha, self.lam))
        self.X_, self.Y_ = Xf, Y
        return self


@dataclass
class FCF:
    """Federated Collaborative Filtering (Ammad-ud-din et al. 2019), simulated in process.

    Parameters
    ----------
    factors, alpha, lam, binarize, init_scale, random_state : as :class:`ImplicitALS`.
    epochs : int — 20 in the paper.  gd_iters : int — server steps (= communication rounds) per
        epoch; 10 on real data in the paper.
    optimizer : {"adam", "gd"}.  gamma : step size (Adam 0.2; GD needs ≲ 1/L with "sum").
    beta1, beta2, adam_eps : Adam (paper: 0.4, 0.99, 1e-8).
    adam_bias : {"paper", "standard"} — bias correction without / with the step exponent t.
    grad_reduction : {"sum", "mean"} — how client contributions are combined (Eq. 12 sums).
    reset_state_each_epoch : bool — restart Adam's moments each epoch (default True).
    x_refresh : {"epoch", "round"} — clients re-solve x_u once per epoch (the text; default) or every
        round (Algorithm 1 read literally).

    Attributes
    ----------
    X_ (N, K) — stays on the clients; Y_ (M, K) — the server's model; history_ — per epoch dicts
    (objective, rounds so far); rounds_ — total communication rounds.
    """

    factors: int = 4
    alpha: float = 1.0
    lam: float = 1.0
    epochs: int = 20
    gd_iters: int = 10
    optimizer: str = "adam"
    gamma: float = 0.2
    beta1: float = 0.4
    beta2: float = 0.99
    adam_eps: float = 1e-8
    adam_bias: str = "paper"
    grad_reduction: str = "sum"
    reset_state_each_epoch: bool = True
    x_refresh: str = "epoch"
    binarize: bool = True
    init_scale: float = 0.1
    random_state: object = None
    history_: list = field(default_factory=list, init=False, repr=False)

    def _validate(self) -> None:
        if self.optimizer not in ("adam", "gd"):
            raise ConfigError(f"optimizer must be 'adam' or 'gd', got {self.optimizer!r}")
        if self.adam_bias not in ("paper", "standard"):
            raise ConfigError(f"adam_bias must be 'paper' or 'standard', got {self.adam_bias!r}")
        if self.x_refresh not in ("epoch", "round"):
            raise ConfigError(f"x_refresh must be 'epoch' or 'round', got {self.x_refresh!r}")
        for name in ("factors", "epochs", "gd_iters"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{name} must be ≥ 1, got {getattr(self, name)}")

    def fit(self, X: sp.spmatrix, Y0: np.ndarray | None = None, on_round=None) -> "FCF":
        """Run the protocol. ``on_round(epoch, round, Y)`` is called after every server step
        (the engine uses it to log messages and report progress)."""
        self._validate()
        R = implicit_matrix(X, self.binarize)
        rng = _rng(self.random_state)
        N, M = R.shape
        K = self.factors
        Y = rng.normal(0, self.init_scale, (M, K)) if Y0 is None else np.array(Y0, dtype=float)
        m = np.zeros_like(Y)
        v = np.zeros_like(Y)
        t = 0
        rounds = 0
        self.history_ = []
        Xf = np.zeros((N, K))
        for ep in range(self.epochs):
            if self.reset_state_each_epoch:
                m[:] = 0.0
                v[:] = 0.0
                t = 0
            Xf = solve_rows(R, Y, self.alpha, self.lam)  # client side, piggybacks on the first broadcast
            for it in range(self.gd_iters):
                if self.x_refresh == "round" and it > 0:
                    Xf = solve_rows(R, Y, self.alpha, self.lam)
                g = item_gradient(R, Xf, Y, self.alpha, self.lam, self.grad_reduction)
                t += 1
                if self.optimizer == "gd":
                    Y = Y - self.gamma * g
                else:
                    m = self.beta1 * m + (1 - self.beta1) * g
                    v = self.beta2 * v + (1 - self.beta2) * g * g
                    if self.adam_bias == "paper":  # as printed (Eqs. 15–16): no exponent t
                        mh, vh = m / (1 - self.beta1), v / (1 - self.beta2)
                    else:
                        mh, vh = m / (1 - self.beta1 ** t), v / (1 - self.beta2 ** t)
                    Y = Y - self.gamma * mh / (np.sqrt(vh) + self.adam_eps)
                rounds += 1
                if not np.all(np.isfinite(Y)) or np.abs(Y).max() > 1e8:
                    raise ConfigError(
                        f"FCF diverged at epoch {ep + 1}, round {it + 1} ({self.optimizer}, γ={self.gamma}); "
                        "plain gradient steps on a gradient summed over all clients need γ below ~1/L "
                        "(≈1e-3 on MovieLens): use optimizer='adam' (default) or a smaller γ")
                if on_round is not None:
                    on_round(ep, rounds, Y)
            self.history_.append({"epoch": ep + 1, "rounds": rounds,
                                  "objective": objective(R, Xf, Y, self.alpha, self.lam)})
        # Final client step so that X_ matches the final Y (each client can do this locally).
        self.X_ = solve_rows(R, Y, self.alpha, self.lam)
        self.Y_ = Y
        self.rounds_ = rounds
        return self


def _rng(random_state) -> np.random.Generator:
    return random_state if isinstance(random_state, np.random.Generator) else np.random.default_rng(random_state)


# ============================================================================ the leak
def analyse_client_upload(F: np.ndarray, Y: np.ndarray, alpha: float | None = None,
                          threshold: float = 0.5) -> dict:
    """What the server learns from **one** client's upload F_u (K × M) and its own Y (M × K).

    F_u = x_u e_uᵀ is rank one. For the (many) items the user did not touch, e_ui = −x_u·y_i exactly,
    which pins the unknown scale of the rank-one factorisation: with F = s·a bᵀ (top singular
    triple), x_u = t·a and e = (s/t)·b, every untouched item gives t² = −s·b_i/g_i with g = Y a; the
    median over items starts, a least-squares fit on the items classified as untouched refines. The sign of t is the one for which
    the deviations d_i = e_i + x_u·y_i of the outlying items are positive: d_i = 0 for untouched items
    and d_i = c_ui − (c_ui − 1) x_u·y_i ≈ c_ui ≥ 1 for touched ones. Then:

    * ``x_u``: the user's factor (exact up to floating point);
    * ``items``: every item with |d_i| > ``threshold`` — the user's interaction set;
    * ``confidence``: c_ui = e_ui / (1 − x_u·y_i) for those items, and ``values`` r_ui = (c − 1)/α when
      α is given (the server chose α, so it knows it).

    Returns a dict with those keys plus ``scale_residual`` (fit error of the untouched-item relation,
    ~1e-15 when the upload is an unmodified FCF gradient).
    """
    F = np.asarray(F, dtype=np.float64)
    U_, S_, Vt_ = np.linalg.svd(F, full_matrices=False)
    s, a, b = S_[0], U_[:, 0], Vt_[0]
    if s == 0:
        return {"x_u": np.zeros(F.shape[0]), "items": np.array([], dtype=int), "confidence": np.array([]),
                "values": None if alpha is None else np.array([]), "scale_residual": 0.0}
    g = Y @ a
    # Start from the median of the per-item estimates −s·b_i/g_i (robust: touched items are a
    # minority but their e_ui are large, so a least-squares start would be dragged by them).
    ok = np.abs(g) > 1e-6 * max(np.abs(g).max(), 1e-300)
    t2 = float(np.median(-s * b[ok] / g[ok])) if ok.any() else 1.0
    untouched = np.ones(len(b), dtype=bool)
    for it in range(4):
        if it > 0:
            gg = g[untouched]
            t2 = -s * float(b[untouched] @ gg) / max(float(gg @ gg), 1e-300)
        t = math.sqrt(max(t2, 1e-300))
        x = t * a
        e = (s / t) * b
        d = e + Y @ x
        if np.sum(d[np.abs(d) > threshold]) < 0:  # wrong sign of t: flip both factors
            x, e, d = -x, -e, -d
        untouched = np.abs(d) <= threshold
        if untouched.sum() == 0:
            break
    items = np.flatnonzero(~untouched)
    xy = Y[items] @ x
    conf = e[items] / np.where(np.abs(1 - xy) > 1e-12, 1 - xy, np.nan)
    resid = float(np.max(np.abs(e[untouched] + Y[untouched] @ x))) if untouched.any() else float("nan")
    return {"x_u": x, "items": items, "confidence": conf,
            "values": None if alpha is None else (conf - 1.0) / alpha, "scale_residual": resid}


def what_one_upload_reveals(model: FCF, X_train: sp.spmatrix, user: int, item_names=None,
                            max_items: int = 20) -> dict:
    """Simulate user ``user``'s gradient upload under the fitted ``model`` and run the server-side
    analysis of :func:`analyse_client_upload` on it; compare with the truth.

    Returns ``{"user", "upload_shape", "upload_bytes", "n_true_items", "n_recovered_items",
    "precision", "recall", "x_u_max_error", "value_max_error", "recovered_items" (first
    ``max_items`` names or indices), "summary"}`` — what the dashboard shows.
    """
    R = implicit_matrix(X_train, model.binarize)
    row = R[user]
    items, vals = row.indices, row.data
    x_u = solve_rows(R[user], model.Y_, model.alpha, model.lam)[0]
    F = client_upload(x_u, model.Y_, items, vals, model.alpha)
    res = analyse_client_upload(F, model.Y_, model.alpha)
    truth, got = set(items.tolist()), set(res["items"].tolist())
    hit = len(truth & got)
    val_err = float("nan")
    if got and truth == got:
        rec = res["values"][np.argsort(res["items"])]
        val_err = float(np.max(np.abs(rec - vals[np.argsort(items)])))
    names = [str(item_names[i]) if item_names is not None else int(i) for i in res["items"][:max_items]]
    precision = hit / len(got) if got else float("nan")
    recall = hit / len(truth) if truth else float("nan")
    summary = (f"One upload of user {user} ({F.shape[0]}×{F.shape[1]} numbers, {F.nbytes:,} bytes) "
               f"reveals {len(got)} interacted items ({hit} of the user's {len(truth)} true items; "
               f"precision {precision:.3f}, recall {recall:.3f}), the user's factor x_u "
               f"(max error {float(np.max(np.abs(res['x_u'] - x_u))):.2e})"
               + (", and every interaction value" if np.isfinite(val_err) and val_err < 1e-6 else "") + ".")
    return {"user": int(user), "upload_shape": list(F.shape), "upload_bytes": int(F.nbytes),
            "n_true_items": len(truth), "n_recovered_items": len(got), "precision": precision,
            "recall": recall, "x_u_max_error": float(np.max(np.abs(res["x_u"] - x_u))),
            "value_max_error": val_err, "recovered_items": names, "summary": summary}


# ============================================================================ engine methods


def _params(config, dataset, declared) -> dict:
    params = {k: v for k, v in check_params(declared, config.params, config.method).items() if v is not None}
    params.setdefault("factors", config.rank)
    params.setdefault("lam", config.lam)
    # Explicit ratings are binarised as in the FCF paper; counts keep c = 1 + α·count (Hu et al.).
    params.setdefault("binarize", dataset.value_kind != "counts")
    return params


def _notes(dataset) -> list[str]:
    out = ["Implicit-feedback model: scores are preferences in [0, 1], so RMSE against the data's "
           "values is not meaningful; compare ranking metrics."]
    if dataset.value_kind == "ratings":
        out.append("Ratings binarised (any rating = an interaction), as in the FCF paper.")
    return out


def _fit_implicit_als(dataset, train, config, rng, progress):
    from dpfed_core.privacy.ledger import PrivacyLedger
    from dpfed_core.methods.registry import MethodResult
    from dpfed_core.federation.messages import SERVER, Message
    t0 = time.perf_counter()
    model = ImplicitALS(random_state=rng, **_params(config, dataset, ALS_PARAMETERS)).fit(train)
    ledger = PrivacyLedger(math.inf, 0.0)
    messages = []
    for name, sl in zip(dataset.entity_names, dataset.entity_slices()):
        block = train[sl]
        messages.append(Message(1, name, SERVER, "raw interactions (pooled)", (sl.stop - sl.start, dataset.n_items),
                                int(block.data.nbytes + block.indices.nbytes + block.indptr.nbytes)))
        ledger.spend(name, "raw data", "raw interactions (non-private)", math.inf)
    progress("implicit_als_done")
    return MethodResult(model.X_, model.Y_, ledger, messages, {"implicit_als_fit": time.perf_counter() - t0},
                        model, {"notes": _notes(dataset), "history": model.history_})


def _fit_fcf(dataset, train, config, rng, progress):
    from dpfed_core.privacy.ledger import PrivacyLedger
    from dpfed_core.methods.registry import MethodResult
    from dpfed_core.federation.messages import SERVER, Message
    t0 = time.perf_counter()
    params = _params(config, dataset, FCF_PARAMETERS)
    model = FCF(random_state=rng, **params)
    slices = dataset.entity_slices()
    sizes = [sl.stop - sl.start for sl in slices]
    M, K = dataset.n_items, int(params["factors"])
    messages: list = []
    total_rounds = int(model.epochs) * int(model.gd_iters)

    def on_round(epoch, rnd, Y):
        # Every user is a client. Per round and entity one row per direction summarises that
        # entity's clients: each downloads Y (M × K) and uploads its own K × M gradient F_u.
        for name, n_h in zip(dataset.entity_names, sizes):
            messages.append(Message(rnd, SERVER, name, f"item factors Y to each of {n_h} clients",
                                    (n_h, M, K), n_h * M * K * 8, copies=n_h))
            messages.append(Message(rnd, name, SERVER, f"{n_h} client gradient uploads f(u,i) for every item "
                                    "(one K×M matrix per user, not aggregated)", (n_h, K, M), n_h * K * M * 8, copies=n_h))
        progress("fcf_round", round=rnd, total=total_rounds, epoch=epoch + 1)

    model.fit(train, on_round=on_round)
    ledger = PrivacyLedger(math.inf, 0.0)
    for name in dataset.entity_names:
        ledger.spend(name, "gradient uploads", "raw per-client gradients every round (no formal privacy)", math.inf)
    notes = _notes(dataset) + [
        f"FCF used {model.rounds_} communication rounds ({sum(m.bytes for m in messages) / 1e6:.1f} MB in total); "
        "each upload reveals the user's interaction set (see what_one_upload_reveals)."]
    return MethodResult(model.X_, model.Y_, ledger, messages, {"fcf_fit": time.perf_counter() - t0}, model,
                        {"notes": notes, "history": model.history_, "rounds": model.rounds_})
