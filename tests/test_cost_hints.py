"""The time hints users read before a run: seconds said as seconds, and each run predicted from the cost
measured for its own method and mode."""
from __future__ import annotations

import pytest

from dpfed_core.evaluation import cost

SHAPES = [{"n": n, "m": m, "H": h, "nnz": n * 20} for n, m, h in
          ((500, 100, 4), (2000, 150, 30), (900, 1700, 11), (1800, 190, 180), (3000, 400, 8))]


def _point(method, shape, stages, mode):
    return {"method": method, "mode": mode, "shape": shape, "max_iter": 100, "k": 5, "stages": stages,
            "wall": sum(stages.values()), "data": "x"}


def test_seconds_below_a_minute_are_said_in_seconds_and_longer_times_rounded_to_the_second():
    assert cost.format_seconds(45) == "45 s" and cost.format_seconds(59.4) == "59 s"
    assert cost.estimate_text(2.2) == "about 2 s"
    assert cost.format_seconds(119.6) == "2 min 00 s" and cost.format_seconds(3599.7) == "1 h 00 min"
    assert cost.format_seconds(125) == "2 min 05 s"


def test_a_time_that_rounds_to_a_minute_is_said_in_minutes():
    assert cost.format_seconds(59.6) == "1 min 00 s" and cost.estimate_text(59.7) == "about 1 min 00 s"
    assert cost.format_seconds(59.4) == "59 s"


def test_each_mode_is_predicted_from_its_own_measurement_and_an_unmeasured_mode_from_the_other():
    # observed mode costs 1 s per entity in round 2, zero mode 0.1 s: each prediction reads its own mode's fit
    pts = [_point("m1", s, {"round1": 0.0, "server": 0.0, "round2": f * s["H"], "other": 0.0, "evaluate": 0.0}, mode)
           for mode, f in (("zero", 0.1), ("observed", 1.0)) for s in SHAPES]
    model = cost.fit(pts)
    shape = {"n": 1000, "m": 200, "H": 40, "nnz": 20000}
    observed = cost._predict(model, "m1", "observed", shape, {"max_iter": 100, "k": 5})
    zero = cost._predict(model, "m1", "zero", shape, {"max_iter": 100, "k": 5})
    assert sum(observed.values()) == pytest.approx(40.0, rel=0.05)
    assert sum(zero.values()) == pytest.approx(4.0, rel=0.05)
    only_zero = cost.fit([p for p in pts if p["mode"] == "zero"])
    assert cost._predict(only_zero, "m1", "observed", shape, {"max_iter": 100, "k": 5}) == pytest.approx(zero)


def test_a_deployments_stated_time_is_the_in_process_run_plus_flowers_overhead(tmp_path, monkeypatch):
    import json

    from dpfed_core.config import RunConfig
    from dpfed_core.data.loaders import load_data

    rows = [{"entities": h, "engine": "deployment", "in_process_s": 0.5, "deployment_s": 0.5 + 2.0 + 0.5 * h}
            for h in (3, 10, 40)]
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps({"rows": rows}))
    monkeypatch.setattr(cost, "DEPLOYMENT_FILE", path)
    monkeypatch.setattr(cost, "busy_factor", lambda: 1.0)
    plan = {"round1": 3.0, "server": 0.0, "round2": 0.0, "other": 0.0, "evaluate": 0.0}
    monkeypatch.setattr(cost, "clock_for_runs", lambda shape, configs, path=None: cost.RunClock([plan]))
    ds = load_data("sample:clinic")
    line = cost.deployment_estimate(ds, RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"))
    # 3 s in process + 2.0 s + 0.5 s × 30 entities
    assert line.startswith("dp-popularity on Flower (deployment engine): about 20 s; "), line
