"""The cost model: its fit recovers known costs, it predicts from measurements, and the running clock
names the stage and the time left from the engine's progress events."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpfed_core.config import RunConfig
from dpfed_core.evaluation import cost


def _point(method, shape, stages, mode="zero", k=5):
    return {"method": method, "mode": mode, "shape": shape, "max_iter": 100, "k": k, "stages": stages,
            "wall": sum(stages.values()), "data": "x"}


SHAPES = [{"n": n, "m": m, "H": h, "nnz": n * 20} for n, m, h in
          ((500, 100, 4), (2000, 150, 30), (900, 1700, 11), (1800, 190, 180), (3000, 400, 8))]


def test_fit_recovers_a_known_cost_and_stages_add_up():
    # round 2 costs 2 ms per entity per 100 iterations plus 20 µs per interaction; evaluation 1 µs per
    # test user × item: the fit finds it again and predicts an unseen shape exactly
    def truth(s):
        return {"round1": 0.0, "server": 0.0, "round2": 0.02 * s["H"] + 2e-4 * s["nnz"],
                "other": 0.0, "evaluate": 1e-2 * 0.2 * s["n"] * s["m"] / 1e3}

    model = cost.fit([_point("m1", s, truth(s)) for s in SHAPES])
    new = {"n": 1200, "m": 300, "H": 50, "nnz": 24000}  # inside the measured shapes' span
    pred = cost._predict(model, "m1", "zero", new, {"max_iter": 100, "k": 5})
    assert sum(pred.values()) == pytest.approx(sum(truth(new).values()), rel=0.1)
    assert cost._predict(model, "other-method", "zero", new) is None
    st = cost.stage_seconds({"round1_popularity": 0.2, "round1_co-occurrence": 0.3, "round1_total": 0.5,
                             "round2_local_fit": 1.0, "evaluate": 0.1, "split": 0.0}, wall=2.0)
    assert st["round1"] == pytest.approx(0.5) and sum(st.values()) == pytest.approx(2.0)


def test_predictions_use_the_measurement_of_the_same_run_and_say_when_unmeasured(tmp_path):
    pts = [_point("m1", s, {"round1": 1.0, "server": 0, "round2": s["H"] * 0.1, "other": 0, "evaluate": 0.1})
           for s in SHAPES]
    pts[1]["stages"]["round2"] = 9.0  # a measured run slower than the model's average
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": cost.fit(pts), "points": pts}))
    cfg = RunConfig(method="m1", k=5, max_iter=100)
    here = cost.predict_run(SHAPES[1], cfg, path)
    assert sum(here.values()) == pytest.approx(1.0 + 9.0 + 0.1)
    assert cost.predict_run(SHAPES[1], cfg.replace(method="unmeasured"), path) is None
    # the measurement of this very run is one with the same iterations: another count is the model's
    other_its = cost.predict_run(SHAPES[1], cfg.replace(max_iter=300), path)
    modelled = cost._predict(cost.measured_model(path), "m1", "zero", SHAPES[1], cfg.replace(max_iter=300).to_dict())
    assert other_its == modelled
    assert sum(other_its.values()) != pytest.approx(10.1, rel=0.02)
    assert cost.predict_runs(SHAPES[1], [cfg, cfg], path) == pytest.approx(2 * 10.1)
    # the same sizes without a declared catalogue (a DP selection) are another run: its own measurement
    selected = {**SHAPES[1], "s": 40.0, "sel": 1}
    pts.append({**_point("m1", selected, {"round1": 1.0, "server": 0, "round2": 2.0, "other": 0, "evaluate": 0.1})})
    both = tmp_path / "both.json"
    both.write_text(json.dumps({"model": cost.fit(pts), "points": pts}))
    assert sum(cost.predict_run(selected, cfg, both).values()) == pytest.approx(3.1)
    assert sum(cost.predict_run({**SHAPES[1], "s": 150.0, "sel": 0}, cfg, both).values()) == pytest.approx(10.1)
    assert cost.estimate_text(None).startswith("duration not measured")
    assert cost.estimate_text(0.4) == "under 1 s" and cost.estimate_text(75) == "about 1 min 15 s"
    assert cost.within_2x(0.4, 1.9) and not cost.within_2x(0.4, 2.5)
    assert cost.within_2x(10, 19) and not cost.within_2x(10, 21) and not cost.within_2x(10, 4.9)


@pytest.mark.parametrize("per_million", [40.0, 1.0], ids=["fitted", "sampler-floor"])
def test_a_production_run_is_predicted_with_its_noise_draws_and_a_simulation_without(tmp_path, per_million):
    """Production noise (OpenDP's exact samplers) is what made hints tens of times too short: a
    production DP run's round 1 is predicted as the simulation's plus the fitted cost of its noise
    coordinates (per million, per entity, fixed) — never below the samplers' own µs per coordinate —
    and a simulation run or a non-private one without it, measured run or modelled one alike."""
    b, c0 = 0.01, 0.05
    pts = []
    for sh in SHAPES:
        coords = sh["H"] * sh["m"]
        p = _point("m1", sh, {"round1": 0.5, "server": 0.1, "round2": 0.2, "other": 0.0, "evaluate": 0.1})
        p["noise_coordinates"] = coords
        p["production_stages"] = {**p["stages"], "round1": 0.5 + per_million * coords * 1e-6 + b * sh["H"] + c0}
        p["production_wall"] = p["wall"] + per_million * coords * 1e-6 + b * sh["H"] + c0
        pts.append(p)
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": cost.fit(pts), "points": pts}))
    cfg = RunConfig(method="m1", k=5, max_iter=100, epsilon=1.0, simulation=False)
    for sh in (SHAPES[2], {"n": 5000, "m": 600, "H": 20, "nnz": 100000}):  # measured; modelled
        coords = sh["H"] * sh["m"]
        want = max(per_million * coords * 1e-6 + b * sh["H"] + c0, coords * cost.us_per_coordinate() * 1e-6)
        prod = cost.predict_run(sh, cfg, path)
        sim = cost.predict_run(sh, cfg.replace(simulation=True), path)
        assert prod["round1"] - sim["round1"] == pytest.approx(want, rel=1e-3)
        assert cost.predict_run(sh, cfg.replace(epsilon=math.inf), path) == sim
        assert {k: v for k, v in prod.items() if k != "round1"} == {k: v for k, v in sim.items() if k != "round1"}


def test_the_clock_names_the_stage_and_scales_the_time_left():
    plan = {"round1": 4.0, "server": 1.0, "round2": 4.0, "other": 0.0, "evaluate": 1.0}
    clock = cost.RunClock([plan, plan], ["dp-cooccurrence", "local"])
    assert clock.total == 20.0 and clock.fraction() == 0.0
    clock.event("round1_start", entity="hospital 03", index=3, total=4)
    assert "round 1 · hospital 03 (4/4)" in clock.text(1.0)
    clock.event("round1_done", entity="hospital 03", index=3, total=4)
    assert clock.fraction() == pytest.approx(4.0 / 20)
    # twice as slow as predicted so far: the rest is predicted twice as long
    assert clock.seconds_left(8.0) == pytest.approx(16.0 * 2)
    clock.event("server_start")
    assert "server" in clock.text(9.0)
    clock.event("round2_start", entity="hospital 01", index=0, total=4)
    clock.event("evaluate_start")
    assert "evaluation" in clock.text(9.0)
    clock.event("evaluate_done")
    assert clock.fraction() == pytest.approx(0.5) and "next: local" in clock.text(10.0)
    assert "run 2/2" in clock.text(10.0)
    blind = cost.RunClock([None])
    blind.event("round1_start", entity="A", index=0, total=2)
    assert blind.fraction() is None and "not predicted" in blind.text(3.0)


def test_sweep_runs_are_the_sweeps_points():
    from report_docs import small_dataset

    from dpfed_core.evaluation.experiments import sweep

    ds = small_dataset()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, rank=3, max_iter=20, simulation=True, aggregation="secure")
    eps, seeds, refs = [1.0, math.inf], [0, 1], ["individual", "dp-popularity"]
    doc = sweep(ds, cfg, eps, seeds, refs)
    planned = cost.sweep_configs(cfg, eps, seeds, refs)
    assert len(planned) == len(doc["runs"])
    assert sorted((c.method, c.seed) for c in planned) == sorted((r["method"], r["seed"]) for r in doc["runs"])
    # a swept method without ε runs once per seed, whatever the grid; a resumed document's points are not run
    km = cfg.replace(method="kmeans", k=3, epsilon=math.inf, aggregation="none")
    doc = sweep(ds, km, [0.5, 1.0, 3.0], seeds, ["individual"])
    planned = cost.sweep_configs(km, [0.5, 1.0, 3.0], seeds, ["individual"])
    assert len(planned) == len(doc["runs"]) == 4
    from dpfed_core.evaluation.experiments import job_key

    done = {job_key("kmeans", math.inf, 0, "kmeans")}
    assert [(c.method, c.seed) for c in cost.sweep_configs(km, [0.5, 1.0, 3.0], seeds, ["individual"], done)] == [
        ("individual", 0), ("kmeans", 1), ("individual", 1)]


def test_cli_states_the_prediction_before_it_runs(capsys):
    from dpfed_core.cli.main import main

    assert main(["run", "--data", "sample:clinic", "--federation", "region", "--simulation"]) == 0
    out = capsys.readouterr().out
    scaled = cost.speed_note()  # said when this machine's reference work differs from the benchmark's
    assert out.startswith("run dp-cooccurrence: ") and \
        f"predicted for 1 run on these data (measured cost model{'; ' + scaled if scaled else ''})" in out


def test_cli_bar_names_the_stage_and_time_left_on_a_terminal(monkeypatch, capsys):
    import io
    import sys

    from dpfed_core.cli.main import _Bar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    err = Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    bar = _Bar(cost.RunClock([{"round1": 2, "server": 0.5, "round2": 2, "other": 0, "evaluate": 0.5}]), "run m")
    bar("round1_start", entity="hospital 01", index=0, total=2)
    bar("server_start")
    bar("round2_start", entity="hospital 02", index=1, total=2)
    bar("evaluate_start")
    bar.close()
    drawn = err.getvalue()
    for stage in ("round 1 · hospital 01 (1/2)", "server", "round 2 · hospital 02 (2/2)", "evaluation"):
        assert stage in drawn, drawn
    assert "left" in drawn and "%|" in drawn
    assert "predicted for 1 run" in capsys.readouterr().out


def test_noise_is_predicted_from_the_items_a_run_shares_in_every_mode():
    """A run without a declared catalogue shares the DP selection's items, not all of the data's: its
    noise coordinates follow ``s`` (the forecast the CLI prints), capped at the co-occurrence release's
    items; and what a method draws does not depend on the observation mode, so a mode measured on few
    shapes predicts it from every mode's runs."""
    pts = []
    for sh in SHAPES:
        for s in (sh["m"], sh["m"] / 4):  # declared catalogue; a selection keeping a quarter
            shape = {**sh, "s": float(s), "sel": int(s < sh["m"])}
            p = _point("m1", shape, {"round1": 0.5, "server": 0.1, "round2": 0.2, "other": 0.0, "evaluate": 0.1})
            c = min(s, cost.CO_OCCURRENCE_CAP)
            p["noise_coordinates"] = sh["H"] * (c * c / 2 + 4096 * (s < sh["m"]))
            pts.append(p)
    pts.append({**_point("m1", {**SHAPES[2], "s": float(SHAPES[2]["m"]), "sel": 0},
                         {"round1": 0.5, "server": 0.1, "round2": 9.0, "other": 0.0, "evaluate": 0.1},
                         mode="observed"), "noise_coordinates": pts[4]["noise_coordinates"]})
    model = cost.fit(pts)
    assert model["m1|observed"]["noise"] == model["m1|zero"]["noise"]
    upload = {"n": 943, "m": 1682, "H": 21, "nnz": 100000, "s": 300.0, "sel": 1}
    want = 21 * (300 * 300 / 2 + 4096)
    for mode in ("zero", "observed"):
        got = float(np.dot(model[f"m1|{mode}"]["noise"], cost._terms("noise", upload, {"k": 5})))
        assert got == pytest.approx(want, rel=0.02)
    # the cap is the configuration's own when it sets one
    capped = cost._terms("noise", upload, {"k": 5, "method_params": {"max_items": 100}})
    assert capped[cost.NOISE_FEATURES.index("H*c*c")] == 21 * 100 * 100


def test_a_runs_shape_carries_the_selections_forecast_when_no_catalogue_is_declared():
    import dataclasses

    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.catalogue_forecast import forecast_catalogue
    from dpfed_core.evaluation.defaults import default_config

    declared = load_data("sample:clinic", federation="region")
    uploaded = dataclasses.replace(declared, item_source="data")
    cfg = default_config(uploaded, "dp-cooccurrence")
    assert cost.shape_of(declared, cfg) == {**cost.shape_of(declared), "s": 143.0, "sel": 0}
    # a declared catalogue that leaves some of the data's items out shares its own items only
    assert cost.shape_of(dataclasses.replace(declared, n_declared=100), cfg)["s"] == 100.0
    shape = cost.shape_of(uploaded, cfg)
    assert shape["sel"] == 1 and shape["s"] == pytest.approx(forecast_catalogue(uploaded, cfg).expected_items)
    assert shape["s"] < uploaded.n_items
    # a non-private run selects nothing; each run of a comparison gets its own shape
    runs = [cfg, cfg.replace(method="local", epsilon=math.inf), cfg.replace(epsilon=0.3)]
    shapes = cost.run_shapes(uploaded, runs)
    assert shapes[0] == shape and shapes[1]["sel"] == 0 and shapes[1]["s"] == uploaded.n_items
    assert shapes[2]["s"] < shape["s"]  # a smaller ε keeps fewer items
    with pytest.raises(ValueError, match="2 shapes for 3 runs"):
        cost.predict_runs(shapes[:2], runs)


def test_each_cost_term_reads_the_runs_own_test_fraction_iterations_and_k():
    """The terms a stage's time is fitted on are the run's own: its test users (n × its test
    fraction) for the evaluation, its iterations (relative to 100) for round 2, its k for round 1."""
    shape = {"n": 1000, "m": 50, "H": 4, "nnz": 9000}
    np.testing.assert_allclose(cost._terms("evaluate", shape, {"test_fraction": 0.5}), [1, 1000 * 0.5 * 50 / 1e3, 9000])
    np.testing.assert_allclose(cost._terms("evaluate", shape), [1, 1000 * 0.2 * 50 / 1e3, 9000])
    np.testing.assert_allclose(cost._terms("round2", shape, {"max_iter": 30}),
                               [1, 4 * 0.3, 9000 * 0.3, 4 * 50 * 0.3, 1000 * 0.3, 1000 * 50 * 0.3 / 1e3])
    assert cost._terms("round1", shape, {"k": 7})[-1] == pytest.approx(1000 * 7 * 50 / 1e3)


def test_the_pages_time_hint_counts_every_run_and_adds_their_predictions(tmp_path, monkeypatch):
    """The Federate page's hint for a comparison names how many runs it predicts and is their sum, one
    after the other (a measurement written here, so the hint does not hang on the committed one)."""
    from dpfed_core.data.samples import load_sample
    from dpfed_core.ui import engine as dash

    pts = [_point(m, s, {"round1": 0.5, "server": 0, "round2": s["H"] * f, "other": 0, "evaluate": 0.1})
           for m, f in (("local", 0.1), ("individual", 0.02)) for s in SHAPES]
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": cost.fit(pts), "points": pts}))
    monkeypatch.setattr(cost, "COST_FILE", path)
    data = load_sample("clinic")
    runs = [RunConfig(method=m) for m in ("local", "individual", "local")]
    alone = [dash.predicted_seconds(data, [c]) for c in runs]
    assert alone[0] != pytest.approx(alone[1])
    assert dash.predicted_seconds(data, runs) == pytest.approx(sum(alone))
    assert "predicted for 3 runs on these" in dash.estimate_line(data, runs)
    assert "predicted for 1 run on these" in dash.estimate_line(data, runs[:1])


def test_a_deployment_is_predicted_as_the_in_process_run_plus_a_line_fitted_on_the_deployment_benchmark(tmp_path):
    """deploy-local states its time before anything starts: the cost model's in-process prediction
    plus Flower's start-up and messages, a + b·H fitted on the deployment benchmark's (deployed −
    in-process) seconds of the engine asked for."""
    import json

    from dpfed_core.config import RunConfig
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.cost import DEPLOYMENT_FILE, deployment_estimate, deployment_overhead

    rows = [{"entities": h, "engine": "deployment", "in_process_s": 0.5, "deployment_s": 0.5 + 2.0 + 0.5 * h}
            for h in (3, 10, 30)] + [{"entities": 3, "engine": "simulation", "in_process_s": 0.1, "deployment_s": 9.0}]
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps({"rows": rows}))
    secs, a, b = deployment_overhead(20, path=path)
    assert (a, b, secs) == pytest.approx((2.0, 0.5, 12.0))
    assert deployment_overhead(20, "simulation", path=path) is None  # one size: no line through it
    assert deployment_overhead(3, path=tmp_path / "missing.json") is None
    # the committed benchmark: the product's own prediction for the clinic sample
    ds = load_data("sample:clinic")
    extra = deployment_overhead(ds.n_entities)
    assert extra is not None and DEPLOYMENT_FILE.is_file() and extra[0] > 0
    line = deployment_estimate(ds, RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"), "deployment")
    assert line.startswith("dp-popularity on Flower (deployment engine): about ")
    assert f"for {ds.n_entities} entities" in line and "fitted on the deployment benchmark's runs" in line
    measured = json.loads(DEPLOYMENT_FILE.read_text(encoding="utf-8"))["machine"]["date"][:10]
    assert line.endswith(f"benchmark's runs of {measured})")  # when Flower's overhead was measured


def test_the_deployment_benchmarks_day_is_read_from_its_document(tmp_path):
    """Flower's overhead is measured outside the engine's fingerprint, so its estimate says when: the
    day of the benchmark's document, and nothing when the document does not say."""
    import json

    from dpfed_core.evaluation.cost import deployment_measured_on

    path = tmp_path / "deployment.json"
    path.write_text(json.dumps({"machine": {"date": "2026-12-04 22:15:44 UTC"}, "rows": []}))
    assert deployment_measured_on(path) == "2026-12-04"
    for machine in ({}, {"date": 20261204}, {"date": "soon"}):
        path.write_text(json.dumps({"machine": machine, "rows": []}))
        assert deployment_measured_on(path) is None
    assert deployment_measured_on(tmp_path / "missing.json") is None


def test_a_sum_whose_noise_is_drawn_once_is_timed_for_one_vector_not_one_per_entity():
    """A summable method whose in-process production run draws each sum's noise once draws one vector for
    the H entities' shares: its noise time counts the coordinates one entity sends (all of them ÷ H); a
    method whose entities each draw their own counts every coordinate sent."""
    from dpfed_core.federation.summable import SUMMABLE_METHODS, draws_noise_once

    shape = {"n": 900, "m": 170, "H": 10, "nnz": 9000}
    once = [m for m in SUMMABLE_METHODS if draws_noise_once(m)]
    assert once
    for m in once:
        assert cost.drawn_coordinates(m, 1000.0, shape) == pytest.approx(100.0)
    assert cost.drawn_coordinates("dp-prototypes", 1000.0, shape) == 1000.0


def test_hours_are_stated_as_hours_and_the_minutes_past_them():
    assert cost.format_seconds(59.4) == "59 s"
    assert cost.format_seconds(3725) == "1 h 02 min"
    assert cost.format_seconds(2 * 3600 + 59 * 60) == "2 h 59 min"
    assert cost.estimate_text(3725) == "about 1 h 02 min"


def test_a_busy_machine_stretches_the_stated_time_by_its_load(monkeypatch):
    """On a machine loaded three times over its cores the hint adds how long the run may take now: the
    prediction times the load, not the prediction again."""
    monkeypatch.setattr(cost, "busy_factor", lambda: 3.0)
    assert cost.estimate_with_load(15.0) == ("about 15 s (up to 45 s while this machine is as busy as now: other "
                                             "work uses its cores)")
    monkeypatch.setattr(cost, "busy_factor", lambda: 1.0)
    assert cost.estimate_with_load(15.0) == "about 15 s"


def test_the_clock_counts_runs_only_when_there_are_several():
    plan = {"round1": 4.0, "server": 1.0, "round2": 4.0, "other": 0.0, "evaluate": 1.0}
    one = cost.RunClock([plan], ["dp-cooccurrence"])
    one.event("round1_start", entity="hospital 03", index=0, total=4)
    assert one.text(1.0).startswith("round 1 · hospital 03 (1/4) · 1 s elapsed")
    two = cost.RunClock([plan, plan], ["dp-cooccurrence", "local"])
    two.event("round1_start", entity="hospital 03", index=0, total=4)
    assert two.text(1.0).startswith("run 1/2 · round 1 · hospital 03 (1/4)")


def test_the_deployment_estimate_states_the_fitted_line_it_adds(tmp_path, monkeypatch):
    """"… 12 s (2.0 s + 0.50 s per entity, …)": the line's fixed seconds, then its seconds per entity — the two
    coefficients of the fit, each in its place — and their sum at this many entities."""
    import json

    from dpfed_core.config import RunConfig
    from dpfed_core.data.loaders import load_data

    rows = [{"entities": h, "engine": "deployment", "in_process_s": 0.5, "deployment_s": 0.5 + 2.0 + 0.5 * h}
            for h in (3, 10, 40)]
    path = tmp_path / "deployment.json"
    path.write_text(json.dumps({"rows": rows, "machine": {"date": "2026-12-04 22:15:44 UTC"}}))
    monkeypatch.setattr(cost, "DEPLOYMENT_FILE", path)
    plan = {"round1": 3.0, "server": 0.0, "round2": 0.0, "other": 0.0, "evaluate": 0.0}
    monkeypatch.setattr(cost, "clock_for_runs", lambda shape, configs, path=None: cost.RunClock([plan]))
    ds = load_data("sample:clinic")
    assert ds.n_entities == 30
    line = cost.deployment_estimate(ds, RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"))
    assert line.endswith("predicted: the in-process run's 3 s (measured cost model) plus Flower's start-up and "
                         "messages for 30 entities, 17 s (2.0 s + 0.50 s per entity, fitted on the deployment "
                         "benchmark's runs of 2026-12-04)"), line


def test_a_run_after_one_that_made_the_sites_fits_is_predicted_at_its_measured_share(tmp_path):
    """The runs of one command share the sites' own fits: the benchmark times each method again after a
    federated run on the same split, and a run after one that made those fits (same seed and own-model
    settings, a method that reads them) is predicted at that measured share of its time alone, stage by
    stage; a method that gained nothing neither reads nor makes them; the clock and the total agree."""
    def stages(round2):
        return {"round1": 0.2, "server": 0.0, "round2": round2, "other": 0.0, "evaluate": 0.1}

    pts = []
    for s in SHAPES:
        for method, alone, after in (("fed", 0.1, 0.05), ("local", 0.08, 0.008), ("popularity", 0.0, 0.0)):
            p = _point(method, s, stages(s["H"] * alone))
            p["shared_stages"] = stages(s["H"] * after)
            if method == "popularity":  # a stage that took longer after (other work): no share above 1
                p["shared_stages"]["evaluate"] = 0.15
            pts.append(p)
    model = cost.fit(pts)
    assert model["fed|zero"]["shared"]["round2"] == pytest.approx(0.5)
    assert model["local|zero"]["shared"]["round2"] == pytest.approx(0.1)
    assert model["local|zero"]["shared"]["round1"] == 1.0 and model["local|zero"]["shared"]["evaluate"] == 1.0
    assert model["popularity|zero"]["shared"]["total"] == 1.0 and model["popularity|zero"]["shared"]["evaluate"] == 1.0
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": model, "points": pts}))
    shape = {"n": 1200, "m": 300, "H": 50, "nnz": 24000}
    fed, loc, pop = (RunConfig(method=m, k=5, max_iter=100) for m in ("fed", "local", "popularity"))
    alone = {c.method: cost.predict_run(shape, c, path) for c in (fed, loc, pop)}
    first, second = cost.predict_each(shape, [fed, loc], path)
    assert first == alone["fed"]
    assert second["round2"] == pytest.approx(0.1 * alone["local"]["round2"]) and second["round2"] > 0
    assert second["round1"] == alone["local"]["round1"] and second["evaluate"] == alone["local"]["evaluate"]
    # either order: the federated run after local reads local's fits
    assert cost.predict_each(shape, [loc, fed], path)[1]["round2"] == pytest.approx(0.5 * alone["fed"]["round2"])
    # a reference that does not read them makes none; another split or own model shares nothing
    assert cost.predict_each(shape, [pop, loc], path)[1] == alone["local"]
    for other in (loc.replace(seed=1), loc.replace(rank=5), loc.replace(test_fraction=0.3), loc.replace(n_hidden=3),
                  loc.replace(lam=1.0), loc.replace(max_iter=50), loc.replace(mode="observed")):
        assert cost.predict_each(shape, [fed, other], path)[1] == cost.predict_run(shape, other, path), other
    runs = [fed, loc, fed.replace(epsilon=1.0), pop]
    each = cost.predict_each(shape, runs, path)
    assert cost.predict_runs(shape, runs, path) == pytest.approx(sum(sum(p.values()) for p in each))
    assert cost.clock_for_runs(shape, runs, path).total == pytest.approx(cost.predict_runs(shape, runs, path))
    assert cost.predict_runs(shape, runs, path) < sum(sum(alone[c.method].values()) for c in runs)
    # a result file measured without the runs after a shared fit: each run alone, as before
    for p in pts:
        del p["shared_stages"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"model": cost.fit(pts), "points": pts}))
    assert cost.predict_each(shape, [fed, loc], old) == [cost.predict_run(shape, c, old) for c in (fed, loc)]


