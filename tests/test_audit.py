"""Membership-inference audit: statistics on hand-checked numbers, the DP method stays
under its claimed ε, the non-private methods leak, a broken "private" method is caught."""
from __future__ import annotations

import argparse
import json
import math
import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpfed_core.audit import lower_bounds as bounds
from dpfed_core.audit import membership as aud
from dpfed_core.audit import targets as audit_targets
from dpfed_core.cli import audit_cmd
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.federation.prototypes import KMeansPrototypes, PrototypeRelease


# ----------------------------------------------------------------------------- statistics
def test_clopper_pearson_hand_checked():
    # x = 0 and x = n have closed forms: hi = 1 − (α/2)^(1/n), lo = (α/2)^(1/n)
    lo, hi = bounds.clopper_pearson([0, 10], 10, 0.95)
    assert lo[0] == 0.0 and hi[1] == 1.0
    assert hi[0] == pytest.approx(1 - 0.025 ** 0.1, rel=1e-9)  # 0.308497
    assert lo[1] == pytest.approx(0.025 ** 0.1, rel=1e-9)  # 0.691503
    # 5/10: the textbook exact interval (0.1871, 0.8129)
    lo, hi = bounds.clopper_pearson(5, 10, 0.95)
    assert float(lo) == pytest.approx(0.187086, abs=1e-6)
    assert float(hi) == pytest.approx(0.812914, abs=1e-6)
    # and scipy's exact binomial interval for a few counts
    for x, n in [(3, 40), (17, 25), (99, 100)]:
        ci = stats.binomtest(x, n).proportion_ci(0.9, method="exact")
        lo, hi = bounds.clopper_pearson(x, n, 0.9)
        assert float(lo) == pytest.approx(ci.low, rel=1e-9) and float(hi) == pytest.approx(ci.high, rel=1e-9)


def test_epsilon_bound_hand_checked():
    # a perfect test on 100 + 100 runs: ln(0.963783 / 0.036217) = 3.2813 at 95 %
    a = 0.025 ** (1 / 100)
    e1, e2 = bounds.epsilon_bounds(100, 0, 0, 100, 0.0, 0.95)
    assert float(e1) == pytest.approx(math.log(a / (1 - a)), rel=1e-9)
    assert float(e1) == pytest.approx(3.2813, abs=1e-4) and float(e2) == pytest.approx(float(e1))
    e1, _ = bounds.epsilon_bounds(100, 0, 0, 100, 0.01, 0.95)
    assert float(e1) == pytest.approx(math.log((a - 0.01) / (1 - a)), rel=1e-9)  # 3.2709
    assert bounds.max_certifiable_epsilon(100) == pytest.approx(3.2813, abs=1e-4)
    # TPR 0.5, FPR 0.05 on 100 + 100: ln(TPR_lo / FPR_hi) with the exact CP bounds
    e1, e2 = bounds.epsilon_bounds(50, 50, 5, 95, 0.0, 0.95)
    t_lo = stats.beta.ppf(0.025, 50, 51)
    f_hi = stats.beta.ppf(0.975, 6, 95)
    assert float(e1) == pytest.approx(math.log(t_lo / f_hi), rel=1e-9)
    assert float(e1) == pytest.approx(1.2613, abs=1e-3)  # ln(0.3983 / 0.1128)
    # no separation: bounds are negative, the reported bound is floored at 0
    r = bounds.empirical_epsilon(np.arange(50.0), np.arange(50.0), np.arange(50.0), np.arange(50.0))
    assert r["epsilon_lb"] == 0.0


def test_roc_auc_and_tpr_at_fpr():
    out, inn = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    assert bounds.roc_auc(out, inn) == pytest.approx(7 / 9)  # 1 + ½ + 2 + ½ + 3 over 9 pairs
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    o, i = rng.normal(0, 1, 300), rng.normal(0.7, 1, 300)
    assert bounds.roc_auc(o, i) == pytest.approx(roc_auc_score(np.r_[np.zeros(300), np.ones(300)], np.r_[o, i]))
    fpr, tpr, thr = bounds.roc_curve(out, inn)
    assert fpr[0] == 0 and tpr[0] == 0 and fpr[-1] == 1 and tpr[-1] == 1
    assert bounds.tpr_at_fpr(fpr, tpr, 0.0) == pytest.approx(1 / 3)  # only the 3 beats every OUT score
    # 20 negative runs cannot resolve a 1 % false-positive rate (one false positive is 5 %): not a number
    f20, t20, _ = bounds.roc_curve(o[:20], i[:20])
    assert math.isnan(bounds.tpr_at_fpr(f20, t20, 0.01, n_out=20))
    assert bounds.tpr_at_fpr(f20, t20, 0.1, n_out=20) == bounds.tpr_at_fpr(f20, t20, 0.1)
    assert bounds.tpr_at_fpr(fpr, tpr, 0.01, n_out=100) == bounds.tpr_at_fpr(fpr, tpr, 0.01)
    doc = {"summary": [{"method": "m", "epsilon": 1.0, "epsilon_lb": 0.1, "max_certifiable_epsilon": 2.0, "auc": 0.6,
                        "tpr_at_fpr": {"0.01": math.nan, "0.1": 0.2}, "verdict": "consistent"}]}
    text = aud.format_summary(doc)
    assert "    n/r   0.200" in text and "raise the runs per class (--runs)" in text and "nan" not in text


def test_threshold_chosen_on_calibration_certified_on_evaluation():
    # perfectly separated: the bound is the ceiling of the evaluation half, not of all runs
    r = bounds.empirical_epsilon(np.zeros(50), np.ones(50), np.zeros(40), np.ones(40))
    assert r["epsilon_lb"] == pytest.approx(bounds.max_certifiable_epsilon(40))
    assert (r["tp"], r["fp"]) == (40, 0) and 0 < r["threshold"] < 1


# ----------------------------------------------------------------------------- targets
def _entity(n=30, m=20, seed=1) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    base = rng.poisson(1.0, size=(n, m)).astype(float)
    base[:, -4:] = 0.0  # four items nobody uses: where the worst-case row goes
    return sp.csr_matrix(base)


def test_targets_and_neighbours():
    X = _entity()
    X = sp.vstack([X, sp.csr_matrix(np.full((1, 20), 9.0))], format="csr")  # an obvious outlier, row 30
    tg = audit_targets.make_targets(X, ["synthetic", "outlier", "typical", "user:3"], value_max=5.0, support=4)
    syn, out, typ, u3 = tg
    assert set(np.flatnonzero(syn.row)) == {16, 17, 18, 19} and syn.row.max() == 5.0 and syn.index is None
    assert out.index == 30 and out.row.max() == 5.0  # clipped to the public bound
    assert typ.index != 30 and u3.index == 3 and u3.user_id == "3"
    D0, D1 = audit_targets.neighbouring_pair(X, syn)
    assert D0.shape[0] == 31 and D1.shape[0] == 32
    np.testing.assert_array_equal(D1[-1].toarray().ravel(), syn.row)
    D0, D1 = audit_targets.neighbouring_pair(X, out)
    assert D0.shape[0] == 30 and D1.shape[0] == 31 and abs(D0.sum() - (D1.sum() - 9.0 * 20)) < 1e-9
    with pytest.raises(ConfigError, match="no user with id 'nobody' in entity 'h1': give the id of one of its users, "
                                          "or audit the outlier or typical user instead") as exc:
        audit_targets.make_targets(X, ["user:nobody"], 5.0, 4, entity="h1")
    assert exc.value.param == "targets"
    with pytest.raises(ConfigError, match="unknown audit target"):
        audit_targets.make_targets(X, ["loudest"], 5.0, 4)


