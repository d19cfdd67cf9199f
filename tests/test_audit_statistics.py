"""The ε lower bounds of the membership audit on small counts computed by hand, and the audit of releases
whose leak is known: a release that claims a small ε but shows the target must be reported above its claim,
a correct one never."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpfed_core.audit import lower_bounds as bounds
from dpfed_core.audit import membership as aud
from dpfed_core.audit import targets as audit_targets
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.federation.prototypes import PrototypeRelease


def _entity(n: int, m: int, seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    base = rng.poisson(1.0, size=(n, m)).astype(float)
    base[:, -3:] = 0.0
    return sp.csr_matrix(base)


# ----------------------------------------------------------------------------- the statistics
def test_each_rate_is_bounded_on_the_runs_of_its_own_class():
    # 40 IN runs (tp 30) and 100 OUT runs (fp 2), δ = 0.01, 95 %: each bound is one-sided at 2.5 %
    tpr_lo = stats.beta.ppf(0.025, 30, 11)  # Beta(x, n − x + 1) at 2.5 %: 0.5880
    fpr_hi = stats.beta.ppf(0.975, 3, 98)   # Beta(x + 1, n − x) at 97.5 %: 0.0704
    assert tpr_lo == pytest.approx(0.5880, abs=1e-4) and fpr_hi == pytest.approx(0.0704, abs=1e-4)
    e1, e2 = bounds.epsilon_bounds(30, 10, 2, 98, 0.01, 0.95)
    assert float(e1) == pytest.approx(math.log((tpr_lo - 0.01) / fpr_hi), rel=1e-9)  # ln(0.5780/0.0704) = 2.106
    assert float(e1) == pytest.approx(2.106, abs=1e-3)
    assert float(e2) == pytest.approx(math.log((1 - fpr_hi - 0.01) / (1 - tpr_lo)), rel=1e-9)  # ln(0.9196/0.4120)
    assert float(e2) == pytest.approx(0.8030, abs=1e-3)
    # a test that says IN as often on OUT runs as on IN runs certifies nothing, whichever class is larger
    e1, e2 = bounds.epsilon_bounds(20, 20, 50, 50, 0.0, 0.95)
    assert float(e1) < 0 and float(e2) < 0


def test_the_ceiling_subtracts_delta_at_the_confidence_it_is_given():
    # a perfect test on 20 runs per class at 90 %: TPR_lo = 0.05^(1/20), FPR_hi = 1 − 0.05^(1/20)
    a = 0.05 ** (1 / 20)
    assert bounds.max_certifiable_epsilon(20, 0.005, 0.9) == pytest.approx(math.log((a - 0.005) / (1 - a)), rel=1e-9)
    assert bounds.max_certifiable_epsilon(20, 0.005, 0.9) == pytest.approx(1.8169, abs=1e-4)
    assert bounds.max_certifiable_epsilon(20, 0.0, 0.9) == pytest.approx(1.8227, abs=1e-4)
    # a δ as large as the TPR's lower bound leaves nothing to certify
    assert bounds.max_certifiable_epsilon(4, 0.9, 0.95) == 0.0


def test_a_score_equal_to_the_threshold_is_a_test_saying_in():
    # OUT scores 0, 1; IN scores 1, 2: the test "IN iff score ≥ 1" finds both IN runs and one OUT run
    fpr, tpr, thr = bounds.roc_curve(np.array([0.0, 1.0]), np.array([1.0, 2.0]))
    assert thr.tolist() == [math.inf, 2.0, 1.0, 0.0]
    assert fpr.tolist() == [0.0, 0.0, 0.5, 1.0] and tpr.tolist() == [0.0, 0.5, 1.0, 1.0]


# ----------------------------------------------------------------------------- releases of known leak
class _SumsWithoutNoise:
    """Claims (ε, δ) in its ledger but releases the exact column sums and the exact count of its rows: the
    target's presence is seen in every IN run, so the audit must certify as much as its runs can."""

    name, private = "sums-without-noise", True

    def __init__(self, epsilon: float, delta: float) -> None:
        self.epsilon, self.delta = epsilon, delta

    def release(self, X, rng, ledger):
        ledger.spend("prototypes", "Gaussian (claimed)", self.epsilon, self.delta, 1.0, 1.0)
        X = sp.csr_matrix(X)
        return PrototypeRelease(np.asarray(X.sum(0)).reshape(1, -1), np.array([float(X.shape[0])]))


