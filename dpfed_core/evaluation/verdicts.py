"""Verdicts and crossings: the one place that says whether a federation beat the entities alone.

The CLI (``run --compare``, ``sweep``), the dashboard (Federate advice, Evaluate, Trade-off) and the
HTML report all call these functions, so they can never say different things about the same numbers
. Every verdict is stated against :data:`REFERENCE` — ``local``, each
entity's own model blended with its own popularity, the strongest thing an entity can do alone —
with ``individual`` (its own model only) beside it. Every sentence names the metric
and the observation mode (zero / observed), because a crossing in one mode says nothing of the other.

An entity whose metric is undefined (no test users, so NaN) is counted as *no test users*, never as a
win or a loss.

Sentences are plain text (no Markdown): the CLI prints them as they are; the dashboard may bold them.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import LOWER_IS_BETTER, crossing_report

#: The reference every verdict is stated against, and the one shown beside it.
REFERENCE = "local"
VERDICT_BASELINES: tuple[str, ...] = ("local", "individual")
#: How each baseline reads in a sentence.
BASELINE_NAMES = {
    "local": "each entity alone (own model + own popularity)",
    "individual": "each entity's own model only",
    "dp-popularity": "the DP popularity list",
}
METRIC_SHORT = {
    "train_rmse": "train RMSE", "test_rmse": "test RMSE", "mar": "MAR",
    "precision_at_10": "P@10", "recall_at_10": "R@10", "ndcg_at_10": "NDCG@10",
}
#: A per-entity difference below this fraction of the baseline's value is a tie (one run, one split).
TIE_FRACTION = 0.005
#: The headline word needs its majority beyond chance, at this level. One run: a two-sided exact sign
#: test over the entities that are better or worse (one entity of a handful of test users against none
#: is a coin flip, not a verdict). Over seeds, where each entity is better or worse only beyond its 95 %
#: t interval (2.5 % a side by chance): more entities on the majority's side than that rate gives among
#: the entities compared, either side counted (one or three of 30 beyond their interval is chance; four
#: are not).
SIGN_TEST_LEVEL = 0.05
#: The rate at which an entity with no effect falls beyond its two-sided 95 % interval on one side.
ONE_SIDE_FALSE_RATE = 0.025


def format_epsilon(eps: float | str | None) -> str:
    """ε for people, as the CLI and the report say it (:func:`~dpfed_core.privacy.statement.epsilon_that_holds`:
    rounded up, never below what holds), ∞ for the non-private limit."""
    from dpfed_core.privacy.statement import epsilon_that_holds

    return "—" if eps is None else epsilon_that_holds(float(eps))


def metric_at(metric: str, labels: dict[str, str] | None = None) -> str:
    """A metric's label from ``labels`` (default :data:`METRIC_SHORT`), a ranking metric at its own N
    included (``precision_at_5`` → "P@5"); an unknown name as it is."""
    labels = METRIC_SHORT if labels is None else labels
    if metric in labels:
        return labels[metric]
    base, sep, n = metric.rpartition("_at_")
    if sep and n.isdigit() and f"{base}_at_10" in labels:
        return labels[f"{base}_at_10"].replace("@10", f"@{n}")
    return metric


def better_word(metric: str) -> str:
    return "lower is better" if metric in LOWER_IS_BETTER else "higher is better"


def is_defined(x: object) -> bool:
    """A metric value that can be compared: a finite number (an entity without test users has None/NaN)."""
    return x is not None and isinstance(x, (int, float, np.floating)) and not isinstance(x, bool) \
        and math.isfinite(float(x))


_finite = is_defined


def _difference(fed: float, base: float, metric: str) -> float:
    """> 0 means the federation is better."""
    return (base - fed) if metric in LOWER_IS_BETTER else (fed - base)


def _is_tie(d, base):
    """A difference ``d`` too small to count against a baseline of value ``base`` (scalars or arrays):
    below :data:`TIE_FRACTION` of the baseline's value."""
    return np.abs(d) < TIE_FRACTION * np.maximum(np.abs(base), 1e-12)


def compare_one(fed: float | None, base: float | None, metric: str = "mar") -> str | None:
    """One entity, one run: "better", "worse" or "tie" for the federation against a baseline on
    ``metric`` — the rule :func:`entity_verdict` counts with (a tie is a difference below
    :data:`TIE_FRACTION` of the baseline's value) —, None when either value is undefined."""
    if not (_finite(fed) and _finite(base)):
        return None
    d = _difference(float(fed), float(base), metric)
    if _is_tie(d, float(base)):
        return "tie"
    return "better" if d > 0 else "worse"