def test_nearest_and_mean_distances_are_those_to_the_other_users_hand_checked():
    """Three users on a line at 0, 5 and 10 (value units): each one's nearest other user and its mean
    distance to the two others, the same whatever the chunk the distances are computed in."""
    X = sp.csr_matrix(np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0]]))
    for chunk in (1, 2, 1024):
        nn, mean = audit_targets.nearest_neighbour_stats(X, chunk=chunk)
        np.testing.assert_allclose(nn, [5.0, 5.0, 5.0])
        np.testing.assert_allclose(mean, [7.5, 5.0, 7.5])


def test_a_targets_description_states_its_support_norm_and_exposure():
    X = sp.csr_matrix(np.array([[0.0, 0.0, 0.0], [3.0, 4.0, 0.0], [3.0, 4.0, 1.0]]))
    outlier = audit_targets.make_targets(X, ["outlier"], 9.0, 1)[0]
    assert outlier.index == 0 and outlier.kind == "outlier"
    assert outlier.describe() == {"name": "real user farthest from the rest (0)", "kind": "outlier", "user_id": "0", "nonzeros": 0,
                                  "norm": 0.0, "nn_distance": 5.0}
    user = audit_targets.make_targets(X, ["user:1"], 9.0, 1)[0].describe()
    assert user["nonzeros"] == 2 and user["norm"] == pytest.approx(5.0) and user["nn_distance"] == pytest.approx(1.0)


def test_the_synthetic_targets_exposure_is_its_distance_to_the_nearest_real_user():
    X = sp.csr_matrix(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    syn = audit_targets.make_targets(X, ["synthetic"], 2.0, 1)[0]
    np.testing.assert_array_equal(syn.row, [0.0, 2.0, 0.0])  # the least used item, the lowest index of a tie
    assert syn.nn_distance == pytest.approx(2.0)  # to the empty user; sqrt(5) to the other


def test_the_targets_are_checked_against_the_audited_entitys_own_users():
    """Before an audit is planned: a one-user entity has no real target, an id of another entity's user
    names that entity, an id of nobody says so; the entity's own users and its synthetic target pass."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0], [2.0, 2.0]]))
    ds = FederatedDataset.from_parts(X, np.array(["big", "big", "big", "solo"]),
                                     user_ids=np.array(["u1", "u2", "u3", "s1"]), value_max=5.0, name="t")
    audit_targets.check_target_users(ds, "big", ["synthetic", "outlier", "user:u2"])
    audit_targets.check_target_users(ds, "solo", ["synthetic"])
    with pytest.raises(ConfigError, match="needs an entity with at least 2 users, and entity 'solo' has 1") as err:
        audit_targets.check_target_users(ds, "solo", ["synthetic", "typical"])
    assert err.value.param == "targets"
    with pytest.raises(ConfigError, match="the user with id 's1' is in entity 'solo', not in 'big'") as err:
        audit_targets.check_target_users(ds, "big", ["user:s1"])
    assert err.value.param == "targets"
    with pytest.raises(ConfigError, match="no user with id 'zz' in entity 'big' \\(nor in any other\\)"):
        audit_targets.check_target_users(ds, "big", ["typical", "user:zz"])


# ----------------------------------------------------------------------------- the audit
@pytest.fixture(scope="module")
def small_ds() -> FederatedDataset:
    X = sp.vstack([_entity(30, 20, 1), _entity(20, 20, 2)], format="csr")
    ent = np.repeat(["a", "b"], [30, 20])
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=5.0, name="small")


@pytest.fixture(scope="module")
def small_audit(small_ds) -> dict:
    return aud.run_audit(small_ds, "b", methods=("dp-prototypes", "kmeans", "krandom"),
                         epsilons=(0.5, 1.0, 2.0), k=10, targets=("synthetic", "outlier"), runs=200, seed=0)


def _rows(doc, method, eps=None):
    return [r for r in doc["results"] if r["method"] == method
            and (eps is None or float(r["requested_epsilon"]) == eps)]


def test_dp_prototypes_lower_bound_never_exceeds_claimed(small_audit):
    for eps in (0.5, 1.0, 2.0):
        rows = _rows(small_audit, "dp-prototypes", eps)
        assert rows and all(r["epsilon"] == pytest.approx(eps) and r["private"] for r in rows)
        for r in rows:
            assert r["epsilon_lb"] <= r["epsilon"], (r["target"], r["attack"], r["epsilon_lb"])
    verdicts = {s["requested_epsilon"]: s["verdict"] for s in small_audit["summary"] if s["method"] == "dp-prototypes"}
    ceiling = min(r["max_certifiable_epsilon"] for r in _rows(small_audit, "dp-prototypes", 1.0)
                  if r["attack"] == "distance")
    # the ceiling these runs could certify (Bonferroni over targets × attacks) is well above ε = 0.5
    # and 1: the check has teeth there; at ε = 2 ≥ ceiling it would not, and says so
    assert ceiling > 2.5
    assert verdicts == {0.5: "consistent", 1.0: "consistent",
                        2.0: "consistent" if ceiling > 2.0 else "inconclusive"}


def test_kmeans_and_krandom_leak(small_audit):
    km = {r["target_kind"]: r for r in _rows(small_audit, "kmeans") if r["attack"] == "distance"}
    assert km["synthetic"]["auc"] > 0.9 and km["synthetic"]["epsilon_lb"] > 2.0
    assert km["synthetic"]["verbatim_in"] > 0.9  # the outlier becomes its own centroid
    kr = {r["target_kind"]: r for r in _rows(small_audit, "krandom") if r["attack"] == "distance"}
    # k-random publishes the target's raw row in k/(n+1) = 10/21 of the IN runs, never in OUT runs
    assert kr["synthetic"]["verbatim_in"] == pytest.approx(10 / 21, abs=0.08)
    assert kr["synthetic"]["verbatim_out"] == 0.0
    assert kr["synthetic"]["tpr_at_fpr"]["0.01"] > 0.35
    assert kr["synthetic"]["epsilon_lb"] > 1.0
    summ = {s["method"]: s for s in small_audit["summary"]}
    assert summ["kmeans"]["verdict"] == summ["krandom"]["verdict"] == "non-private (no guarantee)"
    assert math.isinf(summ["kmeans"]["epsilon"])


class _BrokenPrivate(KMeansPrototypes):
    """A canary: claims ε = 0.5 in its ledger but releases exact k-means centroids."""

    private = True
    name = "broken"

    def __init__(self, k=10, value_max=1.0, epsilon=0.5, delta=1e-6):
        super().__init__(k, value_max)
        self.epsilon, self.delta = epsilon, delta

    def release(self, X, rng, ledger):
        rel = super().release(X, rng, _Swallow())
        ledger.spend("prototypes", "Laplace (claimed)", self.epsilon, 0.0, 1.0, 2.0)
        return PrototypeRelease(rel.prototypes, rel.counts)


class _Swallow:
    entity = "x"

    def spend(self, *a, **k):
        return None


def test_audit_catches_a_broken_mechanism(small_ds):
    X = small_ds.X[small_ds.entity_slices()[1]]
    target = audit_targets.make_targets(X, ["synthetic"], 5.0, 20)[0]
    res = aud.audit_target(X, target, _BrokenPrivate(k=5, value_max=5.0), 100, np.random.SeedSequence(3))
    assert res["private"] and res["epsilon"] == pytest.approx(0.5)
    assert res["attacks"]["distance"]["epsilon_lb"] > 0.5  # flagged: above the claimed ε
    rows = [{"method": "broken", "requested_epsilon": 0.5, "epsilon": res["epsilon"], "delta": res["delta"],
             "private": True, "target": target.name, **a} for a in res["attacks"].values()]
    assert aud.summarize(rows)[0]["verdict"] == "VIOLATION"


def test_deterministic_and_independent_of_grid(small_ds):
    a = aud.run_audit(small_ds, "b", methods=("dp-prototypes",), epsilons=(1.0,), k=4, targets=("synthetic",),
                      runs=8, seed=5)
    b = aud.run_audit(small_ds, "b", methods=("dp-prototypes", "krandom"), epsilons=(2.0, 1.0), k=4,
                      targets=("synthetic",), runs=8, seed=5)
    ra = [r for r in a["results"] if r["attack"] == "distance"][0]
    rb = [r for r in b["results"] if r["attack"] == "distance" and r["method"] == "dp-prototypes"
          and r["requested_epsilon"] == 1.0][0]
    assert ra["roc"] == rb["roc"] and ra["auc"] == rb["auc"]


def test_a_k_above_the_entitys_users_is_said_with_what_each_release_held(small_ds, small_audit):
    # entity "b" has 20 users; the synthetic target joins them (20 or 21 rows per release)
    doc = aud.run_audit(small_ds, "b", methods=("kmeans", "dp-prototypes"), epsilons=(1.0,), k=500,
                        targets=("synthetic",), runs=8, seed=5)
    held = {r["method"]: r["prototypes_sent"] for r in doc["results"]}
    assert held["kmeans"] == [20, 21] and held["dp-prototypes"][1] < 20
    note = aud.prototypes_note(doc)
    assert note.startswith("k = 500 is above the 20 users of entity 'b'; prototypes a release held: "
                           "kmeans 20–21, dp-prototypes "), note
    assert note.endswith(". Audit with the --k your runs use") and note in aud.format_summary(doc)
    # k within the entity's users: every release held k, and nothing is said
    assert {tuple(r["prototypes_sent"]) for r in small_audit["results"] if r["method"] != "dp-prototypes"} == {(10, 10)}
    assert aud.prototypes_note(small_audit) == ""


def test_bad_parameters_are_friendly(small_ds):
    with pytest.raises(ConfigError, match="not a prototype method"):
        aud.run_audit(small_ds, "a", methods=("central",), runs=8)
    with pytest.raises(ConfigError, match="unknown entity"):
        aud.run_audit(small_ds, "nowhere", runs=8)
    with pytest.raises(ConfigError, match="runs"):
        aud.run_audit(small_ds, "a", runs=2)
    with pytest.raises(ConfigError, match="positive"):
        aud.run_audit(small_ds, "a", epsilons=(0.0,), runs=8)


def test_cli_writes_the_document(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    audit_cmd.register_cli(sub)
    out = tmp_path / "a.json"
    args = parser.parse_args(["audit", "--data", "sample:clinic", "--entity", "0", "--k", "5", "--runs", "8",
                              "--methods", "dp-prototypes,krandom", "--epsilons", "1", "--targets",
                              "synthetic", "--attacks", "distance", "--out", str(out)])
    assert args.func(args) == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "audit" and doc["config"]["runs"] == 8
    assert {s["method"] for s in doc["summary"]} == {"dp-prototypes", "krandom"}
    assert doc["summary"][1]["epsilon"] == "inf"  # strict JSON
    text = capsys.readouterr().out
    assert "claimed ε" in text and "non-private" in text


# ------------------------------------------------------------- verdicts that mean something
def test_verdict_is_inconclusive_when_the_claim_exceeds_what_the_runs_can_certify():
    # 100 runs per class certify at most ≈ 2.6, so a claim of 4 must not read "consistent" (green)
    # even for a mechanism with half its noise — it is inconclusive
    ceiling = bounds.max_certifiable_epsilon(50, 0.0, 1 - 0.05 / 6)
    assert aud.verdict_for(0.3, 4.0, ceiling) == "inconclusive"
    assert aud.verdict_for(0.3, 1.0, ceiling) == "consistent"
    assert aud.verdict_for(1.2, 1.0, ceiling) == "VIOLATION"
    assert aud.verdict_for(5.0, math.inf, ceiling) == "non-private (no guarantee)"


def test_audit_bounds_are_bonferroni_corrected_and_cover_the_counts(small_audit):
    cfg = small_audit["config"]
    # 2 targets × 3 attacks (distance, LR, counts): each test certified at 1 − 0.05/6
    assert cfg["family_size"] == 6 and cfg["per_test_confidence"] == pytest.approx(1 - 0.05 / 6)
    assert {r["attack"] for r in small_audit["results"]} == {"distance", "lr", "counts"}
    ceil6 = bounds.max_certifiable_epsilon(100, 0.0, 1 - 0.05 / 6)
    assert all(r["max_certifiable_epsilon"] == pytest.approx(ceil6)
               for r in small_audit["results"] if r["attack"] != "lr")
    assert ceil6 < bounds.max_certifiable_epsilon(100, 0.0, 0.95)  # the correction costs certifiable ε


def test_counts_attack_sees_a_count_released_without_noise():
    # a "private" method that releases noisy prototypes but its exact cluster sizes: the counts
    # attack must catch it (the old audit looked at the prototypes only)
    from dpfed_core.federation.dp_prototypes import DPGaussianPrototypes

    class ExactCounts(DPGaussianPrototypes):
        def release(self, X, rng, ledger):
            rel = super().release(X, rng, ledger)
            return PrototypeRelease(rel.prototypes, np.array([float(X.shape[0])]))

    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((30, 12)) < 0.3).astype(float))
    tgt = audit_targets.make_targets(X, ["synthetic"], 1.0, 12)[0]
    res = aud.audit_target(X, tgt, ExactCounts(k=1, value_max=1.0, epsilon=1.0, delta=1e-6), 100,
                           np.random.SeedSequence(0), attacks=("distance", "counts"))
    assert res["attacks"]["counts"]["epsilon_lb"] > 1.0
    assert res["attacks"]["distance"]["epsilon_lb"] <= 1.0


# ------------------------------------------------------------- summable releases
@pytest.fixture(scope="module")
def tiny_fed() -> FederatedDataset:
    """Four small entities over 12 items: three entities besides the audited one, so the secure sum
    and the server's public result between stages are those of a real federation."""
    X = sp.vstack([_entity(16, 12, s) for s in (3, 4, 5, 6)], format="csr")
    ent = np.repeat(["a", "b", "c", "d"], 16)
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=5.0, name="tiny")


