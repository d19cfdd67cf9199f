"""Release-level privacy tests: every check runs the production release and
looks at what it actually outputs or adds its noise to — never at a helper on its own.

For every registered summable method (``dp-popularity``, ``dp-cooccurrence`` and any other, the
example of ``tests/example_method.py`` included) and every stage, under both trust models:

* **sensitivity** — the vector the noise is added to moves by at most the sensitivity the ledger
  row states, for adversarial neighbours (a heavy user far above the value bound, a user on one
  item, on two items, on every item);
* **noise** — every draw has the scale the row states (σ of the sum / the share divisor), the
  row's ρ is OpenDP's map of that σ, and the row's own (ε, δ) follows from its ρ;
* **production noise** — OpenDP from OS entropy outside simulation: two production runs with the
  same seed differ, two simulation runs do not;
* **neighbour audit** — the empirical ε lower bound of each stage's release stays under the
  row's claim, and the same audit with the noise halved exceeds it (power check).

And for the DP catalogue selection (per entity): its counts move by at most the contribution bound
c in L1, and an item only the added user holds is released with probability at most δ/c.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import example_method  # noqa: F401  (registers the example: every summable method is covered)
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.federation.protocol import FederatedRecommender
from dpfed_core.federation.summable import SUMMABLE_METHODS, make_summable_method
from dpfed_core.privacy import catalogue as cat
from dpfed_core.privacy import noise
from dpfed_core.privacy.ledger import PrivacyLedger
from tests.dp_audit import (CapturingSampler, ScaledSampler, audit_statistics, clopper_pearson,
                            patch_sampler)

#: Every registered summable method, and the variants whose release differs in shape or statistic
#: ("name/mode": the method in that observation mode).
SUMMABLE = sorted(SUMMABLE_METHODS) + ["dp-als/observed"]
VMAX = 5.0
M = 10
H = 4


def _base(seed: int = 0, n: int = 30) -> sp.csr_matrix:
    g = np.random.default_rng(seed)
    return sp.csr_matrix((g.random((n, M)) < 0.35) * g.integers(1, 6, (n, M)).astype(float))


def _adversaries() -> dict[str, np.ndarray]:
    two = np.zeros(M)
    two[[2, 7]] = VMAX
    return {"heavy (every item, 10× the bound)": np.full(M, 10 * VMAX),
            "one item at the bound": np.eye(M)[4] * VMAX,
            "two items": two,
            "every item once": np.ones(M)}


def _variant(name: str) -> tuple[str, dict]:
    """(registered name, extra parameters) of an entry of :data:`SUMMABLE`."""
    base, _, mode = name.partition("/")
    return base, ({"mode": mode} if mode else {})


def _method(name: str, aggregation: str, epsilon: float = 2.0, delta: float = 1e-4):
    base, extra = _variant(name)
    return make_summable_method(base, value_max=VMAX, epsilon=epsilon, delta=delta, aggregation=aggregation, **extra)


def _public_before(method, X: sp.csr_matrix, stage: str) -> dict:
    """The public dict the entities hold when they make ``stage``'s share: the server's combine of
    the earlier stages' exact sums (post-processing; a noiseless twin keeps it fixed across D, D')."""
    twin = method.__class__(**{**method.get_params(), "epsilon": math.inf})
    public: dict = {"n_entities": H}
    for s in method.stages:
        if s == stage:
            return public
        share = twin.share(X, np.random.default_rng(0), PrivacyLedger(math.inf).for_entity("e"), H, stage=s,
                           public=public)
        public = twin.combine(s, share.values * H, public, np.random.default_rng(0), H)
    return public


def _one_share(monkeypatch, method, X, stage, public, seed=0):
    """One production share of ``stage`` on X, with the sampler's inputs and outputs captured."""
    log: list = []
    patch_sampler(monkeypatch, lambda s: CapturingSampler(s, log))
    ledger = PrivacyLedger(method.epsilon, method.delta)
    share = method.share(X, np.random.default_rng(seed), ledger.for_entity("e"), H, stage=stage, public=public)
    monkeypatch.undo()
    return share, log, ledger.rows


