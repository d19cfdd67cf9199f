"""Each site owns its privacy in a deployment: a site's policy (its own TOML file, named by its own
``--node-config``) and its own odometer bind every release, whatever the coordinator sends.

The policy's rules are checked as a pure function first; then a real local deployment (one SuperLink,
three SuperNodes with TLS and node authentication) is driven by a test double of the coordinator — a
ServerApp that asks for simulation, ε above the policy, a non-private method, releases without any
request, and a second run over budget, and asks for the releases whatever the sites answered. Every
site refuses, naming the rule, and the double receives nothing but the refusals.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import pytest

from dpfed_core.config import RunConfig
from dpfed_core.deployment import site_policy as sp_
from dpfed_core.deployment.site_policy import PolicyError, PolicyRefused, check, load_policy, request_of, write_policy
from dpfed_core.privacy.statement import epsilon_that_holds
from tests.toy import tied_design

DOUBLE_DIR = Path(__file__).resolve().parent / "coordinator_double"

STRICT = {"methods": ["dp-popularity", "kmeans"], "max_epsilon": 1.0, "max_delta": 1e-5, "budget_epsilon": 1.3,
          "store": "stores/{site}.sqlite3"}


def _policy(tmp_path, **over) -> sp_.SitePolicy:
    return load_policy(write_policy(tmp_path / "policy.toml", **{**STRICT, **over}))


def _spent(*epsilons: float, delta: float = 1e-5, budget_delta: float = 1e-4) -> float:
    """What a site's odometer states as spent after Gaussian runs at ``epsilons`` (each at ``delta``):
    their ρ summed, read at half the budget's δ — the zCDP composition the coordinator's odometer uses."""
    from dpfed_core.privacy.accounting import zcdp_epsilon_of_rho
    from dpfed_core.privacy.noise import zcdp_rho_for_epsilon

    return zcdp_epsilon_of_rho(sum(zcdp_rho_for_epsilon(e, delta) for e in epsilons), budget_delta / 2)


# ============================================================================ the rules, as a function
@pytest.mark.parametrize("cfg, rule", [
    (RunConfig(method="dp-popularity", epsilon=1.0, simulation=True), "allow_simulation"),
    (RunConfig(method="dp-popularity", epsilon=1e4), "max_epsilon"),
    # within the site's total budget (1.3) but above what it accepts of one run
    (RunConfig(method="dp-popularity", epsilon=1.2), "max_epsilon"),
    (RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-3), "max_delta"),
    (RunConfig(method="kmeans"), "allow_non_private"),
    (RunConfig(method="dp-cooccurrence", epsilon=1.0), "methods"),
    (RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure", max_dropouts=1), "max_dropouts"),
    (RunConfig(method="dp-popularity", epsilon=1.0, method_params={"row_norm": 50.0}), "value_bounds"),
], ids=["simulation", "epsilon", "epsilon just above", "delta", "non-private", "method", "dropouts", "bounds"])
def test_each_rule_refuses_what_it_forbids_and_names_itself(tmp_path, cfg, rule):
    policy = _policy(tmp_path, value_bounds=[0, 20])
    with pytest.raises(PolicyRefused) as err:
        check(policy, request_of(cfg, 3, value_max=10.0))
    assert err.value.rule == rule and repr(rule) in str(err.value)


def test_a_request_within_every_rule_is_accepted_and_the_defaults_are_strict(tmp_path):
    policy = _policy(tmp_path)
    assert (policy.allow_simulation, policy.allow_non_private, policy.max_dropouts) == (False, False, 0)
    check(policy, request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, value_max=10.0))
    required = {k: STRICT[k] for k in ("methods", "max_epsilon", "budget_epsilon", "store")}
    bare = load_policy(write_policy(tmp_path / "bare.toml", **required))
    assert (bare.max_delta, bare.budget_delta, bare.max_coalition_epsilon) == (1e-5, 1e-4, math.inf)
    loose = _policy(tmp_path, allow_simulation=True, allow_non_private=True, max_dropouts=1)
    check(loose, request_of(RunConfig(method="kmeans", simulation=True), 3, value_max=10.0))
    assert loose.store_for("clinic A") == (tmp_path / "stores" / "clinic_A.sqlite3").resolve()
    # a site's name never leads its store out of the folder its policy names
    assert loose.store_for("../clinic/B").parent == (tmp_path / "stores").resolve()


def test_value_bounds_of_one_value_are_accepted_as_low_equal_to_high(tmp_path):
    """low ≤ high, as the message says: a site whose every value is the same (e.g. 0/1 data kept
    as [1, 1]) may bind its bounds to that one value; only low > high is refused."""
    assert _policy(tmp_path, value_bounds=[1, 1]).value_bounds == (1.0, 1.0)
    with pytest.raises(sp_.PolicyError, match="low ≤ high"):
        _policy(tmp_path, value_bounds=[2, 1])


def test_every_public_bound_of_the_run_and_the_shards_own_bound_lie_within_value_bounds(tmp_path):
    """value_bounds binds both ends of every bound the run names and the value bound of the site's
    own shard (the bound its users' values are clipped to, which sizes every release's noise)."""
    policy = _policy(tmp_path, value_bounds=[0, 20])
    base = request_of(RunConfig(method="dp-popularity", epsilon=1.0), 3, value_max=10.0)
    check(policy, base)
    for bounds in ({"value_max": 10.0, "value_min": -5.0}, {"value_max": 50.0}):
        with pytest.raises(PolicyRefused) as err:
            check(policy, dataclasses.replace(base, bounds=bounds))
        assert err.value.rule == "value_bounds"
    with pytest.raises(PolicyRefused) as err:
        check(policy, request_of(RunConfig(method="dp-popularity", epsilon=1.0), 3, value_max=50.0))
    assert err.value.rule == "value_bounds" and "value_max" in str(err.value)


def test_value_bounds_bind_the_row_bound_a_method_derives_when_the_run_names_none(tmp_path):
    """dp-gaussian's row bound Λ defaults to Λ∞·√min(m, 64) — 5·√64 = 40 on a catalogue of 100 items —
    when the run names no row_norm: a site whose value_bounds exclude it refuses, naming the rule, the
    bound and that it is the method's default; one whose value_bounds include it accepts."""
    run = RunConfig(method="dp-gaussian", epsilon=1.0)
    req = request_of(run, 3, value_max=5.0, n_items=100)
    assert req.bounds == {"value_max": 5.0, "value_min": 0.0, "row_norm": pytest.approx(40.0)}
    assert set(req.derived) == {"value_min", "row_norm"}
    with pytest.raises(PolicyRefused) as err:
        check(_policy(tmp_path, methods=["dp-gaussian"], value_bounds=[0, 20]), req)
    assert err.value.rule == "value_bounds" and "'row_norm': 40.0" in str(err.value), str(err.value)
    assert "dp-gaussian's default for this run" in str(err.value), str(err.value)
    assert "give row_norm within the bounds" in str(err.value), str(err.value)
    check(_policy(tmp_path, methods=["dp-gaussian"], value_bounds=[0, 40]), req)
    # the default follows the catalogue's size (5·√8 on 8 items), and a row_norm the run names replaces it
    check(_policy(tmp_path, methods=["dp-gaussian"], value_bounds=[0, 20]), request_of(run, 3, 5.0, n_items=8))
    named = request_of(run.replace(method_params={"row_norm": 10.0}), 3, 5.0, n_items=100)
    assert named.bounds["row_norm"] == 10.0 and "row_norm" not in named.derived
    check(_policy(tmp_path, methods=["dp-gaussian"], value_bounds=[0, 20]), named)
    # a size not known yet: the default at its largest
    assert request_of(run, 3, 5.0).bounds["row_norm"] == pytest.approx(40.0)
    # the default lower bound is a bound the method uses too
    with pytest.raises(PolicyRefused, match="'value_min': 0.0"):
        check(_policy(tmp_path, methods=["dp-gaussian"], value_bounds=[1, 50]), req)
    # dp-popularity's row bound defaults to the value bound itself
    pop = request_of(RunConfig(method="dp-popularity", epsilon=1.0), 3, value_max=5.0)
    assert pop.bounds == {"value_max": 5.0, "row_norm": 5.0} and pop.derived == ("row_norm",)


