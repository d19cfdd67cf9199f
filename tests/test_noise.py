"""Where the noise comes from (findings 1 and 3): OpenDP's exact samplers from OS entropy
in production, reproducible NumPy noise only in simulation; every draw has the scale the ledger
recorded; entities never share noise; a seed-known adversary no longer removes the noise.

The production samplers cannot be seeded (that is the point), so their goodness-of-fit tests use
p-value thresholds of 1e-7: a correct sampler fails one of them once in ten million runs."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.federation.dp_prototypes import DPGaussianPrototypes, DPPrototypes
from dpfed_core.federation.protocol import FederatedRecommender
from dpfed_core.privacy import mechanisms as mech
from dpfed_core.privacy import noise
from dpfed_core.privacy.ledger import PrivacyLedger
from tests.dp_audit import RecordingSampler, patch_sampler

P_OS = 1e-7


# ------------------------------------------------------------------ production samplers (OpenDP)
def test_noise_production_generator_samples_with_opendp_and_survives_spawn_and_pickle():
    g = noise.method_generator(0, private=True, simulation=False)
    assert isinstance(g, noise.SecureGenerator)
    assert isinstance(noise.sampler_for(g), noise.OpenDPSampler)
    child = g.spawn(2)[1]
    assert isinstance(noise.sampler_for(child), noise.OpenDPSampler)
    assert isinstance(noise.sampler_for(pickle.loads(pickle.dumps(child))), noise.OpenDPSampler)
    # simulation or a non-private method: a seeded plain generator, NumPy noise
    for private, sim in ((True, True), (False, False)):
        h = noise.method_generator(0, private=private, simulation=sim)
        assert not isinstance(h, noise.SecureGenerator) and noise.is_simulation(h)
        assert isinstance(noise.sampler_for(h), noise.NumpySampler)


@pytest.mark.parametrize("scale", [0.5, 1.0, 2.0])  # a small scale is noised as any other (only 0 is exact)
def test_noise_opendp_discrete_laplace_fits(scale):
    out = noise.OpenDPSampler().discrete_laplace(np.zeros(6000, dtype=np.int64), scale)
    assert out.dtype == np.int64
    q = math.exp(-1.0 / scale)

    def pmf(v):
        return (1 - q) / (1 + q) * q ** np.abs(v)

    # χ² holds only where every bin expects ≥ 5 draws: values beyond ±top are pooled into one tail bin
    # (bins expecting a fraction of a draw made one lone far draw a 1e-8 p-value at scale 1)
    top = 0
    while out.size * pmf(top + 1) >= 5:
        top += 1
    while out.size * (1 - pmf(np.arange(-top, top + 1)).sum()) < 5:
        top -= 1
    z = np.arange(-top, top + 1)
    obs = np.array([(out == v).sum() for v in z] + [(np.abs(out) > top).sum()])
    exp = np.append(pmf(z), 1 - pmf(z).sum()) * out.size
    assert exp.min() >= 5 and top >= 2
    assert stats.chisquare(obs, exp).pvalue > P_OS


@pytest.mark.parametrize("scale", [0.25, 1.0, 3.0])  # a small scale is noised as any other (only 0 is exact)
@pytest.mark.parametrize("kind", ["laplace", "gaussian"])
def test_noise_opendp_float_samplers_fit_and_lie_on_the_grid(kind, scale):
    s = noise.OpenDPSampler()
    out = getattr(s, kind)(np.full(6000, 0.5), scale) - 0.5
    dist = stats.laplace(scale=scale) if kind == "laplace" else stats.norm(scale=scale)
    assert stats.kstest(out, dist.cdf).pvalue > P_OS
    # exact sampling on the grid 2^k: every released value is a multiple of 2^k (no float artefact)
    released = out + 0.5
    assert np.all(np.ldexp(released, -noise.FLOAT_GRID_K) == np.round(np.ldexp(released, -noise.FLOAT_GRID_K)))


@pytest.mark.parametrize("kind", ["laplace", "gaussian", "discrete_laplace"])
def test_noise_opendp_long_vector_is_drawn_in_slices_each_noised_in_place(kind, monkeypatch):
    # a long vector is cut into one slice per core, each drawn by OpenDP calls on a thread of its own:
    # every slice must carry the full noise at its own positions (a slice left un-noised, shifted
    # or noised twice fails), slices must not repeat each other's noise, and no thread may outlive
    # the draw
    import threading

    monkeypatch.setattr(noise, "PARALLEL_MIN_DRAWS", 1000)
    monkeypatch.setattr(noise.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    assert noise.draw_workers(3000) == 3 and noise.draw_workers(2999) == 2 and noise.draw_workers(999) == 1
    before = threading.active_count()
    s = noise.OpenDPSampler()
    base = np.repeat(np.arange(3) * 10_000, 2000).reshape(60, 100)  # shape kept, slices distinguishable
    out = getattr(s, kind)(base if kind == "discrete_laplace" else base.astype(float), 2.0)
    assert out.shape == base.shape and threading.active_count() == before
    z = (out - base).ravel()
    if kind == "discrete_laplace":
        q = math.exp(-0.5)
        pmf = (1 - q) / (1 + q) * q ** np.abs(np.arange(-12, 13))
    for a in range(0, z.size, 2000):
        part = z[a:a + 2000]
        if kind == "discrete_laplace":
            obs = np.array([(part == v).sum() for v in range(-12, 13)] + [(np.abs(part) > 12).sum()])
            assert stats.chisquare(obs, np.append(pmf, 1 - pmf.sum()) * part.size).pvalue > P_OS
        else:
            dist = stats.laplace(scale=2.0) if kind == "laplace" else stats.norm(scale=2.0)
            assert stats.kstest(part, dist.cdf).pvalue > P_OS
    # slices (2000) and the calls within a slice (1000) each take their own noise
    assert not np.array_equal(z[:2000], z[2000:4000]) and not np.array_equal(z[2000:4000], z[4000:])
    assert not np.array_equal(z[:1000], z[1000:2000])


def test_noise_opendp_noisy_max_is_the_exponential_mechanism():
    u = np.array([0.0, 1.0, 2.0, -np.inf])
    s = noise.OpenDPSampler()
    draws = np.array([s.noisy_max(u, 1.0) for _ in range(1500)])
    p = mech.exponential_mechanism_probabilities(u[:3], 0.5, 1.0)  # scale β = 2Δ/ε = 1
    assert 3 not in draws
    assert stats.chisquare(np.bincount(draws, minlength=3), 1500 * p).pvalue > P_OS
    top = s.noisy_top_k(np.tile([3.0, 2.0, 1.0, 0.0], (3, 1)), 2, 1e-9)
    np.testing.assert_array_equal(top, [[0, 1]] * 3)  # ordered, one selection per row


def test_noise_opendp_selection_map_matches_the_claimed_epsilon():
    # OpenDP states Gumbel noisy max/top-k as ρ-zCDP with ρ = s·(Δ/β)²/8 (monotone); our ledger
    # claims the exponential mechanism's pure ε = s·Δ/β: both describe the same mechanism
    import opendp.prelude as dp

    dp.enable_features("contrib")
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float, monotonic=True))
    for s, beta, delta_u in ((1, 2.0, 1.0), (3, 5.0, 2.0)):
        meas = dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=s, scale=beta)
        eps = s * delta_u / beta
        assert meas.map(delta_u) == pytest.approx(s * (eps / s) ** 2 / 8)


def test_noise_released_counts_are_integers_so_no_float_artefact_remains():
    # a textbook float Laplace releases counts whose low-order bits can rule out the
    # neighbouring count; the discrete Laplace releases integers, possible under every count
    X = sp.csr_matrix(np.ones((7, 5)))
    L = PrivacyLedger(1.0, 1e-6)
    rel = DPPrototypes(k=1, value_max=1.0).release(X, noise.SecureGenerator(), L.for_entity("e"))
    assert np.all(rel.counts == np.round(rel.counts))
    assert all(r.sampler == noise.PRODUCTION_SAMPLER_LABEL for r in L.rows)


# ---------------------------------------------------------------- the ledger's scales are drawn
def _draw_log(monkeypatch, method, X, simulation=True):
    log: list = []
    patch_sampler(monkeypatch, lambda s: RecordingSampler(s, log))
    L = PrivacyLedger(method.epsilon, method.delta)
    g = np.random.default_rng(3) if simulation else noise.SecureGenerator()
    method.release(sp.csr_matrix(X), g, L.for_entity("e"))
    return log, L.rows


KIND_OF = {"discrete Laplace": "discrete_laplace", "private partition": "discrete_laplace",
           "Laplace": "laplace", "Gaussian": "gaussian", "exponential": "noisy_max", "Gumbel": "noisy_top_k"}


@pytest.mark.parametrize("method", [
    DPPrototypes(k=1, value_max=1.0, support=3),
    DPPrototypes(k=1, value_max=1.0, value_min=-1.0, support=3),  # non-monotone support: factor 2
    DPGaussianPrototypes(k=1, value_max=1.0),
    DPPrototypes(k=3, value_max=1.0, cluster_size=None, projection_dim=2, depth=2, n_grids=2,
                 support=3, search_steps=2, trials=2),
    DPGaussianPrototypes(k=3, value_max=1.0, cluster_size=1.0, projection_dim=2, depth=2, n_grids=2,
                         search_steps=2),
], ids=["paper-k1", "paper-signed", "gaussian-k1", "paper-k3-trials", "gaussian-auto-k"])
def test_noise_every_draw_has_the_scale_the_ledger_recorded(monkeypatch, method):
    rng = np.random.default_rng(0)
    X = np.vstack([(rng.random((60, 6)) < p).astype(float) for p in (0.1, 0.5, 0.9)])  # three groups
    log, rows = _draw_log(monkeypatch, method, X)
    assert log, "no noise drawn"
    recorded = {}
    for r in rows:
        kind = next(v for k, v in KIND_OF.items() if r.mechanism.startswith(k))
        recorded.setdefault(kind, []).append(r.noise_scale)
    for kind, scale, _ in log:
        assert any(math.isclose(scale, s, rel_tol=1e-12) for s in recorded.get(kind, [])), (kind, scale, recorded)
    drawn = {(k, round(s, 9)) for k, s, _ in log}
    for kind, scales in recorded.items():  # and no recorded mechanism went undrawn (the search
        if kind == "noisy_max":              # may charge without drawing when |C| ≤ k: conservative)
            continue
        assert all((kind, round(s, 9)) in drawn for s in scales), (kind, scales, drawn)


def test_noise_production_release_draws_only_from_opendp(monkeypatch):
    kinds = []
    real = noise.sampler_for
    patch_sampler(monkeypatch, lambda s: (kinds.append(type(s).__name__), s)[1])
    assert real is not None
    L = PrivacyLedger(1.0, 1e-6)
    DPGaussianPrototypes(k=1, value_max=1.0).release(sp.csr_matrix(np.ones((5, 4))), noise.SecureGenerator(),
                                                      L.for_entity("e"))
    assert kinds and set(kinds) == {"OpenDPSampler"}


# ----------------------------------------------------------- entities and the seed-known adversary
def _twins(n_entities=3, n=30, m=8):
    """Entities with identical data: only independent noise makes their releases differ."""
    X = sp.csr_matrix(np.tile((np.arange(n * m).reshape(n, m) % 3 == 0).astype(float), (n_entities, 1)))
    ent = np.repeat([f"e{h}" for h in range(n_entities)], n)
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=1.0, name="twins")


@pytest.mark.parametrize("simulation", [True, False])
def test_noise_is_never_shared_across_entities(simulation):
    # ε = 20: noise small enough that a release is almost never clipped to the value box whole. At ε = 1 a
    # small noisy count could push two entities' prototypes to all 1s, equal after clipping with independent
    # noise (seen in about one run of ten with production noise)
    data = _twins()
    model = FederatedRecommender("dp-gaussian", k=1, rank=2, epsilon=20.0, delta=1e-6, random_state=0,
                                 simulation=simulation, max_iter=5).fit(data)
    P = [r.prototypes for r in model.releases_]
    for a in range(len(P)):
        for b in range(a + 1, len(P)):
            assert not np.allclose(P[a], P[b])


def _seed_adversary(simulation: bool, seed: int = 0):
    """The seed-replay attack: the server knows the public seed and the ledger's scales. It replays the
    run on data of its own (one all-zero user per entity, same catalogue): in k = 1 every draw's
    order and scale are data independent, so the replayed counts are 1 + the very same noise. The
    estimate of each entity's true size is released count − replayed count + 1."""
    data = _twins()
    kw = dict(k=1, rank=2, epsilon=1.0, delta=1e-6, server_weighting="counts", max_iter=5,
              prototype_params={"cluster_size": None})
    real = FederatedRecommender("dp-prototypes", random_state=seed, simulation=simulation, **kw).fit(data)
    dummy = FederatedDataset.from_parts(sp.csr_matrix((data.n_entities, data.n_items)), np.array(data.entity_names),
                                        value_kind="counts", value_max=1.0, name="adversary")
    replay = FederatedRecommender("dp-prototypes", random_state=seed, simulation=True, **kw).fit(dummy)
    est = np.array([r.counts[0] - q.counts[0] + 1 for r, q in zip(real.releases_, replay.releases_)])
    truth = np.array([sl.stop - sl.start for sl in data.entity_slices()])
    return est, truth