def test_predictions_are_scaled_by_how_long_this_machine_takes_for_the_engines_reference_work(tmp_path, monkeypatch):
    """The benchmark's seconds are its machine's; a machine that takes 2.5× as long for the reference work
    (the site model's fit of a fixed matrix) is predicted 2.5× the time — runs measured and modelled, the
    noise draws of a production run and Flower's overhead alike — and a document that records no
    reference work is predicted as measured."""
    pts = [_point("m1", s, {"round1": 1.0, "server": 0, "round2": s["H"] * 0.1, "other": 0, "evaluate": 0.1})
           for s in SHAPES]
    for sh in pts:
        sh["noise_coordinates"] = sh["shape"]["H"] * sh["shape"]["m"]
        sh["production_stages"] = {**sh["stages"], "round1": 1.0 + 40e-6 * sh["noise_coordinates"] + 0.3}
        sh["production_wall"] = sh["wall"] + 40e-6 * sh["noise_coordinates"] + 0.3
    model = cost.fit(pts)
    plain, timed = tmp_path / "plain.json", tmp_path / "timed.json"
    plain.write_text(json.dumps({"model": model, "points": pts}))
    timed.write_text(json.dumps({"model": model, "points": pts, "machine": {"reference_s": 0.02}}))
    monkeypatch.setattr(cost, "reference_seconds", lambda: 0.05)
    monkeypatch.setattr(cost, "us_per_coordinate", lambda path=None: 1e-9)  # the fitted noise cost decides
    cfg = RunConfig(method="m1", k=5, max_iter=100)
    unseen = {"n": 5000, "m": 600, "H": 20, "nnz": 100000}
    for sh in (SHAPES[1], unseen):  # measured; modelled
        for c in (cfg, cfg.replace(epsilon=1.0, simulation=False)):
            base, here = cost.predict_run(sh, c, plain), cost.predict_run(sh, c, timed)
            assert base["round2"] > 0 and all(here[s] == pytest.approx(2.5 * base[s]) for s in cost.STAGES), (sh, c)
    assert cost.predict_run(unseen, cfg.replace(epsilon=1.0, simulation=False), plain)["round1"] > \
        cost.predict_run(unseen, cfg, plain)["round1"] + 0.2  # the production part is there to be scaled
    assert cost.machine_factor({"machine": {"reference_s": 0.05}}) == 1.0
    # what one machine's speed varies by is not taken for another machine
    assert cost.machine_factor({"machine": {"reference_s": 0.05 / 1.4}}) == 1.0
    assert cost.machine_factor({"machine": {"reference_s": 0.05 / 0.7}}) == 1.0
    assert cost.machine_factor({"machine": {"reference_s": 0.05 / 1.6}}) == pytest.approx(1.6)
    assert cost.machine_factor({"machine": {"reference_s": 0.05 / 0.6}}) == pytest.approx(0.6)
    assert cost.machine_factor({"machine": {"reference_s": 1e-6}}) == cost.MACHINE_FACTOR_RANGE[1]
    assert cost.machine_factor({"machine": {"reference_s": 10.0}}) == cost.MACHINE_FACTOR_RANGE[0]
    assert cost.machine_factor({"machine": {"date": "x"}}) == cost.machine_factor(None) == 1.0
    assert cost.machine_factor({"machine": {"reference_s": 0}}) == 1.0
    assert cost.speed_note(timed) == ("scaled to this machine: it took 2.5× the benchmark machine's time for the "
                                      "engine's reference work")
    assert cost.speed_note(plain) == ""
    rows = [{"entities": h, "engine": "deployment", "in_process_s": 0.5, "deployment_s": 0.5 + 2.0 + 0.5 * h}
            for h in (3, 10, 30)]
    dep = tmp_path / "deployment.json"
    dep.write_text(json.dumps({"rows": rows, "machine": {"reference_s": 0.1}}))
    assert cost.deployment_overhead(20, path=dep) == pytest.approx((6.0, 1.0, 0.25))