@pytest.mark.parametrize("method", ["dp-popularity", "dp-cooccurrence"])
@pytest.mark.parametrize("aggregation", ["none", "secure"])
def test_summable_methods_are_audited_through_their_own_code(tiny_fed, method, aggregation):
    doc = aud.run_audit(tiny_fed, "b", methods=(method,), epsilons=(1.0,), targets=("synthetic", "outlier"),
                        runs=40, seed=0, aggregation=aggregation,
                        others="data" if method == "dp-cooccurrence" else "zeros")
    rows = _rows(doc, method, 1.0)
    # the claim is the ledger's for this trust model (dp-cooccurrence's two releases PLD-compose to ≤ ε)
    assert rows and all(r["private"] and 0.99 <= r["epsilon"] <= 1.0 + 1e-9 for r in rows)
    assert {r["attack"] for r in rows} == {"projection", "lr", "items"}
    # Bonferroni over targets × attacks, and every released stage attacked
    assert all(r["family_size"] == 6 and r["per_test_confidence"] == pytest.approx(1 - 0.05 / 6) for r in rows)
    assert ("sum over all entities" in rows[0]["release"]) == (aggregation == "secure")
    assert all(r["epsilon_lb"] <= r["epsilon"] for r in rows)
    s = doc["summary"][0]
    # 20 evaluation runs per class at 1 − 0.05/6 certify at most 1.154 > 1: the verdict can mean something
    assert s["max_certifiable_epsilon"] == pytest.approx(1.1544, abs=1e-3) and s["verdict"] == "consistent"
    assert doc["config"]["aggregation"] == aggregation
    assert doc["config"]["others"] == ("data" if method == "dp-cooccurrence" else "zeros")