def test_noise_seed_known_adversary_rebuilds_sizes_only_in_simulation():
    est, truth = _seed_adversary(simulation=True)
    np.testing.assert_array_equal(est, truth)  # the attack works on reproducible noise (its power)
    est, truth = _seed_adversary(simulation=False)
    assert not np.array_equal(est, truth)  # production noise is not a function of the seed


def test_noise_protocol_run_draws_from_opendp_in_production(monkeypatch):
    kinds = []
    patch_sampler(monkeypatch, lambda s: (kinds.append(type(s).__name__), s)[1])
    model = FederatedRecommender("dp-gaussian", k=1, rank=2, epsilon=1.0, delta=1e-6, random_state=0,
                                 max_iter=5).fit(_twins())
    assert set(kinds) == {"OpenDPSampler"}
    assert {r.sampler for r in model.ledger_.rows} == {noise.PRODUCTION_SAMPLER_LABEL}
    assert not model.ledger_.simulation
    sim = FederatedRecommender("dp-gaussian", k=1, rank=2, epsilon=1.0, delta=1e-6, random_state=0,
                               max_iter=5, simulation=True).fit(_twins())
    assert {r.sampler for r in sim.ledger_.rows} == {noise.SIMULATION_LABEL} and sim.ledger_.simulation


def test_noise_two_production_runs_with_the_same_seed_draw_different_noise():
    # seeded noise would repeat the same standardised draws at every ε of a sweep and in every re-run. ε = 20,
    # as above: at ε = 1 both releases are clipped to all 1s about one run in ten, equal whatever their noise
    kw = dict(k=1, rank=2, epsilon=20.0, delta=1e-6, random_state=0, max_iter=5)
    a = FederatedRecommender("dp-gaussian", **kw).fit(_twins())
    b = FederatedRecommender("dp-gaussian", **kw).fit(_twins())
    assert not np.allclose(a.releases_[0].prototypes, b.releases_[0].prototypes)
    s1 = FederatedRecommender("dp-gaussian", simulation=True, **kw).fit(_twins())
    s2 = FederatedRecommender("dp-gaussian", simulation=True, **kw).fit(_twins())
    np.testing.assert_array_equal(s1.releases_[0].prototypes, s2.releases_[0].prototypes)


