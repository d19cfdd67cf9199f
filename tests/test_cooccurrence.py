"""dp-cooccurrence, dp-popularity as a DP reference, secure aggregation as a trust model and the PLD
accounting: privacy map, ledger rows, neighbour audits with power checks, canaries."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import (crossing_epsilon, make_split, run_method, sweep,
                                               versus_dp_popularity)
from dpfed_core.federation.summable import (GRID, DPCooccurrence, _packed_weights, _unit_rows, make_summable_method,
                                            unpack_symmetric)
from dpfed_core.privacy import accounting as acc
from dpfed_core.privacy.ledger import ZCDP, PrivacyLedger
from dpfed_core.privacy.noise import zcdp_epsilon, zcdp_rho_for_epsilon
from dp_audit import audit_statistics

DELTA = 1e-6


def _dataset(n_entities=4, n_users=40, m=12, seed=0) -> FederatedDataset:
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix((rng.random((n_entities * n_users, m)) < 0.35).astype(float))
    ent = np.repeat(np.arange(n_entities), n_users)
    return FederatedDataset(X=X, entity_of_user=ent, entity_names=[f"e{h}" for h in range(n_entities)],
                            user_ids=np.array([str(i) for i in range(X.shape[0])]),
                            item_names=np.array([f"i{j}" for j in range(m)]),
                            item_ids=np.array([f"i{j}" for j in range(m)]), value_kind="implicit",
                            value_max=1.0, name="toy", item_source="declared")


# ------------------------------------------------------------------------------ privacy map
@pytest.mark.parametrize("eps", [0.3, 1.0, 10.0])
def test_calibrated_split_is_certified_and_tighter_than_adding(eps):
    """The production calibration (:func:`_cooccurrence_plan`): the two releases' ρ (OpenDP's map of
    each σ at sensitivity 1) add up to at most the total ρ whose conversion is (ε, δ), the pair uses
    the budget, and basic composition of the rows' own (ε, δ/2) would claim more."""
    from dpfed_core.federation.summable import _cooccurrence_plan
    from dpfed_core.privacy import noise

    plan = _cooccurrence_plan(eps, DELTA, 0.5, 1.0)
    rhos = [noise.gaussian_float_rho(plan["sigma"][k], 1.0, noise.PLANNING_SIZE) for k in ("popularity", "co-occurrence")]
    certified = noise.zcdp_epsilon(sum(rhos), DELTA)
    assert certified <= eps * (1 + 1e-9)
    assert certified > 0.98 * eps  # the budget is used, not wasted
    assert sum(rhos) <= noise.zcdp_rho_for_epsilon(eps, DELTA) * (1 + 1e-9)
    basic = sum(plan["stage_epsilon"].values())
    assert basic > certified


def test_batch_pld_epsilon_of_one_gaussian_matches_analytic():
    from dpfed_core.privacy.mechanisms import gaussian_sigma_analytic

    s = gaussian_sigma_analytic(1.0, DELTA, 1.0)
    # one Gaussian of multiplier s is ρ = 1/(2 s²); the batch PLD's pessimistic 1e-2 grid over-states ε a little
    eps = acc.batch_pld_epsilon([1.0 / (2.0 * s * s)], DELTA)
    assert 1.0 - 1e-3 <= eps <= 1.0 + 2e-2
    assert acc.batch_pld_epsilon([math.inf], DELTA) == math.inf


def test_one_user_moves_each_release_by_at_most_one():
    """Sensitivity: a worst-case user (every item, large values) moves the popularity vector and the
    (diag, √2·offdiag) co-occurrence vector by ≤ 1 in L2."""
    rng = np.random.default_rng(1)
    X = sp.csr_matrix((rng.random((30, 9)) < 0.4) * rng.integers(1, 9, (30, 9)).astype(float))
    for extra in (np.full(9, 50.0), np.eye(9)[3] * 7, rng.random(9)):
        Xb = sp.vstack([X, sp.csr_matrix(extra)]).tocsr()
        pa = np.asarray(_unit_rows(X, 5.0).sum(0)).ravel()
        pb = np.asarray(_unit_rows(Xb, 5.0).sum(0)).ravel()
        assert np.linalg.norm(pb - pa) <= 1 + 1e-12
        iu, w = _packed_weights(9)
        Ca = (_unit_rows(X, 5.0).T @ _unit_rows(X, 5.0)).toarray()[iu] * w
        Cb = (_unit_rows(Xb, 5.0).T @ _unit_rows(Xb, 5.0)).toarray()[iu] * w
        assert np.linalg.norm(Cb - Ca) <= 1 + 1e-12


