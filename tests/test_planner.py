"""The ε planner: it answers "how many users per entity make the federation beat
local at this ε" from synthetic federations built from public parameters — never from the rows."""
from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from dpfed_core.config import RunConfig
from dpfed_core.evaluation import planner


def test_the_planner_reads_no_private_rows_and_compares_with_local(monkeypatch):
    # it cannot be given a dataset: only the federation's public shape and the analyst's assumption
    params = set(inspect.signature(planner.users_needed).parameters)
    assert not params & {"dataset", "ds", "X"}
    seen = []
    real = planner.run_method

    def spy(ds, cfg, *a, **k):
        seen.append((ds, cfg))
        return real(ds, cfg, *a, **k)

    monkeypatch.setattr(planner, "run_method", spy)
    out = planner.users_needed(RunConfig(method="dp-popularity", epsilon=1.0, rank=3, max_iter=20),
                               n_entities=3, n_items=30, value_max=5.0, users_grid=(20, 60), seeds=(0, 1))
    assert {cfg.method for _, cfg in seen} == {"dp-popularity", "local"}
    assert all(ds.generated and ds.name.startswith("planner") for ds, _ in seen)
    assert all(cfg.simulation for _, cfg in seen)  # generated data: a simulation releases nothing
    assert [p["users"] for p in out["points"]] == [20.0, 60.0]
    assert out["mode"] == "zero" and out["assumptions"]["interactions per user"] == 20.0
    assert set(out["estimate"]) == {"users", "how", "direction", "points"}
    # every answer states the measured advantages and their spread, whatever it concludes
    said = planner.users_to_pay_sentence(out["estimate"], "1", "zero")
    assert "Measured (advantage over local ± its sd over seeds" in said
    assert all(f"{p['users']:,.0f} users {p['advantage']:+.2g} ± {p['sd']:.2g}" in said for p in out["points"])


# ------------------------------------------------------------- what the planner computes
def _doc(means: dict[float, float], central: float | None = None) -> dict:
    runs = [{"method": "dp-gaussian", "epsilon": e, "seed": 0, "overall": {"mar": v}} for e, v in means.items()]
    if central is not None:
        runs.append({"method": "central", "epsilon": math.inf, "seed": 0, "overall": {"mar": central}})
    return {"config": {"method": "dp-gaussian"}, "runs": runs}


def test_the_target_must_hold_from_the_answer_on_and_one_lucky_point_does_not_count():
    # ε = 0.1 is within 5 % of central by luck, ε = 1 is not: the answer is 10, not 0.1
    plan = planner.epsilon_for_utility(_doc({0.1: 0.205, 1.0: 0.30, 10.0: 0.206}, central=0.2), "mar", 0.05)
    assert plan["epsilon"] == 10.0 and plan["target"] == pytest.approx(0.21) and plan["any"]


def test_without_central_the_reference_is_the_swept_method_at_infinite_epsilon():
    plan = planner.epsilon_for_utility(_doc({0.1: 0.40, 1.0: 0.26, 10.0: 0.205, math.inf: 0.2}), "mar", 0.05)
    assert plan["reference"] == "dp-gaussian at ε = ∞"
    assert plan["reference_value"] == pytest.approx(0.2) and plan["target"] == pytest.approx(0.21)
    assert plan["epsilon"] == 10.0


def test_users_needed_measures_the_advantage_per_metric_direction_with_the_sample_sd(monkeypatch):
    # the runs are stubbed (their values fixed per seed) so the planner's arithmetic is checked alone:
    # precision is higher-is-better, so the federation's advantage is its value minus local's
    from dpfed_core.data import synthetic

    densities = []
    real = synthetic.make_poisson

    def spy(**kw):
        densities.append(kw["density"])
        return real(**kw)

    fed = {0: 0.30, 1: 0.34}

    def fake_run(ds, cfg, *a, **k):
        v = fed[cfg.seed] if cfg.method == "dp-popularity" else 0.20
        return {"overall": {"precision": v}}, None

    monkeypatch.setattr(synthetic, "make_poisson", spy)
    monkeypatch.setattr(planner, "run_method", fake_run)
    out = planner.users_needed(RunConfig(method="dp-popularity", epsilon=1.0), n_entities=4, n_items=50,
                               value_max=5.0, interactions_per_user=10.0, users_grid=(20,), seeds=(0, 1),
                               metric="precision")
    (p,) = out["points"]
    assert p["advantage"] == pytest.approx(0.12)
    assert p["sd"] == pytest.approx(float(np.std([0.10, 0.14], ddof=1)))  # 0.0283, not the population 0.02
    assert densities == [pytest.approx(10.0 / 50)] * 2  # interactions per user over the catalogue's items