def test_a_node_draws_production_noise_from_os_entropy_and_seeded_noise_only_in_simulation():
    """A deployed site's streams — its method's (prototypes and summable shares) and its catalogue
    share's — come from OS entropy unless the run is a simulation, whatever the public seed."""
    pytest.importorskip("flwr", reason="Flower (flwr) is not installed: make flower")
    from dpfed_core.config import RunConfig
    from dpfed_core.deployment import client_app
    from dpfed_core.evaluation.catalogue_run import catalogue_streams

    prod = RunConfig(method="dp-popularity", epsilon=1.0, seed=7)
    sim = prod.replace(simulation=True)
    for H in (1, 3):
        assert all(isinstance(r, noise.SecureGenerator) for r in client_app._entity_rngs(prod, True, H))
        assert all(isinstance(r, noise.SecureGenerator) for r in catalogue_streams(prod, H))
        assert isinstance(client_app._summable_rng(prod, H, 0, None), noise.SecureGenerator)
        assert not any(isinstance(r, noise.SecureGenerator) for r in client_app._entity_rngs(sim, True, H))
        assert not any(isinstance(r, noise.SecureGenerator) for r in catalogue_streams(sim, H))
    draw = lambda: client_app._entity_rngs(prod, True, 3)[1].random(4)  # noqa: E731
    assert not np.array_equal(draw(), draw())  # the same public seed, two different streams


