"""Verdicts and crossings in one place: against local with individual beside
it, the observation mode in every sentence, an entity without test users never counted as a win."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpfed_core.evaluation import verdicts as vd


def _doc(values: dict[str, float | None], eps: float = 1.0, mode: str = "zero") -> dict:
    return {"entities": [{"name": n, "mar": v} for n, v in values.items()],
            "privacy": {"epsilon": eps}, "config": {"mode": mode}}


def test_format_epsilon_four_significant_digits_never_below_what_holds():
    from dpfed_core.privacy.statement import statement

    assert vd.format_epsilon(0.123456) == "0.1235"
    assert vd.format_epsilon(1.0) == "1"
    assert vd.format_epsilon(6.58123) == "6.582"       # rounded up: 6.581 would be below the ε that holds
    assert vd.format_epsilon(0.92031) == "0.9204" and vd.format_epsilon(0.9203) == "0.9203"
    # floating-point residue is no privacy loss: a ledger's 0.69999997 for 0.7, the float 0.1, 1 + 2^-52
    assert [vd.format_epsilon(x) for x in (0.69999997, 0.1, 1.0000000000000002, 9.99995)] == ["0.7", "0.1", "1", "10"]
    # the CLI's statement and the dashboard's ε are one text
    assert "(0.9204, 1e-06)-DP" in statement(0.92031, 1e-6, simulation=False)
    assert vd.format_epsilon(math.inf) == "∞" and vd.format_epsilon("inf") == "∞"
    assert vd.format_epsilon(None) == "—"


def test_one_entity_that_differs_is_said_in_the_singular():
    docs = {"dp": _doc({"A": 0.10, "B": 0.20, "C": 0.30}),
            "local": _doc({"A": 0.15, "B": 0.20, "C": 0.30}, math.inf)}
    text = vd.verdict_sentence(vd.entity_verdict(docs, "dp", "mar"))
    assert "better for 1 of 3 entities, worse for 0, 2 tied" in text, text
    assert "1 entity that differs is too few for a sign test at 5 %" in text, text


def test_entity_verdict_against_local_and_individual_and_nan_is_no_test_users():
    docs = {"dp": _doc({"A": 0.10, "B": 0.20, "C": None, "D": math.nan}),
            "local": _doc({"A": 0.15, "B": 0.10, "C": 0.2, "D": 0.3}, math.inf),
            "individual": _doc({"A": 0.30, "B": 0.30, "C": 0.2, "D": 0.3}, math.inf)}
    v = vd.entity_verdict(docs, "dp", "mar")
    assert list(v["baselines"]) == ["local", "individual"]  # local first, individual beside it
    loc = v["baselines"]["local"]
    assert (loc["better"], loc["worse"], loc["tie"]) == (1, 1, 0) and loc["word"] == "even"
    ind = v["baselines"]["individual"]
    # 2 of 2 is no majority beyond chance (sign test p = 0.5): "even", with the counts
    assert (ind["better"], ind["worse"]) == (2, 0) and ind["word"] == "even"
    assert v["no_test_users"] == ["C", "D"] and set(ind["entities"]) == {"A", "B"}
    text = vd.verdict_sentence(v)
    assert "zero mode" in text and "no test users (no verdict): C, D" in text
    # the entities without test users have no verdict: not counted among those judged
    # two entities cannot tell a majority from chance whichever side they fall on: no "even" read as a tie
    assert ("neither shown better nor worse than each entity alone (own model + own popularity): better for 1 of "
            "the 2 entities with test users, worse for 1") not in text
    assert ("neither shown better nor worse than each entity's own model only: better for 2 of the 2 entities with test "
            "users, worse for 0 — 2 entities that differ are too few for a sign test at 5 % to tell a majority "
            "from chance") in text
    assert "nan" not in text.lower()
    assert vd.verdict_word(v) == "even" and vd.verdict_word(v, "individual") == "even"
    # an entity the baseline has no value for is compared with nothing: in no count, no difference
    docs["local"] = _doc({"A": 0.15, "B": math.nan, "C": 0.2, "D": 0.3}, math.inf)
    loc = vd.entity_verdict(docs, "dp", "mar")["baselines"]["local"]
    assert (loc["better"], loc["worse"], loc["tie"]) == (1, 0, 0) and set(loc["entities"]) == {"A"}
    docs["local"] = _doc({"A": None, "B": math.nan, "C": 0.2, "D": 0.3}, math.inf)
    assert "local" not in vd.entity_verdict(docs, "dp", "mar")["baselines"]  # nothing comparable: no verdict


def test_one_entitys_word_is_the_counts_rule():
    """The Recommend page's word for one entity is the rule the verdict counts with: a difference under
    TIE_FRACTION of the baseline is a tie, the metric's direction decides better or worse, and an
    undefined value (no test users) has no word."""
    fed = {"A": 0.100, "B": 0.120, "C": 0.1004, "D": 0.2, "E": None}
    base = {"A": 0.110, "B": 0.110, "C": 0.1000, "D": math.nan, "E": 0.1}
    counts = vd.entity_verdict({"dp": _doc(fed), "local": _doc(base, math.inf)}, "dp", "mar",
                               baselines=("local",))["baselines"]["local"]
    words = {n: vd.compare_one(fed[n], base[n], "mar") for n in fed}
    assert words == {"A": "better", "B": "worse", "C": "tie", "D": None, "E": None}
    assert [counts[w] for w in ("better", "worse", "tie")] == [list(words.values()).count(w)
                                                              for w in ("better", "worse", "tie")]
    # a higher-is-better measure turns the words around; a tie is relative to the baseline's value
    assert vd.compare_one(0.30, 0.20, "pr_auc") == "better" and vd.compare_one(0.20, 0.30, "pr_auc") == "worse"
    edge = vd.TIE_FRACTION * 0.2
    assert vd.compare_one(0.2 + 0.99 * edge, 0.2, "mar") == "tie"
    assert vd.compare_one(0.2 + 1.01 * edge, 0.2, "mar") == "worse"


def test_verdict_needs_a_baseline():
    v = vd.entity_verdict({"dp": _doc({"A": 0.1})}, "dp")
    assert v["baselines"] == {} and "Add local" in vd.verdict_sentence(v)


def _sweep(mode: str = "zero", refs=("local", "individual")) -> dict:
    runs = []
    for seed in (0, 1, 2):
        for eps, m in ((0.3, 0.40), (1.0, 0.20), (math.inf, 0.10)):
            runs.append({"method": "dp", "epsilon": eps, "seed": seed,
                         "entities": [{"name": "A", "mar": m + 0.001 * seed}, {"name": "B", "mar": m - 0.001 * seed}],
                         "overall": {"mar": m}})
        for r, m in zip(refs, (0.30, 0.35)):
            runs.append({"method": r, "epsilon": math.inf, "seed": seed,
                         "entities": [{"name": "A", "mar": m}, {"name": "B", "mar": m}], "overall": {"mar": m}})
    return {"config": {"method": "dp", "mode": mode}, "runs": runs, "references": list(refs)}


def test_crossing_lines_state_the_mode_and_the_baseline():
    doc = _sweep("observed")
    lines = vd.crossing_lines(doc, "mar")
    assert len(lines) == 2 and "each entity alone" in lines[0] and "own model only" in lines[1]
    assert all("observed mode" in line for line in lines)
    assert vd.crossing(doc, "mar")["text"].count("observed mode") == 1  # the page's sentence states it once
    assert "ε ≈ 1" in lines[0]
    assert vd.crossing_epsilon(doc, "mar") == 1.0
    v = vd.sweep_entity_verdict(doc, 1.0, "mar")
    assert v["baselines"]["local"]["better"] == 2 and v["seeds"] == 3
    assert "3 seeds" in vd.sweep_verdict_sentence(v)


def test_crossing_without_local_is_not_claimed_as_never_paying():
    doc = _sweep(refs=("individual",))
    lines = vd.crossing_lines(doc, "mar")
    assert len(lines) == 1 and "own model only" in lines[0]  # no sentence about a reference not run
    rep = vd.crossing(doc, "mar", "local")
    assert rep["epsilon"] is None and rep.get("missing")


def test_rmse_crossing_in_zero_mode_is_not_reported():
    doc = _sweep("zero")
    for r in doc["runs"]:
        r["overall"]["test_rmse"] = 1.0
    assert "not meaningful in zero mode" in vd.crossing_lines(doc, "test_rmse")[0]


@pytest.mark.parametrize("word", ["better", "worse"])
def test_majority_word(word):
    better = word == "better"
    names = [f"E{i}" for i in range(6)]
    docs = {"dp": _doc({n: 0.1 if better else 0.3 for n in names}), "local": _doc({n: 0.2 for n in names}, math.inf)}
    assert vd.verdict_word(vd.entity_verdict(docs, "dp")) == word            # 6 of 6: p = 0.031


@pytest.mark.parametrize("better, worse, word", [(1, 0, "even"), (5, 0, "even"), (6, 0, "better"), (0, 6, "worse"),
                                                 (20, 8, "better"), (18, 10, "even"), (8, 20, "worse")])
def test_the_headline_word_needs_a_majority_beyond_chance(better, worse, word):
    """One entity worse and none better (a few test users at one site) is a coin flip, not a verdict:
    the word needs the two-sided exact sign test below 5 % — 20 of 28 is beyond chance (p = 0.036),
    18 of 28 is not (p = 0.19)."""
    fed = {**{f"b{i}": 0.1 for i in range(better)}, **{f"w{i}": 0.3 for i in range(worse)}, "tied": 0.2}
    docs = {"dp": _doc(fed), "local": _doc({n: 0.2 for n in fed}, math.inf)}
    r = vd.entity_verdict(docs, "dp", baselines=("local",))["baselines"]["local"]
    assert (r["better"], r["worse"], r["tie"], r["word"]) == (better, worse, 1, word)
    assert vd.sign_test_p(20, 8) == pytest.approx(0.0357, abs=1e-4) and vd.sign_test_p(0, 0) == 1.0


def test_a_tie_is_a_difference_below_half_a_percent_of_the_baselines_value():
    """The tie band is relative: 0.0002 on a MAR of 0.0102 (2 %) is a difference, 0.001 on 0.401
    (0.25 %) is a tie, whatever their absolute sizes."""
    docs = {"dp": _doc({"A": 0.0100, "B": 0.400, "C": 0.30}),
            "local": _doc({"A": 0.0102, "B": 0.401, "C": 0.29}, math.inf)}
    r = vd.entity_verdict(docs, "dp", "mar", baselines=("local",))["baselines"]["local"]
    assert (r["better"], r["worse"], r["tie"]) == (1, 1, 1)
    assert r["entities"]["A"] == pytest.approx(0.0002) and r["entities"]["C"] == pytest.approx(-0.01)


def test_the_sentence_leads_with_the_majority_and_its_count():
    fed = {**{f"w{i}": 0.3 for i in range(9)}, "b": 0.1}
    docs = {"dp": _doc(fed), "local": _doc({n: 0.2 for n in fed}, math.inf)}
    text = vd.verdict_sentence(vd.entity_verdict(docs, "dp", "mar", baselines=("local",)))
    assert "worse than each entity alone (own model + own popularity) for 9 of 10 entities (better for 1)" in text
    assert "no spread over seeds" in text and "overall" not in text      # no overall value in these documents
    docs["dp"]["overall"], docs["local"]["overall"] = {"mar": 0.110}, {"mar": 0.121}
    text = vd.verdict_sentence(vd.entity_verdict(docs, "dp", "mar", baselines=("local",)))
    assert "(better for 1) — overall MAR 0.11 vs 0.121" in text  # the effect over every test user, beside the count


def _seed_runs(method: str, eps: float, per_entity: dict[str, list[float]]) -> list[dict]:
    """One run per seed of ``method`` at ``eps``; ``per_entity``: each entity's MAR at seeds 0, 1, 2, …"""
    n_seeds = len(next(iter(per_entity.values())))
    return [{"method": method, "epsilon": eps, "seed": s,
             "entities": [{"name": name, "mar": vals[s]} for name, vals in per_entity.items()],
             "overall": {"mar": float(np.nanmean([vals[s] for vals in per_entity.values()]))}}
            for s in range(n_seeds)]


