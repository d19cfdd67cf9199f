"""Empirical privacy audit: what could someone who sees the server's inbox learn about one user?

A **membership-inference audit** of the round-1 release (SPEC §2–3). For one entity and a
*target* user we build two neighbouring datasets — the entity's training rows without the target
(D₀, "OUT") and with it (D₁, "IN"), which is exactly the neighbouring relation of the guarantee
(add or remove one user) — and run the entity's release mechanism ``runs`` times on each, every
run with a fresh :class:`numpy.random.Generator` spawned from a seeded :class:`~numpy.random.
SeedSequence`. An attacker who knows the target's row and sees only the release — a prototype
method's prototypes (optionally also the item factors V the server would learn from them), a summable
method's noisy statistics as the audit's trust model shows them — scores each release:

* ``distance`` — minus the Euclidean distance from the target's row to the nearest prototype
  (higher = "the target was in"); parameter-free, so it is evaluated on all runs;
* ``lr`` — a likelihood-ratio attack (LiRA-style): four features of the release (nearest
  distance, largest cosine, largest and summed projection of the prototypes on the target row),
  a Gaussian per class fitted on a *calibration* half of the runs ("shadow" runs), and the log
  likelihood ratio scored on the other half;
* ``v-residual`` (``with_v=True``) — the server's factorisation run on the entity's prototypes
  alone (the attacker-friendliest case: other entities' prototypes are independent of the target
  and only add noise), the target's row fitted with V fixed as in round 2; minus its residual.

For each attack we report the ROC curve, its AUC, the true-positive rate at low false-positive
rates, and the **empirical ε lower bound**. (ε, δ)-DP implies, for every test (threshold t),
TPR ≤ e^ε·FPR + δ and TNR ≤ e^ε·FNR + δ, hence
ε ≥ ln((TPR − δ)/FPR) and ε ≥ ln((TNR − δ)/FNR). We replace the rates by Clopper–Pearson bounds
(lower bound in the numerator, upper bound in the denominator, each one-sided at (1 − c)/2 so
both hold together with confidence c, default 95 %). The threshold and the form are chosen on the
calibration half and the bound is computed on the untouched evaluation half, so the reported value
is a valid lower bound on the mechanism's true ε with confidence c (no selection bias). With N
evaluation runs per class no audit can certify more than ln((1 − a)/a), a = 1 − ((1 − c)/2)^(1/N)
(:func:`~dpfed_core.audit.lower_bounds.max_certifiable_epsilon`): e.g. ≈ 3.3 for N = 100 — a non-private method that leaks
perfectly shows this ceiling, not ∞.

The verdict of a (method, ε) takes the maximum over targets × attacks, so each test is certified
at 1 − (1 − c)/F for a family of F tests (Bonferroni): the maximum then holds with confidence c.
It reads "inconclusive" when the claimed ε is at or above the ceiling these runs can certify — a
mechanism with half its noise would pass such an audit too, so "consistent" would say nothing.
Every released quantity is attacked, the cluster sizes included (attack ``counts``; the LR uses
them as a fifth feature). The audit replays the mechanism with seeded simulation noise of the same
distributions as production (OpenDP's), so it is reproducible.

**Summable releases** (``dp-popularity``, ``dp-cooccurrence``; :func:`audit_summable_target`) are
audited through their production code: every run replays the round-1 stage loop of the in-process
runner (:func:`dpfed_core.federation.summable_protocol.run_stages` — each entity's ``share``, the sum, the
server's ``combine`` whose public result the next stage uses). The attacker sees what the run's
trust model gives the server: the entity's own share of every stage (``aggregation="none"``) or only
the sums over all entities (``"secure"``); the claim is the ledger's guarantee for that model. The
other entities are simulated empty (their shares are noise only; default) or from their own rows
(``others="data"``, which reads, and charges, every entity). Attacks: ``projection`` (the release
projected on the target's contribution, noise-weighted over stages), ``items`` (released values at
the target's items) and ``lr`` — they stand for ``distance``, ``counts`` and ``lr`` in a requested
attack list, so the Bonferroni family is targets × attacks as for prototypes. :func:`power_check`
(``power_factor``) reruns the harness with the noise shrunk and the claim kept: it must report a
violation, or the verdict says "inconclusive".

Modules: the statistics (Clopper–Pearson, ε bounds, ROC) are in :mod:`dpfed_core.audit.lower_bounds`
and the targets with their neighbouring datasets in :mod:`dpfed_core.audit.targets`; this module
runs the attacks, one audit, the grid of (method, ε) and its summary.

What the audit is and is not: a *lower* bound from one family of attacks. A value far below the
claimed ε does not prove the claim (the proof is the ledger); a value *above* the claimed ε for
a DP method is a bug. The numbers are computed on private data and are for the entity's own
analysts; they are not released.
"""
from __future__ import annotations

import datetime as _dt
import math
import time
import zlib
from typing import Callable, Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from dpfed_core import __version__
from dpfed_core.audit.lower_bounds import (downsample_roc, empirical_epsilon, max_certifiable_epsilon, roc_auc,
                                           roc_curve, tpr_at_fpr)
from dpfed_core.audit.targets import AuditTarget, make_targets, neighbouring_pair
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.federation.prototypes import PROTOTYPE_METHODS, PrototypeMethod

ProgressFn = Callable[..., None]

from dpfed_core.audit.defaults import (ATTACK_LABELS, DEFAULT_ATTACKS, DEFAULT_EPSILONS, DEFAULT_FPRS,  # noqa: F401
                                      DEFAULT_METHODS, DEFAULT_TARGETS, ROC_POINTS, TARGET_LABELS)


from dpfed_core.config import no_progress as _noop  # noqa: E402  (one definition)


def ensure_prototype_methods() -> None:
    """Import the modules that register prototype methods (``dp-prototypes`` lives in its own
    module, imported by the comparison registry; importing it here keeps the audit standalone)."""
    from dpfed_core import methods  # noqa: F401  registers every comparison method
    try:
        from dpfed_core.federation import dp_prototypes  # noqa: F401
    except ImportError:  # pragma: no cover - only while the module is being written
        pass