@pytest.mark.parametrize("sensitivity", [0.37, 1.0, 2 ** 0.5, 4.0])
@pytest.mark.parametrize("rho", [0.01, 0.5, 2.0])
def test_the_sigma_for_a_rho_is_the_smallest_whose_opendp_map_stays_within_it(rho, sensitivity):
    """Calibrated on OpenDP's own map at the sensitivity given: the map at σ is within ρ, and at σ a
    billionth smaller it is not (no slack handed to the noise, none taken from the guarantee)."""
    from dpfed_core.privacy.noise import gaussian_float_rho, gaussian_float_sigma_for_rho

    sigma = gaussian_float_sigma_for_rho(rho, sensitivity, 1000)
    assert gaussian_float_rho(sigma, sensitivity, 1000) <= rho
    assert gaussian_float_rho(sigma * (1 - 1e-9), sensitivity, 1000) > rho
    assert sigma == pytest.approx(sensitivity / math.sqrt(2 * rho), rel=1e-6)


@pytest.mark.parametrize("delta", [1e-5, 1e-7])
def test_the_rho_for_an_epsilon_converts_back_within_it_and_is_the_largest_that_does(delta):
    """The zCDP budget of a run's Gaussian stages: OpenDP's conversion of it is within the ε asked for
    (never a rounding above it) and a ρ a millionth larger is not; ρ = 0 is ε = 0."""
    from dpfed_core.privacy.noise import zcdp_epsilon, zcdp_rho_for_epsilon

    for eps in np.round(np.geomspace(0.05, 20.0, 25), 6):
        rho = zcdp_rho_for_epsilon(float(eps), delta)
        assert 0 < rho and zcdp_epsilon(rho, delta) <= eps, (eps, rho, zcdp_epsilon(rho, delta))
        assert zcdp_epsilon(rho * (1 + 1e-6), delta) > eps
    assert zcdp_epsilon(0.0, delta) == 0.0 and zcdp_rho_for_epsilon(math.inf, delta) == math.inf


