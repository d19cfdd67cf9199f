"""A run's configuration is checked where it is made: every limit holds at its edge, and an unusable value
is one ConfigError naming the setting that fixes it."""
from __future__ import annotations

import pytest

from dpfed_core.config import (MAX_EPSILON, MAX_K, MAX_LAM, MAX_RANK, MAX_SEED, MIN_EPSILON, Param, RunConfig,
                               check_epsilon, check_params)
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


@pytest.mark.parametrize("field,value", [("epsilon", 0.0), ("epsilon", -1.0), ("epsilon", float("nan")),
                                         ("delta", 0.5), ("delta", -1e-9), ("delta", float("nan"))])
def test_a_budget_outside_its_range_is_refused_naming_epsilon_or_delta(field, value):
    """Zero, negative or NaN ε and a δ outside [0, 0.01) are refused where the configuration is made, the error
    naming the setting that fixes it (a run at ε ≤ 0 would otherwise reach the noise calibration)."""
    with pytest.raises(ConfigError) as exc:
        RunConfig(method="dp-popularity", **{"epsilon": 1.0, field: value})
    assert exc.value.param == field


def test_a_runs_epsilon_below_the_minimum_names_the_epsilon_setting():
    with pytest.raises(ConfigError, match="below") as exc:
        RunConfig(method="dp-popularity", epsilon=MIN_EPSILON / 10)
    assert exc.value.param == "epsilon"


@pytest.mark.parametrize("field,limit", [("k", MAX_K), ("rank", MAX_RANK)])
def test_k_and_rank_are_accepted_up_to_their_limit_and_refused_one_beyond(field, limit):
    assert getattr(RunConfig(**{field: limit}), field) == limit
    with pytest.raises(ConfigError, match="above") as exc:
        RunConfig(**{field: limit + 1})
    assert exc.value.param == field


def _refused(param: Param, value) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        param.coerce(value, "dp-x")
    assert exc.value.param == "prototype_params" and f"dp-x parameter {param.name}" in str(exc.value)
    return exc.value


def test_a_parameter_at_an_open_bound_is_refused_and_just_inside_it_accepted():
    share = Param("share", "float", 0.5, "a share of ε", low=0, high=1, low_open=True, high_open=True)
    for edge in (0, 0.0, "0", 1, "1.0"):
        _refused(share, edge)
    assert share.coerce(1e-12) == 1e-12 and share.coerce("0.999999") == 0.999999
    closed = Param("share", "float", 0.5, "a share of ε", low=0, high=1)
    assert closed.coerce(0) == 0.0 and closed.coerce(1) == 1.0


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", float("inf"), float("nan"), True, False, "1e400"])
def test_a_number_parameter_refuses_infinity_nan_and_booleans(value):
    """A non-finite bound or scale would void a calibration (an infinite clipping bound, a NaN threshold); a
    boolean is no number, whatever Python says."""
    _refused(Param("bound", "float", 1.0, "a public bound"), value)


@pytest.mark.parametrize("value", [True, "inf", 2.5])
def test_a_whole_number_parameter_refuses_booleans_infinity_and_fractions(value):
    _refused(Param("steps", "int", 3, "ALS steps", low=1, high=20), value)


def test_a_budget_split_refuses_a_negative_share_naming_the_method_and_stage_and_an_unknown_stage():
    split = Param("split", "mapping", None, "shares of ε per stage", choices=("size", "sums"), optional=True)
    assert split.coerce("size:0.2;sums:0.8") == {"size": 0.2, "sums": 0.8}
    assert split.coerce("none") is None
    assert "the share of 'size' must be a finite number ≥ 0, got '-0.1'" in str(_refused(split, "size:-0.1,sums:1"))
    assert "unknown key 'other'" in str(_refused(split, "size:0.5,other:0.5"))
    assert "the share of 'sums'" in str(_refused(split, {"size": 0.5, "sums": float("inf")}))


def test_a_main_setting_given_as_a_method_parameter_names_the_control_that_sets_it():
    declared = (Param("bound", "float", 1.0, "a public bound", low=0),)
    assert check_params(declared, {"bound": "2"}, "dp-x") == {"bound": 2.0}
    with pytest.raises(ConfigError, match="set by --epsilon") as exc:
        check_params(declared, {"epsilon": 1.0}, "dp-x", reserved={"epsilon": "--epsilon"})
    assert exc.value.param == "prototype_params"
    with pytest.raises(ConfigError, match="its parameters: bound"):
        check_params(declared, {"bond": 1.0}, "dp-x")