# ------------------------------------------------------------------------------ sensitivity, noise
@pytest.mark.parametrize("aggregation", ["none", "secure"])
@pytest.mark.parametrize("name", SUMMABLE)
def test_summable_release_moves_by_at_most_its_recorded_sensitivity(monkeypatch, name, aggregation):
    method = _method(name, aggregation)
    X = _base()
    for stage in method.stages:
        public = _public_before(method, X, stage)
        _, log_a, rows = _one_share(monkeypatch, method, X, stage, public)
        (row,) = rows
        for who, extra in _adversaries().items():
            Xb = sp.vstack([X, sp.csr_matrix(extra)]).tocsr()
            _, log_b, _ = _one_share(monkeypatch, method, Xb, stage, public)
            assert len(log_a) == len(log_b) == 1, "one draw per share"
            kind, _, v_a, *_ = log_a[0]
            _, _, v_b, *_ = log_b[0]
            norm = np.abs(v_b - v_a).sum() if kind in ("laplace", "discrete_laplace") else np.linalg.norm(v_b - v_a)
            assert norm <= row.sensitivity * (1 + 1e-9), (name, stage, who, norm, row.sensitivity)


@pytest.mark.parametrize("aggregation", ["none", "secure"])
@pytest.mark.parametrize("name", SUMMABLE)
def test_summable_draws_have_the_recorded_scale_and_the_row_its_map(monkeypatch, name, aggregation):
    method = _method(name, aggregation)
    X = _base(1)
    divisor = method.share_divisor(H)
    for stage in method.stages:
        share, log, rows = _one_share(monkeypatch, method, X, stage, _public_before(method, X, stage))
        (row,) = rows
        (draw,) = log
        kind, scale, values, out = draw
        assert kind == "gaussian"
        assert scale == pytest.approx(row.noise_scale / divisor, rel=1e-12)
        assert share.sigma_share == pytest.approx(scale, rel=1e-12)
        # the row's ρ is OpenDP's map of the σ the sum carries, and its own (ε, δ) follows from it
        assert row.rho == pytest.approx(noise.gaussian_float_rho(row.noise_scale, row.sensitivity, values.size),
                                        rel=1e-12)
        assert noise.zcdp_epsilon(row.rho, row.delta) <= row.epsilon * (1 + 1e-9)
        assert row.sampler == noise.SIMULATION_LABEL  # a seeded generator: labelled as such


def _twins(n_entities=3, n=20):
    X = sp.csr_matrix(np.tile((np.arange(n * M).reshape(n, M) % 3 == 0).astype(float), (n_entities, 1)))
    ent = np.repeat([f"e{h}" for h in range(n_entities)], n)
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=1.0, name="twins")


@pytest.mark.parametrize("name", SUMMABLE)
def test_summable_production_noise_comes_from_opendp_not_the_seed(monkeypatch, name):
    kinds: list = []
    patch_sampler(monkeypatch, lambda s: (kinds.append(type(s).__name__), s)[1])
    base, extra = _variant(name)
    kw = dict(method=base, rank=2, epsilon=1.0, delta=1e-6, random_state=0, max_iter=5, aggregation="secure",
              **extra)
    a = FederatedRecommender(**kw).fit(_twins())
    b = FederatedRecommender(**kw).fit(_twins())
    monkeypatch.undo()
    assert kinds and set(kinds) == {"OpenDPSampler"}
    assert {r.sampler for r in a.ledger_.rows} == {noise.PRODUCTION_SAMPLER_LABEL} and not a.ledger_.simulation
    assert not np.allclose(a.secure_sum_, b.secure_sum_)  # the seed does not fix the noise
    s1 = FederatedRecommender(simulation=True, **kw).fit(_twins())
    s2 = FederatedRecommender(simulation=True, **kw).fit(_twins())
    np.testing.assert_array_equal(s1.secure_sum_, s2.secure_sum_)
    assert s1.ledger_.simulation


# ------------------------------------------------------------------------------ neighbour audits
def _stage_sampler(method, X, stage, public, direction, seed_base):
    """Samples of the Neyman–Pearson statistic of one stage's release (the noisy vector the sampler
    returns, in the space the noise is added to): its projection on the neighbours' exact difference."""
    import dpfed_core.privacy.mechanisms as mech

    def sample(runs, g):
        out = np.empty((runs, 1))
        for r in range(runs):
            log: list = []
            saved = mech.sampler_for  # the real sampler, or the power check's weakened one
            mech.sampler_for = lambda rng: CapturingSampler(saved(rng), log)
            try:
                method.share(X, np.random.default_rng(g.integers(2 ** 63)), PrivacyLedger(math.inf).for_entity("a"),
                             H, stage=stage, public=public)
            finally:
                mech.sampler_for = saved
            out[r, 0] = float(log[0][3] @ direction)
        return out
    return sample


