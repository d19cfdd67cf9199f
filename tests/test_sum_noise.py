"""A process that forms a secure sum itself draws the sum's noise once.

An in-process production run under secure aggregation, of a method whose shares allow it
(``noise_drawn_for_the_sum``), sums each release's exact shares and draws one Gaussian on the sum, at
the scale of the H shares' noise added up: every share but the last gets zeros back, the last the
noisy sum; every entity's ledger rows stay those of a share each. Checked here on the production code:
what the sampler is asked for (one vector per release, its input the exact sum, its scale), the
ledger rows against a run that draws per share, the released sum bit by bit (OpenDP's output, nothing
of an exact share beside it), threads, a neighbour audit of the pooled sum (with its power check), the
federation-wide catalogue, runs without secure aggregation and a plug-in method that does not
declare it (both keep a draw per share).
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

import example_method
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.federation import summable_protocol as proto
from dpfed_core.federation.protocol import FederatedRecommender
from dpfed_core.federation.summable import GRID, SUMMABLE_METHODS, make_summable_method
from dpfed_core.privacy import catalogue as cat
from dpfed_core.privacy import noise
from dpfed_core.privacy.ledger import PrivacyLedger
from dpfed_core.ui.tables import guarantee_text
from tests.dp_audit import CapturingSampler, ScaledSampler, audit_statistics, patch_sampler

ONCE = sorted(n for n, c in SUMMABLE_METHODS.items() if getattr(c, "noise_drawn_for_the_sum", False))
M = 10
VMAX = 5.0


def _data(n_entities: int = 3, n: int = 20) -> FederatedDataset:
    g = np.random.default_rng(4)
    X = sp.csr_matrix((g.random((n_entities * n, M)) < 0.4).astype(float))
    ent = np.repeat([f"e{h}" for h in range(n_entities)], n)
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=1.0, name="pool")


def _fit(monkeypatch, name, aggregation, simulation=False, **extra):
    log: list = []
    patch_sampler(monkeypatch, lambda s: CapturingSampler(s, log))
    est = FederatedRecommender(method=name, rank=2, epsilon=1.0, delta=1e-6, random_state=0, max_iter=5,
                               aggregation=aggregation, simulation=simulation, **extra).fit(_data())
    monkeypatch.undo()
    return est, [entry for entry in log if entry[0] == "gaussian"]


def test_the_built_in_summable_methods_draw_once():
    assert set(ONCE) >= {"dp-popularity", "dp-cooccurrence", "dp-als"}
    assert example_method.NAME not in ONCE  # a plug-in that does not say so keeps a draw per share


@pytest.mark.parametrize("aggregation", ["secure", "none"])
@pytest.mark.parametrize("name", ONCE)
def test_an_in_process_production_run_draws_each_secure_release_once_at_the_summed_scale(monkeypatch, name,
                                                                                          aggregation):
    est, draws = _fit(monkeypatch, name, aggregation)
    H = 3
    rows = [r for r in est.ledger_.rows if math.isfinite(r.epsilon) and r.noise_scale > 0]
    stages = list(dict.fromkeys(r.stage for r in rows))
    assert len(rows) == H * len(stages)
    sim, sim_draws = _fit(monkeypatch, name, aggregation, simulation=True)
    assert len(sim_draws) == H * len(stages)  # simulation keeps a seeded draw per share
    key = [(r.entity, r.stage, r.mechanism, r.epsilon, r.delta, r.noise_scale, r.rho) for r in rows]
    assert key == [(r.entity, r.stage, r.mechanism, r.epsilon, r.delta, r.noise_scale, r.rho)
                   for r in sim.ledger_.rows if math.isfinite(r.epsilon) and r.noise_scale > 0]
    if aggregation == "none":  # each entity's release is meant to be seen: a full draw each
        assert len(draws) == H * len(stages)
        assert proto.NOISE_ONCE_NOTE not in est.notes_ and "noise" not in est.trust_
        return
    assert len(draws) == len(stages)
    for (_, scale, values, out), stage in zip(draws, stages):
        (sigma,) = {r.noise_scale for r in rows if r.stage == stage}
        # the H shares' noise added up: H · (σ/√H)² = σ²
        assert scale == pytest.approx(sigma / math.sqrt(H) * math.sqrt(H), rel=1e-12)
        assert not np.allclose(out, values)
    assert proto.NOISE_ONCE_NOTE in est.notes_ and proto.NOISE_ONCE_NOTE not in sim.notes_
    assert "rounding" not in est.trust_ and est.trust_.get("noise") == proto.NOISE_ONCE_NOTE
    assert est.trust_["against_server_and_other_entities"].get("as_deployed") is True
    # what a deployment of these settings would round is the simulation's record of its shares
    assert est.trust_["rounding_as_deployed"] == sim.trust_["rounding"]
    assert "noise" not in sim.trust_ and "as_deployed" not in sim.trust_["against_server_and_other_entities"]


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_the_released_sum_is_opendps_draw_on_the_exact_sum_and_nothing_else(monkeypatch, n_jobs):
    """Nothing of an entity's exact share reaches the released sum outside OpenDP's mechanism: with
    non-dyadic values (unit-scaled rows) every coordinate is OpenDP's output on the exact sum, itself on
    the grid the shares are rounded to, whichever thread drew it."""
    est, draws = _fit(monkeypatch, "dp-popularity", "secure", n_jobs=n_jobs)
    with_users = FederatedRecommender(method="dp-popularity", rank=2, epsilon=math.inf, random_state=0, max_iter=5,
                                      aggregation="secure").fit(_data())
    (_, _, values, out), = draws
    np.testing.assert_allclose(values, with_users.secure_sum_, rtol=0, atol=3 * GRID)  # the exact sum went in
    np.testing.assert_array_equal(est.secure_sum_, np.round(out / GRID) * GRID)       # only OpenDP's output came out
    assert np.all(np.mod(est.secure_sum_ / GRID, 1.0) == 0)


def test_a_plug_in_that_does_not_say_so_keeps_a_draw_per_share(monkeypatch):
    est, draws = _fit(monkeypatch, example_method.NAME, "secure")
    (sigma,) = {r.noise_scale for r in est.ledger_.rows if r.stage == "reach"}
    assert len(draws) == 3 and all(d[1] == pytest.approx(sigma / math.sqrt(3), rel=1e-12) for d in draws)
    assert proto.NOISE_ONCE_NOTE not in est.notes_ and "noise" not in est.trust_


def test_a_release_whose_shares_differ_in_shape_number_or_reach_is_refused():
    def stream(pool):
        return noise.PooledGenerator(noise.SecureGenerator().bit_generator, pool)

    pool = noise.SumNoise(2)
    first = stream(pool)
    np.testing.assert_array_equal(pool.gaussian(first, None, np.ones(3), 1.0), np.zeros(3))  # not the last: zeros
    with pytest.raises(RuntimeError, match="differ in shape"):
        pool.gaussian(stream(pool), None, np.zeros(4), 1.0)
    with pytest.raises(RuntimeError, match="were reached by"):
        pool.check_complete()  # one share of two: its noise never drawn
    last = stream(pool)
    out = pool.gaussian(last, noise.sampler_for(last), np.full(3, 2.0), 1.0)  # the last: the noisy sum of 1 + 2
    assert out.shape == (3,) and not np.array_equal(out, np.full(3, 3.0)) and pool.draws == 1
    pool.check_complete()
    with pytest.raises(RuntimeError, match="more than the 2 shares"):
        pool.gaussian(stream(pool), None, np.zeros(3), 1.0)
    spawned = last.spawn(2)  # a stream spawned from a pooled one draws its own noise
    assert all(type(g) is noise.SecureGenerator for g in spawned)


# ------------------------------------------------------------------------------ neighbour audit
def _stage_of(method, stage: str, mats, public, streams_from):
    """The pooled sum of one stage's shares (the production code: the streams of
    :func:`~dpfed_core.federation.summable_protocol.sum_noise_streams`)."""
    H = len(mats)
    ledger = PrivacyLedger(math.inf)
    streams = proto.sum_noise_streams(method, streams_from(H), H)
    total = None
    for _, share in proto._shares(method, mats, streams, [ledger.for_entity(f"e{h}") for h in range(H)], H, stage,
                                  public, 1, lambda *a, **k: None):
        total = share.values.copy() if total is None else total + share.values
    return total


def _pooled_audit(monkeypatch, name, stage, factor=1.0, runs=2000):
    method = make_summable_method(name, value_max=VMAX, epsilon=3.0, delta=5e-3, aggregation="secure")
    g = np.random.default_rng(2)
    mats = [sp.csr_matrix((g.random((25, M)) < 0.35) * g.integers(1, 6, (25, M)).astype(float)) for _ in range(3)]
    # the added user sits in entity 1, whose share carries no noise of its own
    mats_b = [mats[0], sp.vstack([mats[1], sp.csr_matrix(np.eye(M)[4] * VMAX)]).tocsr(), mats[2]]
    twin = method.__class__(**{**method.get_params(), "epsilon": math.inf})
    public: dict = {"n_entities": 3}
    for s in method.stages:
        if s == stage:
            break
        shares = [twin.share(X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("e"), 3, stage=s,
                             public=public).values for X in mats]
        public = twin.combine(s, sum(shares), public, np.random.default_rng(0), 3)
    exact = [sum(twin.share(X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("e"), 3, stage=stage,
                            public=public).values for X in ms) for ms in (mats, mats_b)]
    d = exact[1] - exact[0]
    d = d / np.linalg.norm(d)
    rows = PrivacyLedger(method.epsilon, method.delta)
    method.share(mats[0], np.random.default_rng(0), rows.for_entity("e"), 3, stage=stage, public=public)
    (row,) = rows.rows
    if factor != 1.0:
        patch_sampler(monkeypatch, lambda s: ScaledSampler(s, factor))

    def sampler(ms):
        def sample(n, g):
            return np.array([[float(_stage_of(method, stage, ms, public,
                                              lambda H: [noise.SecureGenerator() for _ in range(H)]) @ d)]
                             for _ in range(n)])
        return sample

    lb = audit_statistics(sampler(mats), sampler(mats_b), runs, seed=5, delta=row.delta)
    monkeypatch.undo()
    return lb, row.epsilon


@pytest.mark.parametrize("name,stage", [("dp-popularity", "release"), ("dp-cooccurrence", "popularity"),
                                        ("dp-cooccurrence", "co-occurrence")])
def test_the_pooled_sum_audit_stays_under_its_claim_and_has_power(monkeypatch, name, stage):
    if stage not in make_summable_method(name).stages:
        pytest.skip(f"{name} has no stage {stage}")
    lb, claim = _pooled_audit(monkeypatch, name, stage)
    lb_weak, _ = _pooled_audit(monkeypatch, name, stage, factor=0.25)
    print(name, stage, "claim", claim, "lb", lb, "lb with the noise quartered", lb_weak)
    assert lb <= claim
    assert lb_weak > claim, (lb_weak, claim)


# ------------------------------------------------------------------------------ the catalogue
def test_the_catalogue_of_a_run_that_draws_once_draws_its_histogram_once(monkeypatch):
    g = np.random.default_rng(3)
    X = sp.csr_matrix((g.random((60, 40)) < 0.2).astype(float))
    slices = [slice(0, 20), slice(20, 40), slice(40, 60)]
    names = [f"item {i}" for i in range(40)]
    out = {}
    for once in (False, True):
        log: list = []
        patch_sampler(monkeypatch, lambda s: CapturingSampler(s, log))
        ledger = PrivacyLedger(10.0, 1e-6)
        cat.select_catalogue_secure(X, slices, ["a", "b", "c"], names, 0.5, 1e-6,
                                    [noise.SecureGenerator() for _ in slices], ledger, divisor=math.sqrt(3),
                                    grid=GRID, noise_once=once)
        monkeypatch.undo()
        out[once] = ([e for e in log if e[0] == "gaussian"], ledger.rows)
    (per_share, rows_a), (pooled, rows_b) = out[False], out[True]
    assert len(per_share) == 3 and len(pooled) == 1
    assert pooled[0][1] == pytest.approx(per_share[0][1] * math.sqrt(3), rel=1e-12)
    assert [(r.entity, r.noise_scale, r.rho, r.epsilon) for r in rows_a] == [(r.entity, r.noise_scale, r.rho, r.epsilon)
                                                                      for r in rows_b]
    with pytest.raises(ValueError, match="production streams"):
        cat.select_catalogue_secure(X, slices, ["a", "b", "c"], names, 0.5, 1e-6,
                                    [np.random.default_rng(0) for _ in slices], PrivacyLedger(10.0, 1e-6),
                                    divisor=math.sqrt(3), noise_once=True)


@pytest.mark.parametrize("method,catalogue_draws", [("dp-cooccurrence", 1), (example_method.NAME, 6)])
def test_a_run_without_a_declared_catalogue_draws_the_histogram_as_its_method_draws(monkeypatch, method,
                                                                                    catalogue_draws):
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import run_method

    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((30, 12)) < 0.4).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat([f"h{h}" for h in range(6)], 5),
                                     item_names=np.array([f"d{j}" for j in range(12)]), value_kind="binary",
                                     value_max=1.0, name="six clinics")
    log: list = []
    patch_sampler(monkeypatch, lambda s: CapturingSampler(s, log))
    doc, res = run_method(ds, RunConfig(method=method, epsilon=3.0, delta=1e-5, aggregation="secure", seed=0,
                                        mode="zero", rank=2, max_iter=5))
    monkeypatch.undo()
    # what the Run page says of the guarantee names how the noise was drawn, where it was drawn once
    assert ("noise was drawn once, on the sum" in guarantee_text(doc)) == (catalogue_draws == 1)
    # no share was rounded where the noise was drawn once: what a deployment would round is recorded apart
    assert ("rounding" in doc["privacy"]["trust"]) == (catalogue_draws != 1)
    assert ("rounding_as_deployed" in doc["privacy"]["trust"]) == (catalogue_draws == 1)
    histograms = [e for e in log if e[0] == "gaussian" and e[2].size == cat.SECURE_CATALOGUE_BUCKETS]
    assert len(histograms) == catalogue_draws
    rows = [r for r in res.ledger.rows if r.stage == "catalogue"]
    assert len(rows) == 6 and histograms[0][1] == pytest.approx(rows[0].noise_scale / math.sqrt(6) *
                                                                 math.sqrt(6 / catalogue_draws), rel=1e-12)


def test_a_run_that_drew_each_sum_once_warns_when_a_deployment_of_it_would_not_be_covered():
    """At a large ε each share carries few grid steps of noise: this process rounds only the noisy sum,
    so its guarantee holds here, but the run says that a deployment of the same settings — which rounds
    every share — would not prove ε against the server; a simulation of it warns as before."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import run_method

    g = np.random.default_rng(0)
    X = sp.csr_matrix((g.random((40, 12)) < 0.4).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat([f"h{h}" for h in range(4)], 10),
                                     item_names=np.array([f"d{j}" for j in range(12)]), value_kind="binary",
                                     value_max=1.0, name="four clinics")
    ds = replace(ds, item_source="declared")
    cfg = RunConfig(method="dp-popularity", epsilon=100.0, delta=1e-5, aggregation="secure", seed=0, mode="zero",
                    rank=2, max_iter=5)
    doc, _ = run_method(ds, cfg)
    sim, _ = run_method(ds, cfg.replace(simulation=True))
    deployed = doc["privacy"]["trust"]["rounding_as_deployed"]
    assert deployed == sim["privacy"]["trust"]["rounding"] and deployed["covered"] is False
    (w,) = [w for w in doc["privacy"]["warnings"] if "a deployment of these settings" in w]
    assert "holds here" in w and "would not be proved" in w
    assert not [w for w in sim["privacy"]["warnings"] if "a deployment of these settings" in w]
    assert any("is not proved for this run" in w for w in sim["privacy"]["warnings"])
    # each ε the warning states is rounded up, never below what holds (0.92031 → 0.9204)
    from dpfed_core.federation.summable_protocol import rounding_warning

    trust = {"against_server": {"epsilon": 0.92031}, "against_server_and_other_entities": {"epsilon": 2.00001},
             "rounding": {"covered": False, "grid": 1.0, "grid_steps": 3.0}}
    said = rounding_warning(trust)
    assert "ε = 0.9204 against the server is not proved" in said and "ε = 2.001 (each entity's own share)" in said


