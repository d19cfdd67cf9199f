"""Every composition path of the budget odometer against an independent computation with
``dp-accounting``: the ρ → (ε, δ) conversion, basic composition with its δ limit, the zCDP filter at
half the cap's δ, a sweep's points as one PLD batch, mixed pure / Gaussian / approximate releases,
and the federation-wide catalogue's coalition ε. The figures are computed here from the library's own
accountants, never copied from the code under test; charges go through the odometer's own store."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.evaluation.budget import planned_rho
from dpfed_core.privacy.accounting import (REFERENCE_DELTA, ReleaseCharge, compose_releases,
                                           zcdp_epsilon_of_rho)
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease

#: Orders of the independent RDP conversion: a dense geometric grid built here.
ORDERS = np.unique(np.r_[1.0 + np.geomspace(1e-2, 1e6, 3000)])
CAP_DELTA = 1e-5
ENTITIES = ("A", "B", "C")


def rdp_epsilon(rho: float, delta: float) -> float:
    """Independent ρ-zCDP → (ε, δ): dp-accounting's RDP accountant on a ZCDpEvent."""
    acc = rdp_privacy_accountant.RdpAccountant(orders=list(ORDERS))
    acc.compose(dp_event.ZCDpEvent(rho))
    return float(acc.get_epsilon(delta))


def pld_epsilon(multipliers, delta: float) -> float:
    """Independent PLD of Gaussian mechanisms (finer discretisation than the odometer's)."""
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    acc.compose(dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(z) for z in multipliers]))
    return float(acc.get_epsilon(delta))


def classic(rho: float, delta: float) -> float:
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def dataset(item_source: str = "data") -> FederatedDataset:
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, size=(12, 6)).astype(float)
    X[:, 0] += 1
    return FederatedDataset.from_parts(sp.csr_matrix(X), np.array(ENTITIES)[np.arange(12) % 3],
                                       user_ids=np.array([f"u{i}" for i in range(12)]),
                                       item_ids=np.array([f"i{j}" for j in range(6)]),
                                       value_kind="counts", value_max=5.0, name="acc", item_source=item_source)


def gauss(eps: float, delta: float = 1e-6, batch: bool = False) -> PlannedRelease:
    rho, gaussian = planned_rho("dp-cooccurrence", eps, delta)
    assert gaussian and rho is not None
    return PlannedRelease("sweep point" if batch else "run", "dp-cooccurrence", eps, delta,
                          {e: (eps, delta) for e in ENTITIES}, seed=0, rho=rho, gaussian=True, batch=batch)


def pure(eps: float) -> PlannedRelease:
    return PlannedRelease("run", "dp-pure", eps, 0.0, {e: (eps, 0.0) for e in ENTITIES}, seed=0,
                          rho=eps * eps / 2.0, gaussian=False)


def approximate(eps: float, delta: float) -> PlannedRelease:
    """An approximate-DP release with no ρ of its own (e.g. a partition selection)."""
    return PlannedRelease("run", "dp-gaussian", eps, delta, {e: (eps, delta) for e in ENTITIES}, seed=0)


def charged(tmp_path, releases, cap=(1e6, CAP_DELTA)):
    """The odometer's spend of entity A after the releases (a cap far away: nothing refused)."""
    odo = BudgetOdometer(tmp_path / "acc.sqlite3")
    ds = dataset()
    odo.set_cap(ds, *cap)
    for group in releases:
        odo.reserve(ds, group if isinstance(group, list) else [group]).close()
    return {b.entity: b for b in odo.balance(ds)}["A"]


# ------------------------------------------------------------------------------ ρ → (ε, δ)
@pytest.mark.parametrize("rho", [1e-4, 1e-3, 0.01, 0.028, 0.1, 0.5, 1.0, 3.0, 10.0])
@pytest.mark.parametrize("delta", [5e-7, 5e-6])
def test_conversion_is_within_one_percent_of_dp_accounting_and_tighter_than_the_classic_bound(rho, delta):
    got = zcdp_epsilon_of_rho(rho, delta)
    ref = rdp_epsilon(rho, delta)
    assert abs(got / ref - 1.0) <= 0.01
    # never looser than the library's own default-order answer (that answer is valid)
    lib = rdp_privacy_accountant.RdpAccountant()
    lib.compose(dp_event.ZCDpEvent(rho))
    assert got <= lib.get_epsilon(delta) * (1 + 1e-9)
    assert got < classic(rho, delta) * 0.99