@pytest.mark.parametrize("body, what", [
    ("methods = ['kmeans']\nmax_epsilon = 1\nstore = 's'\n", "budget_epsilon"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nallow_simulaton = true\n", "unknown"),
    ("methods = ['kmeans']\nmax_epsilon = -1\nbudget_epsilon = 2\nstore = 's'\n",
     "max_epsilon = -1.0 must be a positive number; set it in the policy \\(e.g. max_epsilon = 1\\)"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = inf\nstore = 's'\n", "finite"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nallow_simulation = 'yes'\n",
     "allow_simulation"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nmax_delta = 0.05\nbudget_epsilon = 2\nstore = 's'\n", "max_delta"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nbudget_delta = 0.5\nstore = 's'\n", "budget_delta"),
    ("max_epsilon = [", "TOML"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nvalue_bounds = [5, 1]\n", "value_bounds"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nvalue_bounds = [0, nan]\n",
     "value_bounds = \\[0, nan\\] must be two finite numbers"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nvalue_bounds = [-inf, 5]\n",
     "value_bounds = \\[-inf, 5\\] must be two finite numbers"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nmax_dropouts = -1\n", "max_dropouts"),
    # NaN compares false with every ε: a site whose max is NaN would accept any run
    ("methods = ['kmeans']\nmax_epsilon = nan\nbudget_epsilon = 2\nstore = 's'\n", "max_epsilon"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 0\nstore = 's'\n",
     "budget_epsilon = 0.0 must be a positive number; set it in the policy \\(e.g. budget_epsilon = 5\\)"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nmax_dropouts = true\n",
     "max_dropouts"),
    ("methods = [1]\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\n", "methods"),
    ("methods = []\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\n", "methods = \\[\\] accepts no method"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nmax_delta = 1e-5\nbudget_epsilon = 2\nbudget_delta = 1.5e-5\n"
     "store = 's'\n", "budget_delta = 1.5e-05 is below twice max_delta"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = ' '\n", "store is empty"),
    # a type error says what the key holds
    ("methods = ['kmeans']\nmax_epsilon = '1.0'\nbudget_epsilon = 2\nstore = 's'\n",
     "max_epsilon = '1.0' has the wrong type; max_epsilon is a number \\(unquoted"),
    ("methods = 'kmeans'\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\n",
     "methods is a list of method names"),
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nallow_simulation = 'yes'\n",
     "allow_simulation is true or false"),
    # a quoted bound is text, not a bound out of order: the message names the quotes
    ("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\nvalue_bounds = ['0', 5]\n",
     "value_bounds = \\['0', 5\\] must be two numbers \\[low, high\\], unquoted"),
], ids=["missing", "typo", "negative", "infinite budget", "string bool", "delta cap", "delta budget", "not toml",
        "bounds high below low", "bounds not a number", "bounds infinite", "negative dropouts", "nan epsilon",
        "zero budget", "boolean dropouts",
        "method not a name", "no method", "delta budget below two runs", "empty store",
        "quoted number", "method not in a list", "bool spelt as a word", "quoted bound"])
def test_a_bad_policy_file_is_one_error_naming_the_key(tmp_path, body, what):
    p = tmp_path / "p.toml"
    p.write_text(body, encoding="utf-8")
    with pytest.raises(PolicyError, match=what):
        load_policy(p)


@pytest.mark.parametrize("key, value", [("max_delta", 0.02), ("budget_delta", 0.05), ("max_delta", 0.01)])
def test_a_policy_delta_of_a_hundredth_or_more_is_refused(tmp_path, key, value):
    # a δ at or above 0.01 is no privacy guarantee: the site's own policy must not allow it
    over = {"max_delta": value, "budget_delta": 2 * value} if key == "max_delta" else {key: value}
    with pytest.raises(PolicyError, match=f"{key} = {value:g} must be below 0.01"):
        _policy(tmp_path, **over)
    assert _policy(tmp_path, max_delta=1e-3, budget_delta=5e-3).max_delta == 1e-3


def _site_shard(tmp_path):
    """The first site's shard of the three-clinic federation, as a deployment writes it."""
    from tests.test_deployment import three_clinics
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.deployment.shards import load_shard, write_shards

    ds = three_clinics()
    return load_shard(write_shards(ds, make_split(ds, RunConfig()), tmp_path / "shards")[0])


def test_a_misspelt_method_in_a_policy_is_named_by_the_refusal_of_the_method_meant(tmp_path):
    """A policy may name a plug-in's method its reader has not loaded, so a name is not checked against
    the registry when read; a run refused under ``methods`` points at a listed name close to its own."""
    policy = _policy(tmp_path, methods=["dp-popularty", "my-plugin-method"])
    with pytest.raises(PolicyRefused) as err:
        sp_.check(policy, request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, 10.0))
    assert "the policy lists 'dp-popularty': a misspelling of 'dp-popularity'?" in err.value.for_site()
    with pytest.raises(PolicyRefused) as err:
        sp_.check(policy, request_of(RunConfig(method="kmeans"), 3, 10.0))
    assert "misspelling" not in err.value.for_site()


def test_a_refusal_tells_the_coordinator_the_rule_not_the_sites_settings(tmp_path):
    """What the coordinator is told (the exception's text, the node's reply) names the rule; the
    policy's own values — its limits, the methods it lists, its site name — stay in the site's log."""
    policy = _policy(tmp_path, methods=["dp-popularity", "dp-cooccurrence"], max_epsilon=0.5, max_delta=1e-7)
    for cfg, rule, value in ((RunConfig(method="kmeans"), "methods", "dp-cooccurrence"),
                             (RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-8), "max_epsilon", "0.5"),
                             (RunConfig(method="dp-popularity", epsilon=0.5, delta=1e-6), "max_delta", "1e-07")):
        with pytest.raises(PolicyRefused) as err:
            sp_.check(policy, request_of(cfg, 3, 10.0))
        assert err.value.rule == rule and value not in str(err.value) and value in err.value.for_site()


def test_a_policy_written_for_one_site_refuses_at_another_and_charges_nothing(tmp_path):
    shard = _site_shard(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    with pytest.raises(PolicyRefused, match="written for another site than its shard's entity") as err:
        sp_.accept(_policy(tmp_path, site="elsewhere"), req, shard, run="1", coordinator="test")
    assert err.value.rule == "site" and "elsewhere" not in str(err.value) and "'elsewhere'" in err.value.for_site()
    own = _policy(tmp_path, site=shard.entity)
    assert sp_.remaining_budget(own.store_for(shard.entity)) == []  # nothing charged
    sp_.accept(own, req, shard, run="2", coordinator="test")  # its own site's policy decides as usual
    (bal,) = sp_.remaining_budget(own.store_for(shard.entity))
    assert bal["spent_epsilon"] == pytest.approx(_spent(1.0))


def test_the_budget_binds_across_runs_in_the_sites_own_odometer(tmp_path):
    """accept(): the check, then the run's charge in the site's store; the second run that would pass
    budget_epsilon is refused there and nothing more is charged; every decision is in the site's log."""
    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(policy, req, shard, run="1", coordinator="test")
    with pytest.raises(PolicyRefused) as err:
        sp_.accept(policy, req, shard, run="2", coordinator="test")
    assert err.value.rule == "budget_epsilon"
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    # composed by zCDP as the coordinator composes: two runs at ε = 1 would be ε = 1.32 > 1.3
    assert bal["spent_epsilon"] == pytest.approx(_spent(1.0)) and _spent(1.0) < 1.0 < 1.3 < _spent(1.0, 1.0)
    assert bal["remaining_epsilon"] == pytest.approx(1.3 - _spent(1.0)) and bal["cap_epsilon"] == 1.3
    assert bal["spent_delta"] == pytest.approx(1e-5)  # the run's δ is charged too, not only its ε
    rows = sp_.SiteLog(policy.store_for(shard.entity)).rows()
    assert [(r["run"], r["decision"], r["rule"]) for r in rows] == [("1", "accepted", ""),
                                                                   ("2", "refused", "budget_epsilon")]
    # a simulation run (allowed) on the site's records is a non-private release: its guarantee is void,
    # never a free run (the coordinator can reproduce the noise)
    sim = _policy(tmp_path, allow_simulation=True)
    sp_.accept(sim, request_of(RunConfig(method="dp-popularity", epsilon=1.0, simulation=True), 3,
                               shard.value_max), shard, run="3", coordinator="test")
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert bal["spent_epsilon"] == pytest.approx(_spent(1.0)) and bal["n_non_private"] == 1 and bal["n_releases"] == 2


def test_a_policy_that_lowers_the_budget_below_the_spend_refuses_by_the_rule_and_keeps_the_balance_home(tmp_path):
    """The site's policy is its law even below what it spent: the cap follows it, the run is refused
    under budget_epsilon with nothing of the balance in what reaches the coordinator, and logged."""
    shard = _site_shard(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(_policy(tmp_path, budget_epsilon=3.0), req, shard, run="1", coordinator="test")
    lowered = _policy(tmp_path, budget_epsilon=0.5, max_epsilon=0.5)
    with pytest.raises(PolicyRefused) as err:
        sp_.accept(lowered, request_of(RunConfig(method="dp-popularity", epsilon=0.5, delta=1e-5), 3,
                                       shard.value_max), shard, run="2", coordinator="test")
    assert err.value.rule == "budget_epsilon"
    for private in ("spent", "cap", "0.98"):
        assert private not in str(err.value)
    (bal,) = sp_.remaining_budget(lowered.store_for(shard.entity))
    assert bal["cap_epsilon"] == 0.5 and bal["remaining_epsilon"] == 0.0
    rows = sp_.SiteLog(lowered.store_for(shard.entity)).rows()
    assert [(r["run"], r["decision"], r["rule"]) for r in rows] == [("1", "accepted", ""),
                                                                   ("2", "refused", "budget_epsilon")]


def test_the_site_budget_says_when_the_policy_now_states_another_budget_than_the_cap_shown(tmp_path, capsys):
    from dpfed_core.cli.main import main

    shard = _site_shard(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(_policy(tmp_path, budget_epsilon=3.0), req, shard, run="1", coordinator="test")
    argv = ["site", "budget", "--policy", str(tmp_path / "policy.toml"), "--site", shard.entity]
    assert main(argv) == 0
    assert "now states" not in capsys.readouterr().out
    _policy(tmp_path, budget_epsilon=2.0)  # the operator edits the file; no run decided since
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "cap ε = 3" in out and "now states budget_epsilon = 2, budget_delta = 0.0001" in out


def test_the_site_command_lists_each_cap_change_the_policy_made_and_names_the_entity_of_each_row(tmp_path, capsys):
    from dpfed_core.cli.main import main

    shard = _site_shard(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(_policy(tmp_path, budget_epsilon=3.0), req, shard, run="1", coordinator="test")
    sp_.accept(_policy(tmp_path, budget_epsilon=2.0), req, shard, run="2", coordinator="test")
    argv = ["site", "releases", "--policy", str(tmp_path / "policy.toml"), "--site", shard.entity]
    assert main(argv) == 0
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if line.startswith("id "))
    assert head.split()[:6] == ["id", "created", "run", "coordinator", "entity", "method"]
    changes = out[out.index("cap changes of"):].splitlines()
    assert changes[0] == f"cap changes of {sp_.site_dataset_name(shard.entity)!r} (newest first):"
    # newest first: the edit to 2, then the first decision's cap of 3 (none before it)
    assert "ε = 3, δ = 0.0001 → ε = 2, δ = 0.0001" in changes[1] and "site policy" in changes[1]
    assert "none → ε = 3, δ = 0.0001" in changes[2] and len(changes) == 3
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c["new_epsilon"] for c in doc["budget"][0]["cap_changes"]] == [2.0, 3.0]


def test_a_site_name_the_store_holds_no_account_of_is_an_error_naming_the_sites_it_holds(tmp_path, capsys):
    from dpfed_core.cli.main import main

    shard = _site_shard(tmp_path)
    path = write_policy(tmp_path / "p.toml", **{**STRICT, "store": "shared.sqlite3"})
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(load_policy(path), req, shard, run="1", coordinator="test")
    for what in ("budget", "releases"):
        assert main(["site", what, "--policy", str(path), "--site", shard.entity.upper() + "x"]) == 2
        err = capsys.readouterr().err
        assert "holds no account of that site" in err and f"it holds {shard.entity!r}" in err
    assert main(["site", "withdraw", "--run", "1", "--policy", str(path), "--site", "nobody"]) == 2
    capsys.readouterr()
    assert sp_.remaining_budget(load_policy(path).store_for(""))[0]["spent_epsilon"] > 0  # nothing given back
    assert main(["site", "budget", "--policy", str(path), "--site", shard.entity]) == 0
    # the coordinator's budget command, pointed at a site's store, names the site command that reads it
    assert main(["budget", "show", "--data", "sample:clinic", "--store", str(tmp_path / "shared.sqlite3")]) == 0
    out = capsys.readouterr().out
    assert "a deployment site's store" in out and "site budget --store" in out
    # a coordinator's run charged there is told so (its charge lands beside the site's accounts)
    run = ["run", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilon", "1", "--store",
           str(tmp_path / "shared.sqlite3")]
    for argv in ([*run, "--dry-run"], run):
        assert main(argv) == 0
        assert "is a deployment site's store (accounts 'site " in capsys.readouterr().err


def test_a_site_whose_store_folder_does_not_exist_refuses_and_never_makes_a_fresh_budget(tmp_path):
    from dpfed_core.deployment.deployed import check_site_policy
    from dpfed_core.errors import ConfigError

    shard = _site_shard(tmp_path)
    good = _policy(tmp_path)  # the tool writing a policy makes its store folder
    assert good.store_for(shard.entity).parent.is_dir()
    typo = tmp_path / "stroes" / "{site}.sqlite3"
    policy = _policy(tmp_path, store=str(typo))
    import shutil

    shutil.rmtree(tmp_path / "stroes")  # as an operator's hand-written policy with a misspelt folder
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    with pytest.raises(PolicyError, match="store folder .*stroes does not exist"):
        sp_.accept(policy, req, shard, run="1", coordinator="test")
    assert not (tmp_path / "stroes").exists()
    ds = __import__("tests.test_deployment", fromlist=["three_clinics"]).three_clinics()
    with pytest.raises(ConfigError, match="stroes does not exist.*every site would refuse"):
        check_site_policy(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), policy.path, ds)


def test_a_store_key_naming_a_folder_is_refused_before_any_process_starts(tmp_path):
    """store = "stores" (the folder, not a file in it) is a fault of the policy file every node would
    refuse every run under: deploy-local's check names it before anything starts, as a missing folder."""
    from dpfed_core.deployment.deployed import check_site_policy
    from dpfed_core.errors import ConfigError

    shard = _site_shard(tmp_path)
    (tmp_path / "stores").mkdir()
    policy = _policy(tmp_path, store=str(tmp_path / "stores"))
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    with pytest.raises(PolicyError, match="stores is a folder, not a file.*store key"):
        sp_.accept(policy, req, shard, run="1", coordinator="test")
    ds = __import__("tests.test_deployment", fromlist=["three_clinics"]).three_clinics()
    with pytest.raises(ConfigError, match="stores is a folder, not a file.*every site would refuse.*nothing was "
                                          "charged or started"):
        check_site_policy(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), policy.path, ds)
    assert list((tmp_path / "stores").iterdir()) == []