def test_unpack_symmetric_roundtrip():
    A = np.random.default_rng(0).random((5, 5))
    A = A + A.T
    iu = np.triu_indices(5)
    assert np.allclose(unpack_symmetric(A[iu], 5), A)


# ------------------------------------------------------------------------------ ledger and trust
@pytest.mark.parametrize("aggregation", ["none", "secure"])
def test_ledger_rows_and_both_guarantees(aggregation):
    ds = _dataset()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, delta=DELTA, rank=3, simulation=True,
                    aggregation=aggregation)
    doc, res = run_method(ds, cfg)
    rows = doc["privacy"]["ledger"]
    assert len(rows) == 2 * ds.n_entities
    rho_total = zcdp_rho_for_epsilon(1.0, DELTA)
    for name in ds.entity_names:
        mine = [r for r in rows if r["entity"] == name]
        assert [r["stage"] for r in mine] == ["popularity", "co-occurrence"]
        # each row states its own release: its ρ by OpenDP's map (w : 1 − w of the total) and its
        # own (ε, δ/2); nothing is split in proportion
        w = 0.5 if aggregation == "secure" else 0.85  # the default share by trust model (pop_share)
        assert [r["rho"] for r in mine] == pytest.approx([w * rho_total, (1 - w) * rho_total], rel=1e-6)
        assert all(r["delta"] == pytest.approx(DELTA / 2) for r in mine)
        assert all(r["epsilon"] == pytest.approx(zcdp_epsilon(r["rho"], DELTA / 2), rel=1e-6) for r in mine)
        assert sum(r["epsilon"] for r in mine) > 1.0  # basic composition of the two would not fit …
        assert all(r["sensitivity"] == 1.0 and r["noise_scale"] > 0 for r in mine)
    # … the ledger composes them by adding ρ: (ε ≤ 1, δ) by OpenDP's conversion, and says so
    eps, dlt = res.ledger.guarantee()
    assert eps <= 1.0 and eps == pytest.approx(1.0, rel=1e-5) and dlt == DELTA
    assert res.ledger.accountant() == ZCDP and doc["privacy"]["accountant"]["within_run"] == ZCDP
    # an explicit pop_share wins over the trust model's default
    doc_w, _ = run_method(ds, cfg.replace(prototype_params={"pop_share": 0.3}))
    first = [r for r in doc_w["privacy"]["ledger"] if r["entity"] == ds.entity_names[0]]
    assert [r["rho"] for r in first] == pytest.approx([0.3 * rho_total, 0.7 * rho_total], rel=1e-6)
    trust = doc["privacy"]["trust"]
    assert trust["aggregation"] == aggregation
    assert trust["against_server"]["epsilon"] <= 1.0
    coal = trust["against_server_and_other_entities"]["epsilon"]
    if aggregation == "secure":
        # only the entity's own share σ/√H protects it against the other entities + server: ρ·H
        expect = zcdp_epsilon(rho_total * ds.n_entities, DELTA)
        assert coal == pytest.approx(expect, rel=1e-6)
        assert coal > 1.0
        assert any("secure aggregation" in n for n in doc["notes"])
    else:
        assert coal == pytest.approx(trust["against_server"]["epsilon"])
    contents = [m["content"] for m in doc["messages"]]
    assert sum("popularity" in c for c in contents if "share" in c or "noisy" in c) == ds.n_entities


def test_secure_noise_shares_are_sigma_over_sqrt_h_minus_d():
    ds = _dataset(n_entities=5)
    for d in (0, 2):
        m = DPCooccurrence(epsilon=1.0, delta=DELTA, aggregation="secure", max_dropouts=d)
        led = PrivacyLedger(1.0, DELTA)
        s = m.share(ds.X[:40], np.random.default_rng(0), led.for_entity("e0"), 5, stage="popularity")
        assert s.sigma_share == pytest.approx(m.budget(5)["sigma"]["popularity"] / math.sqrt(5 - d))