def test_the_sweep_verdict_counts_an_entity_only_beyond_the_t_interval_of_its_seeds():
    """Hand-made differences (local − federation, MAR): 'clear' 19 standard errors better, 'noisy' 1.15
    (inconclusive: beyond one standard error, not 4.30, t's 95 % value at 2 degrees of freedom), 'edge' 3
    (beyond 2 standard errors, inside t), 'single' finite at one seed only (no standard
    error: inconclusive, yet it has test users), 'behind' worse, 'none' without test users. Runs at
    another ε do not enter the verdict at this one."""
    nan = math.nan
    local = {"clear": [0.30] * 3, "noisy": [0.30] * 3, "single": [0.30] * 3, "behind": [0.30] * 3,
             "none": [nan] * 3, "edge": [0.30] * 3}
    fed = {"clear": [0.290, 0.289, 0.288], "noisy": [0.290, 0.270, 0.305], "single": [0.20, nan, nan],
           "behind": [0.320, 0.321, 0.319], "none": [nan] * 3, "edge": [0.290, 0.295, 0.285]}
    elsewhere = {name: [0.9] * 3 for name in fed}  # ε = 3: far worse everywhere, a later run in the list
    doc = {"config": {"method": "dp", "mode": "zero"},
           "runs": _seed_runs("dp", 1.0, fed) + _seed_runs("local", math.inf, local) + _seed_runs("dp", 3.0, elsewhere)}
    v = vd.sweep_entity_verdict(doc, 1.0, "mar", baselines=("local",))
    r = v["baselines"]["local"]
    assert (r["better"], r["worse"], r["tie"]) == (1, 1, 3), r
    assert v["no_test_users"] == ["none"] and v["H"] == 6 and v["seeds"] == 3
    assert r["word"] == "even"
    text = vd.sweep_verdict_sentence(v)
    assert ("better for 1 of the 5 entities with test users, worse for 1, 3 inconclusive" in text
            and "no test users (no verdict): none" in text)
    assert "beyond its 95 % t interval, 4.3 standard errors at 3 seeds" in text
    # one seed has no spread: the sentence states no interval (t at 1 degree of freedom is 2 seeds')
    one = vd.sweep_entity_verdict({"config": doc["config"], "runs": [r for r in doc["runs"] if r["seed"] == 0]},
                                  1.0, "mar", baselines=("local",))
    text = vd.sweep_verdict_sentence(one)
    assert "which one seed cannot give" in text and "12.7" not in text and "standard errors" not in text, text