def sign_test_p(better: int, worse: int) -> float:
    """Two-sided exact sign test of ``better`` against ``worse`` entities (ties left out): the chance of
    a split at least this uneven when each entity is as likely to fall on either side."""
    n = int(better) + int(worse)
    if n == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(max(int(better), int(worse)), n, 0.5).pvalue)


def beyond_interval_p(count: int, n: int) -> float:
    """The chance that ``count`` or more of ``n`` entities with no effect fall beyond their 95 % interval
    on one given side (each with :data:`ONE_SIDE_FALSE_RATE`)."""
    from scipy.stats import binom

    return float(binom.sf(int(count) - 1, int(n), ONE_SIDE_FALSE_RATE)) if count > 0 else 1.0


def _word(r: dict, over_seeds: bool = False) -> str:
    """The headline word of one baseline's counts: a majority beyond chance (:data:`SIGN_TEST_LEVEL`),
    or "even" — neither better nor worse for more entities than chance gives. ``over_seeds``: the counts
    are of entities beyond their own interval (:func:`beyond_interval_p`); else of one run's differences
    (:func:`sign_test_p`)."""
    if r["better"] == r["worse"]:
        return "even"
    side = max(r["better"], r["worse"])
    # over seeds the side is the one the counts show: either side may reach it by chance (both tails)
    p = (2 * beyond_interval_p(side, r.get("tested", r["better"] + r["worse"] + r["tie"])) if over_seeds
         else sign_test_p(r["better"], r["worse"]))
    if p >= SIGN_TEST_LEVEL:
        return "even"
    return "better" if r["better"] > r["worse"] else "worse"


# ------------------------------------------------------------------------------ one run
def entity_verdict(docs: dict[str, dict], method: str, metric: str = "mar",
                   baselines: Iterable[str] = VERDICT_BASELINES) -> dict:
    """Per entity: does ``method`` beat each baseline on ``metric`` (one run, one split)?

    ``docs`` maps method → result document (all on the same split). Returns ``{"H", "eps", "metric",
    "mode", "no_test_users": [names], "baselines": {b: {"better", "worse", "tie", "word",
    "entities": {name: diff}}}}``; ``diff`` > 0 means the federation is better; a tie is |diff| below
    :data:`TIE_FRACTION` of the baseline's value; an entity without a finite metric (no test users)
    is in ``no_test_users`` and in no count.
    """
    doc = docs[method]
    fed = {e["name"]: e.get(metric) for e in doc["entities"]}
    undefined = [n for n, v in fed.items() if not _finite(v)]
    out = {"H": len(fed), "eps": doc["privacy"]["epsilon"], "metric": metric,
           "mode": doc.get("config", {}).get("mode", "zero"), "no_test_users": undefined, "baselines": {}}
    for b in baselines:
        if b not in docs or b == method:
            continue
        base = {e["name"]: e.get(metric) for e in docs[b]["entities"]}
        names = [n for n, v in fed.items() if _finite(v) and _finite(base.get(n))]
        if not names:
            out.setdefault("unjudged", []).append(b)
            continue
        f = np.array([fed[n] for n in names], dtype=float)
        w = np.array([base[n] for n in names], dtype=float)
        d = _difference(f, w, metric)
        tie = _is_tie(d, w)
        r = {"better": int(np.sum(~tie & (d > 0))), "worse": int(np.sum(~tie & (d < 0))),
             "tie": int(np.sum(tie)), "entities": dict(zip(names, d.tolist())),
             # the effect over every test user: the two runs' overall values
             "overall": (doc.get("overall", {}).get(metric), docs[b].get("overall", {}).get(metric))}
        r["word"] = _word(r)
        out["baselines"][b] = r
    return out