def test_a_store_key_naming_a_damaged_file_is_refused_before_any_process_starts(tmp_path):
    """A store file that is no SQLite database (damaged, or another file named by mistake) would make every
    node refuse the run with its reason in the nodes' logs only: deploy-local's check names it first, and
    leaves the file as it was. An empty file is a new store and passes."""
    from dpfed_core.deployment.deployed import check_site_policy
    from dpfed_core.errors import ConfigError

    bad = tmp_path / "site.sqlite3"
    bad.write_bytes(b"this is no database " * 300)
    policy = _policy(tmp_path, store=str(bad))
    ds = __import__("tests.test_deployment", fromlist=["three_clinics"]).three_clinics()
    config = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5)
    with pytest.raises(ConfigError, match="site.sqlite3 \\(its store key\\) is no budget store: .*every site would "
                                          "refuse the run \\(nothing was charged or started\\)"):
        check_site_policy(config, policy.path, ds)
    assert bad.read_bytes() == b"this is no database " * 300
    bad.write_bytes(b"")
    check_site_policy(config, policy.path, ds)


def test_a_shared_policy_naming_one_site_is_refused_with_a_fix_deploy_local_can_take(tmp_path):
    """deploy-local gives every local site its one --site-policy file: a site key in it is refused before
    anything starts, and the fix named is one that file can take (dropping the key), not a policy per site
    that no flag of deploy-local gives."""
    from dpfed_core.deployment.deployed import check_site_policy
    from dpfed_core.errors import ConfigError

    policy = _policy(tmp_path, site="clinic A")
    ds = __import__("tests.test_deployment", fromlist=["three_clinics"]).three_clinics()
    with pytest.raises(ConfigError, match="written for site 'clinic A'") as err:
        check_site_policy(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), policy.path, ds)
    assert "Drop the site key" in str(err.value) and "give each site its own" not in str(err.value)


def test_a_store_the_site_cannot_create_is_a_policy_fault_told_to_the_site_not_to_the_coordinator(tmp_path):
    shard = _site_shard(tmp_path)
    (tmp_path / "a-file").write_text("")
    policy = _policy(tmp_path, store=str(tmp_path / "a-file" / "{site}.sqlite3"))  # under a file: uncreatable
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    with pytest.raises(PolicyError, match="a-file is a file, not a folder.*fix the store key") as err:
        sp_.accept(policy, req, shard, run="1", coordinator="test")
    # a node takes neither --store nor DPFED_STORE: the advice is the policy's
    assert "--store" not in str(err.value) and "DPFED_STORE" not in str(err.value)


def test_a_site_charges_the_requests_delta_and_keeps_the_delta_budget_its_policy_states(tmp_path):
    """The charge is the δ the run asks (not the most the site would accept), and the odometer's cap
    follows the policy file whichever of its budget's two numbers the site changed, down or up."""
    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path, budget_epsilon=5.0)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6), 3, shard.value_max)
    sp_.accept(policy, req, shard, run="1", coordinator="test")
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert bal["spent_delta"] == pytest.approx(1e-6) and bal["cap_delta"] == pytest.approx(1e-4)
    lowered = _policy(tmp_path, budget_epsilon=5.0, budget_delta=5e-5)
    sp_.accept(lowered, req, shard, run="2", coordinator="test")
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert (bal["cap_epsilon"], bal["cap_delta"]) == (5.0, pytest.approx(5e-5))
    # the site raising its own budget is its decision (the odometer asks a raise to be confirmed)
    raised = _policy(tmp_path, budget_epsilon=8.0, budget_delta=2e-4)
    sp_.accept(raised, req, shard, run="3", coordinator="test")
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert (bal["cap_epsilon"], bal["cap_delta"]) == (8.0, pytest.approx(2e-4)) and bal["n_releases"] == 3