def _stage_audit(monkeypatch, name, stage, factor=1.0, runs=1200):
    method = _method(name, "none", epsilon=3.0, delta=5e-3)
    X = _base(2)
    Xb = sp.vstack([X, sp.csr_matrix(np.eye(M)[4] * VMAX)]).tocsr()  # one item at the bound: the full Δ
    public = _public_before(method, X, stage)
    _, la, rows = _one_share(monkeypatch, method, X, stage, public)
    _, lb, _ = _one_share(monkeypatch, method, Xb, stage, public)
    d = lb[0][2] - la[0][2]
    d = d / max(np.linalg.norm(d), 1e-300)
    (row,) = rows
    if factor != 1.0:
        patch_sampler(monkeypatch, lambda s: ScaledSampler(s, factor))
    lbound = audit_statistics(_stage_sampler(method, X, stage, public, d, 0),
                              _stage_sampler(method, Xb, stage, public, d, 1), runs, seed=5, delta=row.delta)
    monkeypatch.undo()
    return lbound, row.epsilon


@pytest.mark.parametrize("name,stage", [(n, s) for n in SUMMABLE for s in _method(n, "none").stages])
def test_summable_stage_audit_stays_under_its_claim_and_has_power(monkeypatch, name, stage):
    lb, claim = _stage_audit(monkeypatch, name, stage)
    lb_weak, _ = _stage_audit(monkeypatch, name, stage, factor=0.25)  # power: the noise quartered
    print(name, stage, "claim", claim, "lb", lb, "lb with the noise quartered", lb_weak)
    assert lb <= claim
    assert lb_weak > claim, (lb_weak, claim)


# ------------------------------------------------------------------------------ the DP catalogue
def _catalogue_counts(monkeypatch, X, epsilon=1.0, delta=1e-3, c=4):
    log: list = []
    patch_sampler(monkeypatch, lambda s: CapturingSampler(s, log))
    ledger = PrivacyLedger(epsilon, delta)
    cat.select_catalogue(X, [slice(0, X.shape[0])], ["e"], epsilon, delta, np.random.default_rng(0), ledger, c)
    monkeypatch.undo()
    (draw,) = log
    return draw[2], ledger.rows[0]


def test_catalogue_counts_move_by_at_most_the_contribution_bound(monkeypatch):
    X = sp.csr_matrix(np.ones((12, M)))  # every item present, so the released key set is the same
    base, row = _catalogue_counts(monkeypatch, X)
    for extra in (np.ones(M), np.full(M, 7.0), np.eye(M)[0]):
        moved, _ = _catalogue_counts(monkeypatch, sp.vstack([X, sp.csr_matrix(extra)]).tocsr())
        assert np.abs(moved - base).sum() <= row.sensitivity, (extra, np.abs(moved - base).sum())
    assert row.sensitivity == 4 and 0 < row.delta <= 1e-3 and row.stage == "catalogue"  # OpenDP's map: ≤ the budget
    # the row states OpenDP's map at the contribution bound (one user: c items, c in all, 1 each):
    # scale c/ε, so the whole ε — a map taken at one item would state ε/c for the same noise
    assert row.epsilon == pytest.approx(1.0, rel=1e-9) and row.noise_scale == pytest.approx(4.0)


def test_catalogue_releases_an_item_only_the_added_user_holds_with_probability_at_most_delta():
    """The δ part of the selection: c items only the new user holds are each released with
    probability ≤ δ/c (Clopper–Pearson upper bound over many production selections)."""
    c, eps, delta = 4, 1.0, 0.02
    X = sp.csr_matrix(np.hstack([np.ones((50, 2)), np.zeros((50, c))]))
    newcomer = sp.csr_matrix(np.r_[np.zeros(2), np.ones(c)])
    Xb = sp.vstack([X, newcomer]).tocsr()
    runs = 4000
    released = 0
    g = np.random.default_rng(9)
    for _ in range(runs):
        rel = cat.select_catalogue(Xb, [slice(0, Xb.shape[0])], ["e"], eps, delta, g,
                                   PrivacyLedger(math.inf), c)
        released += int(np.isin(np.arange(2, 2 + c), rel.columns).sum())
    lo, _ = clopper_pearson(np.array([released]), runs * c, 1e-6)
    assert lo[0] <= delta / c, (released / (runs * c), delta / c)