def test_the_samplers_cost_is_scaled_by_the_reference_work_of_its_own_measurement(tmp_path, monkeypatch):
    doc = {"samplers": [{"sampler": "Gaussian", "opendp_us_per_coord": 10.0}], "machine": {"reference_s": 0.01}}
    path = tmp_path / "samplers.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(cost, "reference_seconds", lambda: 0.03)
    cost.us_per_coordinate.cache_clear()
    try:
        assert cost.us_per_coordinate(str(path)) == pytest.approx(30.0)
    finally:
        cost.us_per_coordinate.cache_clear()


def test_the_reference_work_is_the_site_models_fit_and_counts_its_fastest_repeat(monkeypatch):
    """Other work on the machine only slows the reference down: the fastest of its repeats counts; each
    repeat is the fixed fit in both observation modes without a stopping rule."""
    import time

    from dpfed_core.models import factorization

    fits = []
    monkeypatch.setattr(factorization, "fit_nmf", lambda X, rank, **kw: fits.append((X.shape, rank, kw["mode"],
                                                                                    kw["max_iter"], kw["tol"])))
    durations = iter([0.0, 0.05, 0.05, 0.07, 0.07, 0.08, 0.08, 0.09, 0.09, 0.095, 0.095, 0.125, 0.125, 0.13])
    monkeypatch.setattr(time, "process_time", lambda: next(durations))
    assert cost.time_reference_work() == pytest.approx(0.005)
    assert len(fits) == 2 * cost.REFERENCE_REPEATS
    assert set(fits) == {((400, 300), 8, "observed", 8, 0.0), ((400, 300), 8, "zero", 30, 0.0)}


def test_the_reference_work_is_timed_on_this_machine_once_per_process():
    first = cost.reference_seconds()
    assert 0 < first < 5 and cost.reference_seconds() == first


def test_the_pages_hint_says_it_was_scaled_to_this_machine(tmp_path, monkeypatch):
    from dpfed_core.data.samples import load_sample
    from dpfed_core.ui import engine as dash

    pts = [_point("local", s, {"round1": 0.5, "server": 0, "round2": s["H"] * 0.1, "other": 0, "evaluate": 0.1})
           for s in SHAPES]
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"model": cost.fit(pts), "points": pts, "machine": {"reference_s": 0.01}}))
    monkeypatch.setattr(cost, "COST_FILE", path)
    monkeypatch.setattr(cost, "reference_seconds", lambda: 0.03)
    data = load_sample("clinic")
    line = dash.estimate_line(data, [RunConfig(method="local")])
    assert line.endswith("from measured runs, scaled to this machine: it took 3× the benchmark machine's time for "
                         "the engine's reference work")
    monkeypatch.setattr(cost, "reference_seconds", lambda: 0.014)  # within what one machine varies by
    assert dash.estimate_line(data, [RunConfig(method="local")]).endswith("from measured runs")
