"""Each share of a secure sum is rounded to the public grid before it is summed: the sum the server sees
is then not a post-processing of the noisy sum the ledger charges. These tests check the bound that
makes it one (up to a negligible slack) where the shares carry enough noise, against the exact laws it
bounds, and that a run whose shares carry too little says so wherever its guarantee is read."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.evaluation.experiments import make_split, run_method
from dpfed_core.federation.summable import (GRID, make_summable_method, rounding_covered, rounding_log_eta)
from dpfed_core.privacy.statement import epsilon_that_holds


def _uniform_sum_density(H: int):
    """Density of a sum of H independent uniforms on [−½, ½] (Irwin–Hall, centred)."""
    def f(u: float) -> float:
        x = u + H / 2
        if x <= 0 or x >= H:
            return 0.0
        return sum((-1) ** j * math.comb(H, j) * (x - j) ** (H - 1)
                   for j in range(int(math.floor(x)) + 1)) / math.factorial(H - 1)
    return f


@pytest.mark.parametrize("H", [2, 3])
@pytest.mark.parametrize("tau", [0.8, 1.0, 1.2])
def test_the_rounded_sum_is_within_eta_of_a_post_processing_of_the_gaussian_sum(H, tau):
    # exact law of S = Σ round(μ_h + τ Z_h) against Q(k) = E[B_H(k − T)], T ~ N(Σμ, Hτ²): the pointwise
    # bound of rounding_log_eta must hold, and Q must be a law (it is the post-processing kernel's)
    mus = [0.3, -0.17, 0.41][:H]
    ks = np.arange(-40, 41)
    pmf = None
    for m in mus:
        p = norm.cdf((ks + 0.5 - m) / tau) - norm.cdf((ks - 0.5 - m) / tau)
        pmf = p if pmf is None else np.convolve(pmf, p)
    kk = np.arange(pmf.size) - 40 * H
    mu, s, B = sum(mus), tau * math.sqrt(H), _uniform_sum_density(H)
    breaks = list(np.arange(-H / 2, H / 2 + 1))
    q = np.array([quad(lambda u, k=k: norm.pdf((k - mu - u) / s) / s * B(u), -H / 2, H / 2, points=breaks)[0]
                  for k in kk])
    near = np.abs(kk - mu) < 30
    gap = float(np.max(np.abs(pmf[near] - q[near])))
    assert q.sum() == pytest.approx(1.0, abs=1e-9)
    assert gap > 0  # the rounded sum is not the post-processing itself ...
    assert gap <= math.exp(rounding_log_eta(tau, H))  # ... but within η of it at every point


def test_coverage_needs_more_noise_steps_at_a_larger_epsilon_and_more_entities():
    assert rounding_covered(19.2, 30, 3.0, 1e-6)      # dp-cooccurrence, 30 entities, ε = 3
    assert rounding_covered(6.7, 30, 10.0, 1e-6)      # ε = 10
    assert not rounding_covered(2.76, 30, 30.0, 1e-6)  # ε = 30: too few steps
    assert not rounding_covered(3.6, 100, 10.0, 1e-6)  # 100 entities, ε = 10
    assert not rounding_covered(6.7, 30, math.inf, 1e-6) and not rounding_covered(6.7, 30, 10.0, 0.0)
    assert rounding_covered(math.inf, 30, 10.0, 1e-6)  # no share rounded with noise: nothing to cover
    taus = np.linspace(0.5, 12, 47)
    for eps in (1.0, 10.0, 100.0):
        flags = [rounding_covered(t, 30, eps, 1e-6) for t in taus]
        first = flags.index(True)
        assert all(flags[first:]) and not any(flags[:first])  # one threshold in τ
    need = {e: next(t for t in taus if rounding_covered(t, 30, e, 1e-6)) for e in (1.0, 10.0, 100.0)}
    assert need[1.0] <= need[10.0] < need[100.0]
    assert next(t for t in taus if rounding_covered(t, 1000, 10.0, 1e-6)) > need[10.0]


@pytest.fixture(scope="module")
def clinic():
    ds = load_data("sample:clinic")
    base = RunConfig(method="dp-cooccurrence", aggregation="secure", epsilon=3.0, delta=1e-6, seed=0,
                     simulation=True, rank=8)
    return ds, base, make_split(ds, base)


@pytest.mark.parametrize("method", ["dp-cooccurrence", "dp-als", "dp-popularity"])
def test_a_runs_grid_steps_are_its_smallest_share_noise_and_too_few_are_a_warning(clinic, method):
    ds, base, split = clinic
    H = ds.n_entities
    low, _ = run_method(ds, dataclasses.replace(base, method=method, epsilon=1.0), split)
    high, _ = run_method(ds, dataclasses.replace(base, method=method, epsilon=1000.0), split)
    for doc, eps in ((low, 1.0), (high, 1000.0)):
        r = doc["privacy"]["trust"]["rounding"]
        m = make_summable_method(method, epsilon=eps, delta=1e-6, aggregation="secure",
                                 value_max=ds.value_max)
        rows = [x for x in doc["privacy"]["ledger"] if x["mechanism"].startswith("Gaussian share of a secure sum")]
        divisor = m.share_divisor(H)
        expected = min(x["noise_scale"] / divisor * m.noise_spread(x["stage"]) / GRID for x in rows)
        assert r["grid_steps"] == pytest.approx(expected, rel=1e-12)
        if method != "dp-popularity":  # a packed symmetric stage: σ/√2 off its diagonal
            assert min(m.noise_spread(s) for s in m.stages) == pytest.approx(1 / math.sqrt(2))
    assert low["privacy"]["trust"]["rounding"]["covered"]
    assert not any("grid steps of noise" in w for w in low["privacy"]["warnings"])
    assert not high["privacy"]["trust"]["rounding"]["covered"]
    [w] = [w for w in high["privacy"]["warnings"] if "grid steps of noise" in w]
    coalition = high["privacy"]["trust"]["against_server_and_other_entities"]["epsilon"]
    assert f"ε = {epsilon_that_holds(coalition)}" in w and "not proved" in w


def test_without_secure_aggregation_nothing_is_rounded_before_a_sum(clinic):
    ds, base, split = clinic
    doc, _ = run_method(ds, dataclasses.replace(base, aggregation="none", epsilon=300.0), split)
    assert "rounding" not in doc["privacy"]["trust"]
    assert not any("grid steps of noise" in w for w in doc["privacy"]["warnings"])


def test_the_cli_prints_the_guarantees_warnings_as_the_dashboard_shows_them(tmp_path, capsys):
    from dpfed_core.cli.main import main
    from dpfed_core.ui.tables import guarantee_text

    out = tmp_path / "run.json"
    assert main(["run", "--data", "sample:clinic", "--method", "dp-cooccurrence", "--aggregation", "secure",
                 "--epsilon", "300", "--simulation", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    import json

    doc = json.loads(out.read_text())
    [w] = [w for w in doc["privacy"]["warnings"] if "grid steps of noise" in w]
    assert f"warning: {w}" in printed
    doc["privacy"]["simulation"] = False  # the dashboard states warnings with a guarantee it can give
    assert w in guarantee_text(doc).replace("\\", "")


def test_a_dp_catalogues_shares_count_among_the_runs_grid_steps(clinic):
    # without a declared catalogue a secure run first sums the entities' bucket histograms, each share
    # rounded too: the run's fewest grid steps are the selection's when its shares carry less noise
    ds, base, _ = clinic
    und = dataclasses.replace(ds, item_source="data")
    split = make_split(und, base)
    doc, _ = run_method(und, dataclasses.replace(base, method="dp-popularity"), split)
    divisor = math.sqrt(ds.n_entities)
    steps = {stage: min(r["noise_scale"] / divisor / GRID for r in doc["privacy"]["ledger"]
                        if r["stage"] == stage and r["mechanism"].startswith("Gaussian share of a secure sum"))
             for stage in ("catalogue", "item totals")}
    assert steps["catalogue"] < steps["item totals"]
    assert doc["privacy"]["trust"]["rounding"]["grid_steps"] == pytest.approx(steps["catalogue"], rel=1e-12)


def test_a_sweep_names_the_points_whose_epsilon_is_not_proved(capsys):
    from dpfed_core.cli.main import main
    from dpfed_core.evaluation.service import summarise_sweep
    from dpfed_core.evaluation.verdicts import unproved_sweep_text

    assert main(["sweep", "--data", "sample:clinic", "--method", "dp-cooccurrence", "--aggregation", "secure",
                 "--epsilons", "1,300", "--seeds", "0", "--references", "local", "--simulation"]) == 0
    printed = capsys.readouterr().out
    [line] = [x for x in printed.splitlines() if "too few grid steps" in x]
    assert line.startswith("warning: at ε = 300 the shares") and "ε = 1," not in line
    # from the points' own records: a point without one (no secure sum, an older document) is not named
    runs = [{"epsilon": 3.0, "privacy": {"rounding": {"covered": True}}},
            {"epsilon": 30.0, "privacy": {"rounding": {"covered": False}}},
            {"epsilon": 100.0, "privacy": {}}, {"epsilon": 30.0, "privacy": {"rounding": {"covered": False}}}]
    doc = summarise_sweep({"runs": runs, "references": []}, metrics=())
    assert doc["unproved_epsilons"] == [30.0] and "at ε = 30 the shares" in unproved_sweep_text(doc)
    assert unproved_sweep_text({"unproved_epsilons": []}) is None


def test_the_report_states_a_sweeps_unproved_points_to_analysts_and_the_public(clinic):
    from dpfed_core.evaluation.experiments import sweep
    from dpfed_core.reporting.report import build_report

    ds, base, split = clinic
    run_doc, _ = run_method(ds, base, split)
    sw = sweep(ds, base, [1.0, 300.0], [0], [])
    for public in (False, True):
        html = build_report(run_doc, sweep_doc=sw, public=public)
        assert "at ε = 300 the shares of the secure sums carried too few grid" in html
    html = build_report(run_doc, sweep_doc=sweep(ds, base, [1.0], [0], []))
    assert "too few grid" not in html