# =============================================================================== attacks
def release_features(P: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Attack features of one release P (k × m) for the target row x (m,): [nearest distance,
    largest cosine, largest projection ⟨x, p⟩/‖x‖², summed projection]. Value units / unitless."""
    P = np.asarray(P, dtype=float)
    xx = float(x @ x)
    dots = P @ x
    pp = np.einsum("ij,ij->i", P, P)
    dist = np.sqrt(np.maximum(pp - 2.0 * dots + xx, 0.0))
    cos = dots / np.maximum(np.sqrt(pp * xx), 1e-300)
    proj = dots / max(xx, 1e-300)
    return np.array([dist.min(), cos.max(), proj.max(), proj.sum()])


def _is_verbatim(P: np.ndarray, x: np.ndarray, rtol: float = 1e-9) -> bool:
    """Whether some released prototype equals the target's row (up to float rounding)."""
    tol = rtol * max(float(np.abs(x).max(initial=0.0)), 1.0)
    return bool(np.any(np.all(np.abs(np.asarray(P) - x[None, :]) <= tol, axis=1)))


def _gaussian_lr(cal_out: np.ndarray, cal_in: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Log likelihood ratio log N(z; μ₁, Σ₁) − log N(z; μ₀, Σ₀) with class Gaussians fitted on the
    calibration features (standardised, covariances shrunk toward the identity so a constant
    feature — e.g. a distance of exactly 0 — stays well-defined)."""
    both = np.vstack([cal_out, cal_in])
    mu, sd = both.mean(0), both.std(0)
    sd = np.where(sd > 1e-12, sd, 1.0)

    def fit(A):
        A = (A - mu) / sd
        m = A.mean(0)
        C = np.cov(A, rowvar=False) if len(A) > 1 else np.eye(A.shape[1])
        C = np.atleast_2d(C) + 1e-3 * np.eye(A.shape[1])
        sign, logdet = np.linalg.slogdet(C)
        return m, np.linalg.inv(C), logdet

    def loglik(Zs, params):
        m, Ci, logdet = params
        d = Zs - m
        return -0.5 * (np.einsum("ij,jk,ik->i", d, Ci, d) + logdet)

    Zs = (Z - mu) / sd
    return loglik(Zs, fit(cal_in)) - loglik(Zs, fit(cal_out))


def _v_residual(P: np.ndarray, x: np.ndarray, rank: int, lam: float, rng: np.random.Generator,
                max_iter: int) -> float:
    """‖x − u Vᵀ‖ with V fitted by the server's NMF on P and u ≥ 0 fitted as in round 2."""
    from dpfed_core.models.factorization import fit_nmf, fit_rows_given

    r = int(min(rank, P.shape[0]))
    _, V, _ = fit_nmf(P, r, lam, "zero", max_iter=max_iter, rng=rng)
    u = fit_rows_given(x[None, :], V, lam, "zero")
    return float(np.linalg.norm(x - (u @ V.T).ravel()))


# =============================================================================== one audit
def _audit_method(name: str, k: int, value_max: float, epsilon: float, delta: float, params: dict | None,
                  aggregation: str = "none", max_dropouts: int = 0):
    """The audited method, built by the one factory of the federation
    (:func:`~dpfed_core.federation.protocol.build_method`) exactly as a run builds it. In an audit
    of several methods the parameters meant for another method are dropped: each method keeps only
    those it declares."""
    from dpfed_core.config import RunConfig
    from dpfed_core.federation.protocol import build_method, method_class

    ensure_prototype_methods()
    declared = {p.name for p in method_class(name).parameters}
    mine = {key: v for key, v in dict(params or {}).items() if key in declared}
    config = RunConfig(method=name, k=int(k), epsilon=float(epsilon), delta=float(delta),
                       aggregation=aggregation, max_dropouts=int(max_dropouts), prototype_params=mine)
    return build_method(config, value_max)


def check_audit_params(methods: Sequence[str], params: dict | None) -> None:
    """The rule of ``--param`` everywhere: a key applies to the methods that declare it, and a key no
    audited method declares is an error (dropping a misspelt key would run the audit with the
    default, silently). ``support`` also sets the synthetic targets' support, so it is always accepted."""
    from dpfed_core.federation.protocol import method_class

    ensure_prototype_methods()
    declared = {name: {p.name for p in method_class(name).parameters} for name in dict.fromkeys(methods)}
    for key in dict(params or {}):
        if key != "support" and not any(key in d for d in declared.values()):
            known = "; ".join(f"{name}: {', '.join(sorted(d)) or 'none'}" for name, d in declared.items())
            raise ConfigError(f"no audited method has a parameter {key!r} (parameters — {known})",
                              param="prototype_params")


def check_audit_options(methods: Sequence[str], epsilons: Sequence[float], *, delta: float, k: int,
                        prototype_params: dict | None, targets: Sequence[str], runs: int, attacks: Sequence[str],
                        confidence: float, aggregation: str, max_dropouts: int, others: str) -> None:
    """Every check of an audit's options that needs no data, at one boundary: :func:`run_audit` runs
    it first, and the CLI before anything is planned, charged or dry-run (a dry run of unusable
    options would promise an audit that cannot run)."""
    from dpfed_core.config import RunConfig, check_epsilon
    from dpfed_core.privacy.ledger import validate_budget

    ensure_prototype_methods()
    if not methods:
        raise ConfigError("choose at least one method to audit")
    registry = auditable_methods()
    for name in methods:
        if name not in registry:
            raise ConfigError(f"cannot audit {name!r}: it is not a prototype method or a summable release; "
                              f"choose from {', '.join(sorted(registry))}", param="methods")
    check_audit_params(methods, prototype_params)
    if others not in OTHERS:
        raise ConfigError(f"others must be one of {', '.join(OTHERS)}, got {others!r}", param="others")
    if aggregation not in ("secure", "none"):
        raise ConfigError(f"aggregation must be 'secure' or 'none', got {aggregation!r}", param="aggregation")
    epsilons = [float(e) for e in epsilons]
    if not epsilons or any(math.isnan(e) or e <= 0 for e in epsilons):
        raise ConfigError(f"every ε of the grid must be positive (or inf), got {epsilons}", param="epsilons")
    for e in epsilons:
        # the run's own range (a run at each ε is built later, after the audit is charged): the grid is
        # refused here, before anything is planned, charged or dry-run
        check_epsilon(e, param="epsilons")
        validate_budget(e, delta)
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must be in (0, 1), got {confidence}", param="confidence")
    if not isinstance(runs, (int, np.integer)) or runs < 4:
        raise ConfigError(f"runs must be a whole number ≥ 4, got {runs!r}", param="runs")
    # `projection` and `items` are attacks on a summable release only: an audit of a prototype method
    # refuses them here, before it is planned or charged, not once it runs
    prototype_methods = [m for m in methods if not is_summable(m)]
    names = list(dict.fromkeys([*ATTACK_LABELS, *([] if prototype_methods else SUMMABLE_ATTACKS)]))
    for a in attacks:
        if a in SUMMABLE_ATTACKS and a not in ATTACK_LABELS and prototype_methods:
            raise ConfigError(f"attack {a!r} applies to a summable release only, and {prototype_methods[0]!r} is a "
                              f"prototype method; choose from {', '.join(names)}", param="attacks")
        if a not in names:
            raise ConfigError(f"unknown attack {a!r}; choose from {', '.join(names)}", param="attacks")
    for spec in targets:
        if spec not in ("synthetic", "outlier", "typical") and not (spec.startswith("user:") and len(spec) > 5):
            raise ConfigError(f"unknown audit target {spec!r}; use synthetic, outlier, typical or user:<id>",
                              param="targets")
    RunConfig(method=methods[0], k=k, max_dropouts=max_dropouts)  # k and d by the one rule of a run


def _job_seed(seed: int, *parts) -> np.random.SeedSequence:
    """A SeedSequence per (method, ε, target): results do not depend on which other jobs run."""
    key = zlib.crc32("|".join(str(p) for p in parts).encode())
    return np.random.SeedSequence([int(seed), key])


def _fast_context():
    """Speed settings for hundreds of small releases: BLAS/OpenMP thread pools cost more than they
    save here (scikit-learn's KMeans is ~8× faster single-threaded on a clinic entity), and
    scikit-learn's per-call parameter validation is a quarter of a k-means fit's time."""
    import contextlib

    stack = contextlib.ExitStack()
    try:
        from threadpoolctl import threadpool_limits

        stack.enter_context(threadpool_limits(1))
    except Exception:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    try:
        import sklearn

        stack.enter_context(sklearn.config_context(assume_finite=True, skip_parameter_validation=True))
    except Exception:  # pragma: no cover
        pass
    return stack


#: Prototype methods that run faster on a dense matrix (scikit-learn's KMeans: ~2× on small
#: entities); the others get the sparse CSR matrix the protocol gives them.
_DENSE_OK = {"kmeans", "krandom"}
#: Densify only below this many cells (float64: 16 MB).
_DENSE_CELLS = 2_000_000



def audit_target(X: sp.csr_matrix, target: AuditTarget, method: PrototypeMethod, runs: int,
                 seed: np.random.SeedSequence, *, attacks: Sequence[str] = DEFAULT_ATTACKS,
                 with_v: bool = False, rank: int = 10, lam: float = 0.1, v_max_iter: int = 50,
                 confidence: float = 0.95, fprs: Sequence[float] = DEFAULT_FPRS,
                 entity: str = "entity", progress: ProgressFn | None = None) -> dict:
    """Audit one method on one target: ``runs`` releases without and ``runs`` with the target.

    Every release gets its own Generator from ``seed.spawn``; run i of each class uses the i-th
    child of that class, so OUT and IN runs are independent. Runs 0..runs/2−1 of each class are the
    calibration half (threshold choice, LR fit), the rest the evaluation half.

    Returns a dict with the claimed ``epsilon``/``delta`` (from the ledger of a release), and per
    attack ``auc``, ``tpr_at_fpr`` ({"0.01": …}), ``epsilon_lb`` and its details, ``roc``.
    """
    if runs < 4:
        raise ConfigError(f"an audit needs at least 4 runs per class, got {runs}", param="runs")
    attacks = list(dict.fromkeys([*attacks, *(["v-residual"] if with_v else [])]))
    for a in attacks:
        if a not in ATTACK_LABELS:
            raise ConfigError(f"unknown attack {a!r}; choose from {', '.join(ATTACK_LABELS)}", param="attacks")
    progress = progress or _noop
    D0, D1 = neighbouring_pair(X, target)
    if getattr(method, "name", "") in _DENSE_OK and D1.shape[0] * D1.shape[1] <= _DENSE_CELLS:
        D0, D1 = D0.toarray(), D1.toarray()
    x = target.row
    private = bool(getattr(method, "private", False))
    children = seed.spawn(2 * runs)
    feats = np.zeros((2, runs, 5))
    vres = np.zeros((2, runs))
    verbatim = np.zeros((2, runs), dtype=bool)
    sent = np.zeros((2, runs), dtype=np.int64)  # prototypes a release held: k, or fewer (see prototypes_note)
    claimed = None
    t0 = time.perf_counter()
    with _fast_context():
        for i in range(runs):
            for label, D in ((0, D0), (1, D1)):
                rng = np.random.default_rng(children[label * runs + i])
                ledger = PrivacyLedger(getattr(method, "epsilon", math.inf) if private else math.inf,
                                       getattr(method, "delta", 0.0) if private else 0.0)
                rel = method.release(D, rng, ledger.for_entity(entity))
                if claimed is None:
                    claimed = ledger.guarantee()
                feats[label, i, :4] = release_features(rel.prototypes, x)
                # every released quantity is attacked: the cluster sizes too (IN has one more user)
                feats[label, i, 4] = 0.0 if rel.counts is None else float(np.sum(rel.counts))
                verbatim[label, i] = _is_verbatim(rel.prototypes, x)
                sent[label, i] = rel.prototypes.shape[0]
                if with_v:
                    vres[label, i] = _v_residual(rel.prototypes, x, rank, lam, rng, v_max_iter)
            progress("audit_run", done=i + 1, total=runs)
    seconds = time.perf_counter() - t0
    eps_claim, delta_claim = claimed if claimed is not None else (math.inf, 0.0)
    half = runs // 2
    scores = {"distance": -feats[..., 0], "counts": feats[..., 4]}
    if with_v:
        scores["v-residual"] = -vres
    results = {}
    for a in attacks:
        if a == "lr":
            s_cal = None
            Z_ev = np.vstack([feats[0, half:], feats[1, half:]])
            lr = _gaussian_lr(feats[0, :half], feats[1, :half], Z_ev)
            ev_out, ev_in = lr[: runs - half], lr[runs - half:]
            # the LR is fitted on the calibration half, so its threshold is chosen on a split of the
            # evaluation half (first half of it chooses, second half certifies)
            q = (runs - half) // 2
            eps = empirical_epsilon(ev_out[:q], ev_in[:q], ev_out[q:], ev_in[q:], delta_claim, confidence)
            roc_out, roc_in = ev_out, ev_in
            n_cert = runs - half - q
        else:
            s = scores[a]
            s_cal = (s[0, :half], s[1, :half])
            eps = empirical_epsilon(*s_cal, s[0, half:], s[1, half:], delta_claim, confidence)
            roc_out, roc_in = s[0], s[1]  # parameter-free: the ROC uses every run
            n_cert = runs - half
        fpr, tpr, _ = roc_curve(roc_out, roc_in)
        rf, rt = downsample_roc(fpr, tpr)
        results[a] = {
            "attack": a,
            "label": ATTACK_LABELS[a],
            "auc": roc_auc(roc_out, roc_in),
            "tpr_at_fpr": {f"{f:g}": tpr_at_fpr(fpr, tpr, f, roc_out.size) for f in fprs},
            **eps,
            "n_roc_per_class": int(roc_out.size),
            "n_certify_per_class": int(n_cert),
            "max_certifiable_epsilon": max_certifiable_epsilon(n_cert, delta_claim, confidence),
            "roc": {"fpr": rf, "tpr": rt},
        }
    return {
        "epsilon": float(eps_claim), "delta": float(delta_claim), "private": bool(private and math.isfinite(eps_claim)),
        "seconds": seconds, "runs": runs,
        # the target's exact row among the prototypes: how k-random (and a k-means singleton
        # cluster) expose a user — rarely, but completely
        "verbatim_in": float(verbatim[1].mean()), "verbatim_out": float(verbatim[0].mean()),
        "prototypes_sent": [int(sent.min()), int(sent.max())],
        "feature_means": {"out": feats[0].mean(0).tolist(), "in": feats[1].mean(0).tolist(),
                          "names": ["nearest_distance", "max_cosine", "max_projection", "sum_projection",
                                    "total_count"]},
        "attacks": results,
    }


# =============================================================================== the grid
def run_audit(
    dataset: FederatedDataset,
    entity: str | int = 0,
    *,
    methods: Iterable[str] = DEFAULT_METHODS,
    epsilons: Iterable[float] = DEFAULT_EPSILONS,
    delta: float = 1e-6,
    k: int = 10,
    prototype_params: dict | None = None,
    targets: Sequence[str] = DEFAULT_TARGETS,
    runs: int = 200,
    attacks: Sequence[str] = DEFAULT_ATTACKS,
    with_v: bool = False,
    rank: int = 10,
    lam: float = 0.1,
    confidence: float = 0.95,
    fprs: Sequence[float] = DEFAULT_FPRS,
    seed: int = 0,
    X: sp.spmatrix | None = None,
    aggregation: str = "none",
    max_dropouts: int = 0,
    others: str = "zeros",
    power_factor: float | None = None,
    progress: ProgressFn | None = None,
) -> dict:
    """Membership-inference audit of one entity's round-1 release for several methods.

    Parameters
    ----------
    dataset : the federated dataset; the audit uses the rows of ``entity`` (of ``X`` if given, e.g.
        a split's training matrix of the same shape).
    methods : prototype methods; private ones are audited at every ε of ``epsilons`` (``inf`` = the
        non-private limit), non-private ones once (their claim is ε = ∞).
    delta : δ per entity for private methods. k : prototypes per entity.
    prototype_params : extra keyword arguments of the methods (e.g. ``{"support": 20}``); keys a
        non-private method does not take are ignored for it.
    targets : see :func:`~dpfed_core.audit.targets.make_targets`. runs : releases per class (IN and OUT) per job.
    attacks : ``"distance"``, ``"lr"``; ``with_v`` adds ``"v-residual"`` (server NMF with
        ``rank``, ``lam`` per run: slower).
    confidence : family-wise level of the ε lower bounds: each of the F = targets × attacks tests of
        a (method, ε) is certified at 1 − (1 − confidence)/F (Bonferroni), so the *largest* bound of
        the family — the one the verdict uses — holds with probability ≥ ``confidence``.
        fprs : FPRs for TPR@FPR.
    seed : seeds every job's SeedSequence (with a hash of the job's method, ε and target).
    aggregation, max_dropouts : trust model of the summable methods (``"secure"``: the attacker sees
        the sums; ``"none"``: the entity's own shares), as ``--aggregation`` / ``--max-dropouts`` of
        the run (default ``"none"``, the run's default).
    others : how the other entities of a summable audit are simulated (:data:`OTHERS`): ``"zeros"``
        empty entities (default: their shares are noise only, the audit reads only the audited
        entity's rows; the attack scores are shift-invariant, so the others' exact sums, fixed in
        both classes, would not change them — except through a stage's public item choice), or
        ``"data"`` their own rows of ``X`` (reads every entity's rows: charge them all).
    power_factor : if given, every private summable (method, ε) also gets a :func:`power_check`
        (noise shrunk by this factor, first target, same runs): the summary row's ``power``; a
        "consistent" verdict whose power check failed reads "inconclusive" (the harness could not
        have seen a broken mechanism).
    progress : ``progress("audit_step", done=, total=, method=, epsilon=, target=)`` per run.

    Returns
    -------
    The audit document (JSON-ready after :func:`dpfed_core.evaluation.experiments.write_json`): ``config``,
    ``dataset``, ``entity`` (name and counts), ``targets``, ``results`` (one row per method × ε ×
    target × attack), ``summary`` (per method × ε: the largest ε lower bound and AUC over targets
    and attacks, and a verdict), ``version``, ``created``, ``timings``.
    """
    from dpfed_core.evaluation.experiments import dataset_summary

    methods = list(dict.fromkeys(methods))
    epsilons = [float(e) for e in epsilons]
    check_audit_options(methods, epsilons, delta=delta, k=k, prototype_params=prototype_params, targets=targets,
                        runs=runs, attacks=attacks, confidence=confidence, aggregation=aggregation,
                        max_dropouts=max_dropouts, others=others)
    if power_factor is not None and not (math.isfinite(float(power_factor)) and float(power_factor) > 1):
        # a factor ≤ 1 does not shrink the noise: its "power check" could not see a broken mechanism
        raise ConfigError(f"power_factor is the factor the noise is shrunk by, a finite number > 1 such as 50; "
                          f"got {power_factor!r}", param="power_factor")
    registry = auditable_methods()
    h = dataset.entity_index(entity)
    name = dataset.entity_names[h]
    sl = dataset.entity_slices()[h]
    Xall = dataset.X if X is None else sp.csr_matrix(X)
    if Xall.shape != dataset.X.shape:
        raise ConfigError(f"matrix has shape {Xall.shape}, the dataset {dataset.X.shape}")
    Xh = sp.csr_matrix(Xall[sl], dtype=np.float64)
    vmax = float(dataset.value_max)
    support = (prototype_params or {}).get("support") or min(Xh.shape[1], 64)
    tgts = make_targets(Xh, targets, vmax, int(support), dataset.user_ids[sl], entity=name)

    n_attacks = len(dict.fromkeys([*attacks, *(["v-residual"] if with_v else [])]))
    n_summable = len(dict.fromkeys(SUMMABLE_ATTACKS[a] for a in attacks if a in SUMMABLE_ATTACKS)) or 1

    def family_of(mname: str) -> int:
        # the tests whose maximum the verdict of one (method, ε) takes
        return len(tgts) * (n_summable if is_summable(mname) else n_attacks)

    family = max(family_of(m) for m in methods)
    per_test = 1.0 - (1.0 - confidence) / family
    if any(is_summable(m) for m in methods):
        slices = dataset.entity_slices()
        if others == "data":
            other_mats = [sp.csr_matrix(Xall[s2], dtype=np.float64) for j, s2 in enumerate(slices) if j != h]
        else:
            other_mats = [sp.csr_matrix((0, Xh.shape[1])) for j in range(len(slices)) if j != h]

    jobs = []
    for mname in methods:
        private = bool(getattr(registry[mname], "private", False))
        for eps in (epsilons if private else [math.inf]):
            jobs.append((mname, eps))
    total = len(jobs) * len(tgts) * runs
    progress = progress or _noop
    done = 0
    results = []
    powers: dict[tuple[str, float], dict] = {}
    t_start = time.perf_counter()
    for mname, eps in jobs:
        summable = is_summable(mname)
        fam = family_of(mname)
        job_conf = 1.0 - (1.0 - confidence) / fam
        method = _audit_method(mname, k, vmax, eps, delta, prototype_params, aggregation, max_dropouts)
        if summable and power_factor and math.isfinite(eps):
            powers[(mname, float(eps))] = power_check(
                Xh, other_mats, h, tgts[0], method, runs, _job_seed(seed, mname, eps, "power"),
                factor=float(power_factor), confidence=job_conf, entity=name)
        for tgt in tgts:
            def step(_event, *, done_base=done, **info):
                progress("audit_step", done=done_base + info["done"], total=total, method=mname,
                         epsilon=eps, target=tgt.name)

            if summable:
                res = audit_summable_target(Xh, other_mats, h, tgt, method, runs,
                                            _job_seed(seed, mname, eps, tgt.kind, tgt.user_id), attacks=attacks,
                                            confidence=job_conf, fprs=fprs, entity=name, progress=step)
            else:
                res = audit_target(Xh, tgt, method, runs, _job_seed(seed, mname, eps, tgt.kind, tgt.user_id),
                                   attacks=attacks, with_v=with_v, rank=rank, lam=lam,
                                   confidence=job_conf, fprs=fprs, entity=name, progress=step)
            done += runs
            for a, r in res["attacks"].items():
                results.append({"method": mname, "requested_epsilon": eps, "epsilon": res["epsilon"],
                                "delta": res["delta"], "private": res["private"], "target": tgt.name,
                                "target_kind": tgt.kind, "seconds": res["seconds"],
                                "verbatim_in": res["verbatim_in"], "verbatim_out": res["verbatim_out"],
                                **({"prototypes_sent": res["prototypes_sent"]} if "prototypes_sent" in res else {}),
                                "family_size": fam, "per_test_confidence": job_conf,
                                "release": res.get("release", "round-1 prototypes and cluster sizes"), **r})
    summary = summarize(results)
    for row in summary:
        pc = powers.get((row["method"], float(row["requested_epsilon"])))
        if pc is not None:
            row["power"] = pc
            if not pc["detected"] and row["verdict"] == "consistent":
                row["verdict"] = "inconclusive"
    return {
        "kind": "audit",
        "config": {"methods": methods, "epsilons": epsilons, "delta": delta, "k": k,
                   "prototype_params": dict(prototype_params or {}), "targets": list(targets),
                   "runs": int(runs), "attacks": list(attacks), "with_v": with_v, "rank": rank,
                   "lam": lam, "confidence": confidence, "fprs": list(fprs), "seed": seed,
                   "family_size": family, "per_test_confidence": per_test,
                   "multiplicity": "Bonferroni over targets × attacks (per method)",
                   "aggregation": aggregation, "max_dropouts": max_dropouts, "others": others,
                   "power_factor": power_factor,
                   "others_label": OTHERS[others] if any(is_summable(m) for m in methods) else None,
                   "noise": "simulation: noise reproducible, no privacy claim (the audit replays the "
                            "mechanism with seeded noise of the same distributions)"},
        "dataset": dataset_summary(dataset),
        "entity": {"name": name, "n_users": int(Xh.shape[0]), "n_items": int(Xh.shape[1]),
                   "n_interactions": int(Xh.nnz)},
        "targets": [t.describe() for t in tgts],
        "results": results,
        "summary": summary,
        "timings": {"total": time.perf_counter() - t_start},
        "version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def verdict_for(epsilon_lb: float, claimed: float, max_certifiable: float) -> str:
    """``"VIOLATION"`` if the certified lower bound exceeds the claim (a bug in the mechanism or its
    accounting); ``"inconclusive"`` if the claim is at or above the most these runs can certify
    (not even a perfect attack could have shown a violation); else ``"consistent"``;
    ``"non-private (no guarantee)"`` for ε = ∞."""
    if not math.isfinite(claimed):
        return "non-private (no guarantee)"
    if epsilon_lb > claimed:
        return "VIOLATION"
    if claimed >= max_certifiable:
        return "inconclusive"
    return "consistent"


def summarize(results: list[dict]) -> list[dict]:
    """Per (method, requested ε): the strongest attack over targets and attacks, and a verdict
    (:func:`verdict_for`). The bounds were certified with a Bonferroni correction over the family
    (targets × attacks), so the maximum is a valid lower bound at the audit's confidence.
    ``verbatim_in``: the largest fraction of IN runs whose release contained the target's exact row."""
    groups: dict[tuple[str, float], list[dict]] = {}
    for r in results:
        groups.setdefault((r["method"], float(r["requested_epsilon"])), []).append(r)
    out = []
    for (mname, eps), rows in groups.items():
        best = max(rows, key=lambda r: (r["epsilon_lb"], r["auc"]))
        top_auc = max(rows, key=lambda r: r["auc"] if r["auc"] == r["auc"] else -1)
        claimed = float(rows[0]["epsilon"])
        ceiling = max(r["max_certifiable_epsilon"] for r in rows)
        out.append({
            "method": mname, "requested_epsilon": eps, "epsilon": claimed, "delta": rows[0]["delta"],
            "private": rows[0]["private"],
            "epsilon_lb": best["epsilon_lb"], "epsilon_lb_target": best["target"],
            "epsilon_lb_attack": best["attack"],
            "max_certifiable_epsilon": ceiling,
            "family_size": rows[0].get("family_size", len(rows)),
            "auc": top_auc["auc"], "auc_target": top_auc["target"], "auc_attack": top_auc["attack"],
            # the largest over targets and attacks; NaN where no row's runs resolve that FPR
            "tpr_at_fpr": {f: _nanmax([r["tpr_at_fpr"][f] for r in rows]) for f in rows[0]["tpr_at_fpr"]},
            "verbatim_in": max(r.get("verbatim_in", 0.0) for r in rows),
            "verdict": verdict_for(best["epsilon_lb"], claimed, ceiling),
        })
    return out


def _nanmax(values) -> float:
    v = [float(x) for x in values if x is not None and x == x]
    return max(v) if v else math.nan


#: What an "n/r" TPR cell means, in every front end's table (CLI summary, report), before the setting that
#: changes it.
UNRESOLVED_TPR = ("n/r: not resolvable — the ROC runs per class are too few for that false-positive rate (one "
                  "false positive is already more); raise the runs per class")


def resolved(x) -> bool:
    """A TPR the audit's runs resolve (not None, not NaN)."""
    return x is not None and x == x


def _rate(x) -> str:
    """A rate for the summary table; "n/r" where the runs cannot resolve it (too few negatives)."""
    return f"{x:>7.3f}" if resolved(x) else f"{'n/r':>7s}"


def format_summary(doc: dict) -> str:
    """The summary table as plain text (CLI output)."""
    lines = [f"{'method':14s} {'claimed ε':>10s} {'ε lower bd':>10s} {'max':>6s} {'AUC':>6s} "
             f"{'TPR@1%':>7s} {'TPR@10%':>7s} {'verbatim':>8s}  verdict"]
    for r in doc["summary"]:
        claim = "∞" if not math.isfinite(float(r["epsilon"])) else f"{float(r['epsilon']):.3g}"
        t = r["tpr_at_fpr"]
        lines.append(f"{r['method']:14s} {claim:>10s} {r['epsilon_lb']:>10.3f} {r['max_certifiable_epsilon']:>6.2f} "
                     f"{r['auc']:>6.3f} {_rate(t.get('0.01'))} {_rate(t.get('0.1'))} "
                     f"{r.get('verbatim_in', 0.0):>8.1%}  {r['verdict']}")
    if any(not resolved(r["tpr_at_fpr"].get(f)) for r in doc["summary"] for f in ("0.01", "0.1")):
        lines.append(f"{UNRESOLVED_TPR} (--runs)")
    lines.append("AUC and TPR: the largest over the audit's targets and attacks")
    note = prototypes_note(doc)
    if note:
        lines.append(note)
    return "\n".join(lines)


def prototypes_note(doc: dict) -> str:
    """What a k above the audited entity's users meant, per prototype method ("" when k ≤ users): a
    non-private method sends one prototype per user, a DP one takes its k from a noisy count, so the
    audit did not release the k it was given."""
    if "config" not in doc or "entity" not in doc:  # a summary alone
        return ""
    k, n = int(doc["config"]["k"]), int(doc["entity"]["n_users"])
    if k <= n:
        return ""
    spans: dict[str, list[int]] = {}
    for r in doc["results"]:
        lo_hi = r.get("prototypes_sent")
        if lo_hi is not None:
            have = spans.setdefault(r["method"], list(lo_hi))
            have[0], have[1] = min(have[0], lo_hi[0]), max(have[1], lo_hi[1])
    if not spans:
        return ""
    sent = ", ".join(f"{m} {lo}" if lo == hi else f"{m} {lo}–{hi}" for m, (lo, hi) in spans.items())
    return (f"k = {k} is above the {n} users of entity {doc['entity']['name']!r}; prototypes a release held: "
            f"{sent}. Audit with the --k your runs use")


# =============================================================================== summable methods
#: Attacks on a summable release (a vector per stage), and the attack of the prototype audit each
#: one stands for in a requested attack list (``distance`` → ``projection``, ``counts`` → ``items``).
SUMMABLE_ATTACKS = {"distance": "projection", "lr": "lr", "counts": "items", "projection": "projection",
                    "items": "items"}
#: How the audit simulates the entities other than the audited one (their shares enter the secure
#: sum and the server's public result between stages).
OTHERS = {"data": "the other entities' own rows (the run's data)",
          "zeros": "empty entities (their shares are noise only)"}


def auditable_methods() -> dict:
    """Every method the audit can run, name → class: the prototype methods and the summable ones."""
    ensure_prototype_methods()
    from dpfed_core.federation.summable import SUMMABLE_METHODS

    return {**PROTOTYPE_METHODS, **SUMMABLE_METHODS}


from dpfed_core.federation.protocol import is_summable  # noqa: E402  (the one rule)


def audit_summable_target(X_h: sp.csr_matrix, others: Sequence[sp.csr_matrix], position: int,
                          target: AuditTarget, method, runs: int, seed: np.random.SeedSequence, *,
                          attacks: Sequence[str] = DEFAULT_ATTACKS, confidence: float = 0.95,
                          fprs: Sequence[float] = DEFAULT_FPRS, entity: str = "entity",
                          claim: tuple[float, float] | None = None,
                          progress: ProgressFn | None = None) -> dict:
    """Audit one summable method (``dp-popularity``, ``dp-cooccurrence``) on one target.

    Every run replays round 1 through the production code — the stage loop of the in-process runner
    (:func:`dpfed_core.federation.summable_protocol.run_stages`: each entity's ``share``, their sum, the
    server's ``combine`` whose public result the next stage's shares use) — with the audited entity
    (at ``position`` among the H entities) holding D₀ (OUT) or D₁ (IN) and the other entities
    holding ``others``. What the attacker sees depends on the trust model of ``method.aggregation``:

    * ``"none"``: the entity's own share of every stage (it carries the full noise σ);
    * ``"secure"``: only the sum over all entities of every stage (noise σ in total).

    The claim audited against is the ledger's guarantee for that trust model (the requested (ε, δ)
    against the server); ``claim`` overrides it (the power check: noise shrunk, claim kept).

    Attacks (higher score = "IN"): ``projection`` — Σ over stages of the release's projection on the
    target's contribution d_s = release(D₁) − release(D₀) of a noiseless twin of the method (for a
    popularity stage, the target's unit-norm row), weighted by ‖d_s‖/σ_s² (the Neyman–Pearson test
    when the rest of the data is known); ``items`` — the released coordinates where d_s ≠ 0 (the
    target's items), summed; ``lr`` — Gaussian likelihood ratio on the per-stage projections and
    item sums, fitted on the calibration half (as in :func:`audit_target`).
    """
    from dpfed_core.federation.summable_protocol import run_stages

    if runs < 4:
        raise ConfigError(f"an audit needs at least 4 runs per class, got {runs}", param="runs")
    wanted = []
    for a in attacks:
        if a not in ATTACK_LABELS and a not in SUMMABLE_ATTACKS:
            raise ConfigError(f"unknown attack {a!r}; choose from {', '.join(ATTACK_LABELS)}", param="attacks")
        if a in SUMMABLE_ATTACKS:  # v-residual needs prototypes: not applicable to a summable release
            wanted.append(SUMMABLE_ATTACKS[a])
    attacks = list(dict.fromkeys(wanted)) or ["projection"]
    progress = progress or _noop
    D0, D1 = neighbouring_pair(X_h, target)
    stages = tuple(method.stages)
    H = len(others) + 1
    secure = method.aggregation == "secure"
    twin = method.__class__(**{**method.get_params(), "epsilon": math.inf})
    twin_cache: dict = {}

    def direction(stage: str, public: dict) -> np.ndarray:
        items = public.get("items")
        key = (stage, None if items is None else np.asarray(items).tobytes())
        if key not in twin_cache:
            led = PrivacyLedger(math.inf, 0.0).for_entity(entity)
            r1 = twin.share(D1, np.random.default_rng(0), led, H, stage=stage, public=public).values
            r0 = twin.share(D0, np.random.default_rng(0), led, H, stage=stage, public=public).values
            twin_cache[key] = r1 - r0
        return twin_cache[key]

    children = seed.spawn(2 * runs)
    n_st = len(stages)
    feats = np.zeros((2, runs, 2 * n_st))  # per stage: projection on d̂_s, sum at d_s's support
    combo = np.zeros((2, runs))
    claimed = None
    t0 = time.perf_counter()
    with _fast_context():
        for i in range(runs):
            for label, D in ((0, D0), (1, D1)):
                rngs = np.random.default_rng(children[label * runs + i]).spawn(H + 1)
                private = math.isfinite(float(method.epsilon))
                ledger = PrivacyLedger(method.epsilon if private else math.inf, method.delta if private else 0.0)
                names = [f"other {j}" for j in range(H)]
                names[position] = entity
                mats = list(others[:position]) + [D] + list(others[position:])
                _, sums = run_stages(method, mats, rngs[:H], [ledger.for_entity(n) for n in names], rngs[-1],
                                     final_combine=False)
                if claimed is None:
                    claimed = (ledger.spent(entity) if private else (math.inf, 0.0))
                score = 0.0
                for s, stage in enumerate(stages):
                    shares = sums[(stage, "shares")]
                    if secure:
                        rel = sums[stage]
                        sd = math.sqrt(sum(sh.sigma_share ** 2 for sh in shares))
                    else:
                        rel = shares[position].values
                        sd = shares[position].sigma_share
                    d = direction(stage, sums[(stage, "public")])
                    nd = float(np.linalg.norm(d))
                    proj = float(rel @ d) / nd if nd > 0 else 0.0
                    feats[label, i, 2 * s] = proj
                    feats[label, i, 2 * s + 1] = float(rel[d != 0].sum())
                    score += proj * (nd / sd ** 2 if sd > 0 else 1.0)
                combo[label, i] = score
            progress("audit_run", done=i + 1, total=runs)
    seconds = time.perf_counter() - t0
    eps_claim, delta_claim = claim if claim is not None else claimed
    half = runs // 2
    scores = {"projection": combo, "items": feats[..., 1::2].sum(-1)}
    results = {}
    for a in attacks:
        if a == "lr":
            Z_ev = np.vstack([feats[0, half:], feats[1, half:]])
            lr = _gaussian_lr(feats[0, :half], feats[1, :half], Z_ev)
            ev_out, ev_in = lr[: runs - half], lr[runs - half:]
            q = (runs - half) // 2
            eps = empirical_epsilon(ev_out[:q], ev_in[:q], ev_out[q:], ev_in[q:], delta_claim, confidence)
            roc_out, roc_in, n_cert = ev_out, ev_in, runs - half - q
        else:
            s = scores[a]
            eps = empirical_epsilon(s[0, :half], s[1, :half], s[0, half:], s[1, half:], delta_claim, confidence)
            roc_out, roc_in, n_cert = s[0], s[1], runs - half
        fpr, tpr, _ = roc_curve(roc_out, roc_in)
        rf, rt = downsample_roc(fpr, tpr)
        results[a] = {
            "attack": a, "label": SUMMABLE_ATTACK_LABELS[a], "auc": roc_auc(roc_out, roc_in),
            "tpr_at_fpr": {f"{f:g}": tpr_at_fpr(fpr, tpr, f, roc_out.size) for f in fprs}, **eps,
            "n_roc_per_class": int(roc_out.size), "n_certify_per_class": int(n_cert),
            "max_certifiable_epsilon": max_certifiable_epsilon(n_cert, delta_claim, confidence),
            "roc": {"fpr": rf, "tpr": rt},
        }
    names_f = [f"{kind}_{stage}" for stage in stages for kind in ("projection", "item_sum")]
    return {
        "epsilon": float(eps_claim), "delta": float(delta_claim),
        "private": bool(math.isfinite(eps_claim)), "seconds": seconds, "runs": runs,
        "verbatim_in": 0.0, "verbatim_out": 0.0,
        "release": ("the sum over all entities of every stage (secure aggregation: the server sees only the sum)"
                    if secure else "the entity's own share of every stage (no secure aggregation: full noise)"),
        "feature_means": {"out": feats[0].mean(0).tolist(), "in": feats[1].mean(0).tolist(), "names": names_f},
        "attacks": results,
    }


SUMMABLE_ATTACK_LABELS = {
    "projection": "projection of the release on the target's contribution (noise-weighted over stages)",
    "items": "released values at the target's items (summed)",
    "lr": "likelihood ratio (Gaussian, shadow-fitted) on per-stage projections and item sums",
}


def power_check(X_h: sp.csr_matrix, others: Sequence[sp.csr_matrix], position: int, target: AuditTarget,
                method, runs: int, seed: np.random.SeedSequence, *, factor: float = 50.0,
                confidence: float = 0.95, entity: str = "entity") -> dict:
    """Can this harness catch a broken mechanism? The same audit with the noise shrunk — the method
    run at ε·``factor`` (σ roughly ``factor`` times smaller) — but the claim of the method at its own
    ε. A working harness reports a lower bound above that claim (``"detected": True``); if it does
    not, a "consistent" verdict of the real audit means nothing."""
    from dpfed_core.federation.summable import make_summable_method

    led = PrivacyLedger(method.epsilon, method.delta)
    rng = np.random.default_rng(0)
    H = len(others) + 1
    honest = make_summable_method(method.name, **method.get_params())
    mats = list(others[:position]) + [X_h] + list(others[position:])
    from dpfed_core.federation.summable_protocol import run_stages

    run_stages(honest, mats, rng.spawn(H), [led.for_entity(entity if j == position else f"other {j}")
                                            for j in range(H)], rng, final_combine=False)
    claim = led.spent(entity)
    shrunk = make_summable_method(method.name, **{**method.get_params(), "epsilon": float(method.epsilon) * factor})
    res = audit_summable_target(X_h, others, position, target, shrunk, runs, seed, confidence=confidence,
                                claim=claim, entity=entity)
    best = max(res["attacks"].values(), key=lambda r: r["epsilon_lb"])
    return {"claimed_epsilon": claim[0], "noise_factor": 1.0 / factor, "epsilon_lb": best["epsilon_lb"],
            "attack": best["attack"], "max_certifiable_epsilon": best["max_certifiable_epsilon"],
            "detected": bool(best["epsilon_lb"] > claim[0])}