def test_each_draw_of_a_share_joins_the_same_draw_of_every_other_share_and_no_sum_of_nothing_is_drawn():
    """A share that draws several releases adds its first draw to the other shares' first, its second to
    their second: each release is drawn once, on the exact sum of its own values, at s·√n. A pool of no
    share, and pooled streams of no entity or of a simulation, are refused."""
    class Echo:  # the sampler's input and scale, handed back as the draw
        def gaussian(self, values, scale):
            return np.asarray(values).copy(), scale

    pool = noise.SumNoise(2)
    a, b = (noise.PooledGenerator(noise.SecureGenerator().bit_generator, pool) for _ in range(2))
    np.testing.assert_array_equal(pool.gaussian(a, Echo(), np.ones(3), 0.5), np.zeros(3))
    np.testing.assert_array_equal(pool.gaussian(a, Echo(), np.full(5, 2.0), 0.5), np.zeros(5))
    first, s1 = pool.gaussian(b, Echo(), np.full(3, 4.0), 0.5)
    second, s2 = pool.gaussian(b, Echo(), np.full(5, 8.0), 0.5)
    np.testing.assert_array_equal(first, np.full(3, 5.0))
    np.testing.assert_array_equal(second, np.full(5, 10.0))
    assert s1 == s2 == pytest.approx(0.5 * math.sqrt(2), rel=1e-15) and pool.draws == 2
    pool.check_complete()
    with pytest.raises(ValueError, match="no noise to draw"):
        noise.SumNoise(0)
    with pytest.raises(ValueError, match="only from production streams"):
        noise.pooled_streams([])
    with pytest.raises(ValueError, match="only from production streams"):
        noise.pooled_streams([noise.SecureGenerator(), np.random.default_rng(0)])


def test_a_pooled_stream_is_a_production_stream_and_its_sum_is_drawn_by_opendp(monkeypatch):
    """The streams that draw a sum once are production streams: their sampler is OpenDP's, their ledger
    label the production one, and an in-process production run draws its secure sum with OpenDP's
    Gaussian, never NumPy's."""
    pooled = noise.pooled_streams([noise.SecureGenerator() for _ in range(3)])
    for g in (*pooled, *pooled[0].spawn(2)):
        assert isinstance(noise.sampler_for(g), noise.OpenDPSampler) and not noise.is_simulation(g)
        assert noise.noise_label(g) == noise.PRODUCTION_SAMPLER_LABEL
    calls = []
    for cls in (noise.OpenDPSampler, noise.NumpySampler):
        real = cls.gaussian
        monkeypatch.setattr(cls, "gaussian", lambda self, v, s, real=real, name=cls.__name__: (
            calls.append(name), real(self, v, s))[1])
    FederatedRecommender(method="dp-popularity", rank=2, epsilon=1.0, delta=1e-6, random_state=0, max_iter=5,
                         aggregation="secure").fit(_data())
    assert calls == ["OpenDPSampler"], calls