def test_the_sweep_verdicts_standard_error_is_the_sample_sd_over_the_root_of_the_seeds():
    """Two entities whose mean difference over 3 seeds lies between the bounds a wrong spread would
    draw: 'beyond' is 5.2 standard errors better (sample sd / √3) — counted better, yet inside 4.30
    sample sds —, 'inside' 3.98 — inconclusive, yet beyond 4.30 standard errors of the population sd
    (ddof 0, √(3/2) smaller)."""
    local = {"beyond": [0.30] * 3, "inside": [0.30] * 3}
    fed = {"beyond": [0.30 - d for d in (0.008, 0.012, 0.016)],
           "inside": [0.30 - d for d in (0.0052, 0.0092, 0.0132)]}
    doc = {"config": {"method": "dp", "mode": "zero"},
           "runs": _seed_runs("dp", 1.0, fed) + _seed_runs("local", math.inf, local)}
    for name, diffs, ratio in (("beyond", (0.008, 0.012, 0.016), 5.2), ("inside", (0.0052, 0.0092, 0.0132), 3.98)):
        d = np.asarray(diffs)
        assert d.mean() / (d.std(ddof=1) / math.sqrt(3)) == pytest.approx(ratio, abs=0.01), name
    r = vd.sweep_entity_verdict(doc, 1.0, "mar", baselines=("local",))["baselines"]["local"]
    assert (r["better"], r["worse"], r["tie"]) == (1, 0, 1), r


def _paired_doc(dp: list[float], local: list[float]) -> dict:
    runs = [{"method": "dp", "epsilon": 1.0, "seed": s, "entities": [], "overall": {"mar": m}}
            for s, m in enumerate(dp)]
    runs += [{"method": "local", "epsilon": math.inf, "seed": s, "entities": [], "overall": {"mar": m}}
             for s, m in enumerate(local)]
    return {"config": {"method": "dp", "mode": "zero"}, "runs": runs}


