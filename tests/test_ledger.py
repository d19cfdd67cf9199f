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