def test_summable_audit_has_power_when_the_noise_is_shrunk(tiny_fed):
    # the same harness, the method run with ~1/50 of its noise but audited against its own claim:
    # the lower bound must exceed the claim (a harness that cannot see this proves nothing)
    sl = tiny_fed.entity_slices()
    Xh = sp.csr_matrix(tiny_fed.X[sl[1]], dtype=float)
    others = [sp.csr_matrix(tiny_fed.X[s], dtype=float) for j, s in enumerate(sl) if j != 1]
    tgt = audit_targets.make_targets(Xh, ["outlier"], 5.0, 12)[0]
    for name, agg in (("dp-popularity", "none"), ("dp-cooccurrence", "secure")):
        method = aud._audit_method(name, 10, 5.0, 0.5, 1e-6, {}, aggregation=agg)
        pc = aud.power_check(Xh, others, 1, tgt, method, 60, np.random.SeedSequence(3), factor=50.0, entity="b")
        assert pc["claimed_epsilon"] == pytest.approx(0.5, rel=1e-3)
        assert pc["detected"] and pc["epsilon_lb"] > pc["claimed_epsilon"], (name, pc)
        # and the honest mechanism at the same claim is not flagged
        honest = aud.audit_summable_target(Xh, others, 1, tgt, method, 60, np.random.SeedSequence(3), entity="b")
        assert max(r["epsilon_lb"] for r in honest["attacks"].values()) <= honest["epsilon"]


def test_summable_attack_sees_a_release_without_noise(tiny_fed):
    # the non-private limit (ε = ∞) of a summable release exposes the target: AUC 1 on the projection
    doc = aud.run_audit(tiny_fed, "a", methods=("dp-popularity",), epsilons=(math.inf,), targets=("outlier",),
                        runs=20, seed=1, others="data")
    r = next(r for r in doc["results"] if r["attack"] == "projection")
    assert r["auc"] == 1.0 and not r["private"] and doc["config"]["others"] == "data"


def test_power_check_in_the_audit_document(tiny_fed):
    doc = aud.run_audit(tiny_fed, "c", methods=("dp-popularity",), epsilons=(0.5,), targets=("outlier",),
                        runs=60, seed=2, power_factor=50.0)
    s = doc["summary"][0]
    assert s["power"]["detected"] and s["power"]["epsilon_lb"] > s["epsilon"]
    assert s["verdict"] == "consistent" and s["epsilon_lb"] <= s["epsilon"]


def test_cli_audits_summable_methods(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    audit_cmd.register_cli(sub)
    out = tmp_path / "s.json"
    args = parser.parse_args(["audit", "--data", "sample:clinic", "--entity", "0", "--runs", "8",
                              "--methods", "dp-cooccurrence,dp-popularity", "--epsilons", "1", "--targets",
                              "synthetic", "--aggregation", "secure", "--others", "data", "--power-check", "50",
                              "--out", str(out)])
    assert args.func(args) == 0
    doc = json.loads(out.read_text())
    assert {s["method"] for s in doc["summary"]} == {"dp-cooccurrence", "dp-popularity"}
    assert doc["config"]["aggregation"] == "secure"
    # 4 evaluation runs per class certify < 1: the claim is out of reach, the power check too
    for s in doc["summary"]:
        assert s["power"]["noise_factor"] == pytest.approx(0.02) and s["verdict"] == "inconclusive"
    assert "dp-cooccurrence" in aud.DEFAULT_METHODS


def test_the_audit_command_plans_a_charge_to_every_entity_when_the_others_hold_their_own_rows(
        tmp_path, capsys, monkeypatch):
    """--others data reads every entity's rows for a summable method: the command plans that charge (the
    others holding nothing, or a prototype method alone, charge the audited entity only)."""
    from dpfed_core.evaluation import budget

    asked = []
    real = budget.plan_audit

    def plan(*a, **kw):
        asked.append(kw.get("all_entities", False))
        return real(*a, **kw)

    monkeypatch.setattr(budget, "plan_audit", plan)
    monkeypatch.setattr(aud, "run_audit", lambda *a, **k: {"results": []})
    parser = argparse.ArgumentParser()
    audit_cmd.register_cli(parser.add_subparsers(dest="command"))
    base = ["audit", "--data", "sample:clinic", "--entity", "0", "--epsilons", "1", "--targets", "synthetic",
            "--runs", "8", "--dry-run", "--store", str(tmp_path / "store.sqlite3")]
    for extra in (["--methods", "dp-popularity", "--others", "data"], ["--methods", "dp-popularity"],
                  ["--methods", "kmeans", "--others", "data"]):
        args = parser.parse_args([*base, *extra])
        args.func(args)
    assert asked == [True, False, False]
    assert not (tmp_path / "store.sqlite3").exists()


def test_an_audit_reading_every_entity_charges_every_entity(tiny_fed):
    from dpfed_core.evaluation.budget import plan_audit

    own = plan_audit(tiny_fed, "b", ["dp-cooccurrence"], [1.0], 1e-6)[0]
    every = plan_audit(tiny_fed, "b", ["dp-cooccurrence"], [1.0], 1e-6, all_entities=True)[0]
    assert set(own.charges) == {"b"} and set(every.charges) == {"a", "b", "c", "d"}
    assert all(v == (math.inf, 0.0) for v in every.charges.values())


# ------------------------------------------------------------- the statistics, case by case
def test_the_tnr_form_subtracts_delta_like_the_tpr_form():
    # a test that never says IN on OUT runs (fp = 0) and finds half the IN runs: the TNR/FNR form
    # ln((TNR_lo − δ)/FNR_hi) with TNR_lo = 1 − FPR_hi = (α/2)^(1/n), FNR_hi = 1 − TPR_lo
    _, e2 = bounds.epsilon_bounds(50, 50, 0, 100, 0.01, 0.95)
    tnr_lo = 0.025 ** (1 / 100)
    fnr_hi = 1 - stats.beta.ppf(0.025, 50, 51)
    assert float(e2) == pytest.approx(math.log((tnr_lo - 0.01) / fnr_hi), rel=1e-9)


def test_the_auc_is_mann_whitney_for_classes_of_different_sizes():
    out, inn = np.array([0.0, 1.0, 2.0, 3.0, 4.0]), np.array([2.5, 5.0])
    assert bounds.roc_auc(out, inn) == pytest.approx((3 + 5) / 10)  # 2.5 beats three OUT scores, 5 all five


def test_the_threshold_is_chosen_on_calibration_scores_even_when_evaluation_would_favour_another():
    # calibration: the best test is "IN iff score ≥ 2.5" (TPR 0.8, FPR 0); on the evaluation runs it finds
    # nothing although a threshold of 0.5 would separate them perfectly — the bound must not pick that one
    cal_out, cal_in = np.r_[np.zeros(25), np.full(25, 2.0)], np.r_[np.ones(10), np.full(40, 3.0)]
    r = bounds.empirical_epsilon(cal_out, cal_in, np.zeros(40), np.ones(40))
    assert r["threshold"] == pytest.approx(2.5) and r["form"] == "tpr/fpr"
    assert (r["tp"], r["fn"], r["fp"], r["tn"]) == (0, 40, 0, 40) and r["epsilon_lb"] == 0.0


def test_the_form_is_chosen_on_calibration_and_only_its_bound_is_reported():
    # calibration favours TPR/FPR at 0.5 (tp 45/50, fp 0/50); on the evaluation runs TNR/FNR would be larger
    # (1.34) but the reported bound is the chosen form's, ln(TPR_lo/FPR_hi) with tp = 40/40, fp = 20/40
    r = bounds.empirical_epsilon(np.zeros(50), np.r_[np.ones(45), np.full(5, -1.0)],
                                 np.r_[np.zeros(20), np.ones(20)], np.ones(40))
    assert r["form"] == "tpr/fpr" and (r["tp"], r["fp"]) == (40, 20)
    tpr_lo = 0.025 ** (1 / 40)
    fpr_hi = stats.beta.ppf(0.975, 21, 20)
    assert r["epsilon_lb"] == pytest.approx(math.log(tpr_lo / fpr_hi), rel=1e-9)
    assert r["epsilon_lb"] == pytest.approx(0.3203, abs=1e-4)


def test_a_bound_equal_to_the_claim_is_no_violation_and_a_claim_at_the_ceiling_is_inconclusive():
    assert aud.verdict_for(1.0, 1.0, 3.0) == "consistent"
    assert aud.verdict_for(0.3, 2.5, 2.5) == "inconclusive"  # a perfect attack could show 2.5, not more


def test_the_summary_reports_the_strongest_attack_of_any_target():
    def row(target, attack, lb, auc):
        return {"method": "m", "requested_epsilon": 1.0, "epsilon": 1.0, "delta": 1e-6, "private": True,
                "target": target, "attack": attack, "epsilon_lb": lb, "auc": auc, "max_certifiable_epsilon": 3.0,
                "tpr_at_fpr": {"0.01": 0.0}, "family_size": 4}
    rows = [row("t1", "distance", 0.1, 0.55), row("t1", "lr", 0.2, 0.6), row("t2", "distance", 1.3, 0.7),
            row("t2", "lr", 0.0, 0.9)]
    (s,) = aud.summarize(rows)
    assert (s["epsilon_lb"], s["epsilon_lb_target"], s["epsilon_lb_attack"]) == (1.3, "t2", "distance")
    assert (s["auc"], s["auc_target"], s["auc_attack"]) == (0.9, "t2", "lr")
    assert s["verdict"] == "VIOLATION"


class _LeaksOnlyEarly:
    """A release that shows the target in its first ``early`` IN releases and is constant after: the LR
    attack fitted on the calibration half must be certified on the evaluation half, where nothing leaks."""

    name, private, epsilon, delta = "leaks-early", False, math.inf, 0.0

    def __init__(self, x, early):
        self.x, self.early, self.calls = x, early, 0

    def release(self, X, rng, ledger):
        i, label = divmod(self.calls, 2)  # the audit alternates OUT, IN for each run
        self.calls += 1
        P = self.x[None, :] if (label == 1 and i < self.early) else np.zeros((1, self.x.size))
        return PrototypeRelease(P, np.array([1.0]))


def test_the_lr_attack_is_certified_on_runs_it_was_not_fitted_on():
    X = _entity(20, 8, 2)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 4)[0]
    res = aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=20), 40, np.random.SeedSequence(0),
                           attacks=("lr",))
    assert res["attacks"]["lr"]["epsilon_lb"] == 0.0