def test_a_paired_effect_pairs_each_seed_with_its_own_baseline_run_and_beats_only_beyond_one_sd():
    # local differs by seed; dp is 0.01 lower at every seed: paired by seed, a gain of 0.01 with no spread
    steady = ex.paired_effects(_paired_doc([0.29, 0.19, 0.39], [0.30, 0.20, 0.40]), "dp", "local", "mar")
    assert [(e["epsilon"], e["n"], e["state"]) for e in steady] == [(1.0, 3, "beats")]
    assert steady[0]["mean"] == pytest.approx(0.01) and steady[0]["sd"] == pytest.approx(0.0, abs=1e-12)
    # gains 0, 0.004, 0.014: mean 0.006 inside one sample sd (0.0072), beyond its standard error (0.0042)
    edge = ex.paired_effects(_paired_doc([0.30, 0.296, 0.286], [0.30] * 3), "dp", "local", "mar")
    assert edge[0]["mean"] == pytest.approx(0.006) and edge[0]["sd"] == pytest.approx(math.sqrt(52e-6))
    assert edge[0]["state"] == "inconclusive"
    assert ex.crossing_report(_paired_doc([0.30, 0.296, 0.286], [0.30] * 3), "mar", "local")["epsilon"] is None


def test_a_crossing_counts_the_seeds_of_the_swept_method_not_of_its_baseline():
    """One seed of the swept method has no spread, however many seeds its baseline ran."""
    doc = _paired_doc([0.20], [0.30, 0.30, 0.30])
    rep = ex.crossing_report(doc, "mar", "local")
    assert rep["epsilon"] is None and not rep["meaningful"]
    assert rep["text"].startswith("not reported: 1 seed of dp")


def _crossing_sweep(fed: dict[float, list[float]], local: float = 0.30) -> dict:
    runs = [{"method": "dp", "epsilon": eps, "seed": s, "entities": [], "overall": {"mar": m}}
            for eps, vals in fed.items() for s, m in enumerate(vals)]
    runs += [{"method": "local", "epsilon": math.inf, "seed": s, "entities": [], "overall": {"mar": local}}
             for s in range(3)]
    return {"config": {"method": "dp", "mode": "zero"}, "runs": runs}


def test_federation_pays_from_the_smallest_epsilon_beyond_which_every_grid_point_beats_the_baseline():
    # ε = 0.3 beats local, ε = 1 does not: federation pays from ε = 3, not 0.3
    doc = _crossing_sweep({0.3: [0.25] * 3, 1.0: [0.35] * 3, 3.0: [0.20] * 3, math.inf: [0.10] * 3})
    assert vd.crossing_epsilon(doc, "mar") == 3.0
    assert "ε ≈ 3" in vd.crossing_lines(doc, "mar", baselines=("local",))[0]


def test_a_crossing_inside_the_spread_over_seeds_is_inconclusive_and_every_line_states_the_effect():
    # means below local's at every ε, but the paired differences over seeds straddle zero
    noisy = _crossing_sweep({1.0: [0.2998, 0.3003, 0.2996], 3.0: [0.2995, 0.3004, 0.2998]})
    rep = ex.crossing_report(noisy, "mar")
    assert rep["epsilon"] is None and [e["state"] for e in rep["effects"]] == ["inconclusive", "inconclusive"]
    assert rep["effect"]["epsilon"] == 3.0 and rep["effect"]["n"] == 3
    assert rep["effect"]["mean"] == pytest.approx(0.30 - np.mean([0.2995, 0.3004, 0.2998]))
    assert rep["effect"]["sd"] == pytest.approx(np.std([0.0005, -0.0004, 0.0002], ddof=1))
    (line,) = vd.crossing_lines(noisy, "mar", baselines=("local",))
    assert "inconclusive on this grid" in line and "inside its spread over seeds" in line and "pays" not in line
    assert "MAR lower by 0.0001 ± 0.00046 over 3 seeds, paired by seed" in line
    clear = _crossing_sweep({1.0: [0.28, 0.29, 0.285], 3.0: [0.25, 0.26, 0.255]})
    (line,) = vd.crossing_lines(clear, "mar", baselines=("local",))
    assert "pays from ε ≈ 1" in line and "At ε = 1: MAR lower by 0.015 ± 0.005 over 3 seeds, paired by seed" in line
    worse = _crossing_sweep({1.0: [0.32, 0.33, 0.325]})
    assert ex.crossing_report(worse, "mar")["effects"][0]["state"] == "worse"
    assert "does not pay at any ε" in vd.crossing_lines(worse, "mar", baselines=("local",))[0]


def test_a_crossing_with_no_comparable_seed_is_not_reported_and_raises_nothing():
    undefined = _crossing_sweep({1.0: [math.nan] * 3})           # no test users: MAR undefined at every seed
    rep = ex.crossing_report(undefined, "mar")
    assert rep["epsilon"] is None and not rep["meaningful"] and "nothing to compare" in rep["text"]
    with pytest.raises(ConfigError, match="no 'individual' runs"):
        ex.crossing_report(undefined, "mar", "individual")


def test_a_crossing_needs_a_ranking_better_than_chance_by_one_sd():
    # ε = 1: MAR 0.49 beats local's 0.60 by 0.11 ± 0.05 paired, but 0.49 + sd 0.05 is not below 0.5 (chance)
    doc = _crossing_sweep({1.0: [0.44, 0.54, 0.49], 3.0: [0.20, 0.21, 0.19], math.inf: [0.10] * 3}, local=0.60)
    assert ex.crossing_report(doc, "mar")["effects"][0]["state"] == "beats"
    assert vd.crossing_epsilon(doc, "mar") == 3.0