@pytest.mark.parametrize("simulation", [True, False])
def test_a_utility_that_is_not_a_finite_number_is_never_selected(simulation):
    """Report-noisy-top-k chooses among finite utilities only, in simulation as in production (an
    item whose utility is +inf or NaN is not a candidate, whatever its noise)."""
    sampler = noise.NumpySampler(np.random.default_rng(0)) if simulation else noise.OpenDPSampler()
    u = np.array([np.nan, 1.0, np.inf, 0.0, -np.inf])
    for _ in range(20):
        assert sorted(sampler.noisy_top_k(u, 2, 1.0).tolist()) == [1, 3]
        assert sampler.noisy_max(u, 1.0) in (1, 3)


def test_the_results_document_names_the_noise_source_of_production_simulation_and_non_private_runs():
    production = noise.noise_provenance(True, False)
    assert "OpenDP" in production and "entropy" in production and production != noise.SIMULATION_LABEL
    assert noise.noise_provenance(True, True) == noise.SIMULATION_LABEL
    for simulation in (False, True):
        assert noise.noise_provenance(False, simulation).startswith("no noise")


def test_a_deployed_servers_stream_is_private_exactly_for_the_dp_prototype_methods():
    """The ServerApp draws from OS entropy when the run's prototype method is a DP one; a non-private
    method's server step stays seeded, as the in-process run's is."""
    from dpfed_core.config import RunConfig
    from dpfed_core.deployment.hooks import prototype_method_is_private

    for name in ("dp-prototypes", "dp-gaussian"):
        assert prototype_method_is_private(RunConfig(method=name)), name
    for name in ("kmeans", "krandom"):
        assert not prototype_method_is_private(RunConfig(method=name)), name


@pytest.mark.parametrize("size", [1, 1000, 10 ** 6])
def test_the_float_maps_charge_the_rounding_of_every_coordinate_to_the_grid(size):
    """OpenDP rounds each coordinate to the grid 2^k before its noise, moving it by up to 2^k: the maps the
    ledger records charge that on top of the sensitivity — size·2^k in ℓ1 (Laplace), √size·2^k in ℓ2
    (Gaussian) — so a long vector is never charged as one coordinate."""
    grid = 2.0 ** noise.FLOAT_GRID_K
    for scale, sens in ((1.0, 1.0), (3.0, 0.5)):
        assert noise.laplace_float_epsilon(scale, sens, size) == pytest.approx((sens + size * grid) / scale, rel=1e-12)
        assert noise.gaussian_float_rho(scale, sens, size) == pytest.approx(
            (sens + math.sqrt(size) * grid) ** 2 / (2 * scale ** 2), rel=1e-12)
        # the (ε, δ) map of the Gaussian charges it too: δ grows with the coordinates rounded
        if size > 1:
            assert noise.gaussian_float_delta(scale, sens, size, 0.3) > noise.gaussian_float_delta(scale, sens, 1, 0.3)


