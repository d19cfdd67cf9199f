import math

import numpy as np
import pytest

from dpfed_core.errors import BudgetExceededError, ConfigError
from dpfed_core.privacy.ledger import BASIC, ZCDP, LedgerRow, PrivacyLedger, compose, delta_warning
from dpfed_core.privacy.noise import zcdp_epsilon


def test_sequential_within_parallel_across_entities():
    led = PrivacyLedger(1.0, 1e-6)
    a, b = led.for_entity("A"), led.for_entity("B")
    a.spend("size", "laplace", 0.1)
    a.spend("search", "exponential", 0.6, 5e-7)
    b.spend("size", "laplace", 0.9)
    assert led.spent("A") == pytest.approx((0.7, 5e-7))
    assert led.guarantee() == pytest.approx((0.9, 5e-7))
    assert [r["stage"] for r in led.per_stage()] == ["size", "search", "size"]


def test_overspend_is_refused_and_not_recorded():
    led = PrivacyLedger(1.0, 1e-6)
    e = led.for_entity("A")
    e.spend("s1", "laplace", 0.7)
    with pytest.raises(BudgetExceededError):
        e.spend("s2", "laplace", 0.31)
    with pytest.raises(BudgetExceededError):
        e.spend("s2", "gaussian", 0.1, 2e-6)
    assert len(led.rows) == 1
    e.spend("s2", "laplace", 0.3)  # exactly the rest is fine (float shares)
    assert led.guarantee()[0] == pytest.approx(1.0)


def test_random_splits_never_exceed_request():
    rng = np.random.default_rng(0)
    for _ in range(200):
        eps = float(rng.uniform(0.01, 10))
        led = PrivacyLedger(eps, 1e-5)
        shares = rng.dirichlet(np.ones(rng.integers(1, 8)))
        for h in range(3):
            for i, s in enumerate(shares):
                led.spend(f"e{h}", f"stage{i}", "laplace", eps * s, 1e-5 * s)
        g = led.guarantee()
        assert g[0] <= eps * (1 + 1e-9) and g[1] <= 1e-5 * (1 + 1e-9)


def test_non_private_is_labelled_inf():
    led = PrivacyLedger(math.inf)
    led.spend("A", "prototypes", "raw rows", math.inf)
    assert led.guarantee()[0] == math.inf and not led.is_private


@pytest.mark.parametrize("eps,delta", [(0, 1e-6), (-1, 1e-6), (float("nan"), 0), (1, 1.0), (1, -0.1), ("abc", 0),
                                       (1, 0.01)])
def test_bad_budgets(eps, delta):
    with pytest.raises(ConfigError):
        PrivacyLedger(eps, delta)


def test_a_delta_just_below_one_in_a_hundred_is_a_budget():
    """δ = 1/100 is the first δ refused (one user in a hundred may be published outright); just below it
    is still a budget."""
    assert PrivacyLedger(1.0, 0.0099).delta == 0.0099


def test_each_entity_s_rows_are_its_own_through_appends_copies_and_pickles():
    """The per-entity index kept beside ``rows`` gives what filtering every row gives, after every
    kind of spend, a deep copy and a pickle round trip (worker processes)."""
    import copy
    import pickle

    from dpfed_core.privacy.ledger import compose

    g = np.random.default_rng(4)
    led = PrivacyLedger(10.0, 1e-5)
    names = [f"e{i}" for i in range(40)]
    for k in range(400):
        e = names[int(g.integers(len(names)))]
        if k % 3:
            led.spend(e, "s", "laplace", 0.01)
        else:
            led.spend(e, "g", "gaussian", 0.01, 1e-9, rho=1e-5)
        if k in (50, 200):  # read in between: the index is built, then extended
            assert led.spent(e) == compose([r for r in led.rows if r.entity == e], led.delta)[:2]
    for other in (led, copy.deepcopy(led), pickle.loads(pickle.dumps(led))):
        for e in names:
            want = [r for r in other.rows if r.entity == e]
            assert other._rows_of(e) == want
            assert other.spent(e) == compose(want, other.delta)[:2]
    twin = pickle.loads(pickle.dumps(led))
    twin.spend("e0", "s", "laplace", 0.02)  # the copy's index follows its own rows only
    assert len(twin._rows_of("e0")) == len(led._rows_of("e0")) + 1


# ------------------------------------------------------------- composition, row by row
def _row(entity, stage, eps, delta=0.0, rho=None):
    return LedgerRow(entity, stage, "laplace" if rho is None else "gaussian", eps, delta, 1.0, 1.0, rho=rho)


def test_basic_composition_adds_every_rows_delta():
    # three approximate-DP rows of one entity, no ρ: ε and δ both add up
    eps, dlt, how = compose([_row("A", "a", 0.2, 3e-7), _row("A", "b", 0.3, 2e-7), _row("A", "c", 0.1, 1e-7)], 1e-6)
    assert (eps, dlt, how) == (pytest.approx(0.6), pytest.approx(6e-7), BASIC)


