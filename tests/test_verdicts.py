"""Verdicts and crossings in one place: against local with individual beside
it, the observation mode in every sentence, an entity without test users never counted as a win."""
from __future__ import annotations

import math

import pytest

from dpfed_core.evaluation import verdicts as vd


def _doc(values: dict[str, float | None], eps: float = 1.0, mode: str = "zero") -> dict:
    return {"entities": [{"name": n, "mar": v} for n, v in values.items()],
            "privacy": {"epsilon": eps}, "config": {"mode": mode}}


def test_format_epsilon_three_significant_digits():
    assert vd.format_epsilon(0.123456) == "0.123"
    assert vd.format_epsilon(1.0) == "1"
    assert vd.format_epsilon(6.58123) == "6.58"
    assert vd.format_epsilon(math.inf) == "∞" and vd.format_epsilon("inf") == "∞"
    assert vd.format_epsilon(None) == "—"


def test_entity_verdict_against_local_and_individual_and_nan_is_no_test_users():
    docs = {"dp": _doc({"A": 0.10, "B": 0.20, "C": None, "D": math.nan}),
            "local": _doc({"A": 0.15, "B": 0.10, "C": 0.2, "D": 0.3}, math.inf),
            "individual": _doc({"A": 0.30, "B": 0.30, "C": 0.2, "D": 0.3}, math.inf)}
    v = vd.entity_verdict(docs, "dp", "mar")
    assert list(v["baselines"]) == ["local", "individual"]  # local first, individual beside it
    loc = v["baselines"]["local"]
    assert (loc["better"], loc["worse"], loc["tie"]) == (1, 1, 0) and loc["word"] == "even"
    ind = v["baselines"]["individual"]
    assert (ind["better"], ind["worse"]) == (2, 0) and ind["word"] == "better"
    assert v["no_test_users"] == ["C", "D"] and set(ind["entities"]) == {"A", "B"}
    text = vd.verdict_sentence(v)
    assert "zero mode" in text and "no test users (no verdict): C, D" in text
    assert "nan" not in text.lower()
    assert vd.verdict_word(v) == "even" and vd.verdict_word(v, "individual") == "better"


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
    docs = {"dp": _doc({"A": 0.1 if better else 0.3, "B": 0.1 if better else 0.3}),
            "local": _doc({"A": 0.2, "B": 0.2}, math.inf)}
    assert vd.verdict_word(vd.entity_verdict(docs, "dp")) == word