@pytest.mark.parametrize("confidence,shown", [("0.95", "95%"), ("0.58", "58%"), ("0.975", "97.5%")])
def test_the_audit_command_states_the_confidence_it_was_given(tmp_path, capsys, monkeypatch, confidence, shown):
    """The printed Clopper–Pearson confidence is the one asked for (0.58 read as 57% when truncated)."""
    def no_runs(dataset, entity, **kw):  # the audit's releases are not what is checked here
        return {"entity": {"name": dataset.entity_names[0], "n_users": 5}, "timings": {"total": 0.0},
                "summary": [], "results": []}

    monkeypatch.setattr(aud, "run_audit", no_runs)
    parser = argparse.ArgumentParser()
    audit_cmd.register_cli(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["audit", "--data", "sample:clinic", "--entity", "0", "--methods", "dp-popularity",
                              "--epsilons", "1", "--runs", "8", "--confidence", confidence,
                              "--store", str(tmp_path / "store.sqlite3")])
    assert args.func(args) == 0
    assert f"8 runs per class, {shown} Clopper–Pearson" in capsys.readouterr().out


def test_the_audit_command_passes_its_defaults_and_flags_to_the_audit_and_warns_of_a_violation(
        tmp_path, capsys, monkeypatch):
    """What the command runs is what it was asked (an entity given by its index, the power check) at the
    stated defaults (200 runs per class, δ = 1e-6, the other entities holding nothing); its expected time
    counts every target and the power check's audits; a violation is said on stderr; --out is written."""
    seen = {}

    def violated(dataset, entity, **kw):
        if kw["runs"] in (4, 12):  # the time estimate's calibration: nothing timed
            return {"results": []}
        seen.update(kw, entity=entity)
        return {"entity": {"name": dataset.entity_names[1], "n_users": 5}, "timings": {"total": 0.0},
                "summary": [{"verdict": "VIOLATION"}], "results": []}

    monkeypatch.setattr(aud, "run_audit", violated)
    monkeypatch.setattr(aud, "format_summary", lambda doc: "the summary")
    parser = argparse.ArgumentParser()
    audit_cmd.register_cli(parser.add_subparsers(dest="command"))
    out = tmp_path / "audit.json"
    args = parser.parse_args(["audit", "--data", "sample:clinic", "--entity", "1", "--methods", "dp-popularity",
                              "--epsilons", "1,2", "--targets", "synthetic,typical", "--power-check", "50",
                              "--store", str(tmp_path / "store.sqlite3"), "--out", str(out)])
    assert args.func(args) == 0
    assert seen["entity"] == 1 and seen["runs"] == 200 and seen["delta"] == 1e-6 and seen["others"] == "zeros"
    assert seen["power_factor"] == 50
    said = capsys.readouterr()
    assert "for 6 audits of 200 runs per class" in said.out
    assert "WARNING: an empirical ε lower bound exceeds the claimed ε" in said.err
    assert json.loads(out.read_text())["summary"] == [{"verdict": "VIOLATION"}]


def test_the_time_estimate_is_timed_on_synthetic_data_of_the_entitys_shape_and_scales_with_the_audit():
    """Before an audit runs it states its time: per method a fixed part and a part per run, timed on
    synthetic data of the entity's shape, extrapolated to the grid, the targets and the runs."""
    from dpfed_core.audit.cost import _CALIBRATIONS, estimate_audit_seconds, synthetic_like

    syn = synthetic_like(40, 30, 200, 5.0, 3)
    Xa = syn.X[syn.entity_slices()[syn.entity_index("a")]]
    assert Xa.shape == (40, 30) and 190 <= Xa.nnz <= 240 and Xa.data.max() <= 5 and Xa.data.min() >= 1
    assert (np.diff(Xa.indptr) > 0).all() and syn.n_entities == 3
    common = dict(methods=["dp-popularity", "kmeans"], k=3, attacks=["distance", "counts"], delta=1e-6)
    one = estimate_audit_seconds((40, 30, 200), 5.0, 3, epsilons=[1.0], n_targets=1, runs=20, **common)
    assert one["jobs"] == 2 and one["seconds"] > 0 and one["calibration_seconds"] > 0
    parts, _ = _CALIBRATIONS[((40, 30, 200), 5.0, 3, ("dp-popularity", "kmeans"), 3, ("distance", "counts"), False,
                              10, 0.1, 1e-6, "{}", "none", 0, "synthetic")]
    (f_dp, s_dp), (f_km, s_km) = parts["dp-popularity"], parts["kmeans"]
    assert s_dp > 0 and s_km > 0
    # the same settings again: no second calibration, and the grid, targets and runs scale it exactly
    big = estimate_audit_seconds((40, 30, 200), 5.0, 3, epsilons=[0.5, 1.0, 2.0], n_targets=2, runs=100, **common)
    assert big["calibration_seconds"] == 0.0 and big["jobs"] == 3 * 2 + 2
    assert big["seconds"] == pytest.approx(6 * (f_dp + 100 * s_dp) + 2 * (f_km + 100 * s_km))