def test_partition_selection_keeps_exactly_the_keys_whose_noisy_count_reaches_its_threshold():
    """At a scale whose discrete Laplace noise is zero but with probability about 2e^-100, the released
    keys are those counted at least the threshold: a key one user short of it never passes (a threshold
    one lower would let a key of fewer users through with more than the δ the map states)."""
    for threshold in (2, 5, 40):
        out = noise.laplace_threshold(0.01, threshold)({1: threshold - 1, 2: threshold, 3: threshold + 7, 4: 0})
        assert out == {2: threshold, 3: threshold + 7}, (threshold, out)


def test_a_zcdp_budget_has_no_finite_epsilon_at_a_delta_outside_zero_one_and_no_rho_is_given_for_one():
    """Gaussian noise is never pure DP: at δ = 0 (or a δ that is no probability) its ε is infinite, and so
    is the ε of a ρ too large for OpenDP's conversion; no ρ is handed out for such an (ε, δ) or for ε ≤ 0."""
    for rho in (1e-3, 0.5, 8.0):
        for delta in (0.0, 1.0, -1e-6, 1.5):
            assert noise.zcdp_epsilon(rho, delta) == math.inf, (rho, delta)
    assert noise.zcdp_epsilon(1e300, 1e-6) == math.inf  # OpenDP overflows: no finite ε
    for eps, delta in ((1.0, 0.0), (1.0, 1.0), (0.0, 1e-6), (-1.0, 1e-6)):
        assert noise.zcdp_rho_for_epsilon(eps, delta) == 0.0, (eps, delta)
        assert noise.zcdp_rho_for_epsilon(eps, delta) == 0.0, (eps, delta)


@pytest.mark.parametrize("delta", [1e-5, 1e-7])
def test_the_epsilon_of_a_rho_is_never_below_opendps_conversion_of_that_rho(delta):
    """The conversion is taken at a σ a hair under 1/√(2ρ), so that the float arithmetic can only
    over-state ρ: the ε stated is at least OpenDP's conversion of a discrete Gaussian at exactly that σ."""
    dp = noise._dp()
    for rho in (1e-3, 0.05, 0.5, 4.0):
        meas = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=int),
                                                             scale=1.0 / math.sqrt(2.0 * rho)))
        assert noise.zcdp_epsilon(rho, delta) >= float(meas.map(1).epsilon(delta)), rho


def test_no_sigma_is_planned_for_a_rho_of_zero_or_less_and_an_infinite_rho_needs_none():
    for rho in (0.0, -0.5):
        with pytest.raises(ValueError, match="ρ must be positive"):
            noise.gaussian_float_sigma_for_rho(rho, 1.0, 1000)
    assert noise.gaussian_float_sigma_for_rho(math.inf, 1.0, 1000) == 0.0


@pytest.mark.parametrize("simulation", [True, False])
def test_a_selection_over_no_rows_selects_nothing_in_the_shape_of_k(simulation):
    """Row-wise top-k of a matrix without rows (no user to choose for) is an empty (0, k) selection of
    indices, in production as in simulation — not an error."""
    sampler = noise.NumpySampler(np.random.default_rng(0)) if simulation else noise.OpenDPSampler()
    out = sampler.noisy_top_k(np.zeros((0, 6)), 3, 1.0)
    assert out.shape == (0, 3) and out.dtype == np.int64


@pytest.mark.parametrize("simulation", [True, False])
def test_a_max_over_no_finite_utility_is_refused(simulation):
    sampler = noise.NumpySampler(np.random.default_rng(0)) if simulation else noise.OpenDPSampler()
    for u in ([-np.inf, -np.inf], [np.nan, np.nan, -np.inf]):
        with pytest.raises(ValueError, match="no finite utility"):
            sampler.noisy_max(np.array(u), 1.0)


def test_whole_counts_held_as_floats_are_released_as_integers_noised_or_exact():
    """A count vector held as floats (a sparse matrix's sums) is released as int64, exact at scale 0 and
    with discrete Laplace noise otherwise, as the same counts held as integers are."""
    s = noise.OpenDPSampler()
    exact = s.discrete_laplace(np.array([[1.0, 2.0], [3.0, 0.0]]), 0)
    assert exact.dtype == np.int64 and exact.tolist() == [[1, 2], [3, 0]]
    out = s.discrete_laplace(np.full(6000, 7.0), 1.0) - 7
    assert out.dtype == np.int64
    q = math.exp(-1.0)
    z = np.arange(-3, 4)
    pmf = (1 - q) / (1 + q) * q ** np.abs(z)
    obs = np.array([(out == v).sum() for v in z] + [(np.abs(out) > 3).sum()])
    assert stats.chisquare(obs, np.append(pmf, 1 - pmf.sum()) * out.size).pvalue > P_OS