def test_too_many_dropouts_stop_the_run():
    from dpfed_core.cli.args import CLI_NAMES

    m = DPCooccurrence(epsilon=1.0, aggregation="secure", max_dropouts=1)
    with pytest.raises(ConfigError, match="max_dropouts") as err:
        m.check_participants(3, 5)
    # the engine names the parameter; the CLI renders its flag
    assert err.value.param == "max_dropouts" and "--max-dropouts" in err.value.render(CLI_NAMES)
    with pytest.raises(ConfigError, match="max_dropouts") as err:
        DPCooccurrence(epsilon=1.0, aggregation="secure", max_dropouts=4).check(5)
    assert "--max-dropouts" in err.value.render(CLI_NAMES)


def test_bad_parameters_name_the_fix():
    with pytest.raises(ConfigError, match="pop_share"):
        make_summable_method("dp-cooccurrence", pop_share=1.5).check(4)
    with pytest.raises(ConfigError, match="aggregation") as err:
        RunConfig(aggregation="maybe").validate()
    assert err.value.param == "aggregation"


def test_item_choice_from_the_popularity_sum():
    ds = _dataset(m=12)
    cfg = RunConfig(method="dp-cooccurrence", epsilon=math.inf, rank=2, simulation=True,
                    method_params={"max_items": 5})
    doc, res = run_method(ds, cfg)
    items = res.extra["public"]["items"]
    assert len(items) == 5
    # every release reads a site's rows without the entries its round 2 validates on
    from dpfed_core.evaluation.catalogue_run import selection_rows

    released = selection_rows(ds, make_split(ds, cfg).train, cfg)  # read a site's block at a time
    pop = sum(np.asarray(_unit_rows(released[sl], 1.0).sum(0)).ravel() for sl in ds.entity_slices())
    assert set(items) == set(np.argsort(-pop, kind="stable")[:5])
    # the result carries the last stage's secure sum: with no noise, every site's co-occurrence of its unit
    # rows on the selected items, each share rounded to the public grid
    exact = sum((u.T @ u).toarray() for u in (_unit_rows(released[sl][:, np.sort(items)], 1.0)
                                               for sl in ds.entity_slices()))
    got = unpack_symmetric(res.extra["secure_sum"], len(items))
    np.testing.assert_allclose(got, exact, rtol=0, atol=ds.n_entities * GRID / 2)
    assert np.all(np.mod(res.extra["secure_sum"] / GRID, 1.0) == 0)
    assert any("selected items" in m["content"] for m in doc["messages"])
    # on a catalogue of at most max_items the two stages are one secure sum, as deployed: the server
    # sends nothing between them (the co-occurrence takes every item whatever the popularity says)
    small, _ = run_method(ds, cfg.replace(aggregation="secure", method_params={"max_items": 12}))
    assert not any("selected items" in m["content"] for m in small["messages"])
    assert {m["content"] for m in small["messages"] if m["sender"] != "server"} == {
        "share of the secure sum (popularity + noise share)", "share of the secure sum (co-occurrence + noise share)"}
    # unselected items get no latent factors, only the popularity column
    V = res.extra["public"]["V"]
    others = np.setdiff1d(np.arange(12), items)
    assert np.all(V[others, :-1] == 0)


def test_non_private_limit_beats_popularity_on_structured_data():
    """Two user groups with disjoint tastes: the co-occurrence model must rank a user's own group
    first, which popularity cannot."""
    rng = np.random.default_rng(3)
    n, m = 200, 10
    grp = rng.integers(0, 2, n)
    P = np.where(grp[:, None] == (np.arange(m)[None, :] < 5), 0.8, 0.03)
    X = sp.csr_matrix((rng.random((n, m)) < P).astype(float))
    ds = FederatedDataset(X=X, entity_of_user=np.repeat(np.arange(4), 50), entity_names=list("abcd"),
                          user_ids=np.array([str(i) for i in range(n)]),
                          item_names=np.array([str(j) for j in range(m)]), item_ids=np.array([str(j) for j in range(m)]),
                          value_kind="implicit", value_max=1.0, name="groups", item_source="declared")
    cfg = RunConfig(rank=2, simulation=True)
    split = make_split(ds, cfg)
    co = run_method(ds, cfg.replace(method="dp-cooccurrence"), split)[0]["overall"]["mar"]
    pop = run_method(ds, cfg.replace(method="popularity"), split)[0]["overall"]["mar"]
    assert co < pop - 0.1