def test_the_audit_command_states_its_expected_time_before_it_runs(capsys):
    from dpfed_core.cli.main import main

    assert main(["audit", "--data", "sample:synthetic", "--methods", "dp-popularity", "--epsilons", "1",
                 "--targets", "typical", "--runs", "8", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"audit: expected time (about|under) .* for 1 audit of 8 runs per class, timed on a short "
                     r"audit of synthetic data of this entity's shape \([\d,]+ users × [\d,]+ items\)", out)


def test_an_audit_whose_releases_cannot_be_timed_says_so_and_is_not_remembered(monkeypatch):
    from dpfed_core.audit import cost

    monkeypatch.setattr(aud, "run_audit", lambda *a, **k: {"results": []})
    est = cost.estimate_audit_seconds((10, 8, 30), 5.0, 2, methods=["kmeans"], epsilons=[1.0], n_targets=1,
                                      runs=10, k=2, attacks=["distance"])
    assert est["seconds"] is None and est["jobs"] == 1
    assert not any(k[0] == (10, 8, 30) for k in cost._CALIBRATIONS)


def test_the_time_estimate_discards_the_warm_up_and_extrapolates_each_methods_fixed_and_per_run_seconds(
        monkeypatch):
    """Releases timed at a fixed cost plus one per run give back exactly those two parts (the first, warm-up
    audit discarded); a cost per run that falls with the runs (timing noise) is charged per run at the larger
    count's rate; each private (method, ε) counts once per target and once more per finite ε for a power
    check, a non-private method once per target; a second estimate of the same settings is not recalibrated."""
    from dpfed_core.audit import cost

    calls = []

    def timed(ds, entity, *, methods, runs, **kw):
        calls.append(runs)
        rows = []
        for m in methods:
            sec = 100.0 if len(calls) == 1 else {"dp-popularity": 2.0 + 0.5 * runs, "kmeans": 3.0 - 0.1 * runs}[m]
            rows += [{"method": m, "requested_epsilon": 1.0, "target": "t", "seconds": sec}] * 2  # two attacks
        return {"results": rows}

    monkeypatch.setattr(aud, "run_audit", timed)
    monkeypatch.setattr(cost, "_CALIBRATIONS", {})
    settings = dict(methods=["dp-popularity", "kmeans"], epsilons=[0.5, 1.0, math.inf], n_targets=2, runs=40, k=2,
                    attacks=["distance", "counts"], power_check=True)
    est = cost.estimate_audit_seconds((11, 7, 20), 5.0, 3, **settings)
    assert calls == [4, 4, 12]
    (parts, _), = cost._CALIBRATIONS.values()
    assert parts["dp-popularity"] == pytest.approx((2.0, 0.5)) and parts["kmeans"] == pytest.approx((0.0, 0.15))
    assert est["jobs"] == (3 * 2 + 2) + 2 and est["calibration_seconds"] > 0
    assert est["seconds"] == pytest.approx(8 * (2.0 + 0.5 * 40) + 2 * (0.15 * 40))
    again = cost.estimate_audit_seconds((11, 7, 20), 5.0, 3, **{**settings, "runs": 100, "power_check": False})
    assert calls == [4, 4, 12] and again["calibration_seconds"] == 0.0 and again["jobs"] == 6 + 2
    assert again["seconds"] == pytest.approx(6 * (2.0 + 0.5 * 100) + 2 * (0.15 * 100))


def test_the_time_estimate_of_an_entity_is_timed_on_that_entitys_shape(monkeypatch):
    """The audit reads one entity's rows, so its time is extrapolated from data of that entity's users, items
    and entries (not the whole federation's), with the data's value bound and number of entities, and the
    sentence states that entity's size."""
    from dpfed_core.audit import cost

    X = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0], [1, 1, 1], [0, 0, 4], [2, 0, 0]], dtype=float))
    ds = FederatedDataset.from_parts(X, np.array(["a", "a", "b", "b", "b"]), value_max=4.0)
    seen = []

    def estimate(shape, value_max, n_entities, **settings):
        seen.append((shape, value_max, n_entities, settings))
        return {"seconds": 1.0, "calibration_seconds": 0.0, "jobs": 1}

    monkeypatch.setattr(cost, "estimate_audit_seconds", estimate)
    est = cost.estimate_for_entity(ds, "b", runs=7)
    assert seen == [((3, 3, 5), 4.0, 2, {"runs": 7})]
    assert (est["n_users"], est["n_items"]) == (3, 3)
    assert "(3 users × 3 items)" in cost.estimate_phrase(est, 7)


def test_the_calibration_data_spans_the_public_bound_and_gives_every_user_an_entry():
    from dpfed_core.audit.cost import synthetic_like

    syn = synthetic_like(60, 40, 10, 3.0, 4)
    Xa = syn.X[syn.entity_slices()[syn.entity_index("a")]]
    assert Xa.shape == (60, 40) and (np.diff(Xa.indptr) > 0).all()
    assert set(np.unique(Xa.data)) <= {1.0, 2.0, 3.0} and Xa.data.max() == 3.0
    assert syn.n_entities == 4 and syn.X.shape[0] == 63 and syn.value_max == 3.0


def test_a_real_target_in_an_entity_of_one_user_names_the_targets_that_fix_it():
    """The entity has too few users for an outlier or typical user; the synthetic target still audits it."""
    from dpfed_core.cli.main import render_error
    from dpfed_core.ui.inputs import friendly_message

    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0]]))
    with pytest.raises(ConfigError) as err:
        audit_targets.make_targets(X, ["synthetic", "outlier"], 5.0, 4, entity="solo")
    assert err.value.param == "targets"
    assert render_error(err.value) == (
        "auditing a real user (the outlier, typical or user:<id> target) needs an entity with at least 2 users, "
        "and entity 'solo' has 1: audit its synthetic target only (--targets synthetic), or audit another entity "
        "(--entity)")
    assert "“Target users” on the Privacy audit page set to synthetic" in friendly_message(err.value)
    assert len(audit_targets.make_targets(X, ["synthetic"], 5.0, 4, entity="solo")) == 1


# ------------------------------------------------------------- the audit's own limits, at their edges
def _options(**kw):
    opts = dict(delta=1e-6, k=4, prototype_params=None, targets=["synthetic"], runs=8, attacks=["distance"],
                confidence=0.95, aggregation="none", max_dropouts=0, others="zeros")
    opts.update(kw)
    return aud.check_audit_options(["kmeans"], [1.0], **opts)


def _summable_audit_of_entity_b(fed):
    """Entity b's rows, three empty other entities, a dp-popularity release at ε = 1 and a synthetic target."""
    Xh = sp.csr_matrix(fed.X[fed.entity_slices()[1]], dtype=float)
    empty = [sp.csr_matrix((0, Xh.shape[1])) for _ in range(3)]
    method = aud._audit_method("dp-popularity", 4, 5.0, 1.0, 1e-6, {})
    return Xh, empty, method, audit_targets.make_targets(Xh, ["synthetic"], 5.0, 4)[0]