def test_conversion_edges():
    assert zcdp_epsilon_of_rho(0.0, 1e-6) == 0.0
    assert zcdp_epsilon_of_rho(math.inf, 1e-6) == math.inf
    assert zcdp_epsilon_of_rho(0.1, 0.0) == math.inf


def test_eighteen_releases_at_epsilon_one_are_charged_what_the_library_certifies(tmp_path):
    """18 Gaussian releases at ε = 1 (δ = 1e-6), chosen adaptively: the zCDP filter, ρ summed, ε at
    half the cap's δ, as dp-accounting converts it (the classic conversion stated 5.47)."""
    b = charged(tmp_path, [gauss(1.0) for _ in range(18)])
    rho = 18 * planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    ref = rdp_epsilon(rho, CAP_DELTA / 2)
    assert b.accountant == "zCDP"
    assert b.spent_epsilon == pytest.approx(ref, rel=0.01)
    assert 4.48 <= b.spent_epsilon <= 4.58  # each at ρ(1, 1e-6) = 0.02436, the budget the method splits


# ------------------------------------------------------------------------------ basic composition
def test_basic_composition_sums_epsilon_and_needs_the_deltas_within_half_the_cap(tmp_path):
    # approximate releases with no ρ: only basic composition applies; Σδ = 4e-6 ≤ δ_cap/2
    b = charged(tmp_path, [approximate(0.3, 1e-6), approximate(0.5, 1e-6), approximate(0.7, 2e-6)])
    assert b.accountant.startswith("basic")
    assert b.spent_epsilon == pytest.approx(1.5, rel=1e-12)
    assert b.spent_delta == pytest.approx(4e-6, rel=1e-12)
    assert b.tight_epsilon == math.inf


def test_basic_composition_refuses_deltas_beyond_half_the_cap():
    # Σδ = 6e-6 > δ_cap/2 = 5e-6: basic composition holds no (ε, δ_cap/2) guarantee
    over = [ReleaseCharge(0.5, 2e-6), ReleaseCharge(0.5, 2e-6), ReleaseCharge(0.5, 2e-6)]
    assert compose_releases(over, CAP_DELTA).epsilon == math.inf
    within = over[:2]
    assert compose_releases(within, CAP_DELTA).epsilon == pytest.approx(1.0)


# ------------------------------------------------------------------------------ the zCDP filter
def test_zcdp_filter_is_the_summed_rho_at_half_the_caps_delta(tmp_path):
    eps = [0.3, 1.0, 0.5, 2.0, 0.7]
    b = charged(tmp_path, [gauss(e) for e in eps])
    rho = sum(planned_rho("dp-cooccurrence", e, 1e-6)[0] for e in eps)
    half, full = rdp_epsilon(rho, CAP_DELTA / 2), rdp_epsilon(rho, CAP_DELTA)
    assert b.accountant == "zCDP"
    assert b.tight_epsilon == pytest.approx(half, rel=0.01)
    assert b.spent_epsilon == pytest.approx(half, rel=0.01)
    # the split matters: at the whole δ the bound would be smaller — the filter must not use it
    assert full < half * 0.985
    assert b.basic_epsilon == pytest.approx(sum(eps))


def test_zcdp_filter_without_a_cap_is_stated_at_the_reference_delta(tmp_path):
    odo = BudgetOdometer(tmp_path / "nocap.sqlite3")
    ds = dataset()
    for e in (1.0, 1.0, 1.0):
        odo.reserve(ds, [gauss(e)]).close()
    b = {x.entity: x for x in odo.balance(ds)}["A"]
    rho = 3 * planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    assert b.spent_epsilon == pytest.approx(rdp_epsilon(rho, REFERENCE_DELTA / 2), rel=0.01)


# ------------------------------------------------------------------------------ the sweep's PLD batch
def test_a_sweeps_points_are_one_pld_batch_at_half_the_caps_delta(tmp_path):
    """Ten Gaussian sweep points at ε = 1 planned together: every point in the PLD (≈ 3.01); one
    point alone would be ≈ 1, and basic composition 10."""
    b = charged(tmp_path, [[gauss(1.0, batch=True) for _ in range(10)]])
    rho = planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    z = 1.0 / math.sqrt(2.0 * rho)
    ref = pld_epsilon([z] * 10, CAP_DELTA / 2)
    assert b.accountant == "basic + PLD batch"
    assert ref * (1 - 1e-3) <= b.spent_epsilon <= ref * 1.01
    assert 2.95 <= b.spent_epsilon <= 3.1
    assert b.spent_epsilon < rdp_epsilon(10 * rho, CAP_DELTA / 2)  # tighter than zCDP here
    assert b.spent_delta == pytest.approx(CAP_DELTA / 2)


