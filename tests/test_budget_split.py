"""The declared budget split of multi-stage methods (:mod:`dpfed_core.privacy.budget_split`).

dp-cooccurrence and dp-als compute their calibration through the split; their σ, ρ and charges are
pinned here as literal values (w·ρ to the popularity release, the rest to the others, δ evenly), so
any change of the helper that moves a release by one bit fails here. A two-stage method that calls ``gaussian_share`` at each stage charges each stage its share
and stays within (ε, δ)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.errors import ConfigError
from dpfed_core.federation.dp_als import _als_plan
from dpfed_core.federation.summable import SummableMethod, _cooccurrence_plan
from dpfed_core.privacy import noise
from dpfed_core.privacy.budget_split import split_by, split_evenly_over
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.privacy.statement import epsilon_that_holds

INF = math.inf

COOCCURRENCE_PLANS = {
    (1.0, 1e-06, 0.5, 2.0): {
        'sigma': {'popularity': 6.407628138751314, 'co-occurrence': 6.407628138751314},
        'rho': {'popularity': 0.012177985178534832, 'co-occurrence': 0.012177985178534832},
        'epsilon': 0.9999999999467976, 'divisor': 2.0, 'coalition_epsilon': 2.1117341010862565,
        'stage_epsilon': {'popularity': 0.7138739043862665, 'co-occurrence': 0.7138739043862665}},
    (3.0, 1e-05, 0.85, 1.0): {
        'sigma': {'popularity': 1.619608835006691, 'co-occurrence': 3.8554401924786488},
        'rho': {'popularity': 0.19061179299005224, 'co-occurrence': 0.03363737523353864},
        'epsilon': 2.999999999832534, 'divisor': 1.0, 'coalition_epsilon': 2.999999999832534,
        'stage_epsilon': {'popularity': 2.8358485062911774, 'co-occurrence': 1.0960548360373321}},
    (INF, 1e-06, 0.5, 2.0): {
        'sigma': {'popularity': 0.0, 'co-occurrence': 0.0}, 'rho': {'popularity': INF, 'co-occurrence': INF},
        'epsilon': INF, 'coalition_epsilon': INF, 'divisor': 2.0},
}

_S2 = 1.4142135623730951
ALS_PLANS = {
    (1.0, 1e-06, 0.3, 3, 2.0): {
        'sigma': {'popularity': 8.27221235669129, 'als-1': 13.265050323124946, 'als-2': 13.265050323124946,
                  'als-3': 13.265050323124946},
        'rho': {'popularity': 0.007306791107120899, 'als-1': 0.005683059749982921, 'als-2': 0.005683059749982921,
                'als-3': 0.005683059749982921},
        'sensitivity': {'popularity': 1.0, 'als-1': _S2, 'als-2': _S2, 'als-3': _S2},
        'epsilon': 0.9999999999467976, 'divisor': 2.0, 'coalition_epsilon': 2.1117341010862565,
        'stage_epsilon': {'popularity': 0.5620703999896137, 'als-1': 0.49217031895655106,
                          'als-2': 0.49217031895655106, 'als-3': 0.49217031895655106},
        'stage_delta': 2.5e-07},
    (0.5, 0.0001, 0.6, 1, 1.0): {
        'sigma': {'popularity': 8.44669222832372, 'als-1': 14.630099914752215},
        'rho': {'popularity': 0.0070080420772745304, 'als-1': 0.0046720280515163545},
        'sensitivity': {'popularity': 1.0, 'als-1': _S2}, 'epsilon': 0.49999999999999994, 'divisor': 1.0,
        'coalition_epsilon': 0.49999999999999994,
        'stage_epsilon': {'popularity': 0.4000775477882349, 'als-1': 0.32020073655171954}, 'stage_delta': 5e-05},
    (INF, 1e-06, 0.3, 3, 2.0): {
        'sigma': {'popularity': 0.0, 'als-1': 0.0, 'als-2': 0.0, 'als-3': 0.0},
        'rho': {'popularity': INF, 'als-1': INF, 'als-2': INF, 'als-3': INF},
        'sensitivity': {'popularity': 1.0, 'als-1': _S2, 'als-2': _S2, 'als-3': _S2},
        'epsilon': INF, 'coalition_epsilon': INF, 'divisor': 2.0,
        'stage_epsilon': {'popularity': INF, 'als-1': INF, 'als-2': INF, 'als-3': INF}, 'stage_delta': 0.0},
}

#: (stage, ε, δ, sensitivity, σ, ρ) of entity e0's rows in :func:`_fit` (ε = 1, δ = 1e-6, 3 entities).
LEDGER_ROWS = {
    "dp-cooccurrence": [
        ('popularity', 0.7138739043862665, 5e-07, 1.0, 6.407628138751314, 0.0121779841520496),
        ('co-occurrence', 0.7138739043862665, 5e-07, 1.0, 6.407628138751314, 0.012177984152131742)],
    "dp-als": [
        ('popularity', 0.5547737384039707, 3.333333333333333e-07, 1.0, 8.27221235669129, 0.00730679049122976),
        ('als-1', 0.6019499208535872, 3.333333333333333e-07, _S2, 10.830868234665747, 0.008524589116902462),
        ('als-2', 0.6019499208535872, 3.333333333333333e-07, _S2, 10.830868234665747, 0.008524589116902462)],
}


@pytest.mark.parametrize("args", list(COOCCURRENCE_PLANS), ids=str)
def test_cooccurrence_plan_is_unchanged_by_the_split(args):
    assert _cooccurrence_plan.__wrapped__(*args) == COOCCURRENCE_PLANS[args]


@pytest.mark.parametrize("args", list(ALS_PLANS), ids=str)
def test_als_plan_is_unchanged_by_the_split(args):
    assert _als_plan.__wrapped__(*args) == ALS_PLANS[args]


def _twins(n=12, m=9, entities=3):
    from dpfed_core.data.dataset import FederatedDataset

    X = sp.csr_matrix(np.tile((np.arange(n * m).reshape(n, m) % 3 == 0).astype(float), (entities, 1)))
    ent = np.repeat([f"e{h}" for h in range(entities)], n)
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=1.0, name="twins")


@pytest.mark.parametrize("name", list(LEDGER_ROWS))
def test_multi_stage_methods_charge_what_they_charged(name):
    from dpfed_core.federation.protocol import FederatedRecommender

    params = {"steps": 2} if name == "dp-als" else None
    model = FederatedRecommender(method=name, rank=2, epsilon=1.0, delta=1e-6, random_state=0, max_iter=5,
                                 aggregation="secure", simulation=True, params=params).fit(_twins())
    rows = [(r.stage, r.epsilon, r.delta, r.sensitivity, r.noise_scale, r.rho)
            for r in model.ledger_.rows if r.entity == "e0"]
    assert rows == LEDGER_ROWS[name]


def test_a_split_declares_fractions_and_refuses_more_than_the_whole():
    even = split_evenly_over(["a", "b", "c"])
    assert even.fractions() == {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}
    mixed = split_by({"pop": 0.4}) + split_evenly_over(["s1", "s2"], share=0.6)
    assert mixed.stages == ("pop", "s1", "s2") and mixed.fractions()["s2"] == pytest.approx(0.3)
    with pytest.raises(ConfigError, match="add up to"):
        split_by({"a": 0.7, "b": 0.7})
    with pytest.raises(ConfigError, match="twice"):
        split_by({"a": 0.5}) + split_by({"a": 0.5})
    with pytest.raises(ConfigError, match="covers stages"):
        even.check_stages(["a", "b"])
    plan = split_by({"a": 0.2, "b": 0.8}).plan(1.0, 1e-6)
    assert plan.rho["a"] + plan.rho["b"] == pytest.approx(noise.zcdp_rho_for_epsilon(1.0, 1e-6))
    assert plan.sigma("a", 1.0) == pytest.approx(2 * plan.sigma("b", 1.0), rel=1e-6)  # σ ∝ 1/√ρ
    with pytest.raises(ConfigError, match="no share"):
        plan.sigma("c", 1.0)


class _TwoSums(SummableMethod):
    """Two Gaussian sums, each through ``gaussian_share``: binarised unit-norm rows (Δ₂ = 1), then
    their squares (Δ₂ = 1)."""

    stages = ("first", "second")

    def share(self, X, rng, ledger, n_entities, stage="first", public=None):
        B = sp.csr_matrix(X, dtype=np.float64, copy=True)
        B.data[:] = 1.0
        norms = np.sqrt(np.asarray(B.sum(axis=1)).ravel())
        B = sp.diags(np.where(norms > 0, 1.0 / np.maximum(norms, 1e-300), 0.0)) @ B
        values = np.asarray((B if stage == "first" else B.multiply(B)).sum(axis=0)).ravel()
        return self.gaussian_share(values, 1.0, rng, ledger, n_entities, stage=stage)


class _Declared(_TwoSums):
    def budget_split(self):
        return split_by({"first": 0.25, "second": 0.75})


@pytest.mark.parametrize("cls", [_TwoSums, _Declared])
@pytest.mark.parametrize("aggregation", ["secure", "none"])
def test_two_stage_gaussian_shares_charge_their_split_and_stay_within_the_budget(cls, aggregation):
    eps, delta, H = 1.0, 1e-6, 4
    method = cls(epsilon=eps, delta=delta, aggregation=aggregation)
    X = sp.csr_matrix((np.random.default_rng(0).random((20, 7)) < 0.4).astype(float))
    ledger = PrivacyLedger(eps, delta)
    shares = [method.share(X, np.random.default_rng(1), ledger.for_entity("e"), H, stage=s) for s in method.stages]
    plan = method.budget_split().plan(eps, delta)
    for row, share, stage in zip(ledger.rows, shares, method.stages):
        assert row.stage == stage
        assert row.noise_scale == plan.sigma(stage, 1.0)
        assert row.epsilon == plan.stage_epsilon(stage) and row.delta == plan.stage_delta == delta / 2
        assert row.rho <= plan.rho[stage] * (1 + 1e-12)
        assert share.sigma_share == pytest.approx(row.noise_scale / method.share_divisor(H), rel=1e-12)
    assert sum(r.rho for r in ledger.rows) <= noise.zcdp_rho_for_epsilon(eps, delta) * (1 + 1e-12)
    spent_eps, spent_delta = ledger.guarantee()
    assert spent_eps <= eps * (1 + 1e-9) and spent_delta <= delta * (1 + 1e-9)
    if cls is _Declared:  # a quarter of ρ: twice the σ of the three quarters
        assert ledger.rows[0].noise_scale == pytest.approx(math.sqrt(3) * ledger.rows[1].noise_scale, rel=1e-6)


def test_a_stage_outside_the_declared_split_is_refused():
    class Wrong(_TwoSums):
        def budget_split(self):
            return split_by({"first": 0.5, "other": 0.5})

    with pytest.raises(ConfigError, match="covers stages"):
        Wrong(epsilon=1.0).share(sp.csr_matrix(np.eye(3)), np.random.default_rng(0),
                                 PrivacyLedger(1.0, 1e-6).for_entity("e"), 3, stage="first")


def test_a_split_must_name_exactly_the_methods_stages():
    """A split that leaves a stage of the method without a share is refused as surely as one that
    names a stage the method lacks; the same stages in another order are accepted."""
    split = split_by({"first": 0.5})
    with pytest.raises(ConfigError, match="covers stages"):
        split.check_stages(("first", "second"))
    with pytest.raises(ConfigError, match="covers stages"):
        split_by({"first": 0.5, "second": 0.3, "third": 0.2}).check_stages(("first", "second"))
    split_by({"first": 0.5, "second": 0.5}).check_stages(("second", "first"))


def test_a_multi_stage_share_states_the_coalition_epsilon_of_its_own_noise_shares():
    """Under secure aggregation only an entity's own shares σ/divisor protect it against the server
    with every other entity: every stage's share states ε of ρ·divisor² (the note too), well above the
    ε against the server; without secure aggregation the two coincide."""
    eps, delta, H = 1.0, 1e-6, 4
    X = sp.csr_matrix((np.random.default_rng(0).random((20, 7)) < 0.4).astype(float))
    for aggregation in ("secure", "none"):
        method = _TwoSums(epsilon=eps, delta=delta, aggregation=aggregation)
        plan = method.budget_split().plan(eps, delta)
        divisor = method.share_divisor(H)
        for stage in method.stages:
            share = method.share(X, np.random.default_rng(1), PrivacyLedger(eps, delta).for_entity("e"), H,
                                 stage=stage)
            assert share.coalition_epsilon == plan.coalition_epsilon(divisor)
            if aggregation == "secure":
                assert divisor == 2.0 and share.coalition_epsilon > 2 * plan.total_epsilon()
                assert f"ε={epsilon_that_holds(share.coalition_epsilon)}" in share.note
            else:
                assert share.coalition_epsilon == plan.total_epsilon()


def test_shares_adding_up_to_a_hair_over_the_whole_or_a_share_of_zero_are_refused():
    # 0.5 + 0.505 would spend half a percent more ρ than the (ε, δ) the run states
    with pytest.raises(ConfigError, match="add up to"):
        split_by({"a": 0.5, "b": 0.505})
    with pytest.raises(ConfigError, match="add up to"):
        split_by({"pop": 0.3}) + split_evenly_over(["s1", "s2"], share=0.701)
    # a stage with no share would have no noise scale at all
    for bad in (0.0, -0.2, 1.5):
        with pytest.raises(ConfigError, match=r"must be in \(0, 1\]"):
            split_by({"a": bad})
    # the whole, written in floats that do not add up exactly, is accepted
    assert sum(split_by({"a": 0.1, "b": 0.2, "c": 0.7}).fractions().values()) == pytest.approx(1.0)