def test_zcdp_is_used_only_when_tighter_and_adds_the_other_rows_epsilon():
    # one Gaussian row whose ρ converts to far more than its stated ε: basic composition holds
    assert compose([_row("A", "g", 0.5, 1e-6, rho=1.0)], 1e-6) == (pytest.approx(0.5), pytest.approx(1e-6), BASIC)
    # a Laplace row (ε 0.3) and two Gaussian rows (ρ 0.01 each, stated ε 0.5): zCDP converts Σρ = 0.02 at the
    # whole δ (the Laplace row spends none) and adds the Laplace row's ε: 0.3 + 0.8999 < basic 1.3
    rows = [_row("A", "size", 0.3), _row("A", "g1", 0.5, 4e-7, rho=0.01), _row("A", "g2", 0.5, 4e-7, rho=0.01)]
    eps, dlt, how = compose(rows, 1e-6)
    assert how == ZCDP
    assert eps == pytest.approx(0.3 + zcdp_epsilon(0.02, 1e-6), rel=1e-12)
    assert eps == pytest.approx(1.19994, abs=1e-4) and dlt == pytest.approx(1e-6)


def test_the_accountant_is_the_worst_entitys_and_basic_rows_say_basic():
    led = PrivacyLedger(2.0, 1e-6)
    led.spend("A", "size", "laplace", 0.4)
    led.spend("A", "sum", "laplace", 0.5)
    assert led.accountant("A") == BASIC
    for s in ("g1", "g2"):
        led.spend("B", s, "gaussian", 0.5, 4e-7, rho=0.01)
    assert led.accountant("B") == ZCDP and led.spent("B")[0] == pytest.approx(zcdp_epsilon(0.02, 1e-6))
    # B spent 0.62, A 0.9: the run's accountant is A's
    assert led.accountant() == BASIC


def test_a_spend_is_refused_when_the_entitys_composed_delta_would_pass_the_budget():
    led = PrivacyLedger(5.0, 1e-6)
    led.spend("A", "s1", "exponential", 0.1, 6e-7)
    with pytest.raises(BudgetExceededError, match="δ"):
        led.spend("A", "s2", "exponential", 0.1, 6e-7)
    led.spend("B", "s1", "exponential", 0.1, 6e-7)  # another entity's δ is its own
    assert len(led.rows) == 2


@pytest.mark.parametrize("kw", [{"delta": -1e-7}, {"rho": -0.01}])
def test_a_negative_delta_or_rho_is_refused(kw):
    led = PrivacyLedger(1.0, 1e-6)
    with pytest.raises(BudgetExceededError):
        led.spend("A", "s", "gaussian", 0.1, **kw)
    assert led.rows == []


def test_per_entity_per_stage_and_remaining_state_each_entitys_own_sums():
    led = PrivacyLedger(2.0, 1e-6)
    a, b = led.for_entity("A"), led.for_entity("B")
    a.spend("sum", "laplace", 0.25, 1e-7)
    a.spend("sum", "laplace", 0.5, 2e-7)
    a.spend("size", "laplace", 0.1)
    b.spend("sum", "laplace", 0.7, 3e-7)
    assert led.per_entity() == [
        {"entity": "A", "epsilon": pytest.approx(0.85), "delta": pytest.approx(3e-7), "accountant": BASIC},
        {"entity": "B", "epsilon": pytest.approx(0.7), "delta": pytest.approx(3e-7), "accountant": BASIC}]
    assert led.per_stage() == [
        {"entity": "A", "stage": "sum", "epsilon": pytest.approx(0.75), "delta": pytest.approx(3e-7), "invocations": 2},
        {"entity": "A", "stage": "size", "epsilon": pytest.approx(0.1), "delta": 0.0, "invocations": 1},
        {"entity": "B", "stage": "sum", "epsilon": pytest.approx(0.7), "delta": pytest.approx(3e-7), "invocations": 1}]
    assert a.remaining() == (pytest.approx(1.15), pytest.approx(7e-7))


def test_the_delta_warning_fires_exactly_above_one_over_the_smallest_released_size():
    assert delta_warning(1e-3, 500.0) is None  # 1/500 = 2e-3
    assert "1/n̂" in delta_warning(3e-3, 500.0)
    assert delta_warning(1e-6, None) is None


def test_rows_read_back_from_json_are_the_rows_written():
    import json

    led = PrivacyLedger(math.inf, 1e-6)
    led.spend("A", "size", "laplace", 0.3, 0.0, 1.0, 3.3, note="n", sampler="opendp")
    led.spend("A", "g", "gaussian", 0.5, 4e-7, 1.0, 2.0, rho=0.01)
    led.spend("B", "exact", "none", math.inf, 0.0)
    back = [LedgerRow.from_record(r) for r in json.loads(json.dumps(led.to_records()))]
    def fields(r):  # NaN (a row without a scale) read as itself
        return (r.entity, r.stage, r.epsilon, r.delta, repr(r.noise_scale), r.rho, r.note, r.sampler)

    assert [fields(r) for r in back] == [fields(r) for r in led.rows]
    # numbers some writers keep as strings, and a null number, are read as floats and NaN
    row = LedgerRow.from_record({"entity": 7, "stage": "s", "mechanism": "m", "epsilon": "inf", "delta": "1e-7",
                                 "sensitivity": None, "noise_scale": 2, "rho": "0.5"})
    assert (row.entity, row.epsilon, row.delta, row.rho) == ("7", math.inf, 1e-7, 0.5)
    assert math.isnan(row.sensitivity) and row.note == ""
    with pytest.raises(KeyError):
        LedgerRow.from_record({"stage": "s", "mechanism": "m", "epsilon": 1, "delta": 0})