def test_a_batch_caps_what_fits(tmp_path):
    """A cap of 1.5 refuses the ten-point batch (charged ≈ 3.01), whatever one point alone costs."""
    from dpfed_core.privacy.odometer import BudgetRefused

    odo = BudgetOdometer(tmp_path / "b.sqlite3")
    ds = dataset()
    odo.set_cap(ds, 1.5, CAP_DELTA)
    with pytest.raises(BudgetRefused):
        odo.reserve(ds, [gauss(1.0, batch=True) for _ in range(10)])
    assert odo.releases(ds) == []
    pre = odo.preview(ds, [gauss(1.0, batch=True) for _ in range(10)])
    assert not pre["fits"] and pre["spend"] > 3.0


def test_two_batches_compose_basically_and_singles_add(tmp_path):
    rho = planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    z = 1.0 / math.sqrt(2.0 * rho)
    batch = [gauss(1.0, batch=True) for _ in range(4)]
    b = charged(tmp_path, [batch, [gauss(1.0, batch=True) for _ in range(4)]])
    one = pld_epsilon([z] * 4, CAP_DELTA / 4)  # the two batches share basic composition's δ_cap/2
    assert b.basic_epsilon == pytest.approx(2 * one, rel=0.01)
    # the zCDP filter of all eight points is tighter still
    assert b.accountant == "zCDP"
    assert b.spent_epsilon == pytest.approx(rdp_epsilon(8 * rho, CAP_DELTA / 2), rel=0.01)
    assert b.spent_epsilon > one


# ------------------------------------------------------------------------------ mixed releases
def test_pure_and_gaussian_releases_compose_by_their_summed_rho(tmp_path):
    rels = [pure(0.5), gauss(1.0), pure(0.3), gauss(0.5)]
    b = charged(tmp_path, rels)
    rho = 0.5 ** 2 / 2 + 0.3 ** 2 / 2 + sum(planned_rho("dp-cooccurrence", e, 1e-6)[0] for e in (1.0, 0.5))
    ref = rdp_epsilon(rho, CAP_DELTA / 2)
    assert b.basic_epsilon == pytest.approx(2.3)
    assert b.tight_epsilon == pytest.approx(ref, rel=0.01)
    assert b.spent_epsilon == pytest.approx(min(2.3, ref), rel=0.01)


def test_many_small_pure_releases_are_charged_by_zcdp(tmp_path):
    b = charged(tmp_path, [pure(0.1) for _ in range(40)])
    ref = rdp_epsilon(40 * 0.1 ** 2 / 2, CAP_DELTA / 2)
    assert ref < 4.0
    assert b.accountant == "zCDP" and b.spent_epsilon == pytest.approx(ref, rel=0.01)


def test_an_approximate_release_without_rho_leaves_only_basic_composition(tmp_path):
    b = charged(tmp_path, [pure(0.1) for _ in range(40)] + [approximate(0.2, 1e-6)])
    assert b.tight_epsilon == math.inf
    assert b.accountant.startswith("basic") and b.spent_epsilon == pytest.approx(4.2)


# ------------------------------------------------------------------------------ coalition ε
def test_the_federation_wide_catalogues_coalition_epsilon():
    """An entity adds σ/d of a secure sum: against the server with every other entity its share is
    a Gaussian of ρ·d², converted at the row's δ."""
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import PrivacyLedger

    rng = np.random.default_rng(0)
    X = sp.csr_matrix((rng.random((20, 30)) < 0.3).astype(float))
    names = np.array([f"item {j}" for j in range(30)])
    bucket = cat.item_buckets(names, 64)
    rho, delta, d = 0.02, 1e-6, 3.0
    ledger = PrivacyLedger(10.0, 1e-3)
    _, eps_c = cat.secure_catalogue_share(X, bucket, rho, delta, rng, ledger.for_entity("e"), divisor=d, n_buckets=64)
    row = ledger.rows[0]
    assert eps_c == pytest.approx(rdp_epsilon(rho * d * d, delta), rel=0.01)
    assert row.epsilon == pytest.approx(rdp_epsilon(rho, delta), rel=0.01)
    assert 2.9 <= eps_c <= 3.0 and eps_c > 2.5 * row.epsilon
    _, eps_1 = cat.secure_catalogue_share(X, bucket, rho, delta, rng, PrivacyLedger(10.0, 1e-3).for_entity("e"),
                                          divisor=1.0, n_buckets=64)
    assert eps_1 == pytest.approx(rdp_epsilon(rho, delta), rel=0.01)
    # the smallest secure sum, two entities (d = √2): the share still protects by half the variance only
    _, eps_2 = cat.secure_catalogue_share(X, bucket, rho, delta, rng, PrivacyLedger(10.0, 1e-3).for_entity("e"),
                                          divisor=math.sqrt(2.0), n_buckets=64)
    assert eps_2 == pytest.approx(rdp_epsilon(2 * rho, delta), rel=0.01) and eps_2 > 1.3 * eps_1