def test_a_chance_ranking_with_no_crossing_names_the_grid_and_secure_aggregation_once_in_each_front_end():
    """Zero mode: the swept method beats local at the largest ε but ranks at chance there. The sentence says
    what is wrong and what fixes it — a larger ε grid, and secure aggregation for a summable method run
    without it — each named once, as the CLI's flag or the Trade-off page's control."""
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.errors import render_message
    from dpfed_core.ui import engine as dash

    doc = _crossing_sweep({1.0: [0.44, 0.54, 0.49]}, local=0.60)
    doc["config"].update(method="dp-cooccurrence", aggregation="none")
    for r in doc["runs"]:
        r["method"] = "dp-cooccurrence" if r["method"] == "dp" else r["method"]
    rep = ex.crossing_report(doc, "mar")
    assert rep["epsilon"] is None and rep["meaningful"]
    assert "ranking is no better than chance there, MAR + sd ≥ 0.5: sweep larger ε (epsilons=EPSILONS) or use " \
           "secure aggregation (aggregation=secure) [zero mode" in rep["text"], rep["text"]
    cli = render_message(rep["text"], CLI_NAMES)
    assert "sweep larger ε (--epsilons EPSILONS) or use secure aggregation (--aggregation secure)" in cli, cli
    page = dash.sweep_crossing_text(doc, "mar", "local").replace("\\", "")
    assert ("sweep larger ε (“ε grid” on the Trade-off page) or use secure aggregation (“Secure aggregation” on "
            "the Federate page switched on)") in page, page
    for said in (cli, page):
        assert ") (" not in said and "epsilons=" not in said and "set it with" not in said
    # secure already: only the grid; the non-private point swept and not crossing either: no ε helps
    doc["config"]["aggregation"] = "secure"
    assert ex.crossing_report(doc, "mar")["text"].split(" [")[0].endswith(": sweep larger ε (epsilons=EPSILONS)")
    doc["runs"] += [{"method": "dp-cooccurrence", "epsilon": math.inf, "seed": s, "entities": [],
                     "overall": {"mar": m}} for s, m in enumerate([0.44, 0.54, 0.49])]
    text = ex.crossing_report(doc, "mar")["text"]
    assert "more ε cannot help; check the data and the method [zero mode" in text and "epsilons=" not in text


def _observed(fed_mar: dict[float, list[float]], fed_rmse: float | None = None) -> dict:
    """A sweep in observed mode: the swept method's MAR per ε and seed against local's 0.60, and (given
    ``fed_rmse``) a test RMSE that beats local's 1.0 at every point."""
    doc = _crossing_sweep(fed_mar, local=0.60)
    doc["config"]["mode"] = "observed"
    for r in doc["runs"]:
        r["overall"]["test_rmse"] = (fed_rmse if r["method"] == "dp" else 1.0) if fed_rmse is not None else 1.0
    return doc


def test_in_observed_mode_a_ranking_crossing_the_chance_check_would_move_cannot_be_stated():
    """An observed-mode model fits observed values, not which items a user chose: a chance MAR does not show
    it learned nothing, so a crossing that the chance check decides is neither stated nor denied — the
    sentence says why and what to compare instead (rankings in zero mode; RMSE is held to the same check)."""
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.errors import render_message
    from dpfed_core.ui import engine as dash

    doc = _observed({1.0: [0.44, 0.54, 0.49], 3.0: [0.20, 0.21, 0.19]})
    rep = ex.crossing_report(doc, "mar")
    assert rep["epsilon"] is None and not rep["meaningful"]
    assert rep["text"].startswith("cannot be stated: at ε = 1 dp beats local on mar but ranks no better than chance")
    assert "metric=test_rmse" not in rep["text"] and "(mode=zero)" in rep["text"]
    assert vd.crossing_epsilon(doc, "mar") is None and dash.sweep_crossing(doc, "mar", "local") is None
    (line,) = vd.crossing_lines(doc, "mar", baselines=("local",))
    assert line.startswith("MAR: cannot be stated")
    cli = render_message(line, CLI_NAMES)
    assert "(--mode zero)" in cli
    page = dash.pays_from_sweep(doc, "mar").replace("\\", "")
    assert "(“Observation mode” on the Federate page set to zero)" in page
    # the same sweep in zero mode keeps its crossing at ε = 3, where the chance check puts it
    doc["config"]["mode"] = "zero"
    assert ex.crossing_report(doc, "mar")["epsilon"] == 3.0
    # and a chance check that decides nothing leaves an observed-mode crossing as it was
    clear = _observed({1.0: [0.44, 0.54, 0.49], 3.0: [0.20, 0.21, 0.19], 10.0: [0.70, 0.71, 0.69]})
    assert ex.crossing_report(clear, "mar")["meaningful"] and "cannot be stated" not in \
        ex.crossing_report(clear, "mar")["text"]
    assert ex.crossing_report(_observed({1.0: [0.2, 0.21, 0.19]}), "mar")["epsilon"] == 1.0