def _count_phrase(b: str, r: dict, H: int, inconclusive: str) -> str:
    name = BASELINE_NAMES.get(b, b)
    judged = r["better"] + r["worse"] + r["tie"]
    # entities without test users have no verdict: not counted among those judged (the tail names them)
    of = f"of {H} entities" if judged >= H else f"of the {judged} entities with test users"
    rest = f", {r['tie']} {inconclusive}" if r["tie"] else ""
    if r["word"] == "even" and r.get("over_seeds") and r["better"] == r["worse"] == 0:
        # no entity beyond its own interval: not "even" (a word the overall mean beside it may contradict),
        # but no entity-level finding either way
        return (f"neither better nor worse than {name} for any one entity beyond its own interval "
                f"({r['tie']} {of} {inconclusive})")
    if r["word"] == "even" and not r.get("over_seeds") and r["better"] != r["worse"] and \
            sign_test_p(r["better"] + r["worse"], 0) >= SIGN_TEST_LEVEL:
        # even all of them on one side would be within chance: "even" would read as a measured tie
        n = r["better"] + r["worse"]
        return (f"neither shown better nor worse than {name}: better for {r['better']} {of}, worse for "
                f"{r['worse']}{rest} — {n} entit{'y that differs is' if n == 1 else 'ies that differ are'} too few for a sign "
                "test at 5 % to tell a majority from chance")
    if r["word"] == "even":
        why = ("no more entities beyond their interval than chance gives, at 5 %" if r.get("over_seeds")
               else "no majority beyond chance, sign test at 5 %")
        return (f"even with {name}: better for {r['better']} {of}, worse for {r['worse']}{rest}"
                + (f" ({why})" if r["better"] != r["worse"] else ""))
    n = r["better"] if r["word"] == "better" else r["worse"]
    other = r["worse"] if r["word"] == "better" else r["better"]
    other_word = "worse" if r["word"] == "better" else "better"
    return f"{r['word']} than {name} for {n} {of} ({other_word} for {other}{rest})"


def _tail(v: dict) -> str:
    m = metric_at(v["metric"])
    nt = v.get("no_test_users") or []
    shown = ", ".join(map(str, nt[:5])) + (f" and {len(nt) - 5} more" if len(nt) > 5 else "")
    extra = f"; no test users (no verdict): {shown}" if nt else ""
    return f"{m}, {v.get('mode', 'zero')} mode{extra}"


def verdict_sentence(v: dict) -> str:
    """"At ε = 1 the federation is better than each entity alone (own model + own popularity) for 20
    of 30 entities (worse for 8, 2 tied); … (MAR, zero mode, held-out entries)." """
    m = metric_at(v["metric"])

    def overall(r: dict) -> str:
        f, b = r.get("overall") or (None, None)
        return f" — overall {m} {f:.4g} vs {b:.4g}" if _finite(f) and _finite(b) else ""

    parts = [_count_phrase(b, r, v["H"], "tied") + overall(r) for b, r in v["baselines"].items()]
    if not parts and v.get("unjudged"):
        names = " and ".join(BASELINE_NAMES.get(b, b) for b in v["unjudged"])
        return (f"No verdict against {names}: no entity has a test user on which both were measured "
                f"({_tail(v)}).")
    if not parts:
        return "Add local (and individual) to the comparison to get the verdict."
    return (f"At ε = {format_epsilon(v['eps'])} the federation is " + "; ".join(parts)
            + f" ({_tail(v)}; one run, held-out entries: no spread over seeds, so no difference here is "
              "evidence on its own — a sweep over seeds states one).")


def verdict_word(v: dict, baseline: str = REFERENCE) -> str | None:
    """"better" / "worse" / "even" against ``baseline``, or None when it was not compared."""
    r = v["baselines"].get(baseline)
    return None if r is None else r["word"]