@pytest.mark.parametrize("catalogue", ["data", "declared"])
@pytest.mark.parametrize("aggregation", ["secure", "none"])
@pytest.mark.parametrize("method,gaussian", [("dp-popularity", True), ("dp-cooccurrence", True),
                                             ("dp-als", True), ("dp-gaussian", False)])
def test_a_method_is_planned_by_its_rho_when_every_release_is_gaussian(method, gaussian, aggregation, catalogue):
    """Every summable method that declares ``zcdp_budget`` is planned by its ρ before it runs, and its
    run's ledger ρ (what settles it) stays at or below that plan, within 10⁻⁶ of it (the dry run states
    what the run is charged), with a DP-selected catalogue or a declared one, under either trust model;
    a method with an approximate-DP stage is planned by its (ε, δ) only."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import run_method
    from dpfed_core.privacy.accounting import ledger_rho

    eps, delta = 1.0, 1e-6
    rho, is_gaussian = planned_rho(method, eps, delta)
    assert is_gaussian is gaussian and (rho is not None) is gaussian
    if not gaussian:
        return
    ds = dataset(item_source=catalogue)
    _, res = run_method(ds, RunConfig(method=method, epsilon=eps, delta=delta, rank=2, simulation=True,
                                      aggregation=aggregation))
    for entity in ENTITIES:
        got, only_gaussian = ledger_rho(res.ledger.rows_of(entity))
        assert only_gaussian and rho * (1 - 1e-6) <= got <= rho


# ------------------------------------------------------------- the ρ of one mechanism and of rows
def test_the_rho_of_a_gaussian_carries_its_margin_over_opendps_rounding_and_no_noise_is_infinite():
    """ρ = Δ²/2σ²·(1 + RHO_MARGIN): never below OpenDP's map of its float Gaussian, whose rounding to
    the grid raises the sensitivity; σ = 0 is no noise (ρ = inf), Δ = 0 moves nothing (ρ = 0)."""
    from dpfed_core.privacy.accounting import RHO_MARGIN, rho_of_gaussian
    from dpfed_core.privacy.noise import gaussian_float_rho

    for sigma, sens in ((3.0, 1.0), (0.7, 2.5)):
        rho = rho_of_gaussian(sigma, sens)
        assert rho == pytest.approx(sens ** 2 / (2 * sigma ** 2) * (1 + RHO_MARGIN), rel=1e-12)
        assert rho >= gaussian_float_rho(sigma, sens, 10 ** 6)
    assert rho_of_gaussian(0.0, 1.0) == math.inf
    assert rho_of_gaussian(1.0, 0.0) == 0.0


def test_the_rho_of_a_pure_release_is_half_its_epsilon_squared():
    from dpfed_core.privacy.accounting import rho_of_pure

    assert rho_of_pure(1.0) == 0.5
    assert rho_of_pure(0.2) == pytest.approx(0.02, rel=1e-12)


def _row(mechanism, epsilon, delta, rho=None, sensitivity=1.0, noise_scale=1.0):
    return {"mechanism": mechanism, "epsilon": epsilon, "delta": delta, "rho": rho,
            "sensitivity": sensitivity, "noise_scale": noise_scale}


def test_ledger_rows_are_gaussian_only_when_every_row_is_a_gaussian():
    """A selection row with its own ρ adds that ρ but makes the release no longer Gaussian-only (the
    PLD of a batch assumes every point is a pure Gaussian)."""
    from dpfed_core.privacy.accounting import ledger_rho

    gauss = _row("Gaussian (OpenDP map)", 1.0, 1e-6, rho=0.1)
    pick = _row("exponential mechanism (Gumbel-max)", 0.5, 0.0, rho=0.03125)
    assert ledger_rho([gauss, gauss]) == (pytest.approx(0.2), True)
    rho, only = ledger_rho([gauss, pick])
    assert rho == pytest.approx(0.13125) and only is False


def test_an_approximate_row_without_rho_leaves_the_rows_without_a_rho():
    """A row with δ > 0 that is not a Gaussian and states no ρ (e.g. a partition selection) has no
    zCDP charge: the release composes basically only."""
    from dpfed_core.privacy.accounting import ledger_rho

    sel = _row("partition selection (OpenDP Laplace threshold)", 0.5, 1e-7, rho=None)
    pure = _row("discrete Laplace", 0.5, 0.0, rho=None)
    assert ledger_rho([pure]) == (pytest.approx(0.125), False)
    assert ledger_rho([pure, sel]) == (None, False)
    assert ledger_rho([sel, pure]) == (None, False)


def test_a_batch_of_two_gaussian_points_is_composed_by_pld_and_its_large_points_add_their_epsilon():
    """Two moderate Gaussian points are already a PLD batch (at δ_cap/2, below Σε); a point whose ρ
    exceeds PLD_MAX_RHO (e.g. ε = 1000) stays out of the PLD and adds its own ε to the batch's."""
    from dpfed_core.privacy.accounting import PLD_MAX_RHO, batch_pld_epsilon

    rho = planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    two = [ReleaseCharge(1.0, 1e-6, rho, gaussian=True, batch="sweep") for _ in range(2)]
    comp = compose_releases(two, CAP_DELTA)
    pld = batch_pld_epsilon([rho, rho], CAP_DELTA / 2)
    assert pld < 2.0
    assert comp.basic_epsilon == pytest.approx(pld) and comp.basic_delta == pytest.approx(CAP_DELTA / 2)
    big = ReleaseCharge(1000.0, 0.0, 10 * PLD_MAX_RHO, gaussian=True, batch="sweep")
    comp = compose_releases([*two, big], CAP_DELTA)
    assert comp.basic_epsilon == pytest.approx(pld + 1000.0)


