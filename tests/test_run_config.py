"""A run's configuration is checked where it is made: every limit holds at its edge, and an unusable value
is one ConfigError naming the setting that fixes it."""
from __future__ import annotations

import pytest

from dpfed_core.config import MAX_EPSILON, MAX_LAM, MAX_SEED, MIN_EPSILON, RunConfig, check_epsilon
from dpfed_core.errors import ConfigError


def test_epsilon_limits_are_inclusive_and_just_beyond_them_refused():
    assert check_epsilon(MIN_EPSILON) == MIN_EPSILON and check_epsilon(MAX_EPSILON) == MAX_EPSILON
    for eps in (MIN_EPSILON / 2, MAX_EPSILON * 1.5):
        with pytest.raises(ConfigError) as exc:
            check_epsilon(eps, param="epsilons")
        assert exc.value.param == "epsilons"


def test_ridge_penalty_from_zero_to_its_maximum_is_accepted():
    assert RunConfig(lam=0.0).lam == 0.0 and RunConfig(lam=MAX_LAM).lam == MAX_LAM
    with pytest.raises(ConfigError, match="above") as exc:
        RunConfig(lam=MAX_LAM * 2)
    assert exc.value.param == "lam"


def test_the_largest_seed_is_accepted_and_a_bad_one_names_the_seed():
    assert RunConfig(seed=MAX_SEED).seed == MAX_SEED
    with pytest.raises(ConfigError, match="seed must be a whole number") as exc:
        RunConfig(seed=MAX_SEED + 1)
    assert exc.value.param == "seed"


@pytest.mark.parametrize("field,value", [("k", 0), ("max_iter", 0), ("n_jobs", 0), ("max_dropouts", True),
                                         ("test_fraction", 1.0)])
def test_a_value_outside_its_range_is_refused(field, value):
    with pytest.raises(ConfigError, match=field.replace("_", "[_ ]")):
        RunConfig(**{field: value})


def test_changing_the_method_drops_the_parameters_given_for_the_other():
    cfg = RunConfig(method="dp-gaussian", prototype_params={"cluster_size": None}, method_params={"x": 1})
    other = cfg.replace(method="kmeans")
    assert other.prototype_params == {} and other.method_params == {}
    assert cfg.replace(k=3).params == {"cluster_size": None, "x": 1}