# ------------------------------------------------------------------------------ over seeds
def sweep_entity_verdict(sweep_doc: dict, epsilon: float, metric: str = "mar",
                         baselines: Iterable[str] = VERDICT_BASELINES, method: str | None = None) -> dict | None:
    """Like :func:`entity_verdict` on a sweep at one ε, over seeds: an entity counts as better (worse)
    when the mean difference over its seeds is beyond its 95 % t interval (:func:`t_critical` standard
    errors); otherwise it is inconclusive. None when the sweep has no run of the method at that ε.

    ``sweep_doc`` needs ``config`` (``method``, ``mode``) and ``runs`` (``method``, ``epsilon``,
    ``seed``, ``entities``): the CLI's sweep document, or the dashboard-defaults benchmark's.
    """
    method = method or sweep_doc["config"]["method"]

    def per_entity(m: str, eps: float | None) -> dict[str, dict[int, float]]:
        out: dict[str, dict[int, float]] = {}
        for r in sweep_doc["runs"]:
            if r["method"] != m or (eps is not None and float(r["epsilon"]) != float(eps)):
                continue
            for e in r["entities"]:
                out.setdefault(e["name"], {})[r["seed"]] = e.get(metric)
        return out

    fed = per_entity(method, epsilon)
    if not fed:
        return None
    undefined = [n for n, s in fed.items() if not any(_finite(x) for x in s.values())]
    res = {"H": len(fed), "eps": float(epsilon), "metric": metric, "mode": sweep_doc["config"].get("mode", "zero"),
           "no_test_users": undefined, "seeds": len({r["seed"] for r in sweep_doc["runs"]}), "baselines": {}}
    for b in baselines:
        if b == method:
            continue
        base = per_entity(b, None)
        if not base:
            continue
        better = worse = tie = tested = 0
        for name, by_seed in fed.items():
            seeds = [s for s in by_seed if _finite(by_seed[s]) and _finite(base.get(name, {}).get(s))]
            if not seeds:
                continue
            d = np.array([_difference(by_seed[s], base[name][s], metric) for s in seeds], dtype=float)
            se = d.std(ddof=1) / math.sqrt(len(d)) if len(d) > 1 else math.inf
            tested += int(len(d) > 1)  # one usable seed can never pass its interval: no chance to count
            # beyond the two-sided 95 % t interval of its n − 1 degrees of freedom: "2 standard errors" would call
            # ~30 % of entities better or worse on 2 seeds when the two sides are drawn alike
            if len(d) > 1 and abs(d.mean()) > t_critical(len(d) - 1) * se:
                better += int(d.mean() > 0)
                worse += int(d.mean() < 0)
            else:
                tie += 1
        r = {"better": better, "worse": worse, "tie": tie, "entities": {}, "over_seeds": True, "tested": tested}
        r["word"] = _word(r, over_seeds=True)
        res["baselines"][b] = r
    return res


def t_critical(dof: int, level: float = 0.95) -> float:
    """The two-sided ``level`` critical value of Student's t with ``dof`` degrees of freedom (12.7 at 1,
    4.30 at 2, 2.78 at 4): how many standard errors a mean of dof + 1 seeds must be from 0."""
    from scipy import stats

    return float(stats.t.ppf(0.5 + level / 2, int(dof)))


def sweep_verdict_sentence(v: dict, n_seeds: int | None = None) -> str:
    n_seeds = n_seeds if n_seeds is not None else v.get("seeds", 0)
    parts = [_count_phrase(b, r, v["H"], "inconclusive") for b, r in v["baselines"].items()]
    if not parts:
        return "Add local (and individual) to the reference lines to get the verdict."
    if n_seeds < 2:  # one seed has no spread: no interval, no entity beyond it
        rule = ("better/worse = the entity's mean difference over seeds beyond its 95 % t interval, which one "
                "seed cannot give: run two or more seeds")
    else:
        rule = (f"better/worse = the entity's mean difference over {n_seeds} seeds beyond its 95 % t interval, "
                f"{t_critical(n_seeds - 1):.3g} standard errors at {n_seeds} seeds")
    return (f"At ε = {format_epsilon(v['eps'])} the federation is " + "; ".join(parts) + f" ({_tail(v)}; {rule}).")


# ------------------------------------------------------------------------------ crossings
def crossing(sweep_doc: dict, metric: str = "mar", baseline: str = REFERENCE) -> dict:
    """The crossing ε against ``baseline`` (:func:`~dpfed_core.evaluation.experiments.crossing_report`)
    with the observation mode in its sentence. ``{"epsilon", "meaningful", "text", "mode",
    "baseline"}``; ``text`` says why there is none when the sweep lacks the baseline."""
    mode = sweep_doc["config"].get("mode", "zero")
    try:
        rep = dict(crossing_report(sweep_doc, metric, baseline))
    except ConfigError as exc:
        return {"metric": metric, "epsilon": None, "meaningful": False, "baseline": baseline, "mode": mode,
                "missing": True, "text": str(exc)}
    rep["mode"] = mode
    if f"{mode} mode" not in rep["text"]:  # crossing_report states it already (once is enough)
        rep["text"] = f"{rep['text']} ({mode} mode)"
    return rep


def crossing_epsilon(sweep_doc: dict, metric: str = "mar", baseline: str = REFERENCE) -> float | None:
    """The crossing ε of :func:`crossing`, None when there is none or it cannot be stated."""
    return crossing(sweep_doc, metric, baseline)["epsilon"]