def test_a_batch_leaves_the_other_releases_their_delta():
    """A sweep's batch is composed by PLD at the δ left of δ_cap/2 once the other releases' δ is
    counted: a later release without a ρ (a DP selection, approximate) keeps the basic filter finite.
    Given the whole δ_cap/2, the batch would leave none, and the entity's spend would read ∞."""
    rho = planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    z = 1.0 / math.sqrt(2.0 * rho)
    batch = [ReleaseCharge(1.0, 1e-6, rho, gaussian=True, batch="sweep") for _ in range(4)]
    later = ReleaseCharge(0.01, 1e-6, None, gaussian=False)  # no ρ: the zCDP filter is ∞
    comp = compose_releases([*batch, later], CAP_DELTA)
    assert math.isinf(comp.tight_epsilon)
    assert comp.accountant == "basic + PLD batch"
    assert comp.basic_delta <= CAP_DELTA / 2 * (1 + 1e-9)
    left = CAP_DELTA / 2 - 1e-6
    assert comp.epsilon == pytest.approx(0.01 + pld_epsilon([z] * 4, left), rel=0.01)
    assert comp.epsilon < 4.01  # far below the points' Σε


def test_the_pld_of_a_batch_leaves_its_large_points_delta_to_them():
    """The PLD of a batch's moderate points is taken at δ_cap/2 minus the δ its large points state:
    together they stay within basic composition's half of the cap. Checked against the independent
    (finer) PLD at that reduced δ, which the odometer's coarser PLD can only exceed."""
    from dpfed_core.privacy.accounting import PLD_MAX_RHO

    rho = planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    z = 1.0 / math.sqrt(2.0 * rho)
    d_big = 0.8 * CAP_DELTA / 2
    two = [ReleaseCharge(1.0, 1e-6, rho, gaussian=True, batch="sweep") for _ in range(2)]
    big = ReleaseCharge(1000.0, d_big, 10 * PLD_MAX_RHO, gaussian=True, batch="sweep")
    comp = compose_releases([*two, big], CAP_DELTA)
    left = CAP_DELTA / 2 - d_big
    assert comp.basic_delta == pytest.approx(CAP_DELTA / 2)
    assert comp.basic_epsilon - 1000.0 >= pld_epsilon([z, z], left) * (1 - 1e-9)
    # at the whole half instead the two points would read about 0.12 less
    assert comp.basic_epsilon - 1000.0 > pld_epsilon([z, z], CAP_DELTA / 2) + 0.05


