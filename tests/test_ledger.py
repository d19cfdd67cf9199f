import math

import numpy as np
import pytest

from dpfed_core.errors import BudgetExceededError, ConfigError
from dpfed_core.privacy.ledger import PrivacyLedger


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


@pytest.mark.parametrize("eps,delta", [(0, 1e-6), (-1, 1e-6), (float("nan"), 0), (1, 1.0), (1, -0.1), ("abc", 0)])
def test_bad_budgets(eps, delta):
    with pytest.raises(ConfigError):
        PrivacyLedger(eps, delta)


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