def test_fewer_than_four_runs_per_class_are_refused_by_every_entry_of_the_audit(tiny_fed):
    """Four runs per class is the least an audit can split into a calibration half and, for the LR attack,
    an evaluation half of its own two halves: three are refused by the options, a prototype audit and a
    summable audit alike, and four are accepted."""
    X = _entity(20, 8, 2)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 4)[0]
    with pytest.raises(ConfigError, match="runs"):
        _options(runs=3)
    _options(runs=4)
    with pytest.raises(ConfigError, match="at least 4 runs per class, got 3"):
        aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=0), 3, np.random.SeedSequence(0))
    assert aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=0), 4, np.random.SeedSequence(0))["runs"] == 4
    Xh, empty, method, stgt = _summable_audit_of_entity_b(tiny_fed)
    with pytest.raises(ConfigError, match="at least 4 runs per class, got 3") as refused:
        aud.audit_summable_target(Xh, empty, 1, stgt, method, 3, np.random.SeedSequence(0))
    assert refused.value.param == "runs"
    assert aud.audit_summable_target(Xh, empty, 1, stgt, method, 4, np.random.SeedSequence(0))["runs"] == 4


def test_a_direct_call_with_an_unknown_attack_or_too_few_runs_names_the_option_that_fixes_it(tiny_fed):
    """The per-target audits are reached by library calls too: their refusals carry the option's name, so
    the CLI's and the page's renderers name the flag (``--runs``, ``--attacks``), not only the sentence."""
    X = _entity(20, 8, 2)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 4)[0]
    for call, param in ((lambda: aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=0), 3,
                                                  np.random.SeedSequence(0)), "runs"),
                        (lambda: aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=0), 4,
                                                  np.random.SeedSequence(0), attacks=("bogus",)), "attacks")):
        with pytest.raises(ConfigError) as refused:
            call()
        assert refused.value.param == param
    Xh, empty, method, stgt = _summable_audit_of_entity_b(tiny_fed)
    with pytest.raises(ConfigError, match="unknown attack 'bogus'") as refused:
        aud.audit_summable_target(Xh, empty, 1, stgt, method, 4, np.random.SeedSequence(0), attacks=("bogus",))
    assert refused.value.param == "attacks"


@pytest.mark.parametrize("factor", [1.0, 0.5, 0.0, -3.0, float("inf"), float("nan")])
def test_a_power_check_that_does_not_shrink_the_noise_is_refused_before_the_audit(small_ds, factor):
    """A power check reruns the harness with the noise divided by the factor; a factor ≤ 1 (or not finite)
    shrinks nothing, so its "passed" would say the harness could see a broken mechanism it could not: refused
    by the library call as by ``--power-check``, naming the option, before any run."""
    with pytest.raises(ConfigError, match="power_factor is the factor the noise is shrunk by") as refused:
        aud.run_audit(small_ds, "b", methods=("dp-popularity",), epsilons=(1.0,), targets=("synthetic",),
                      runs=4, power_factor=factor)
    assert refused.value.param == "power_factor"


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, 1.5])
def test_a_confidence_of_zero_or_one_or_beyond_is_refused(confidence):
    """A confidence of 1 would ask every Clopper–Pearson bound to hold surely (no lower bound above 0 is
    certifiable); 0 asks nothing. Both ends are refused, naming the confidence; just inside them is accepted."""
    with pytest.raises(ConfigError, match="confidence must be in") as err:
        _options(confidence=confidence)
    assert err.value.param == "confidence"
    _options(confidence=0.999)
    _options(confidence=0.001)


def test_a_user_target_without_an_id_is_refused_before_the_audit_is_planned():
    with pytest.raises(ConfigError, match="unknown audit target 'user:'") as err:
        _options(targets=["user:"])
    assert err.value.param == "targets"
    _options(targets=["user:7"])


def test_the_lr_attacks_ceiling_is_that_of_the_runs_it_certifies_on(tiny_fed):
    """The LR attack is fitted on the calibration half and certifies on half of the evaluation half; the most
    it can certify (and the runs it states) are those of that quarter, for a prototype and a summable audit."""
    X = _entity(20, 8, 2)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 4)[0]
    res = aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=0), 40, np.random.SeedSequence(0),
                           attacks=("distance", "lr"), confidence=0.9)
    lr, dist = res["attacks"]["lr"], res["attacks"]["distance"]
    assert (dist["n_certify_per_class"], lr["n_certify_per_class"]) == (20, 10)
    assert dist["max_certifiable_epsilon"] == pytest.approx(bounds.max_certifiable_epsilon(20, 0.0, 0.9))
    assert lr["max_certifiable_epsilon"] == pytest.approx(bounds.max_certifiable_epsilon(10, 0.0, 0.9))
    Xh, empty, method, stgt = _summable_audit_of_entity_b(tiny_fed)
    s = aud.audit_summable_target(Xh, empty, 1, stgt, method, 12, np.random.SeedSequence(0),
                                  attacks=("distance", "lr"), confidence=0.9)
    slr, proj = s["attacks"]["lr"], s["attacks"]["projection"]
    assert (proj["n_certify_per_class"], slr["n_certify_per_class"]) == (6, 3)
    assert slr["max_certifiable_epsilon"] == pytest.approx(bounds.max_certifiable_epsilon(3, s["delta"], 0.9))
    assert proj["max_certifiable_epsilon"] == pytest.approx(bounds.max_certifiable_epsilon(6, s["delta"], 0.9))


def test_each_methods_family_counts_the_attacks_it_runs_and_the_config_states_the_largest(tiny_fed):
    """With ``with_v`` a prototype method runs one attack more (v-residual); a summable method runs only its
    own attacks (distance → projection, lr; v-residual needs prototypes). Each row is certified at
    1 − (1 − c)/F of its own method's family; the config states the largest family."""
    doc = aud.run_audit(tiny_fed, "b", methods=("krandom", "dp-popularity"), epsilons=(1.0,), k=4,
                        targets=("synthetic", "outlier"), runs=4, attacks=("distance", "lr"), with_v=True,
                        rank=2, seed=0)
    fams = {(r["method"], r["attack"]): (r["family_size"], r["per_test_confidence"]) for r in doc["results"]}
    assert {a for m, a in fams if m == "krandom"} == {"distance", "lr", "v-residual"}
    assert {a for m, a in fams if m == "dp-popularity"} == {"projection", "lr"}
    for (m, _), (fam, conf) in fams.items():
        assert fam == (2 * 3 if m == "krandom" else 2 * 2)
        assert conf == pytest.approx(1 - 0.05 / fam)
    assert doc["config"]["family_size"] == 6
    assert doc["config"]["per_test_confidence"] == pytest.approx(1 - 0.05 / 6)
    assert {s["method"]: s["family_size"] for s in doc["summary"]} == {"krandom": 6, "dp-popularity": 4}


def test_a_power_check_that_sees_nothing_turns_a_consistent_verdict_inconclusive(tiny_fed):
    """With the noise barely shrunk (factor 1.5) the harness cannot tell the mechanism from a broken one at
    these runs: the power check reports nothing detected, and the verdict that read "consistent" (the same
    audit as with factor 50) reads "inconclusive"."""
    sl = tiny_fed.entity_slices()
    Xh = sp.csr_matrix(tiny_fed.X[sl[2]], dtype=float)
    others = [sp.csr_matrix((0, Xh.shape[1])) for _ in range(3)]
    tgt = audit_targets.make_targets(Xh, ["outlier"], 5.0, 12)[0]
    method = aud._audit_method("dp-popularity", 10, 5.0, 0.5, 1e-6, {})
    pc = aud.power_check(Xh, others, 2, tgt, method, 60, np.random.SeedSequence(2), factor=1.5, entity="c")
    assert not pc["detected"] and pc["epsilon_lb"] <= pc["claimed_epsilon"]
    doc = aud.run_audit(tiny_fed, "c", methods=("dp-popularity",), epsilons=(0.5,), targets=("outlier",),
                        runs=60, seed=2, power_factor=1.5)
    s = doc["summary"][0]
    assert not s["power"]["detected"] and s["power"]["epsilon_lb"] <= s["epsilon"]
    assert s["epsilon_lb"] <= s["epsilon"] < s["max_certifiable_epsilon"]  # would read "consistent"
    assert s["verdict"] == "inconclusive"