def test_a_release_that_shows_the_target_is_bounded_above_its_claim_at_the_ceiling_of_its_evaluation_runs():
    X = _entity(15, 8, 4)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 3)[0]
    # 41 runs per class: 20 choose the threshold, 21 certify it
    res = aud.audit_target(X, tgt, _SumsWithoutNoise(0.5, 0.005), 41, np.random.SeedSequence(1),
                           attacks=("distance", "counts"), confidence=0.9)
    assert res["private"] and (res["epsilon"], res["delta"]) == (pytest.approx(0.5), pytest.approx(0.005))
    ceiling = bounds.max_certifiable_epsilon(21, 0.005, 0.9)  # ln((0.05^(1/21) − 0.005)/(1 − 0.05^(1/21))) = 1.870
    assert ceiling == pytest.approx(1.870, abs=1e-3)
    for a in ("distance", "counts"):
        r = res["attacks"][a]
        assert (r["tp"] + r["fn"], r["fp"] + r["tn"]) == (21, 21) and r["n_certify_per_class"] == 21
        assert (r["tp"], r["fp"]) == (21, 0) or (r["tn"], r["fn"]) == (21, 0)
        assert r["epsilon_lb"] == pytest.approx(ceiling, rel=1e-9) and r["max_certifiable_epsilon"] == r["epsilon_lb"]
        assert r["epsilon_lb"] > res["epsilon"]
    rows = [{"method": "sums-without-noise", "requested_epsilon": 0.5, "epsilon": res["epsilon"],
             "delta": res["delta"], "private": True, "target": tgt.name, **r} for r in res["attacks"].values()]
    assert aud.summarize(rows)[0]["verdict"] == "VIOLATION"


def test_a_correct_release_is_never_bounded_above_its_claim():
    # dp-prototypes at ε = 0.5 on a small entity: no attack's bound exceeds the claim (the same audit of a
    # release without noise certifies its ceiling, above the claim: see the test before)
    X = _entity(12, 8, 5)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 3)[0]
    method = aud._audit_method("dp-prototypes", 3, 5.0, 0.5, 1e-6, {})
    res = aud.audit_target(X, tgt, method, 40, np.random.SeedSequence(2), attacks=("distance", "counts", "lr"))
    assert res["private"] and res["epsilon"] == pytest.approx(0.5)
    assert all(r["epsilon_lb"] <= res["epsilon"] for r in res["attacks"].values()), res["attacks"]


def test_the_summary_states_the_ceiling_of_the_strongest_test_it_ran():
    # one row certifies at most 1.2, another 3.0: a claim of 2 could have been refuted, so "consistent"
    def row(attack, ceiling):
        return {"method": "m", "requested_epsilon": 2.0, "epsilon": 2.0, "delta": 0.0, "private": True,
                "target": "t", "attack": attack, "epsilon_lb": 0.4, "auc": 0.6, "max_certifiable_epsilon": ceiling,
                "tpr_at_fpr": {"0.01": 0.1}, "family_size": 2}
    (s,) = aud.summarize([row("lr", 1.2), row("distance", 3.0)])
    assert s["max_certifiable_epsilon"] == 3.0 and s["verdict"] == "consistent"


@pytest.fixture(scope="module")
def three_entities() -> FederatedDataset:
    X = sp.vstack([_entity(10, 8, s) for s in (6, 7, 8)], format="csr")
    ent = np.repeat(["a", "b", "c"], 10)
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=5.0, name="three")


def test_a_summable_audit_of_a_later_entity_watches_that_entitys_share(three_entities):
    # the non-private limit of dp-popularity shows the audited entity's share exactly: the projection on the
    # target separates every IN run from every OUT run, whichever place the entity holds in the federation
    for entity in ("b", "c"):
        doc = aud.run_audit(three_entities, entity, methods=("dp-popularity",), epsilons=(math.inf,),
                            targets=("outlier",), runs=8, seed=1, others="data")
        r = next(r for r in doc["results"] if r["attack"] == "projection")
        assert r["auc"] == 1.0, entity


def test_a_named_user_of_a_later_entity_is_audited_with_that_users_row(three_entities):
    sl = three_entities.entity_slices()[2]
    uid = str(np.asarray(three_entities.user_ids)[sl][3])
    row = three_entities.X[sl][3].toarray().ravel()
    doc = aud.run_audit(three_entities, "c", methods=("krandom",), epsilons=(1.0,), k=3, targets=(f"user:{uid}",),
                        runs=4, attacks=("distance",), seed=0)
    (t,) = doc["targets"]
    assert t["user_id"] == uid and t["norm"] == pytest.approx(float(np.linalg.norm(np.clip(row, 0, 5.0))))