def test_in_observed_mode_an_rmse_crossing_is_held_to_the_ranking_chance_check():
    # MAR at chance at every ε, test RMSE 0.9 against local's 1.0: shrinkage alone can win on RMSE (a random V
    # does), so no crossing is claimed; with a ranking above chance at ε = 3 the crossing is there
    doc = _observed({1.0: [0.50, 0.52, 0.51], 3.0: [0.49, 0.50, 0.51]}, fed_rmse=0.9)
    for r in doc["runs"]:  # paired differences need a spread: each seed a little apart
        r["overall"]["test_rmse"] += 0.001 * r["seed"] if r["method"] == "dp" else 0.0
    rep = ex.crossing_report(doc, "test_rmse")
    assert rep["epsilon"] is None and "no better than chance" in rep["text"], rep["text"]
    assert "cannot be stated" not in rep["text"] and "metric=test_rmse" not in rep["text"]
    for r in doc["runs"]:
        if r["method"] == "dp" and r["epsilon"] == 3.0:
            r["overall"]["mar"] = 0.2
    rep = ex.crossing_report(doc, "test_rmse")
    assert rep["meaningful"] and rep["epsilon"] == 3.0 and rep["text"].startswith("ε = 3: from here on"), rep["text"]
    # zero mode: an RMSE crossing is not reported at all, chance or not
    doc["config"]["mode"] = "zero"
    assert not ex.crossing_report(doc, "test_rmse")["meaningful"]


def test_the_recommend_pages_comparison_lists_each_measure_under_its_word():
    from dpfed_core.ui.tables import entity_against_alone

    got = entity_against_alone(0.12, 0.13, {"pr_auc": 0.20}, {"pr_auc": 0.25})
    assert (got["mar"], got["pr_auc"]) == ("better", "worse")
    assert got["better"] == ["MAR 0.120 vs 0.130"] and got["worse"] == ["PR-AUC 0.200 vs 0.250"]
    tie = entity_against_alone(0.1236, 0.1236)
    assert tie["mar"] == "tie" and tie["pr_auc"] is None and tie["better"] == tie["worse"] == []
    assert entity_against_alone(None, 0.1)["mar"] is None


# ------------------------------------------------------------------------------------ the sweep's tables and grid
from dpfed_core.evaluation import experiments as ex  # noqa: E402
from dpfed_core.errors import ConfigError  # noqa: E402


def test_the_sweep_table_is_the_mean_and_sample_sd_over_every_seed():
    doc = _crossing_sweep({1.0: [0.2, 0.3, math.nan]})
    (row,) = [r for r in ex.sweep_table(doc) if r["method"] == "dp"]
    assert row["mean"] == pytest.approx(0.25) and row["sd"] == pytest.approx(np.std([0.2, 0.3], ddof=1))
    (loc,) = [r for r in ex.sweep_table(doc) if r["method"] == "local"]
    assert (loc["mean"], loc["sd"], loc["n"]) == (pytest.approx(0.30), 0.0, 3)


def test_a_higher_is_better_metric_crosses_where_it_is_higher_and_a_tie_never_beats():
    runs = []
    for s in range(2):
        for eps, p in ((0.5, 0.10), (1.0, 0.30), (2.0, 0.40)):
            runs.append({"method": "dp", "epsilon": eps, "seed": s, "entities": [],
                         "overall": {"precision_at_10": p, "mar": 0.2}})
        runs.append({"method": "local", "epsilon": math.inf, "seed": s, "entities": [],
                     "overall": {"precision_at_10": 0.30, "mar": 0.3}})
    doc = {"config": {"method": "dp", "mode": "zero"}, "runs": runs, "references": ["local"]}
    rep = ex.crossing_report(doc, "precision_at_10")
    assert rep["epsilon"] == 2.0 and rep["baseline"] == "local"  # 0.30 at ε = 1 ties local: no win
    assert rep["text"].startswith("ε = 2: from here on every grid point of dp beats local on precision_at_10")
    assert rep["text"].endswith("[zero mode: every unobserved user–item pair is a 0 target]")


def test_an_rmse_crossing_is_reported_in_observed_mode():
    doc = _crossing_sweep({1.0: [0.2] * 3, 3.0: [0.1] * 3})
    doc["config"]["mode"] = "observed"
    for r in doc["runs"]:
        r["overall"]["test_rmse"] = 0.9 if r["method"] == "dp" else 1.0
    rep = ex.crossing_report(doc, "test_rmse")
    assert rep["meaningful"] and rep["epsilon"] == 1.0
    assert rep["text"].endswith("[observed mode: only observed entries are fitted and tested]")


def test_the_default_baseline_is_local_when_the_sweep_ran_it_else_individual():
    assert ex.default_baseline({"runs": [], "references": ["individual", "local"]}) == "local"
    assert ex.default_baseline({"runs": [{"method": "local"}], "references": []}) == "local"
    assert ex.default_baseline({"runs": [], "references": ["individual"]}) == "individual"


def _versus(dp: list[float], pop: list[float], metric: str = "mar") -> dict:
    runs = [{"method": m, "epsilon": 1.0, "seed": s, "entities": [], "overall": {metric: v}}
            for m, vals in (("dp", dp), ("dp-popularity", pop)) for s, v in enumerate(vals)]
    (row,) = ex.versus_dp_popularity({"config": {"method": "dp"}, "runs": runs}, metric)
    return row


def test_versus_dp_popularity_is_inconclusive_within_the_larger_sd_and_reads_the_metrics_direction():
    # MAR (lower is better): 0.25 vs 0.5 with sds 0 and 0.25 — a difference of exactly the larger sd
    row = _versus([0.25, 0.25, 0.25], [0.25, 0.5, 0.75])
    assert row["verdict"] == "inconclusive" and row["difference"] == -0.25
    assert row["sd"] == 0.0 and row["dp_popularity_sd"] == 0.25
    assert _versus([0.19, 0.21], [0.3, 0.3])["verdict"] == "beats dp-popularity"
    # a difference within the larger sd but beyond the smaller one stays inconclusive
    assert _versus([0.20, 0.21], [0.1, 0.5])["verdict"] == "inconclusive"
    # precision (higher is better): higher beats, and the difference is stated as method − dp-popularity
    row = _versus([0.40, 0.41], [0.30, 0.30], "precision_at_10")
    assert row["verdict"] == "beats dp-popularity" and row["difference"] == pytest.approx(0.105)
    assert _versus([0.20, 0.21], [0.30, 0.30], "precision_at_10")["verdict"] == "LOSES to dp-popularity"