def test_the_summary_reports_the_largest_verbatim_share_and_the_largest_resolvable_tpr_of_any_row():
    def row(target, attack, verbatim, tpr):
        return {"method": "m", "requested_epsilon": math.inf, "epsilon": math.inf, "delta": 0.0, "private": False,
                "target": target, "attack": attack, "epsilon_lb": 0.5, "auc": 0.6, "max_certifiable_epsilon": 3.0,
                "tpr_at_fpr": {"0.01": tpr, "0.1": 0.5}, "family_size": 3, "verbatim_in": verbatim}
    rows = [row("t1", "distance", 0.0, math.nan), row("t2", "distance", 0.4, 0.25), row("t2", "lr", 0.4, 0.1)]
    (s,) = aud.summarize(rows)
    assert s["verbatim_in"] == 0.4 and s["tpr_at_fpr"] == {"0.01": 0.25, "0.1": 0.5}
    (only_nan,) = aud.summarize([rows[0], row("t3", "lr", 0.0, math.nan)])
    assert math.isnan(only_nan["tpr_at_fpr"]["0.01"]) and only_nan["verbatim_in"] == 0.0


def test_a_k_equal_to_the_entitys_users_is_no_reason_for_a_note_and_one_more_is():
    def doc(k):
        return {"config": {"k": k}, "entity": {"name": "b", "n_users": 20},
                "results": [{"method": "kmeans", "prototypes_sent": [20, 20]},
                            {"method": "kmeans", "prototypes_sent": [19, 20]}]}
    assert aud.prototypes_note(doc(20)) == ""
    assert aud.prototypes_note(doc(21)) == ("k = 21 is above the 20 users of entity 'b'; prototypes a release held: "
                                            "kmeans 19–20. Audit with the --k your runs use")


def test_the_lr_attack_scores_in_runs_higher_so_a_release_that_always_leaks_reaches_its_ceiling():
    X = _entity(20, 8, 2)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 4)[0]
    res = aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=40), 40, np.random.SeedSequence(0),
                           attacks=("lr",))
    lr = res["attacks"]["lr"]
    assert lr["auc"] == 1.0 and lr["form"] == "tpr/fpr"
    assert lr["epsilon_lb"] == pytest.approx(lr["max_certifiable_epsilon"]) and lr["epsilon_lb"] > 0.8


def test_a_false_positive_rate_finer_than_one_out_run_is_not_resolved_in_the_audits_rows():
    """40 OUT runs cannot show a 1 % false-positive rate (one false positive is 2.5 %): NaN (shown n/r),
    while 5 % is a number; the LR attack's ROC has only its 20 evaluation runs per class, which resolve 5 %
    (one in 20) and not 2.5 %."""
    X = _entity(20, 8, 2)
    tgt = audit_targets.make_targets(X, ["synthetic"], 5.0, 4)[0]
    res = aud.audit_target(X, tgt, _LeaksOnlyEarly(tgt.row, early=40), 40, np.random.SeedSequence(0),
                           attacks=("distance", "lr"), fprs=(0.01, 0.025, 0.05))
    dist, lr = res["attacks"]["distance"], res["attacks"]["lr"]
    assert (dist["n_roc_per_class"], lr["n_roc_per_class"]) == (40, 20)
    assert math.isnan(dist["tpr_at_fpr"]["0.01"]) and dist["tpr_at_fpr"]["0.025"] == dist["tpr_at_fpr"]["0.05"] == 1.0
    assert math.isnan(lr["tpr_at_fpr"]["0.01"]) and math.isnan(lr["tpr_at_fpr"]["0.025"])
    assert lr["tpr_at_fpr"]["0.05"] == 1.0


def test_an_attack_on_summable_releases_only_is_refused_for_a_prototype_method_before_the_audit_is_planned():
    """`projection` and `items` attack a summable release; an audit of a prototype method refuses them among
    its options (the CLI checks those before it plans or charges), naming the attacks it takes."""
    opts = dict(delta=1e-6, k=4, prototype_params=None, targets=["synthetic"], runs=8, confidence=0.95,
                aggregation="none", max_dropouts=0, others="zeros")
    for attack in ("projection", "items"):
        for methods in (["kmeans"], ["dp-popularity", "dp-gaussian"]):
            with pytest.raises(ConfigError, match=f"attack '{attack}' applies to a summable release only") as exc:
                aud.check_audit_options(methods, [1.0], attacks=[attack], **opts)
            assert exc.value.param == "attacks" and "choose from distance, lr, v-residual, counts" in str(exc.value)
            assert "projection" not in str(exc.value).split("choose from")[1]
        aud.check_audit_options(["dp-popularity"], [1.0], attacks=[attack], **opts)
    with pytest.raises(ConfigError, match="unknown attack 'nearest'; choose from distance, lr, v-residual, counts, "
                                          "projection, items"):
        aud.check_audit_options(["dp-popularity"], [1.0], attacks=["nearest"], **opts)
    aud.check_audit_options(["kmeans", "dp-popularity"], [1.0], attacks=["distance", "lr", "counts"], **opts)


def test_a_downsampled_roc_shows_at_each_false_positive_rate_no_more_than_the_attack_reaches_there():
    """The plotted ROC keeps the step shape: at each grid FPR the best TPR of a test whose FPR is at most
    it, never that of the next test above it (which would draw the attack stronger than it is)."""
    fpr = np.concatenate([[0.0], (np.arange(2000) + 0.5) / 2000, [1.0]])
    tpr = np.sqrt(fpr)
    f, t = (np.asarray(a) for a in bounds.downsample_roc(fpr, tpr, n=21))
    assert f[0] == 0.0 and f[-1] == 1.0 and t[-1] == 1.0 and len(f) == 23
    for x, y in zip(f[1:-1], t[1:-1]):
        reach = tpr[fpr <= x + 1e-15].max()
        assert y == reach, (x, y, reach)
    short_f, short_t = bounds.downsample_roc(fpr[:10], tpr[:10], n=21)
    assert short_f == fpr[:10].tolist() and short_t == tpr[:10].tolist()


def test_an_entity_of_two_users_has_real_targets_and_one_of_one_user_only_its_synthetic_one():
    """A real target is measured against the entity's other users: two users are enough, one is not."""
    X = sp.csr_matrix(np.array([[1.0, 0.0, 0.0], [0.0, 3.0, 4.0]]))
    assert not audit_targets.too_few_users(2, ["outlier"]) and audit_targets.too_few_users(1, ["outlier"])
    assert not audit_targets.too_few_users(1, ["synthetic"])
    out, typ = audit_targets.make_targets(X, ["outlier", "typical"], 5.0, 1)
    assert out.nn_distance == pytest.approx(np.sqrt(1 + 9 + 16)) and typ.index in (0, 1)
    with pytest.raises(ConfigError, match="needs an entity with at least 2 users, and entity 'h' has 1"):
        audit_targets.make_targets(X[:1], ["typical"], 5.0, 1, entity="h")


@pytest.mark.parametrize("support,items", [(0, [1]), (1, [1]), (2, [1, 2]), (9, [0, 1, 2])])
def test_the_synthetic_target_holds_at_least_one_item_and_at_most_the_catalogue(support, items):
    X = sp.csr_matrix(np.array([[1.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
    row = audit_targets.worst_case_row(X, 4.0, support)
    assert np.flatnonzero(row).tolist() == items and set(row[items]) == {4.0}