def test_a_higher_is_better_target_lies_below_the_reference_and_the_sweep_is_read_in_epsilon_order():
    # precision: the target is 5 % below central's 0.4; the runs come in no order of ε, and ε = 0.1 misses
    runs = [{"method": "dp-gaussian", "epsilon": e, "seed": 0, "overall": {"precision": v}}
            for e, v in ((1.0, 0.385), (10.0, 0.39), (0.1, 0.2))]
    runs.append({"method": "central", "epsilon": math.inf, "seed": 0, "overall": {"precision": 0.4}})
    plan = planner.epsilon_for_utility({"config": {"method": "dp-gaussian"}, "runs": runs}, "precision", 0.05)
    assert plan["target"] == pytest.approx(0.38) and plan["epsilon"] == 1.0
    assert [p["epsilon"] for p in plan["values"]] == [0.1, 1.0, 10.0]


def test_the_size_that_pays_is_where_advantage_minus_sd_crosses_zero_on_a_log_scale_of_users():
    # z = advantage − sd: −0.01 at 100 users, +0.04 at 400 → a fifth of the way on log(users)
    est = planner.users_to_pay([{"users": 100, "advantage": 0.02, "sd": 0.03},
                                {"users": 400, "advantage": 0.05, "sd": 0.01}])
    assert est["direction"] == "from" and est["how"] == "interpolated"
    assert est["users"] == pytest.approx(100 * 4 ** 0.2, rel=1e-12)
    # z from −0.01 to +0.01: the geometric mean of the sizes (200), not the arithmetic one (250)
    est = planner.users_to_pay([{"users": 100, "advantage": -0.01}, {"users": 400, "advantage": 0.01}])
    assert est["users"] == pytest.approx(200.0, rel=1e-12)


@pytest.mark.parametrize("advantage", [-0.01, 0.0])
def test_an_advantage_that_never_pays_and_does_not_grow_gives_no_size(advantage):
    # a constant advantage fits a slope of rounding size: no size is stated, not "from about inf users"
    pts = [{"users": u, "advantage": advantage, "sd": 0.0} for u in (25, 100, 400)]
    est = planner.users_to_pay(pts)
    assert est["users"] is None and est["direction"] is None
    assert est["how"].startswith("the advantage does not grow with more users")
    assert "no size found" in planner.users_to_pay_sentence(est, "1", "zero")


def test_no_finite_epsilon_within_the_target_plans_none_not_infinity():
    # only the swept method at ε = ∞ (the reference itself) reaches 5 % of 0.2: the plan is no ε, and the
    # page says "No ε on this grid …", not "Smallest ε on the grid: ε = ∞"
    plan = planner.epsilon_for_utility(_doc({0.1: 0.40, 1.0: 0.30, 10.0: 0.25, math.inf: 0.2}), "mar", 0.05)
    assert plan["reference"] == "dp-gaussian at ε = ∞" and plan["epsilon"] is None and not plan["any"]
    # with central the reference, ε = ∞ still has to hold from the answer on
    plan = planner.epsilon_for_utility(_doc({1.0: 0.30, 10.0: 0.205, math.inf: 0.2}, central=0.2), "mar", 0.05)
    assert plan["epsilon"] == 10.0 and plan["any"]
    plan = planner.epsilon_for_utility(_doc({1.0: 0.30, 10.0: 0.205, math.inf: 0.3}, central=0.2), "mar", 0.05)
    assert plan["epsilon"] is None and plan["any"]


@pytest.mark.parametrize("seeds", [(0,), (3, 3), ()])
def test_the_users_planner_refuses_fewer_than_two_seeds_rather_than_state_a_spread_of_zero(monkeypatch, seeds):
    """Its size is where the advantage minus its sd over seeds crosses zero: one seed (or one seed twice) has no
    spread, and an sd of 0 would state a size the noise was never measured against. Refused before any run."""
    from dpfed_core.errors import ConfigError

    monkeypatch.setattr(planner, "run_method", lambda *a, **k: pytest.fail("ran before its seeds were checked"))
    with pytest.raises(ConfigError, match="at least two different seeds") as refused:
        planner.users_needed(RunConfig(method="dp-popularity", epsilon=1.0), n_entities=3, n_items=30,
                             value_max=5.0, users_grid=(20,), seeds=seeds)
    assert refused.value.param == "seeds"