@pytest.mark.parametrize("eps, seeds, needle, param", [
    ([0.0], [0], "every ε of the grid must be positive", "epsilons"), ([1.0], [], "at least one seed", "seeds"),
    ([1.0, 2.0, 1.0], [0], "repeats 1", "epsilons"), ([1.0], [3, 3], "repeats 3", "seeds")])
def test_a_sweep_grid_with_a_zero_epsilon_no_seed_or_a_repeat_is_refused_naming_its_flag(eps, seeds, needle, param):
    from dpfed_core.config import RunConfig

    with pytest.raises(ConfigError, match=needle) as e:
        ex.check_sweep_grid(RunConfig(method="dp-gaussian"), eps, seeds)
    assert e.value.param == param


def test_sweep_jobs_run_a_dp_reference_at_every_epsilon_and_others_once():
    jobs = ex.sweep_jobs("dp-gaussian", [0.5, 2.0], ["individual", "dp-popularity", "dp-gaussian"])
    assert jobs == [("dp-gaussian", 0.5), ("dp-gaussian", 2.0), ("individual", math.inf),
                    ("dp-popularity", 0.5), ("dp-popularity", 2.0)]
    assert ex.sweep_jobs("central", [0.5, 2.0], ["individual"]) == [("central", math.inf), ("individual", math.inf)]
    # a non-private reference is one point per seed, whatever ε it is looked up at
    assert ex.job_key("individual", 0.0, 1, "dp-gaussian") == ex.job_key("individual", math.inf, 1, "dp-gaussian")
    assert ex.job_key("dp-popularity", 0.5, 1, "dp-gaussian") != ex.job_key("dp-popularity", 2.0, 1, "dp-gaussian")


def test_json_safe_writes_both_infinities_string_keys_and_python_numbers():
    import json

    out = ex.json_safe({np.int64(1): np.float64(-np.inf), "b": [np.inf, np.nan, np.int64(3)], "c": np.array([1.5])})
    assert out == {"1": "-inf", "b": ["inf", None, 3], "c": [1.5]}
    assert type(out["b"][2]) is int
    assert json.loads(json.dumps(out, allow_nan=False)) == out  # strict JSON, a NumPy key included


def test_one_seed_has_no_spread_so_no_sd_no_crossing_and_no_verdict_against_dp_popularity():
    """`--seeds 2` is one seed (2), not two: its sd is unknown (NaN, printed as a dash), a crossing
    cannot be told from noise (not reported, said once for both baselines), and a difference from
    dp-popularity is inconclusive, however large."""
    runs = [{"method": "dp", "epsilon": e, "seed": 2, "entities": [], "overall": {"mar": m}}
            for e, m in ((0.5, 0.20), (2.0, 0.10))]
    runs += [{"method": b, "epsilon": math.inf, "seed": 2, "entities": [], "overall": {"mar": 0.40}}
             for b in ("local", "individual")]
    runs += [{"method": "dp-popularity", "epsilon": e, "seed": 2, "entities": [], "overall": {"mar": 0.45}}
             for e in (0.5, 2.0)]
    doc = {"config": {"method": "dp", "mode": "zero"}, "runs": runs, "references": ["local", "individual"]}
    table = ex.sweep_table(doc)
    assert all(math.isnan(r["sd"]) and r["n"] == 1 for r in table)
    rep = ex.crossing_report(doc)
    assert rep["epsilon"] is None and not rep["meaningful"] and "1 seed of dp" in rep["text"]
    lines = vd.crossing_lines(doc, "mar")
    assert len(lines) == 1 and "run two or more seeds" in lines[0]
    assert {r["verdict"] for r in ex.versus_dp_popularity(doc)} == {"inconclusive"}
    # two seeds: the same numbers state a crossing and a verdict
    two = {**doc, "runs": runs + [{**r, "seed": 3} for r in runs]}
    assert ex.crossing_report(two)["epsilon"] == 0.5
    assert {r["verdict"] for r in ex.versus_dp_popularity(two)} == {"beats dp-popularity"}


def test_budget_left_is_rounded_down_and_spend_up():
    from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds

    assert (epsilon_left(9.07961), epsilon_that_holds(9.07961)) == ("9.079", "9.08")
    assert (epsilon_left(1.5), epsilon_left(0.30000000001), epsilon_left(math.inf), epsilon_left(0)) == ("1.5", "0.3", "∞", "0")
    assert epsilon_left(0.0999999999999) == "0.1" and epsilon_left(0.099999) == "0.09999" and epsilon_left(0.12349) == "0.1234"


@pytest.mark.parametrize("better, worse, word", [(4, 0, "better"), (1, 0, "even"), (2, 0, "even"), (3, 0, "even"),
                                                 (0, 4, "worse"), (4, 4, "even")])