def test_a_budget_refusal_tells_the_coordinator_the_rule_not_the_sites_balance_or_its_data(tmp_path):
    """What a refusal's message says crosses the wire to the coordinator: the rule and the run's ε.
    The site's balance (its spend on every coordinator's runs) and that its data changed since — with
    the content hash of the stored dataset its people were recognised as — stay in the site's log."""
    import dataclasses

    from dpfed_core.privacy.statement import epsilon_that_holds

    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(policy, req, shard, run="1", coordinator="test")
    half = np.arange(shard.train.shape[0] // 2)
    re_export = dataclasses.replace(shard, train=shard.train[half].tocsr(), test=shard.test[half].tocsr())
    for data, run in ((shard, "2"), (re_export, "3")):
        with pytest.raises(PolicyRefused) as err:
            sp_.accept(policy, req, data, run=run, coordinator="test")
        told = str(err.value)
        assert err.value.rule == "budget_epsilon" and "ε = 1" in told
        for private in ("spent", "ds-", "same people", "cap ε", str(policy.store_for(shard.entity))):
            assert private not in told
        if data is shard:
            assert f"spent ε = {epsilon_that_holds(_spent(1.0))}" in err.value.detail
        else:   # recognised as the stored people: the cap is named, no entity's spend (the odometer's rule)
            assert "same people" in err.value.detail and "over the cap" in err.value.detail
    rows = sp_.SiteLog(policy.store_for(shard.entity)).rows()
    assert [r["rule"] for r in rows[1:]] == ["budget_epsilon"] * 2
    assert f"spent ε = {epsilon_that_holds(_spent(1.0))}" in rows[1]["note"] and "same people" in rows[2]["note"]


def test_the_site_budget_shows_one_balance_per_account_whatever_the_re_exports(tmp_path, capsys):
    """A re-export of the site's people is charged to their account: the site's budget view shows that
    account's balance once (naming the re-export), never once more per re-export — which read as twice
    the spend, over twice the runs."""
    import dataclasses

    from dpfed_core.cli.main import main

    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=0.5, delta=1e-5), 3, shard.value_max)
    sp_.accept(policy, req, shard, run="1", coordinator="test")
    half = np.arange(shard.train.shape[0] // 2)
    sp_.accept(policy, req, dataclasses.replace(shard, train=shard.train[half].tocsr(), test=shard.test[half].tocsr()),
               run="2", coordinator="test")
    store = policy.store_for(shard.entity)
    (bal,) = sp_.remaining_budget(store)
    assert bal["spent_epsilon"] == pytest.approx(_spent(0.5, 0.5)) and bal["n_releases"] == 2 and len(bal["aliases"]) == 1
    assert main(["site", "budget", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert out.count("budget of") == 1 and "1 re-export(s) of the same people" in out


def test_a_site_whose_people_are_charged_to_an_account_of_another_name_finds_that_balance_by_its_own(
        tmp_path, capsys):
    """The same people decided for under another entity name (a renamed site, sites sharing one store) are
    charged to the account they were recognised as, and that balance decides their runs: the site's own
    name must show it, never "accepted no run yet" beside a refusal by budget_epsilon."""
    from dpfed_core.cli.main import main

    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path, store="one.sqlite3")
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(policy, req, shard, run="1", coordinator="test")
    with pytest.raises(PolicyRefused) as err:  # two runs at ε = 1 pass the cap of 1.3 on the one account
        sp_.accept(policy, req, dataclasses.replace(shard, entity="clinic Z"), run="2", coordinator="test")
    assert err.value.rule == "budget_epsilon"
    store = str(policy.store_for(""))
    (bal,) = sp_.remaining_budget(store)
    assert bal["entity"] == shard.entity and bal["alias_entities"] == ["clinic Z"]
    assert main(["site", "budget", "--store", store, "--site", "clinic Z"]) == 0
    out = capsys.readouterr().out
    assert "accepted no run yet" not in out
    assert f"budget of 'site {shard.entity}' (entity {shard.entity}): cap ε = 1.3" in out
    assert "decided for 'clinic Z'" in out
    assert (f"note: the people of site 'clinic Z' were recognised in this store as those of 'site {shard.entity}': "
            "its runs are charged to that account") in out
    assert main(["site", "budget", "--store", store, "--site", "clinic Z", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [b["spent_epsilon"] for b in doc["budget"]] == [pytest.approx(_spent(1.0))]
    assert main(["site", "budget", "--store", store, "--site", shard.entity]) == 0
    assert "note: the people of" not in capsys.readouterr().out  # its own account: nothing to explain


def _tied_shard():
    """A site whose items are held by exactly as many users each (10 of 60, every user 10 items): the
    people's shape (how many hold each item) names no item and every user has the same popularity
    profile, so only the items' ids can recognise them."""
    import scipy.sparse as sps

    from dpfed_core.deployment.shards import Shard

    n = 60
    X = tied_design(n, [0, 7, 13, 21, 29, 34, 41, 47, 52, 58], shuffle_seed=0)
    ids = np.asarray([f"med {j}" for j in range(n)])
    return Shard("clinic A", 0, 3, X, sps.csr_matrix((n, n)), np.arange(0), 5.0, "tied", ids, None, "declared", ids)


def _shifted(shard, new_items: int):
    """The same shard after the federation's item list changed: ``new_items`` items (ids no shard
    had) inserted before the others, which moves every column of the site's data."""
    import scipy.sparse as sps

    def pad(M):
        return sps.hstack([sps.csr_matrix((M.shape[0], new_items)), M], format="csr")

    new = np.asarray([f"new {j}" for j in range(new_items)])
    return dataclasses.replace(shard, train=pad(shard.train), test=pad(shard.test),
                               item_ids=np.concatenate([new, shard.item_ids]),
                               item_names=np.concatenate([new, shard.item_names]))


def test_the_sites_people_keep_one_account_when_the_federations_item_list_moves_their_columns(tmp_path):
    """A site knows its items by id: a site left out of the federation, or an item added anywhere, moves
    every column of its shard, and the same people must stay on their account — by column position
    they were a new account with a fresh budget, and the site's cap was passed."""
    assert _site_shard(tmp_path).item_ids is not None  # write_shards writes them
    shard = _tied_shard()
    policy = _policy(tmp_path)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    sp_.accept(policy, req, shard, run="1", coordinator="test")
    with pytest.raises(PolicyRefused) as err:  # two runs at ε = 1 pass the cap of 1.3
        sp_.accept(policy, req, _shifted(shard, 3), run="2", coordinator="test")
    assert err.value.rule == "budget_epsilon"
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert bal["spent_epsilon"] == pytest.approx(_spent(1.0)) and bal["n_releases"] == 1


def test_a_site_store_of_positional_accounts_keeps_charging_the_same_shard_to_its_account(tmp_path):
    """A store written when a site knew its items by column position: the very same shard is charged
    to that account, never to a new one keyed by the items' ids."""
    from dpfed_core.privacy.odometer import BudgetOdometer, dataset_key

    shard = _site_shard(tmp_path)
    shard = dataclasses.replace(shard, item_ids=np.asarray([f"med {i}" for i in shard.item_ids]))
    policy = _policy(tmp_path)
    store = policy.check_store_folder(shard.entity)
    old = sp_.site_dataset(shard, by_position=True)
    assert dataset_key(old) != dataset_key(sp_.site_dataset(shard))
    BudgetOdometer(sp_.SiteLog(store).store).register(old)
    req = request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max)
    rec = sp_.accept(policy, req, shard, run="1", coordinator="test")
    odo = BudgetOdometer(sp_.SiteLog(store).store)
    assert rec["dataset_key"] == odo.account_key(old)
    assert [b["dataset_key"] for b in sp_.remaining_budget(store)] == [odo.account_key(old)]


def test_a_non_private_run_a_site_allows_voids_its_budget_whatever_epsilon_the_request_names(tmp_path):
    """A non-private method carries the run's configured ε in its request (a number it never spends):
    a site that allows non-private releases records the run as what it is — a non-private release,
    counted as such (the entity's guarantee is void) — never as a private charge of that ε."""
    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path, allow_non_private=True)
    req = request_of(RunConfig(method="kmeans", epsilon=1.0), 3, shard.value_max)
    assert req.non_private and req.epsilon == 1.0
    sp_.accept(policy, req, shard, run="1", coordinator="test")
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert bal["n_non_private"] == 1 and bal["n_releases"] == 1
    assert bal["spent_epsilon"] != pytest.approx(1.0)


def test_the_site_command_states_the_spend_on_epsilon_and_delta_and_a_voided_guarantee(tmp_path, capsys):
    """What a site's operator reads from ``python -m dpfed_core site budget``: the ε and the δ its runs
    spent and what is left, and — once it allowed a non-private run — that the guarantee is void."""
    from dpfed_core.cli.main import main
    from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds

    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path, allow_non_private=True, methods=["dp-popularity", "kmeans"])
    store = policy.store_for(shard.entity)
    sp_.accept(policy, request_of(RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5), 3, shard.value_max),
               shard, run="1", coordinator="test")
    assert main(["site", "budget", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    (bal,) = sp_.remaining_budget(store)  # the ε holds at the guarantee's δ, not at the release's own
    assert bal["guarantee_delta"] != pytest.approx(1e-5) and bal["accountant"] in ("zCDP", "basic")
    assert (f"spent ε = {epsilon_that_holds(_spent(1.0))} at δ = {bal['guarantee_delta']:.4g} ({bal['accountant']}) "
            f"over 1 run(s), whose δ add up to 1e-05; remaining ε = {epsilon_left(1.3 - _spent(1.0))}") in out, out
    assert "void" not in out
    sp_.accept(policy, request_of(RunConfig(method="kmeans"), 3, shard.value_max), shard, run="2", coordinator="test")
    assert main(["site", "budget", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    # the people's guarantee is void: said first, and the figures said to be the DP releases' alone
    assert (f"no overall guarantee: 1 non-private release(s) (a simulation run or exact statistics) gave its people "
            f"ε = ∞; its DP releases alone: spent ε = {epsilon_that_holds(_spent(1.0))}") in out, out
    assert "under the cap" in out and "over 1 run(s)" in out  # the DP release, not the non-private one
    # a policy file that cannot be read: the error names this command's flag for it
    assert main(["site", "budget", "--policy", str(tmp_path / "missing.toml")]) == 2
    err = capsys.readouterr().err
    assert "cannot read the site policy" in err and "fix --policy" in err and "node-config" not in err, err


def test_the_site_command_states_the_cap_and_marks_each_simulation_release(tmp_path, capsys):
    from dpfed_core.cli.main import main
    from dpfed_core.privacy.statement import epsilon_that_holds

    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path, allow_simulation=True, budget_delta=2e-4)
    store = policy.store_for(shard.entity)
    for run, simulation in (("1", True), ("2", False)):
        sp_.accept(policy, request_of(RunConfig(method="dp-popularity", epsilon=0.5, delta=1e-5, simulation=simulation),
                                      3, shard.value_max), shard, run=run, coordinator="test")
    assert main(["site", "releases", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "cap ε = 1.3, δ = 0.0002; no overall guarantee: 1 non-private release(s)" in out  # the simulation run
    assert f"its DP releases alone: spent ε = {epsilon_that_holds(_spent(0.5, budget_delta=2e-4))} at δ = " in out
    rows = {line.split()[2]: line.split()[-1] for line in out.splitlines()[2:] if line.split()[:1] in (["1"], ["2"])}
    assert rows == {"1": "yes", "2": "no"}  # the run id, and whether its noise was reproducible


def test_each_acceptance_in_the_sites_log_states_the_charge_its_odometer_holds(tmp_path):
    """The decision row of an accepted run is the site's record of its charge: a simulation run (or a
    non-private one naming an ε) is charged ε = ∞ and its row says so, with the ε the run named in its note;
    a DP run's row carries the ρ it is composed by — the figures the site's balance is made of."""
    from dpfed_core.evaluation.budget import planned_rho

    shard = _site_shard(tmp_path)
    policy = _policy(tmp_path, allow_simulation=True, allow_non_private=True, budget_epsilon=5.0, budget_delta=2e-4)
    for run, cfg in (("sim", RunConfig(method="dp-popularity", epsilon=0.5, delta=1e-5, simulation=True)),
                     ("dp", RunConfig(method="dp-popularity", epsilon=0.5, delta=1e-5)),
                     ("exact", RunConfig(method="kmeans", epsilon=1.0))):
        sp_.accept(policy, request_of(cfg, 3, shard.value_max), shard, run=run, coordinator="test")
    rows = {r["run"]: r for r in sp_.SiteLog(policy.store_for(shard.entity)).rows() if r["decision"] == "accepted"}
    assert (rows["sim"]["epsilon"], rows["sim"]["delta"], rows["sim"]["rho"]) == (math.inf, 0.0, None)
    assert "the run names ε = 0.5, δ = 1e-05, charged as a non-private release: simulation" in rows["sim"]["note"]
    assert (rows["exact"]["epsilon"], rows["exact"]["delta"]) == (math.inf, 0.0)
    assert "the run names ε = 1" in rows["exact"]["note"] and "exact statistics" in rows["exact"]["note"]
    assert (rows["dp"]["epsilon"], rows["dp"]["delta"]) == (0.5, 1e-5)
    assert rows["dp"]["rho"] == pytest.approx(planned_rho("dp-popularity", 0.5, 1e-5)[0])
    assert "the run names" not in rows["dp"]["note"]
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert bal["n_non_private"] == 2 and bal["spent_epsilon"] == pytest.approx(_spent(0.5, budget_delta=2e-4))


def test_the_policy_written_for_a_run_accepts_that_run_with_room_for_its_delta(tmp_path):
    shard = _site_shard(tmp_path)
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5)
    keys = sp_.policy_matching(cfg, tmp_path / "site.sqlite3")
    assert keys["budget_delta"] == pytest.approx(2e-5)  # the odometer composes at half the cap's δ
    policy = load_policy(write_policy(tmp_path / "matching.toml", **keys))
    sp_.accept(policy, request_of(cfg, 3, shard.value_max), shard, run="1", coordinator="test")
    (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
    assert bal["n_releases"] == 1 and bal["spent_epsilon"] == pytest.approx(1.0)


# ============================================================================ on a deployment
try:
    import flwr  # noqa: F401
    HAVE_FLWR = True
except ImportError:  # CI installs requirements-deploy.txt (make test), so there this is a failure
    if os.environ.get("CI"):
        raise
    HAVE_FLWR = False

needs_flower = pytest.mark.skipif(not HAVE_FLWR, reason="Flower (flwr) is not installed: "
                                                        "pip install -r requirements-deploy.txt")


@pytest.fixture(scope="module")
def guarded_sites(tmp_path_factory):
    """Three sites with the strict policy (stores in the test's folder), on one local deployment."""
    from tests.test_deployment import three_clinics
    from dpfed_core.deployment import LocalFederation, write_shards
    from dpfed_core.evaluation.experiments import make_split

    ds = three_clinics()
    base = tmp_path_factory.mktemp("sites")
    shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), base / "shards")
    policy = write_policy(base / "policy.toml", **STRICT)
    fed = LocalFederation(shards, base / "flower", ds.entity_names, site_policy=policy).start()
    yield ds, fed, base, load_policy(policy)
    fed.close()


def _run_double(fed, base: Path, config: RunConfig, attack: str, tag: str) -> tuple[dict, Path]:
    """One run of the coordinator double on ``fed``; returns what it received and its dump folder."""
    from dpfed_core.deployment.control import ControlClient
    from dpfed_core.deployment.wire import run_json

    out, prog, dump = base / f"double_{tag}.json", base / f"double_{tag}.jsonl", base / f"dump_{tag}"
    prog.touch()
    control = ControlClient(fed.port, None if fed.insecure else fed.tls.ca)
    try:
        control.start_run(DOUBLE_DIR, {
            "config": run_json(config, "declared", 40), "n-entities": 3, "out": str(out), "progress": str(prog),
            "round-timeout": 30.0, "connect-timeout": 60.0, "dump-dir": str(dump),
            "doorbells": ",".join(str(p) for p in [fed.port, *fed.node_ports]), "attack": attack})
        fed._wake_link_executor()
        end = time.monotonic() + 180
        while not out.exists() and time.monotonic() < end:
            time.sleep(0.2)
    finally:
        control.close()
    assert out.exists(), f"the coordinator double wrote nothing (progress: {prog.read_text()})"
    time.sleep(0.3)
    return json.loads(out.read_text()), dump


def _released(policy, ds) -> list[dict]:
    rows = []
    for name in ds.entity_names:
        store = policy.store_for(name)
        if store.exists():
            rows += [r for r in sp_.SiteLog(store).rows() if r["decision"] == "released"]
    return rows


def _arrays_received(dump: Path) -> list[str]:
    """Every array the coordinator was given, from its compliance dump."""
    names = []
    for f in sorted(dump.glob("*.npz")) if dump.exists() else []:
        with np.load(f) as z:
            names += [f"{f.name}:{k}" for k in z.files]
    return names


ATTACKS = [
    ("simulation", RunConfig(method="dp-popularity", epsilon=1.0, simulation=True, aggregation="secure"),
     "ask-first", "allow_simulation"),
    ("epsilon", RunConfig(method="dp-popularity", epsilon=1e4, aggregation="secure"), "ask-first", "max_epsilon"),
    ("non-private", RunConfig(method="kmeans", k=3, seed=0), "ask-first", "allow_non_private"),
    ("no request", RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"), "skip", "accepted_request"),
    ("no request, prototypes", RunConfig(method="kmeans", k=3), "skip", "accepted_request"),
]


@needs_flower
@pytest.mark.parametrize("name, config, attack, rule", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_malicious_coordinator_is_refused_by_every_site_and_learns_nothing(guarded_sites, name, config,
                                                                             attack, rule):
    ds, fed, base, policy = guarded_sites
    got, dump = _run_double(fed, base, config, attack, name.replace(" ", "_").replace(",", ""))
    if attack != "skip":
        assert [d["decision"] for d in got["decisions"]] == ["refused"] * 3, got
        assert {d["rule"] for d in got["decisions"]} == {rule}
        assert f"rule {rule}" in got["refusal"] and all(e in got["refusal"] for e in ds.entity_names)
    if config.method == "kmeans":  # prototypes asked for anyway: three error replies, no array
        assert len(got["after"]) == 3
        assert all(not r["arrays"] and "accepted_request" in r["error"] for r in got["after"]), got["after"]
    if config.method == "dp-popularity":
        assert got["secure_sum"] != "completed" and got["secure_sum"], got
    assert _arrays_received(dump) == []  # the coordinator's own record: not one array reached it
    assert _released(policy, ds) == []
    for e in ds.entity_names:  # the refusal is in every site's log, and nothing charged
        store = policy.store_for(e)
        if attack != "skip":
            rows = sp_.SiteLog(store).rows()
            assert rows[-1]["decision"] == "refused" and rows[-1]["rule"] == rule
        for b in sp_.remaining_budget(store) if store.exists() else []:
            assert b["spent_epsilon"] == 0.0


@needs_flower
def test_a_second_run_over_the_budget_is_refused_and_the_release_log_lists_the_first(guarded_sites, capsys):
    """An honest run within the policy is accepted, charged once per site and logged release by
    release; the next identical run would pass budget_epsilon = 1.3 and every site refuses it."""
    from dpfed_core.cli.main import main
    from dpfed_core.deployment.deployed import run_deployed
    from dpfed_core.privacy.statement import epsilon_that_holds

    ds, fed, base, policy = guarded_sites
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5, aggregation="secure", rank=3)
    doc = run_deployed(ds, cfg, federation=fed, round_timeout=60, timeout=180)
    assert [d["decision"] for d in doc["deployment"]["site_decisions"]] == ["accepted"] * 3
    released = _released(policy, ds)
    assert sorted(r["entity"] for r in released) == sorted(ds.entity_names)
    for r in released:
        assert r["epsilon"] == pytest.approx(1.0) and r["rho"] is not None and r["rho"] > 0
        assert json.loads(r["shapes"]) == [[40]] and r["bytes"] > 40 * 8 and r["simulation"] == 0
        assert r["coordinator"] == f"SuperLink 127.0.0.1:{fed.port}" and r["method"] == "dp-popularity"
    got, dump = _run_double(fed, base, cfg, "ask-first", "budget")
    assert {d["rule"] for d in got["decisions"]} == {"budget_epsilon"}
    assert got["secure_sum"] != "completed" and _arrays_received(dump) == []
    assert len(_released(policy, ds)) == 3
    # within the budget (ε = 1 and 0.5 compose to 1.13) the sites accept, but the secure sum the coordinator then sets up
    # tolerates a dropout the request did not declare (max_dropouts = 0): every site stops at SecAgg+'s setup
    got, dump = _run_double(fed, base, cfg.replace(epsilon=0.5), "weak-secagg", "weak")
    assert [d["decision"] for d in got["decisions"]] == ["accepted"] * 3
    assert got["secure_sum"] != "completed" and "max_dropouts" in got["secure_sum"], got["secure_sum"]
    assert _arrays_received(dump) == [] and len(_released(policy, ds)) == 3
    # the site's compliance officer reads the log and the budget without the coordinator
    store = policy.store_for(ds.entity_names[0])
    assert main(["site", "releases", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "dp-popularity" in out and "released" in out and "budget_epsilon" in out
    assert f"spent ε = {epsilon_that_holds(_spent(1.0, 0.5))} at δ = " in out


@needs_flower
def test_one_refusing_site_stops_the_run_before_any_site_draws(tmp_path):
    """The coordinator collects every site's decision before the first share: one site with a lower
    max_epsilon ends the run, the message names it and the rule, and no site released anything."""
    from tests.test_deployment import three_clinics
    from dpfed_core.deployment import DeploymentError, LocalFederation, write_shards
    from dpfed_core.deployment.deployed import deployment_runner
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.evaluation.service import execute_run
    from dpfed_core.privacy.odometer import BudgetOdometer

    ds = three_clinics()
    shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")
    ok = write_policy(tmp_path / "ok.toml", **STRICT)
    low = write_policy(tmp_path / "low.toml", **{**STRICT, "max_epsilon": 0.5})
    policy = load_policy(ok)
    coordinator = tmp_path / "coordinator.sqlite3"
    with LocalFederation(shards, tmp_path / "flower", ds.entity_names, site_policy=[ok, ok, low]) as fed:
        with pytest.raises(DeploymentError) as err:
            # through the run service, as deploy-local: charged to the coordinator's odometer first
            execute_run(ds, RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"), store=coordinator,
                        runner=deployment_runner(federation=fed, round_timeout=60, timeout=180))
    msg = str(err.value)
    assert ds.entity_names[2] in msg and "max_epsilon" in msg and "nothing was released" in msg
    # nothing was drawn anywhere: the coordinator's reservation is given back, not kept as a spend
    assert err.value.ledger_rows == 0
    odo = BudgetOdometer(coordinator)
    assert [r["status"] for r in odo.releases(ds)] == ["withdrawn"]
    assert all(b.spent_epsilon == 0.0 for b in odo.balance(ds))
    assert ds.entity_names[0] not in msg.split("refused the run")[1]
    assert _released(policy, ds) == []
    decisions = {e: [r["decision"] for r in sp_.SiteLog(load_policy(p).store_for(e)).rows()]
                 for e, p in zip(ds.entity_names, [ok, ok, low])}
    assert decisions == {ds.entity_names[0]: ["accepted", "withdrawn"], ds.entity_names[1]: ["accepted", "withdrawn"],
                         ds.entity_names[2]: ["refused"]}
    # the sites that accepted drew nothing and gave their own charge back: their budget is whole
    assert "2 of the 2 site(s) that accepted gave their charge back" in msg
    for e in ds.entity_names[:2]:
        site_odo = BudgetOdometer(policy.store_for(e))
        assert [r["status"] for d in site_odo.datasets() for r in site_odo.releases(d["key"])] == ["withdrawn"]
        assert [b.spent_epsilon for d in site_odo.datasets() for b in site_odo.balance(d["key"])] == [0.0]


def test_a_run_that_fails_after_the_decisions_gives_back_the_charge_of_each_site_that_drew_nothing(tmp_path):
    """Every site accepted and was charged; then one site's node cannot take part (its old shard has no
    item names for the federation-wide catalogue) and the secure sum ends short. The coordinator tells
    the sites: the one that drew nothing gives its charge back, the two that drew their catalogue shares
    keep theirs, and the error says so."""
    import os

    from tests.test_deployment import three_clinics
    from dpfed_core.deployment import DeploymentError, write_shards
    from dpfed_core.deployment.deployed import run_deployed
    from dpfed_core.deployment.launcher import Guard
    from dpfed_core.deployment.simulation_engine import SimulatedFederation, available
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.privacy.odometer import BudgetOdometer

    if not available()[0]:
        if os.environ.get("CI"):
            raise AssertionError(available()[1])
        pytest.skip(available()[1])
    ds = three_clinics(declared=False)  # no declared catalogue: the run selects it federation-wide
    ok = write_policy(tmp_path / "ok.toml", **STRICT)
    policy = load_policy(ok)
    guard = Guard()
    try:
        shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), guard.path / "shards")
        with np.load(shards[2]) as z:
            old = {k: z[k] for k in z.files if k != "item_names"}
        with open(shards[2], "wb") as f:
            np.savez(f, **old)
        with SimulatedFederation(shards, None, ds.entity_names, guard=guard, site_policy=ok) as fed:
            with pytest.raises(DeploymentError) as err:
                run_deployed(ds, RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"),
                             federation=fed, round_timeout=60, timeout=180, engine="simulation")
    finally:
        guard.close()
    msg = str(err.value)
    assert "secure aggregation (catalogue)" in msg
    assert ("1 of the 3 site(s) that accepted gave their charge back; "
            f"{ds.entity_names[0]}, {ds.entity_names[1]} kept their charge") in msg
    spent = {}
    for e in ds.entity_names:
        odo = BudgetOdometer(policy.store_for(e))
        spent[e] = [b.spent_epsilon for d in odo.datasets() for b in odo.balance(d["key"])]
    assert spent[ds.entity_names[2]] == [0.0] and all(spent[e][0] > 0 for e in ds.entity_names[:2])


def test_deploy_local_needs_a_policy_that_allows_simulation(tmp_path, capsys):
    from dpfed_core.cli.main import main

    base = ["deploy-local", "--data", "sample:synthetic", "--method", "kmeans", "--simulation",
            "--store", str(tmp_path / "s.sqlite3")]
    assert main(base) == 2
    assert "--site-policy" in capsys.readouterr().err
    strict = write_policy(tmp_path / "p.toml", **STRICT)
    assert main([*base, "--site-policy", str(strict)]) == 2
    assert "allow_simulation" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("max_epsilon = 1\n", encoding="utf-8")
    assert main([*base, "--site-policy", str(bad)]) == 2
    assert "lacks" in capsys.readouterr().err


@needs_flower
def test_deploy_local_writes_a_policy_matching_the_run_or_gives_every_site_the_one_named(tmp_path, capsys):
    """Without --site-policy every site gets a policy matching the run (said on stderr) and accepts;
    with one that allows simulation, a --simulation run is accepted by every site, and each site's
    store (named by the policy) holds its decision and its releases afterwards."""
    from dpfed_core.cli.main import main

    common = ["deploy-local", "--data", "sample:clinic", "--federation", "region", "--method", "dp-popularity",
              "--epsilon", "1", "--aggregation", "secure", "--store", str(tmp_path / "coordinator.sqlite3")]
    assert main([*common, "--out", str(tmp_path / "a.json")]) == 0
    out, err = capsys.readouterr()
    assert "no --site-policy given: every site got a policy matching this run" in err
    doc = json.loads((tmp_path / "a.json").read_text())
    assert [d["decision"] for d in doc["deployment"]["site_decisions"]] == ["accepted"] * 4
    # without --insecure every connection is TLS with node authentication, and the document says so
    assert doc["deployment"]["insecure"] is False and doc["deployment"]["transport"].startswith("TLS")
    assert out.count(": accepted") == 4
    policy = write_policy(tmp_path / "sites.toml", **{**STRICT, "allow_simulation": True})
    assert main([*common, "--simulation", "--site-policy", str(policy), "--out", str(tmp_path / "b.json")]) == 0
    capsys.readouterr()
    doc = json.loads((tmp_path / "b.json").read_text())
    names = [d["entity"] for d in doc["deployment"]["site_decisions"]]
    for name in names:
        rows = sp_.SiteLog(load_policy(policy).store_for(name)).rows()
        assert [r["decision"] for r in rows] == ["accepted", "released"] and rows[1]["simulation"] == 1


def test_secagg_key_shares_follow_a_public_rule_that_grows_slower_than_the_sites(tmp_path):
    """SecAgg+ neighbourhoods: every site for a few, then O(log n): odd (Flower's graph), at least
    2d + 3, the threshold k − d leaves d dropouts; and a site refuses a setup below the rule."""
    from dpfed_core.deployment.wire import secagg_shares, secagg_threshold

    assert [secagg_shares(n, 1) for n in (3, 5, 9)] == [3, 5, 9]
    ks = {n: secagg_shares(n, 0) for n in (30, 100, 1000, 10000)}
    assert ks == {30: 15, 100: 21, 1000: 31, 10000: 41}
    assert all(k % 2 == 1 for k in ks.values())
    assert ks[10000] / 10000 < ks[1000] / 1000 < ks[100] / 100 < ks[30] / 30
    assert secagg_shares(100, 3) == 27 and secagg_threshold(100, 3, 100) == 24
    assert secagg_threshold(3, 1, 3) == 2 and secagg_threshold(2, 1, 3) == 2  # full graph: H − d
    policy = load_policy(write_policy(tmp_path / "p.toml", **{**STRICT, "budget_epsilon": 2.5}))
    sp_.check_secagg(policy, 100, 100, 21, 21)
    with pytest.raises(PolicyRefused, match="public rule"):
        sp_.check_secagg(policy, 100, 100, 5, 5)
    with pytest.raises(PolicyRefused, match="public rule"):  # one key share short of the rule's 21
        sp_.check_secagg(policy, 100, 100, 20, 20)
    # two sites tolerating one dropout: the public rule gives 2 shares and threshold H − d = 1, so the
    # server alone, claiming a site dropped, could rebuild that site's mask from the other's share
    assert (secagg_shares(2, 1), secagg_threshold(2, 1, 2)) == (2, 1)
    loose = load_policy(write_policy(tmp_path / "loose.toml", **STRICT, max_dropouts=1))
    with pytest.raises(PolicyRefused, match="tolerates") as err:
        sp_.check_secagg(loose, 2, 2, 2, 1, 1)
    assert err.value.rule == "max_dropouts"


def test_a_site_sums_only_with_the_sites_it_accepted_the_run_with(tmp_path):
    """Each share carries σ/√(H − d) of the noise: a secure sum among fewer sites than the run was
    accepted with (beyond the dropouts the site accepts) carries less than σ, and one among more is
    not the run the site accepted — both refused before the site sends anything."""
    from dpfed_core.deployment.wire import secagg_shares, secagg_threshold

    def setup(policy, accepted, n, d):
        sp_.check_secagg(policy, accepted, n, secagg_shares(n, d), secagg_threshold(n, d, accepted), d)

    strict = _policy(tmp_path)  # no dropout accepted
    setup(strict, 30, 30, 0)
    for n in (29, 31, 2):
        with pytest.raises(PolicyRefused, match="participants") as err:
            setup(strict, 30, n, 0)
        assert err.value.rule == "accepted_request"
    one = _policy(tmp_path, max_dropouts=1)
    setup(one, 30, 29, 1)  # one site dropped: within what this site accepts
    with pytest.raises(PolicyRefused, match="participants"):
        setup(one, 30, 28, 1)


def test_a_site_allowing_dropouts_sums_only_within_the_dropouts_its_run_sized_the_noise_for(tmp_path):
    """A run that declares no dropout has every share carry σ/√H: a secure sum among H − 1 of them,
    or one whose threshold lets the server drop a live site and rebuild its mask, carries less than
    σ — refused though the site's policy would accept a run sized for one dropout."""
    from dpfed_core.deployment.wire import secagg_shares, secagg_threshold

    one = _policy(tmp_path, max_dropouts=1)
    sp_.check_secagg(one, 3, 3, secagg_shares(3, 0), secagg_threshold(3, 0, 3), 0)  # the honest setup
    with pytest.raises(PolicyRefused, match="participants") as err:
        sp_.check_secagg(one, 3, 2, 2, 2, 0)  # the sum of two shares sized for three
    assert err.value.rule == "accepted_request"
    with pytest.raises(PolicyRefused, match="tolerates") as err:
        sp_.check_secagg(one, 3, 3, 3, 2, 0)  # threshold lowered: one live site can be claimed dropped
    assert err.value.rule == "max_dropouts"
    sp_.check_secagg(one, 3, 2, secagg_shares(2, 1), secagg_threshold(2, 1, 3), 1)  # a run sized for it


def test_a_secure_sums_setup_follows_the_runs_dropouts_within_the_sites(tmp_path):
    """The public rule and the tolerance a setup may have are the accepted run's d, bounded by the
    site's max_dropouts: a site that would allow a dropout still takes the honest setup of a run
    without one, and a site that allows none refuses a setup tolerating one whatever the run says."""
    from dpfed_core.deployment.wire import secagg_shares, secagg_threshold

    one = _policy(tmp_path, max_dropouts=1)
    sp_.check_secagg(one, 30, 30, secagg_shares(30, 0), secagg_threshold(30, 0, 30), 0)
    strict = _policy(tmp_path)
    with pytest.raises(PolicyRefused, match="tolerates") as err:
        sp_.check_secagg(strict, 30, 30, secagg_shares(30, 1), secagg_threshold(30, 1, 30), 1)
    assert err.value.rule == "max_dropouts"


@needs_flower
def test_a_node_releases_only_the_request_it_accepted_and_each_stage_once(tmp_path):
    """After its decision a node holds the request it accepted: a release asked under another
    request (another ε, another federation size) or a second release of a stage it already gave in
    this run is refused before anything is drawn; each stage it draws is marked in its store first."""
    from types import SimpleNamespace

    from flwr.app import ConfigRecord

    from dpfed_core.deployment import client_app as ca
    from dpfed_core.deployment.wire import run_json

    accepted = {"config": run_json(RunConfig(method="dp-als", epsilon=1.0, aggregation="secure"), "declared", 40),
                "n-entities": 3}
    policy = _policy(tmp_path, methods=["dp-als"])
    ctx = SimpleNamespace(state=SimpleNamespace(config_records={}), run_id=7,
                          node_config={"policy-path": str(policy.path), "coordinator": "c"})
    shard = SimpleNamespace(entity="clinic A")
    with pytest.raises(PolicyRefused) as err:
        ca._require_accepted(ctx, accepted, "popularity", shard)  # nothing accepted yet
    assert err.value.rule == "accepted_request"
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({**accepted, "operation": "op"})
    ca._require_accepted(ctx, accepted, "popularity", shard)
    ca._require_accepted(ctx, accepted, "als-1", shard)
    with pytest.raises(PolicyRefused) as err:
        ca._require_accepted(ctx, accepted, "popularity", shard)
    assert err.value.rule == "one_request_per_run"
    larger = run_json(RunConfig(method="dp-als", epsilon=8.0, aggregation="secure"), "declared", 40)
    for other in ({**accepted, "config": larger}, {**accepted, "n-entities": 30}):
        with pytest.raises(PolicyRefused) as err:
            ca._require_accepted(ctx, other, "als-2", shard)
        assert err.value.rule == "accepted_request"
    with sp_.SiteLog(policy.store_for("clinic A")).store.read() as con:
        assert [tuple(r) for r in con.execute("SELECT run, coordinator, entity, stage FROM site_draws ORDER BY id")] \
            == [("7", "c", "clinic A", "popularity"), ("7", "c", "clinic A", "als-1")]
    with pytest.raises(TypeError, match="shard"):
        ca._require_accepted(ctx, accepted, "als-2")  # a claim the store would not hold
    # an acceptance the site gave back is never drawn on again in this run
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({**accepted, "operation": "op", "withdrawn": 1})
    with pytest.raises(PolicyRefused) as err:
        ca._require_accepted(ctx, accepted, "als-2", shard)
    assert err.value.rule == "accepted_request" and "withdrew from this run" in str(err.value)


def test_a_site_gives_its_charge_back_only_when_its_own_record_says_it_drew_nothing(tmp_path):
    """The coordinator's word that a run ended only asks: a site whose own state lists a released
    stage keeps the charge; one that drew nothing gets its budget back, and both log the outcome."""
    from tests.test_deployment import three_clinics
    from dpfed_core.deployment import write_shards
    from dpfed_core.deployment.shards import load_shard
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.privacy.odometer import BudgetOdometer

    ds = three_clinics()
    shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")
    policy = load_policy(write_policy(tmp_path / "p.toml", **{**STRICT, "budget_epsilon": 2.5}))
    shard = load_shard(shards[0])
    req = sp_.request_of(RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"), 3, shard.value_max)
    spent = []
    for run, released in (("r1", ["release"]), ("r2", [])):
        record = sp_.accept(policy, req, shard, run=run, coordinator="c")
        if released:  # what a node does before it draws a share
            sp_.claim_draw(policy, shard.entity, released, run=run, coordinator="c")
        assert sp_.withdraw(policy, shard, record, run=run, coordinator="c") is (not released)
        odo = BudgetOdometer(policy.store_for(shard.entity))
        spent.append(sum(b.spent_epsilon for d in odo.datasets() for b in odo.balance(d["key"])))
    assert spent[0] == pytest.approx(_spent(1.0, delta=1e-6)) and spent[1] == pytest.approx(_spent(1.0, delta=1e-6))
    rows = sp_.SiteLog(policy.store_for(shard.entity)).rows()
    assert [(r["run"], r["decision"]) for r in rows] == [("r1", "accepted"), ("r1", "kept"), ("r2", "accepted"),
                                                         ("r2", "withdrawn")]


def test_a_site_withdraws_by_itself_from_a_run_left_hanging_only_when_its_store_says_it_drew_nothing(
        tmp_path, capsys):
    """A coordinator that never asks for a share nor sends query.withdraw leaves the run charged: the
    site's operator gives it back (`site withdraw --run`) when the site's store holds no stage of the
    run (each is marked there before its draw), keeps it otherwise, and from then on the node refuses
    to draw on it; the coordinator's own withdrawal later finds it given back and logs nothing twice."""
    from tests.test_deployment import three_clinics
    from dpfed_core.cli.main import main
    from dpfed_core.deployment import write_shards
    from dpfed_core.deployment.shards import load_shard
    from dpfed_core.evaluation.experiments import make_split

    ds = three_clinics()
    shard = load_shard(write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")[0])
    path = write_policy(tmp_path / "p.toml", **{**STRICT, "budget_epsilon": 2.5})
    policy = load_policy(path)
    req = sp_.request_of(RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"), 3, shard.value_max)
    records = {run: sp_.accept(policy, req, shard, run=run, coordinator="c") for run in ("r1", "r2")}
    sp_.claim_draw(policy, shard.entity, ["release"], run="r1", coordinator="c")  # r1's share was drawn

    def spent() -> float:
        (bal,) = sp_.remaining_budget(policy.store_for(shard.entity))
        return bal["spent_epsilon"]

    site = ["--policy", str(path), "--site", shard.entity]
    assert spent() == pytest.approx(_spent(1.0, 1.0, delta=1e-6))
    assert main(["site", "withdraw", "--run", "r1", *site]) == 1  # nothing given back: a script sees it
    assert "charge kept: this site drew its noise in the run (stage release), so its charge stays" in capsys.readouterr().out
    # the release log says it in words, the stage named as a stage
    assert sp_.SiteLog(policy.store_for(shard.entity)).rows()[-1]["note"] == (
        "the site's operator asked to withdraw, but this site drew its noise in the run (stage release): the charge "
        "stays")
    assert spent() == pytest.approx(_spent(1.0, 1.0, delta=1e-6))
    assert main(["site", "withdraw", "--run", "r2", *site]) == 0
    assert "charge given back (this site drew nothing in the run)" in capsys.readouterr().out
    assert spent() == pytest.approx(_spent(1.0, delta=1e-6))
    with pytest.raises(PolicyRefused) as err:  # the node, asked for r2's share afterwards, draws nothing
        sp_.claim_draw(policy, shard.entity, ["release"], run="r2", coordinator="c")
    assert err.value.rule == "accepted_request" and "withdrew" in str(err.value)
    assert main(["site", "withdraw", "--run", "r2", *site, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [w["decision"] for w in doc["withdrawals"]] == ["already"]
    # the coordinator's query.withdraw for r2, late: already given back, nothing charged or logged again
    assert sp_.withdraw(policy, shard, records["r2"], run="r2", coordinator="c") is True
    assert spent() == pytest.approx(_spent(1.0, delta=1e-6))
    rows = sp_.SiteLog(policy.store_for(shard.entity)).rows()
    assert [(r["run"], r["decision"]) for r in rows] == [("r1", "accepted"), ("r2", "accepted"), ("r1", "kept"),
                                                         ("r2", "withdrawn")]
    # what is wrong, named with the flag that fixes it
    for argv, flag in ((["site", "withdraw", "--run", "r9", *site], "--run"), (["site", "withdraw", *site], "--run"),
                       (["site", "budget", "--run", "r2", *site], "--run")):
        assert main(argv) == 2
        assert flag in capsys.readouterr().err


def test_a_site_withdrawing_from_a_store_it_shares_gives_back_its_own_charge_only(tmp_path, capsys):
    """Two sites in one store accept the same run (one operation name); the one that drew keeps its
    charge when the other's operator withdraws, whichever is named."""
    from dpfed_core.cli.main import main
    from dpfed_core.deployment import write_shards
    from dpfed_core.deployment.shards import load_shard
    from dpfed_core.evaluation.experiments import make_split

    import scipy.sparse as sparse

    from dpfed_core.data.dataset import FederatedDataset

    # sparse rows: each site's people are told apart (dense toy rows look alike to the people fingerprint)
    rng = np.random.default_rng(3)
    X = sparse.random(150, 400, density=0.02, format="csr", random_state=rng,
                      data_rvs=lambda k: rng.integers(1, 6, k).astype(float))
    X[np.arange(150), rng.integers(0, 400, 150)] = 2.0
    ds = FederatedDataset.from_parts(sparse.csr_matrix(X), np.array(["A", "B", "C"])[np.arange(150) % 3],
                                     value_kind="counts", value_max=5.0, name="three sparse sites",
                                     item_source="declared")
    paths = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")
    a, b = load_shard(paths[0]), load_shard(paths[1])
    path = write_policy(tmp_path / "p.toml", **{**STRICT, "store": "shared.sqlite3"})
    policy = load_policy(path)
    for shard in (a, b):
        sp_.accept(policy, sp_.request_of(RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"), 3,
                                          shard.value_max), shard, run="r", coordinator="c")
    sp_.claim_draw(policy, b.entity, ["release"], run="r", coordinator="c")
    assert main(["site", "withdraw", "--run", "r", "--policy", str(path), "--site", a.entity]) == 0
    assert "charge given back" in capsys.readouterr().out
    spent = {x["entity"]: x["spent_epsilon"] for x in sp_.remaining_budget(policy.store_for(""))}
    assert spent == {a.entity: 0.0, b.entity: pytest.approx(_spent(1.0, delta=1e-6))}
    assert main(["site", "withdraw", "--run", "r", "--policy", str(path)]) == 1  # every site; one kept its charge
    out = capsys.readouterr().out
    assert "already withdrawn" in out and "charge kept: this site drew its noise in the run (stage release)" in out
    # one site's officer reads its own rows and balance of the shared store
    assert main(["site", "releases", "--policy", str(path), "--site", a.entity, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {r["entity"] for r in doc["log"]} == {a.entity} and [b["entity"] for b in doc["budget"]] == [a.entity]


def test_the_cli_names_a_policys_keys_and_rules_as_the_file_writes_them_not_as_its_own_flags(tmp_path, capsys):
    from dpfed_core.cli.main import main, render_error
    from dpfed_core.errors import DeploymentError

    path = write_policy(tmp_path / "p.toml", **STRICT)
    path.write_text(path.read_text() + "max_dropouts = -1\n")
    assert main(["site", "budget", "--policy", str(path), "--site", "A"]) == 2
    err = capsys.readouterr().err
    assert "max_dropouts must be" in err and "--max-dropouts" not in err
    path.write_text(path.read_text() + "max_epsilom = 1\n")
    assert main(["site", "budget", "--policy", str(path), "--site", "A"]) == 2
    err = capsys.readouterr().err
    assert "'max_dropouts'" in err and "'--max-dropouts'" not in err
    refusal = DeploymentError("site policy: 1 of 3 site(s) refused the run — West (rule max_dropouts): refused by "
                              "site policy rule 'max_dropouts': the run tolerates 1 dropout(s); the public bounds "
                              "{'value_max': 20.0}. Rule(s): max_dropouts.")
    text = render_error(refusal)
    assert "--max-dropouts" not in text and "--value-max" not in text and "Rule(s): max_dropouts." in text
    assert "--user-col" in render_error(DeploymentError("check user_col"))  # a run's own flag stays one


def test_the_site_command_names_what_is_wrong_and_never_creates_a_store(tmp_path, capsys):
    from dpfed_core.cli.main import main

    missing = tmp_path / "nowhere.sqlite3"
    assert main(["site", "releases", "--store", str(missing)]) == 2
    assert "--store" in capsys.readouterr().err and not missing.exists()
    policy = write_policy(tmp_path / "p.toml", **STRICT)  # store names {site}
    assert main(["site", "budget", "--policy", str(policy)]) == 2
    assert "--site NAME" in capsys.readouterr().err
    store = load_policy(policy).store_for("clinic A")
    sp_.SiteLog(store)  # an empty store: no run accepted yet
    assert main(["site", "budget", "--policy", str(policy), "--site", "clinic A"]) == 0
    assert "accepted no run yet" in capsys.readouterr().out
    assert main(["site", "releases", "--store", str(store), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"store": str(store), "log": [], "budget": []}


@needs_flower
def test_a_site_states_and_can_cap_the_epsilon_its_own_noise_gives_against_every_other_site(tmp_path):
    """Under secure aggregation a site's own share carries σ/√(H − d): against the server colluding with
    every other site its people have a larger ε than the run's. Each release's log row states it, and a
    site whose max_coalition_epsilon is below it refuses the run when it decides: nothing charged, nothing
    drawn (the run stops, the refusal is logged with the figure)."""
    from tests.test_deployment import three_clinics
    from dpfed_core.deployment import DeploymentError, LocalFederation, write_shards
    from dpfed_core.deployment.deployed import run_deployed
    from dpfed_core.evaluation.experiments import make_split

    ds = three_clinics()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5, aggregation="secure", rank=3)
    shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")
    ok = write_policy(tmp_path / "ok.toml", **{**STRICT, "budget_epsilon": 5.0})
    tight = write_policy(tmp_path / "tight.toml", **{**STRICT, "budget_epsilon": 5.0, "max_coalition_epsilon": 1.2,
                                                     "store": "tight/{site}.sqlite3"})
    with LocalFederation(shards, tmp_path / "flower", ds.entity_names, site_policy=[ok, ok, ok]) as fed:
        doc = run_deployed(ds, cfg, federation=fed, round_timeout=60, timeout=180)
    coalition = float(doc["privacy"]["trust"]["against_server_and_other_entities"]["epsilon"])
    assert coalition > 1.2
    for r in _released(load_policy(ok), ds):
        assert r["note"] == (f"against the server with every other site: ε = {epsilon_that_holds(coalition)}, "
                             f"δ = {cfg.delta:.3g} "
                             "(the run as planned: its stages so far, and its later stages at their planned ρ; "
                             "one share, no composition)")
    with LocalFederation(shards, tmp_path / "flower2", ds.entity_names, site_policy=[ok, ok, tight]) as fed:
        with pytest.raises(DeploymentError):
            run_deployed(ds, cfg, federation=fed, round_timeout=60, timeout=180)
    rows = sp_.SiteLog(load_policy(tight).store_for(ds.entity_names[2])).rows()
    assert [(r["stage"], r["decision"], r["rule"]) for r in rows] == [("decision", "refused", "max_coalition_epsilon")]
    assert (f"the run as planned would give this site's people ε = {epsilon_that_holds(coalition)} against the "
            "server") in rows[-1]["note"]
    # decided before any charge: the site's odometer holds no account, no release
    from dpfed_core.privacy.odometer import BudgetOdometer

    assert BudgetOdometer(load_policy(tight).store_for(ds.entity_names[2])).datasets() == []


def test_the_coalition_cap_is_decided_on_the_run_as_planned_from_public_parameters_alone(tmp_path):
    """The planned figure is what the run's shares state (to 10⁻⁶): under secure aggregation it grows with
    the sites (only a site's own σ/√(H − d) protects it), without it it is the run's ε, and a prototype
    release reaches the server whole (its ε). A cap below it refuses the request, one at it admits it."""
    import math as m

    from dpfed_core.federation.summable import coalition_epsilon
    from dpfed_core.privacy.mechanisms import gaussian_sigma

    secure = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-5, aggregation="secure")
    planned = {h: sp_.planned_coalition_epsilon(secure, h) for h in (3, 6)}
    sigma = gaussian_sigma(1.0, 1e-5, 1.0, 40)
    assert planned[3] == pytest.approx(coalition_epsilon(sigma / m.sqrt(3), 1e-5, 1.0, 40), rel=2e-6)
    assert 1.0 < planned[3] < planned[6]
    assert sp_.planned_coalition_epsilon(secure.replace(aggregation="none"), 6) == pytest.approx(1.0, rel=1e-6)
    assert sp_.planned_coalition_epsilon(secure.replace(max_dropouts=1), 3) < planned[3]
    assert sp_.planned_coalition_epsilon(RunConfig(method="dp-prototypes", epsilon=0.7), 6) == 0.7
    req = request_of(secure, 3, value_max=10.0)
    assert req.coalition_epsilon == planned[3]
    with pytest.raises(PolicyRefused) as err:
        check(_policy(tmp_path, max_coalition_epsilon=planned[3] * 0.99), req)
    assert err.value.rule == "max_coalition_epsilon" and f"ε = {epsilon_that_holds(planned[3])}" in str(err.value)
    check(_policy(tmp_path, max_coalition_epsilon=planned[3]), req)
    # the figure a refusal states is rounded up, never below what the run would give (0.92031 → 0.9204)
    from dataclasses import replace

    with pytest.raises(PolicyRefused) as err:
        check(_policy(tmp_path, max_coalition_epsilon=0.5), replace(req, coalition_epsilon=0.92031))
    assert "people ε = 0.9204 against the server" in str(err.value) and "0.9203" not in str(err.value)
    # a non-private request states none (its own rule refuses it)
    assert request_of(RunConfig(method="kmeans"), 3, value_max=10.0).coalition_epsilon is None


def test_a_policy_file_not_in_utf8_is_one_error_naming_the_file_and_the_flag(tmp_path, capsys):
    """TOML is UTF-8: a policy saved in Latin-1 (or a binary file named by mistake) is the site policy's
    error, naming the file, the byte and the flag — never an internal error."""
    from dpfed_core.cli.main import main

    path = tmp_path / "latin.toml"
    path.write_bytes("methods = ['kmeans']\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 'caf\xe9'\n".encode("latin-1"))
    with pytest.raises(PolicyError, match=r"latin\.toml is not UTF-8 text \(byte 0xe9 at position \d+\); save it as "
                                          r"UTF-8, or fix --policy"):
        load_policy(path, control="--policy")
    assert main(["site", "budget", "--policy", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "is not UTF-8 text" in err and "--policy" in err, err
    assert "internal error" not in err


def test_a_misspelt_policy_key_is_pointed_at(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text("methods = ['kmeans']\nmax_epsilom = 1.0\nmax_epsilon = 1\nbudget_epsilon = 2\nstore = 's'\n")
    with pytest.raises(sp_.PolicyError, match=r"'max_epsilom' — a misspelling of 'max_epsilon'\?"):
        load_policy(path)


def test_a_file_that_is_no_store_named_by_store_is_fixed_there_not_in_a_policy(tmp_path, capsys):
    from dpfed_core.cli.main import main

    bad = tmp_path / "table.csv"
    bad.write_text("user,item\n1,2\n")
    assert main(["site", "budget", "--store", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "is damaged or not a dpfed store" in err and err.rstrip().endswith(
        "give --store the site's store file (its policy's store key names it)"), err
    assert bad.read_text() == "user,item\n1,2\n"


def test_a_store_path_naming_a_folder_is_fixed_where_it_was_given(tmp_path, capsys):
    """A site store named as a folder (by --store, or by the policy's store key) is one error naming that
    flag or key, never a bare "give a file name" the operator cannot place."""
    from dpfed_core.cli.main import main

    folder = tmp_path / "stores"
    folder.mkdir()
    assert main(["site", "budget", "--store", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "is a directory" in err and err.rstrip().endswith(
        "give --store the site's store file (its policy's store key names it)"), err
    policy = write_policy(tmp_path / "p.toml", **{**STRICT, "store": "stores"})
    assert main(["site", "budget", "--policy", str(policy)]) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err and err.rstrip().endswith("fix the store key of the site's policy"), err
    assert list(folder.iterdir()) == []


def test_site_commands_pointed_at_a_coordinators_store_say_so_and_leave_it_unchanged(tmp_path, capsys):
    """`site releases` / `budget` / `withdraw --store` naming a coordinator's budget store (no site decided in
    it) is one error saying so, and the file is byte for byte as it was: reading never gives it the site's
    tables, and its coordinator's balances are never shown as the site's."""
    from dpfed_core.cli.main import main

    coord = tmp_path / "coordinator.sqlite3"
    assert main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilon", "1",
                 "--store", str(coord)]) == 0
    capsys.readouterr()
    before = coord.read_bytes()
    for what in (["releases"], ["budget"], ["withdraw", "--run", "1"]):
        assert main(["site", *what, "--store", str(coord)]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.strip().count("\n") == 0, err
        assert "is no deployment site's store" in err and "budget list --store" in err, err
        assert coord.read_bytes() == before


def test_a_policy_saved_with_a_byte_order_mark_reads_as_written(tmp_path):
    """A UTF-8 policy an editor saved with a byte-order mark reads as the same policy, never as "not valid
    TOML at line 1, column 1" over a character the operator cannot see."""
    plain = write_policy(tmp_path / "p.toml", **STRICT)
    marked = tmp_path / "bom.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert {**load_policy(marked).to_dict(), "path": ""} == {**load_policy(plain).to_dict(), "path": ""}


def test_a_policy_its_own_check_refuses_is_never_written(tmp_path):
    """write_policy checks the keys before it writes: a refused policy leaves no file behind (a node
    would read one and refuse every run), and a good one reads back as written."""
    from dpfed_core.deployment.site_policy import PolicyError, load_policy, write_policy

    bad = tmp_path / "wp" / "p.toml"
    with pytest.raises(PolicyError, match="accepts no method"):
        write_policy(bad, methods=[], max_epsilon=1.0, budget_epsilon=1.0, store="x.sqlite3")
    assert not bad.exists() and not list(tmp_path.rglob("*.part"))
    good = write_policy(tmp_path / "wp" / "q.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=2.0,
                        store="x.sqlite3")
    pol = load_policy(good)
    assert pol.methods == ("dp-popularity",) and pol.store == (tmp_path / "wp" / "x.sqlite3").resolve()


@pytest.mark.parametrize("method", ["dp-popularity", "dp-cooccurrence", "dp-als"])
def test_a_nodes_summable_method_refuses_dropouts_that_leave_fewer_than_two_in_the_secure_sum(method):
    """What a site builds for a request is checked against the federation's size, as its shares would be:
    a secure sum that could be left with one entity's share is refused naming ``max_dropouts``."""
    from dpfed_core.deployment.hooks import node_method, public_bounds
    from dpfed_core.errors import ConfigError

    config = RunConfig(method=method, aggregation="secure", max_dropouts=2)
    node_method(config, 5.0, n_entities=4)
    for build in (node_method, public_bounds):
        with pytest.raises(ConfigError, match="max_dropouts=2 leaves fewer than 2 of the 3") as err:
            build(config, 5.0, n_entities=3)
        assert err.value.param == "max_dropouts"


def test_a_nodes_prototype_method_refuses_a_server_weighting_it_does_not_know():
    from dpfed_core.deployment.hooks import node_method
    from dpfed_core.errors import ConfigError

    node_method(RunConfig(method="kmeans", server_weighting="counts"), 5.0)
    with pytest.raises(ConfigError, match="server_weighting must be 'none' or 'counts'") as err:
        node_method(RunConfig(method="kmeans", server_weighting="by-size"), 5.0)
    assert err.value.param == "server_weighting"