def pays_from_sentence(eps: float | None, metric: str = "mar", baseline: str = REFERENCE,
                       mode: str = "zero", effect: dict | None = None) -> str:
    """The headline "federation pays from ε ≈ X" against one baseline, with the mode and — given the
    crossing's ``effect`` (:func:`~dpfed_core.evaluation.experiments.paired_effects`) — the paired
    difference and its spread over seeds; "inconclusive" when that difference is inside its spread."""
    from dpfed_core.evaluation.experiments import effect_phrase

    m = METRIC_SHORT.get(metric, metric)
    name = BASELINE_NAMES.get(baseline, baseline)
    size = "" if effect is None else (f" At ε = {format_epsilon(effect['epsilon'])}: "
                                      f"{effect_phrase(effect, metric, m)}, paired by seed.")
    if eps is None:
        if effect is not None and effect["state"] == "inconclusive":
            return (f"Against {name}: inconclusive on this grid ({m}, {mode} mode): at the largest ε the "
                    "difference is inside its spread over seeds." + size)
        return f"Against {name}: federation does not pay at any ε on this grid ({m}, {mode} mode)." + size
    if math.isinf(eps):
        return (f"Against {name}: federation pays only without privacy (ε = ∞) on this grid ({m}, {mode} mode); "
                "at no finite ε tested is it better beyond the spread over seeds." + size + _weak_evidence(effect))
    return (f"Against {name}: federation pays from ε ≈ {format_epsilon(eps)} ({m}, {mode} mode; at that ε "
            "and every larger one on the grid, the paired difference beyond its spread over seeds)." + size
            + _weak_evidence(effect))


def _weak_evidence(effect: dict | None) -> str:
    """A caveat when the crossing's paired difference is beyond one sd (the crossing rule) but inside its
    95 % t interval — the interval the per-entity counts use, so the two would otherwise read as a "pays"
    headline over counts that say "inconclusive" (at 2 seeds the interval is 9 sd wide)."""
    if effect is None or effect.get("n", 0) < 2 or not np.isfinite(effect.get("sd", math.nan)):
        return ""
    n = int(effect["n"])
    half = t_critical(n - 1) * effect["sd"] / math.sqrt(n)
    if abs(effect["mean"]) > half:
        return ""
    return (f" Weak evidence: that difference is inside its 95 % t interval over {n} seeds (± {half:.2g}), the "
            "test the per-entity counts use; run more seeds to confirm it.")


def crossing_lines(sweep_doc: dict, metric: str = "mar",
                   baselines: Iterable[str] = VERDICT_BASELINES) -> list[str]:
    """One sentence per baseline the sweep has (local first, individual beside it): where federation
    starts to pay, or why that cannot be said (e.g. an RMSE in zero mode). The CLI prints these; the
    dashboard and the report show them."""
    out = []
    for b in baselines:
        rep = crossing(sweep_doc, metric, b)
        if rep.get("missing"):
            continue
        if not rep.get("meaningful", True):
            line = f"{METRIC_SHORT.get(metric, metric)}: {rep['text']}"
            if line not in out:  # the same reason against every baseline is said once
                out.append(line)
        else:
            out.append(pays_from_sentence(rep["epsilon"], metric, b, rep["mode"], rep.get("effect")))
    if not out:
        out.append("Add local (and individual) to the sweep's references to state where federation pays.")
    return out


def unproved_epsilons(doc: dict) -> list[float]:
    """The ε of a sweep's points whose shares carried too few grid steps of noise for the ε against the
    server to be proved (each point's ``privacy.rounding``; a point that records none — no secure sum, or
    a document written without the record — is not named)."""
    return sorted({float(r["epsilon"]) for r in doc.get("runs", [])
                   if ((r.get("privacy") or {}).get("rounding") or {}).get("covered") is False})


def unproved_sweep_text(doc: dict) -> str | None:
    """The sweep's warning when some of its points' shares carried too few grid steps of noise for the
    ε against the server to be proved (:func:`~dpfed_core.federation.summable_protocol.rounding_warning`),
    or None."""
    eps = unproved_epsilons(doc)
    if not eps:
        return None
    return (f"at ε = {', '.join(format_epsilon(e) for e in eps)} the shares of the secure sums carried too few grid "
            "steps of noise for the ε against the server to be proved (each share is rounded to the grid before "
            "the sum): what is proved against the server there is each entity's own-share ε, which a run at that "
            "ε states")