def test_over_seeds_the_word_needs_more_entities_beyond_their_interval_than_chance_gives(better, worse, word):
    """Over seeds an entity is better or worse only beyond its 95 % t interval, which an entity with no
    effect passes on one side 2.5 % of the time: of 30 entities one or three beyond it on either side is
    chance (p = 1, 0.077), four are not (p = 0.013) — the word states a majority only beyond what chance
    gives among those compared."""
    fed, local = {}, {}
    for i in range(30):
        if i < better:
            fed[f"e{i}"], local[f"e{i}"] = [0.10, 0.101, 0.099], [0.2] * 3
        elif i < better + worse:
            fed[f"e{i}"], local[f"e{i}"] = [0.30, 0.301, 0.299], [0.2] * 3
        else:
            fed[f"e{i}"], local[f"e{i}"] = [0.20, 0.25, 0.15], [0.2] * 3
    doc = {"config": {"method": "dp", "mode": "zero"},
           "runs": _seed_runs("dp", 1.0, fed) + _seed_runs("local", math.inf, local)}
    r = vd.sweep_entity_verdict(doc, 1.0, "mar", baselines=("local",))["baselines"]["local"]
    assert (r["better"], r["worse"], r["tie"], r["word"]) == (better, worse, 30 - better - worse, word)
    assert vd.beyond_interval_p(4, 30) == pytest.approx(0.0064, abs=1e-4)


def test_no_entity_beyond_its_interval_over_seeds_is_no_entity_level_finding_not_even():
    """Over seeds, 0 better and 0 worse is no finding entity by entity: the sentence says so instead of
    "even", which the overall mean beside it (e.g. "pays from ε ≈ 1") would contradict."""
    r = {"better": 0, "worse": 0, "tie": 30, "word": "even", "over_seeds": True}
    text = vd._count_phrase("local", r, 30, "inconclusive")
    assert text.startswith("neither better nor worse than") and "(30 of 30 entities inconclusive)" in text
    assert "even" not in text
    one_run = {**r, "over_seeds": False}
    assert vd._count_phrase("local", one_run, 30, "tied").startswith("even with")


def test_the_sweep_table_counts_only_the_seeds_with_a_value_and_warns_nothing_when_none_has_one():
    """A seed whose split gave no test user has no metric: the table's seed count leaves it out, and a
    point no seed measured is NaN with no NumPy warning on the command line."""
    import warnings

    doc = _crossing_sweep({1.0: [0.2, 0.3, math.nan], 3.0: [math.nan] * 3})
    for r in doc["runs"]:  # as a document read back from JSON writes an undefined metric
        if isinstance(r["overall"]["mar"], float) and math.isnan(r["overall"]["mar"]):
            r["overall"]["mar"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = {r["epsilon"]: r for r in ex.sweep_table(doc) if r["method"] == "dp"}
    assert rows[1.0]["n"] == 2 and rows[1.0]["mean"] == pytest.approx(0.25)
    assert rows[3.0]["n"] == 0 and math.isnan(rows[3.0]["mean"]) and math.isnan(rows[3.0]["sd"])


def test_over_seeds_chance_is_counted_among_the_entities_with_two_seeds_to_compare():
    """An entity with a value at one seed only has no interval, so it can never fall beyond one: it is no
    trial of chance. Four entities clearly better over 3 seeds beside sixty measured at one seed each are four of
    four beyond their interval (better), not four of sixty-four (which chance could give)."""
    nan = math.nan
    fed = {f"clear{i}": [0.10, 0.101, 0.099] for i in range(4)}
    fed.update({f"once{i}": [0.20, nan, nan] for i in range(60)})
    local = {name: [0.2] * 3 for name in fed}
    doc = {"config": {"method": "dp", "mode": "zero"},
           "runs": _seed_runs("dp", 1.0, fed) + _seed_runs("local", math.inf, local)}
    r = vd.sweep_entity_verdict(doc, 1.0, "mar", baselines=("local",))["baselines"]["local"]
    assert (r["better"], r["worse"], r["tie"], r["tested"]) == (4, 0, 60, 4)
    assert r["word"] == "better"


def test_an_even_count_says_why_and_a_long_list_without_test_users_says_how_many_more():
    """"even with …: better for 4 of 7 entities, worse for 3 (no majority beyond chance, sign test at 5 %)", and
    the entities without test users named up to five, then how many more — never a list that reads complete."""
    names = [f"e{i}" for i in range(7)] + [f"n{i}" for i in range(7)]
    fed = {n: (0.10 if i < 4 else 0.30) if n.startswith("e") else None for i, n in enumerate(names)}
    local = {n: 0.20 for n in names}
    v = vd.entity_verdict({"dp": _doc(fed), "local": _doc(local, math.inf)}, "dp", "mar", baselines=("local",))
    r = v["baselines"]["local"]
    assert (r["better"], r["worse"], r["word"]) == (4, 3, "even")
    text = vd.verdict_sentence(v)
    assert ("even with each entity alone (own model + own popularity): better for 4 of the 7 entities with test "
            "users, worse for 3 (no majority beyond chance, sign test at 5 %)") in text, text
    assert "no test users (no verdict): n0, n1, n2, n3, n4 and 2 more" in text, text


def test_a_crossing_only_without_privacy_still_says_when_its_difference_is_weak_evidence():
    """The ε = ∞ crossing reads its effect like any other: inside its 95 % t interval it says "Weak evidence"."""
    two = {"epsilon": math.inf, "mean": 0.01, "sd": 0.008, "n": 2, "state": "beats"}
    text = vd.pays_from_sentence(math.inf, effect=two)
    assert "pays only without privacy (ε = ∞)" in text and "Weak evidence" in text and "± 0.072" in text
    assert "Weak evidence" not in vd.pays_from_sentence(math.inf, effect={**two, "sd": 0.0001, "n": 5})