# ------------------------------------------------------------------------------ sweep & verdicts
def test_sweep_runs_dp_popularity_at_every_epsilon_and_says_who_loses():
    ds = _dataset()
    cfg = RunConfig(method="dp-cooccurrence", rank=2, simulation=True, aggregation="secure")
    doc = sweep(ds, cfg, [1.0, math.inf], [0], references=["individual", "dp-popularity"])
    eps_pop = sorted(r["epsilon"] for r in doc["runs"] if r["method"] == "dp-popularity")
    assert eps_pop == [1.0, math.inf]
    rows = versus_dp_popularity(doc)
    assert [r["epsilon"] for r in rows] == [1.0, math.inf]
    assert all(r["verdict"] in ("beats dp-popularity", "LOSES to dp-popularity", "inconclusive") for r in rows)
    c = crossing_epsilon(doc, baseline="dp-popularity")
    assert c in (None, 1.0, math.inf)


# ------------------------------------------------------------------------------ neighbour audits
def _joint_statistic(method, Xa, Xb, n_entities):
    """Samplers of the likelihood-ratio statistic of both releases (production ``share`` calls):
    the projection of each noisy release on the direction in which D' differs, weighted by 1/σ²."""
    plan = method.budget(n_entities)
    sig = {s: plan["sigma"][s] / plan["divisor"] for s in method.stages}
    iu, w = _packed_weights(Xa.shape[1])
    pub = {"items": np.arange(Xa.shape[1])}
    means = {}
    for X, key in ((Xa, "a"), (Xb, "b")):
        U = _unit_rows(X, method.value_max)
        means[key] = {"popularity": np.asarray(U.sum(0)).ravel(), "co-occurrence": (U.T @ U).toarray()[iu] * w}
    dirs = {s: means["b"][s] - means["a"][s] for s in method.stages}

    def sampler(X):
        def sample(runs, rng):
            out = np.empty((runs, 1))
            for r in range(runs):
                led = PrivacyLedger(math.inf, 0.0)
                t = 0.0
                for s in method.stages:
                    v = method.share(X, rng, led.for_entity("e"), n_entities, stage=s, public=pub).values
                    if s == "co-occurrence":
                        v = v * w
                    t += float((v - means["a"][s]) @ dirs[s]) / max(sig[s], 1e-300) ** 2
                out[r, 0] = t
            return out
        return sample

    return sampler(Xa), sampler(Xb)


def _neighbours():
    rng = np.random.default_rng(5)
    Xa = sp.csr_matrix((rng.random((12, 4)) < 0.5).astype(float))
    worst = sp.csr_matrix(np.array([[1.0, 0, 0, 0]]))  # all its unit mass on one item: ‖x̃x̃ᵀ‖_F = 1
    return Xa, sp.vstack([Xa, worst]).tocsr()


def test_neighbour_audit_stays_under_the_claim():
    Xa, Xb = _neighbours()
    m = DPCooccurrence(epsilon=2.0, delta=DELTA, aggregation="none")
    sa, sb = _joint_statistic(m, Xa, Xb, n_entities=64)
    lb = audit_statistics(sa, sb, runs=2000, seed=0, delta=DELTA)
    assert lb <= 2.0


class _SharesForTheWrongTrustModel(DPCooccurrence):
    """Canary: shares sized for a secure sum of all entities while the server sees each release."""

    def share_divisor(self, n_entities):
        return math.sqrt(n_entities)


def test_neighbour_audit_catches_shares_sized_for_the_wrong_trust_model():
    """Power check: the same audit, on the same production path, flags a mechanism whose entities
    add only the secure-aggregation share σ/√64 while the server sees each release (true ε ≫ 2)."""
    Xa, Xb = _neighbours()
    m = _SharesForTheWrongTrustModel(epsilon=2.0, delta=DELTA, aggregation="none")
    sa, sb = _joint_statistic(m, Xa, Xb, n_entities=64)
    lb = audit_statistics(sa, sb, runs=2000, seed=0, delta=DELTA)
    assert lb > 2.0