def test_a_row_with_an_infinite_epsilon_leaves_the_rows_without_a_rho():
    """A non-private row (ε = ∞: exact sums left the entity) has no finite ρ, whatever the other rows
    say: the rows then have none at all, never the Gaussian rows' ρ alone."""
    from dpfed_core.privacy.accounting import ledger_rho

    gauss = _row("Gaussian (OpenDP map)", 1.0, 1e-6, rho=0.1)
    exact = _row("exact sums (non-private limit: exact)", math.inf, 0.0, rho=None, noise_scale=0.0)
    assert ledger_rho([gauss]) == (pytest.approx(0.1), True)
    assert ledger_rho([exact, gauss]) == (None, False)
    assert ledger_rho([gauss, exact]) == (None, False)


def test_a_batch_with_a_point_without_rho_has_no_zcdp_charge():
    """A batch one of whose points has no ρ (an approximate-DP selection) leaves the entity without
    a zCDP charge: it composes basically only, its ε the batch's summed ε."""
    rho = planned_rho("dp-cooccurrence", 1.0, 1e-6)[0]
    batch = [ReleaseCharge(1.0, 1e-6, rho, gaussian=True, batch="sweep"),
             ReleaseCharge(0.5, 1e-7, None, batch="sweep")]
    comp = compose_releases(batch, CAP_DELTA)
    assert comp.rho is None and comp.tight_epsilon == math.inf
    assert comp.accountant == "basic" and comp.epsilon == pytest.approx(1.5)


def test_a_sweep_composed_by_pld_takes_only_the_delta_the_other_releases_leave():
    """Basic composition has δ_cap/2 in all: a sweep of Gaussian points composed by PLD gets what a
    single run's δ and a one-point sweep's δ leave of it, never more; Σδ beyond δ_cap/2 is named."""
    from dpfed_core.privacy.accounting import ReleaseCharge, basic_delta_exceeded, compose_releases
    from dpfed_core.privacy.noise import zcdp_epsilon

    cap, rho = 1e-6, 0.02
    point = zcdp_epsilon(rho, 1e-8)
    entries = ([ReleaseCharge(zcdp_epsilon(rho, 2e-8), 2e-8, rho, True)]
               + [ReleaseCharge(point, 1e-8, rho, True, batch="sweep") for _ in range(8)]
               + [ReleaseCharge(point, 1e-8, rho, True, batch="one point")])
    comp = compose_releases(entries, cap)
    assert comp.basic_delta <= cap / 2 * (1 + 1e-9)
    assert comp.basic_delta == pytest.approx(cap / 2, rel=1e-9)  # the sweep takes what is left, all of it
    assert not basic_delta_exceeded(comp, cap)
    assert comp.basic_epsilon < sum(e.epsilon for e in entries)  # the sweep by PLD, below its Σε
    over = compose_releases([ReleaseCharge(1.0, 3e-7), ReleaseCharge(1.0, 3e-7)], cap)
    assert basic_delta_exceeded(over, cap) and math.isinf(over.epsilon)


def test_a_gaussian_row_without_its_own_rho_is_charged_from_its_sigma_and_sensitivity():
    """A Gaussian row that states no ρ (a record written without it) is charged ρ = Δ²/2σ² from the σ and
    Δ it records, and stays Gaussian-only; Δ = 0 costs nothing. Without σ or Δ it has no ρ at all."""
    from dpfed_core.privacy.accounting import RHO_MARGIN, ledger_rho

    rho, only = ledger_rho([_row("Gaussian (OpenDP)", 1.0, 1e-6, sensitivity=2.0, noise_scale=4.0)])
    assert rho == pytest.approx(2.0**2 / (2 * 4.0**2) * (1 + RHO_MARGIN), rel=1e-12) and only is True
    assert ledger_rho([_row("Gaussian (OpenDP)", 1.0, 1e-6, sensitivity=0.0, noise_scale=4.0)]) == (0.0, True)
    for missing in ("sensitivity", "noise_scale"):
        row = _row("Gaussian (OpenDP)", 1.0, 1e-6, sensitivity=2.0, noise_scale=4.0)
        row[missing] = None
        assert ledger_rho([row]) == (None, False)
