"""The statistics of a membership audit: from the attack scores of the OUT and IN releases to an
empirical ε lower bound with a stated confidence, and the ROC that shows the attack.

(ε, δ)-DP bounds every test's TPR ≤ e^ε·FPR + δ and TNR ≤ e^ε·FNR + δ; the rates are replaced by
Clopper–Pearson bounds, the threshold is chosen on calibration runs and certified on evaluation
runs (:func:`empirical_epsilon`), and no audit can certify more than a perfect test would
(:func:`max_certifiable_epsilon`). The full argument is in :mod:`dpfed_core.audit.membership`,
which runs the attacks; this module only counts, so each bound can be checked on its own.
"""
from __future__ import annotations

import math

import numpy as np

from dpfed_core.audit.defaults import ROC_POINTS


def clopper_pearson(successes, trials, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper–Pearson interval for binomial proportions (vectorised).

    Parameters
    ----------
    successes : array of int — observed successes x (0 ≤ x ≤ n).
    trials : int or array of int — n.
    confidence : two-sided level c; each end is a one-sided bound at level (1 + c)/2.

    Returns
    -------
    (lo, hi) : arrays of the same shape as ``successes`` (lo = 0 when x = 0, hi = 1 when x = n).
    """
    x = np.asarray(successes, dtype=float)
    n = np.broadcast_to(np.asarray(trials, dtype=float), x.shape)
    a = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        from scipy import stats  # deferred: scipy.stats costs a third of a CLI start-up

        lo = np.where(x > 0, stats.beta.ppf(a, np.maximum(x, 1e-300), n - x + 1), 0.0)
        hi = np.where(x < n, stats.beta.ppf(1 - a, x + 1, np.maximum(n - x, 1e-300)), 1.0)
    return np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=1.0)


def epsilon_bounds(tp, fn, fp, tn, delta: float = 0.0, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Empirical ε lower bounds of tests given their confusion counts (vectorised over tests).

    A test says "IN" on tp of the IN runs (fn missed) and on fp of the OUT runs (tn correct).
    Returns ``(eps_in, eps_out)``: ln((TPR_lo − δ)/FPR_hi) and the symmetric
    ln((TNR_lo − δ)/FNR_hi), with Clopper–Pearson bounds at two-sided ``confidence`` (so the lower
    bound of the numerator and the upper bound of the denominator hold together with probability
    ≥ ``confidence``). Entries are −inf where the numerator is ≤ 0; never NaN.
    """
    tp, fn, fp, tn = (np.asarray(v, dtype=float) for v in (tp, fn, fp, tn))
    n_in, n_out = tp + fn, fp + tn
    tpr_lo, tpr_hi = clopper_pearson(tp, n_in, confidence)
    fpr_lo, fpr_hi = clopper_pearson(fp, n_out, confidence)
    tnr_lo = 1.0 - fpr_hi
    fnr_hi = 1.0 - tpr_lo
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.log(np.maximum(tpr_lo - delta, 0.0)) - np.log(fpr_hi)
        e2 = np.log(np.maximum(tnr_lo - delta, 0.0)) - np.log(fnr_hi)
    return np.nan_to_num(e1, nan=-np.inf), np.nan_to_num(e2, nan=-np.inf)


def max_certifiable_epsilon(n_per_class: int, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest ε lower bound any attack can certify with ``n_per_class`` evaluation runs per
    class: that of a perfect test (tp = n, fp = 0)."""
    e1, _ = epsilon_bounds(n_per_class, 0, 0, n_per_class, delta, confidence)
    return float(max(e1, 0.0))


def _confusion_at(scores_out: np.ndarray, scores_in: np.ndarray, thresholds: np.ndarray):
    """Counts of the tests "IN iff score ≥ t" for each threshold t (vectorised by sorting)."""
    so, si = np.sort(scores_out), np.sort(scores_in)
    tp = si.size - np.searchsorted(si, thresholds, side="left")
    fp = so.size - np.searchsorted(so, thresholds, side="left")
    return tp, si.size - tp, fp, so.size - fp


def roc_curve(scores_out: np.ndarray, scores_in: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ROC of the tests "IN iff score ≥ t" over every distinct score (plus +inf), FPR ascending.

    Returns (fpr, tpr, thresholds)."""
    so = np.asarray(scores_out, dtype=float)
    si = np.asarray(scores_in, dtype=float)
    thr = np.unique(np.concatenate([so, si]))[::-1]
    thr = np.concatenate([[np.inf], thr])
    tp, fn, fp, tn = _confusion_at(so, si, thr)
    return fp / max(so.size, 1), tp / max(si.size, 1), thr


def roc_auc(scores_out: np.ndarray, scores_in: np.ndarray) -> float:
    """Area under the ROC curve = P(score_IN > score_OUT) + ½·P(tie) (Mann–Whitney U / n₀n₁)."""
    so = np.asarray(scores_out, dtype=float)
    si = np.asarray(scores_in, dtype=float)
    if so.size == 0 or si.size == 0:
        return math.nan
    from scipy.stats import rankdata  # deferred (see clopper_pearson)

    ranks = rankdata(np.concatenate([so, si]))  # average ranks handle ties as ½
    u = ranks[so.size:].sum() - si.size * (si.size + 1) / 2.0
    return float(u / (so.size * si.size))


def tpr_at_fpr(fpr: np.ndarray, tpr: np.ndarray, target: float, n_out: int | None = None) -> float:
    """Largest TPR among tests with FPR ≤ ``target`` (the ROC's operating point at low FPR). NaN when
    ``n_out`` negative runs cannot resolve ``target`` (one false positive is already 1/n_out > target:
    the value would be the TPR at FPR 0, not at ``target``)."""
    if n_out is not None and target * int(n_out) < 1:
        return math.nan
    ok = fpr <= target + 1e-12
    return float(tpr[ok].max()) if ok.any() else 0.0


def empirical_epsilon(cal_out: np.ndarray, cal_in: np.ndarray, ev_out: np.ndarray, ev_in: np.ndarray,
                      delta: float = 0.0, confidence: float = 0.95) -> dict:
    """ε lower bound with the threshold chosen on calibration runs and certified on evaluation runs.

    The threshold and the form (``"tpr/fpr"`` or ``"tnr/fnr"``) maximise the bound on the
    calibration scores; the evaluation scores then give the reported bound (floored at 0), so the
    choice does not bias it. Returns ``{"epsilon_lb", "form", "threshold", "tp", "fn", "fp", "tn"}``
    (counts on the evaluation runs)."""
    cal_out, cal_in = np.asarray(cal_out, float), np.asarray(cal_in, float)
    ev_out, ev_in = np.asarray(ev_out, float), np.asarray(ev_in, float)
    thr = np.unique(np.concatenate([cal_out, cal_in]))
    if thr.size == 0:
        thr = np.array([0.0])
    # candidate thresholds halfway between consecutive calibration scores generalise better than
    # the scores themselves (a test at an observed score is tied with it)
    mids = np.concatenate([[thr[0] - 1.0], (thr[:-1] + thr[1:]) / 2.0, [thr[-1] + 1.0]])
    e1, e2 = epsilon_bounds(*_confusion_at(cal_out, cal_in, mids), delta, confidence)
    i1, i2 = int(np.argmax(e1)), int(np.argmax(e2))
    form, t = ("tpr/fpr", mids[i1]) if e1[i1] >= e2[i2] else ("tnr/fnr", mids[i2])
    tp, fn, fp, tn = (int(v[0]) for v in _confusion_at(ev_out, ev_in, np.array([t])))
    f1, f2 = epsilon_bounds(tp, fn, fp, tn, delta, confidence)
    eps = float(f1 if form == "tpr/fpr" else f2)
    return {"epsilon_lb": max(eps, 0.0), "form": form, "threshold": float(t),
            "tp": tp, "fn": fn, "fp": fp, "tn": tn}


def downsample_roc(fpr: np.ndarray, tpr: np.ndarray, n: int = ROC_POINTS) -> tuple[list, list]:
    """At most about ``n`` points of a ROC curve (for a JSON document and a plot), the step shape kept."""
    if fpr.size <= n:
        return fpr.tolist(), tpr.tolist()
    grid = np.linspace(0, 1, n)
    # keep the step shape: the best TPR reachable at each FPR on the grid, plus both ends
    idx = np.searchsorted(fpr, grid, side="right") - 1
    idx = np.clip(idx, 0, fpr.size - 1)
    return np.concatenate([[0.0], grid, [1.0]]).tolist(), np.concatenate([[tpr[0]], tpr[idx], [1.0]]).tolist()