def test_without_a_declared_catalogue_the_dp_selection_comes_first():
    """On data whose items are not declared, the run first selects the catalogue by DP partition
    selection (a share of ε); dp-cooccurrence then spends the rest, and the total stays ≤ ε."""
    from dataclasses import replace

    ds = replace(_dataset(n_users=200, m=8), item_source="data")
    doc, _ = run_method(ds, RunConfig(method="dp-cooccurrence", epsilon=4.0, delta=DELTA, rank=2,
                                      simulation=True))
    stages = {r["stage"] for r in doc["privacy"]["ledger"]}
    assert "catalogue" in stages and {"popularity", "co-occurrence"} <= stages
    assert doc["privacy"]["epsilon"] <= 4.0


def test_the_server_keeps_the_directions_above_the_noise_edge_of_the_sum_it_received():
    """The noise edge is √(2M)·σ_sum, σ_sum = σ/divisor·√(entities that took part): it grows with
    the entities whose shares are in the sum, and the kept directions are exactly the eigenvalues
    of the unpacked sum above it."""
    M, H = 6, 5
    m = DPCooccurrence(epsilon=1.0, delta=DELTA, aggregation="secure", max_dropouts=2, rank=2)
    plan = m.budget(H)
    iu, w = _packed_weights(M)
    rng = np.random.default_rng(0)
    B = rng.random((M, M))
    C = 40.0 * (B + B.T)
    pop = rng.random(M) - 0.3
    public = {"items": np.arange(M), "popularity": pop, "n_entities": H}
    for present in (3, 5):
        out = m.combine("co-occurrence", C[iu], public, np.random.default_rng(1), present)
        edge = math.sqrt(2.0 * M) * plan["sigma"]["co-occurrence"] / plan["divisor"] * math.sqrt(present)
        assert out["noise_edge"] == pytest.approx(edge, rel=1e-12)
        assert out["kept_directions"] == int((np.linalg.eigvalsh(C) > edge).sum())
        # the broadcast's last column: the DP popularity clipped at 0, as a unit vector
        g = np.maximum(pop, 0.0)
        np.testing.assert_allclose(out["V"][:, -1], g / np.linalg.norm(g))
    assert 0 < out["kept_directions"] < M


def test_a_cooccurrence_share_is_the_packed_matrix_itself_not_its_weighted_vector():
    """The noise is drawn on (diag, √2·offdiag) — L2 sensitivity 1 — and the share sent is that vector
    divided back by the weights: the packed upper triangle of XᵀX plus symmetric noise."""
    ds = _dataset(m=6)
    X = ds.X[:40]
    items = np.arange(6)
    exact = DPCooccurrence(epsilon=math.inf).share(X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity(
        "e0"), 4, stage="co-occurrence", public={"items": items}).values
    Xn = _unit_rows(X, 1.0).toarray()
    iu, _ = _packed_weights(6)
    np.testing.assert_allclose(exact, np.round((Xn.T @ Xn)[iu] * 64) / 64)
    m = DPCooccurrence(epsilon=1e5, delta=DELTA, aggregation="none")
    noisy = m.share(X, np.random.default_rng(0), PrivacyLedger(1e5, DELTA).for_entity("e0"), 4,
                    stage="co-occurrence", public={"items": items}).values
    assert m.budget(4)["sigma"]["co-occurrence"] < 0.01
    np.testing.assert_allclose(noisy, exact, atol=0.04)


def test_dp_popularitys_broadcast_is_the_noisy_sum_clipped_at_zero():
    V = make_summable_method("dp-popularity", epsilon=1.0).finish(np.array([-1.5, 2.0, 0.25, 0.0]))
    np.testing.assert_array_equal(V, [[0.0], [2.0], [0.25], [0.0]])


def test_pop_share_at_either_end_and_fewer_than_two_items_are_refused_naming_the_parameter():
    for bad in (0.0, 1.0, True):
        with pytest.raises(ConfigError, match="pop_share must be strictly between 0 and 1"):
            make_summable_method("dp-cooccurrence", pop_share=bad).check(4)
    make_summable_method("dp-cooccurrence", pop_share=0.999).check(4)
    with pytest.raises(ConfigError, match="max_items must be a whole number ≥ 2"):
        make_summable_method("dp-cooccurrence", max_items=1).check(4)
    make_summable_method("dp-cooccurrence", max_items=2).check(4)
