"""A comparison method's declared parameter that the run would not read is refused when set to
another value than its default (:data:`~dpfed_core.methods.comparison.specs.PARAMETER_READS`), and
the table agrees with the code: an accepted value changes the fit, a refused one would not have."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from dpfed_core.config import RunConfig, no_progress
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.service import check_run
from dpfed_core.methods import get_method
from dpfed_core.methods.comparison import specs


def rating_dataset(seed: int = 0, n: int = 40, m: int = 24, item_source: str = "data") -> FederatedDataset:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(n, 2)), rng.normal(size=(m, 2))
    full = np.clip(np.rint(3 + a @ b.T * 0.8 + rng.normal(0, 0.3, (n, m))), 1, 5)
    X = sp.csr_matrix(np.where(rng.random((n, m)) < 0.5, full, 0.0))
    return FederatedDataset.from_parts(X, np.where(np.arange(n) < n // 2, "A", "B"),
                                       value_kind="ratings", name="tiny ratings", item_source=item_source)


#: A value other than the default for every declared parameter (as ``--param`` gives it).
UNREAD_OTHER = {
    "variant": "unbounded", "factors": 3, "lam": 0.5, "lr": 0.05, "iterations": 3, "B": 0.5, "p_max": 0.05,
    "q_max": 0.05, "e_max": 0.5, "alpha": 0.2, "beta_m": 3.0, "beta_u": 3.0, "split": "0.1,0.2,0.1,0.2,0.4",
    "r_min": 2.7, "r_max": 3.3, "batch_size": "1", "private_preprocessing": True, "solver": "sgd",
    "epochs": 3, "binarize": False, "init_scale": 0.3, "gd_iters": 3, "optimizer": "gd", "gamma": 2e-3,
    "beta1": 0.6, "beta2": 0.9, "adam_eps": 1e-3, "adam_bias": "standard", "grad_reduction": "mean",
    "reset_state_each_epoch": False, "x_refresh": "round",
    "public_fraction": 0.2, "n_public": 12, "public_selection": "random", "tau": 3.0, "max_rank": 1,
    "max_iter": 3, "tol": 0.5, "batch": 5, "private_weight": 0.9, "pmd_sweeps": 1, "pmd_tries": 2,
    "values": "1,2,3,4,5,6",
}
#: Where no private factorisation reads split's fifth (MF) share, another split keeps it at 0 (a
#: non-zero one is refused for its own reason: it would be left unspent).
UNREAD_OTHER_SPLIT = {name: "0.1,0.5,0.1,0.3,0" for name in ("ge-mf", "friedman-ge")}
_FCF = {"epochs": 2, "gd_iters": 2}
_EM = {"tau": 2.0, "max_iter": 5}
_XIN = {"public_fraction": 0.5, **_EM}
#: Every method in a cheap setting, and each setting that switches parameters on.
UNREAD_SETTINGS = [
    *[(name, {}) for name in specs.FRIEDMAN_READS],
    ("ge-mf", {"solver": "sgd"}),
    # unstabilised item averages, so that r_min and r_max clamp some of them
    ("ge-mf", {"private_preprocessing": True, "beta_m": 0.0}),
    *[(name, {"variant": "unbounded"}) for name in ("friedman-isgd", "friedman-psgd", "friedman-pals")],
    ("implicit-als", {"epochs": 2}), ("fcf", _FCF), ("fcf", {**_FCF, "optimizer": "gd", "gamma": 1e-3}),
    ("xin-full", _EM), *[(name, _XIN) for name in ("xin-public", "xin-pmc", "xin-pmd")],
    *[(name, {**_EM, "n_public": 20}) for name in ("xin-public", "xin-pmc", "xin-pmd")],
]


def _config(name: str, params: dict) -> RunConfig:
    return RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, lam=0.1, seed=1, n_hidden=3,
                     method_params=params)


def _overall(ds: FederatedDataset, config: RunConfig, monkeypatch) -> dict:
    """The run's overall metrics with the parameter check skipped (what the run would have reported)."""
    from dpfed_core.evaluation.experiments import run_method

    with monkeypatch.context() as m:
        m.setattr(specs, "check_parameters_used", lambda config: None)
        return run_method(ds, config)[0]["overall"]


def _scores(ds: FederatedDataset, config: RunConfig, monkeypatch) -> np.ndarray:
    """What the fit predicts, with the parameter check skipped (what the run would have done)."""
    with monkeypatch.context() as m:
        m.setattr(specs, "check_parameters_used", lambda config: None)
        res = get_method(config.method).fit(ds, ds.X.tocsr(), config, np.random.default_rng(0), no_progress)
    return res.U @ res.V.T


def test_every_comparison_method_with_declared_parameters_has_a_table_naming_only_declared_ones():
    from dpfed_core.methods.registry import METHODS, available_methods

    available_methods()
    with_params = {n for n, s in METHODS.items() if s.parameters and not s.federated}
    assert with_params == set(specs.PARAMETER_READS)
    for name, (declared, reads) in specs.PARAMETER_READS.items():
        assert METHODS[name].parameters == declared and METHODS[name].check is not None
        names = {p.name for p in declared}
        assert set(reads.always) <= names and all(set(w[3]) <= names and w[0] in names for w in reads.when)
    assert set(UNREAD_OTHER) == {p.name for d, _ in specs.PARAMETER_READS.values() for p in d}
    for name, reads in specs.FEDERATED_READS.items():
        # a federated method's table lists every parameter it declares: one added later is never refused unseen
        names = {p.name for p in get_method(name).parameters}
        assert set(reads.always) | {n for w in reads.when for n in w[3]} == names, name
        assert all(w[0] in names for w in reads.when), name


#: The parameters whose value switches others on or off (what names a setting in the test ids).
UNREAD_SWITCHES = ("solver", "private_preprocessing", "variant", "optimizer", "n_public")


@pytest.mark.parametrize("name, base", UNREAD_SETTINGS, ids=[
    name + "".join(f"-{k}" for k in base if k in UNREAD_SWITCHES) for name, base in UNREAD_SETTINGS])
def test_a_refused_parameter_would_not_change_the_fit_and_an_accepted_one_does(name, base, monkeypatch):
    """For every declared parameter set to another value than the setting's: the check refuses it
    exactly when the fit, run without the check, predicts the same as without it."""
    ds = rating_dataset()
    check_run(ds, _config(name, base))
    reference = _scores(ds, _config(name, base), monkeypatch)
    declared, _ = specs.PARAMETER_READS[name]
    disagree = []
    for p in declared:
        other = UNREAD_OTHER_SPLIT.get(name, UNREAD_OTHER[p.name]) if p.name == "split" else UNREAD_OTHER[p.name]
        value = p.coerce(other, name)
        if base.get(p.name, p.default) == value or (p.name == "n_public" and "public_fraction" in base):
            # (n_public beside public_fraction is refused naming public_fraction, which it overrides)
            continue
        config = _config(name, {**base, p.name: other})
        try:
            check_run(ds, config)
            refused = False
        except ConfigError as exc:
            assert exc.param == "prototype_params" and f"its parameter {p.name}, given as " in str(exc), str(exc)
            refused = True
            # its default is what runs anyway: accepted
            check_run(ds, _config(name, {**base, p.name: p.default}))
        scores = _scores(ds, config, monkeypatch)
        same = scores.shape == reference.shape and np.array_equal(scores, reference)
        if refused != same:
            disagree.append(f"{p.name} ({'refused' if refused else 'accepted'}, fit "
                            f"{'unchanged' if same else 'changed'})")
    assert not disagree, f"{name} {base}: " + "; ".join(disagree)


@pytest.mark.parametrize("name, params, said", [
    ("ge-mf", {"beta_u": 3.0},
     "ge-mf fits exact global effects unless private_preprocessing is on: its parameter beta_u, given as 3, would "
     "be ignored (beta_u is read only then); set private_preprocessing=true or drop beta_u from prototype_params"),
    ("ge-mf", {"private_preprocessing": True, "split": "0.1,0.2,0.1,0.2,0.4"},
     "ge-mf fits clean MF with no ε: its global effects are exact, or β-stabilised without noise when "
     "private_preprocessing is on: its parameter split, given as 0.1,0.2,0.1,0.2,0.4, would be ignored; "
     "drop split from prototype_params"),
    ("ge-mf", {"lr": 0.05}, "ge-mf fits by ALS unless solver is sgd: its parameter lr, given as 0.05, would be "
                            "ignored (lr is read only then); set solver=sgd or drop lr from prototype_params"),
    ("friedman-ge", {"iterations": 3}, "friedman-ge releases private global effects only and fits no factors: "
                                       "its parameter iterations, given as 3, would be ignored; drop iterations "
                                       "from prototype_params"),
    ("friedman-isgd", {"alpha": 0.2}, "set variant=unbounded or drop alpha"),
    ("friedman-pals", {"lr": 0.05}, "friedman-pals solves ALS exactly"),
    ("fcf", {"optimizer": "gd", "beta1": 0.6}, "fcf takes plain gradient steps unless optimizer is adam: its "
                                               "parameter beta1, given as 0.6, would be ignored"),
    ("xin-pmc", {"values": "1,2,3"}, "xin-pmc releases PMC vectors, which need no rating set"),
    ("xin-public", {"n_public": 5, "public_fraction": 0.3},
     "(public_fraction is read only then); drop n_public or drop public_fraction from prototype_params"),
], ids=["ge-mf-beta_u", "ge-mf-split", "ge-mf-lr", "friedman-ge", "friedman-isgd", "friedman-pals", "fcf", "xin-pmc",
        "xin-public"])
def test_the_refusal_names_the_method_the_parameter_why_and_the_fix_on_the_cli_and_the_dashboard(
        name, params, said, capsys):
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.ui import engine as dash

    ds = rating_dataset()
    with pytest.raises(ConfigError) as refused:
        check_run(ds, _config(name, params))
    assert said in str(refused.value) and refused.value.param == "prototype_params", str(refused.value)
    assert "--param" in refused.value.render(CLI_NAMES)
    shown = dash.friendly_message(refused.value).replace("\\", "")
    assert said.split(" from prototype_params")[0] in shown and "the method's parameters" in shown, shown


def test_the_cli_refuses_an_unread_parameter_in_one_line_before_running(capsys):
    from dpfed_core.cli import main

    assert main(["run", "--data", "sample:synthetic", "--method", "ge-mf", "--param", "beta_m=3",
                 "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert ("ge-mf fits exact global effects unless private_preprocessing is on: its parameter beta_m, given as 3, "
            "would be ignored") in err and "set private_preprocessing=true" in err, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].endswith("drop beta_m from --param"), err
    assert main(["run", "--data", "sample:synthetic", "--method", "ge-mf", "--param", "beta_m=15",
                 "--dry-run"]) == 0


#: One method of each family with a parameter it would not read.
UNREAD_DIRECT = [("ge-mf", {"beta_m": 3.0}), ("friedman-isgd", {"alpha": 0.2}),
                 ("fcf", {"optimizer": "gd", "adam_eps": 1e-3}),
                 ("xin-pmc", {"pmd_tries": 2}), ("dp-prototypes", {"n_grids": 2, "candidates": "lsh"}),
                 ("dp-gaussian", {"lsh_depth": 4})]


def _direct(name: str, params: dict) -> RunConfig:
    return RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, lam=0.1, seed=1, n_hidden=3, k=2,
                     max_iter=5, simulation=True, method_params=params)


@pytest.mark.parametrize("name, params", UNREAD_DIRECT, ids=[n for n, _ in UNREAD_DIRECT])
def test_the_fit_itself_refuses_an_unread_parameter(name, params):
    """A run that reaches the fit without the run's checks (a compared method, a script) is refused too."""
    from dpfed_core.evaluation.experiments import run_method

    unread = next(k for k in params if k not in ("optimizer", "candidates"))
    with pytest.raises(ConfigError, match=f"its parameter {unread}, given as .* would be ignored"):
        run_method(rating_dataset(item_source="declared"), _direct(name, params))


@pytest.mark.parametrize("name", ["ge-mf", "friedman-isgd", "fcf", "implicit-als", "xin-pmc", "dp-prototypes"])
def test_a_fit_through_the_registry_checks_its_parameters_once(name, monkeypatch):
    """The check sits where every fit is reached (the registry), not again inside each system's fit."""
    from dpfed_core.evaluation.experiments import make_split

    ds = rating_dataset(item_source="declared")
    config = _direct(name, {})
    seen = []
    monkeypatch.setattr(specs, "check_parameters_used", seen.append)
    spec = get_method(name)
    split = make_split(ds, config)
    spec.fit(ds, split.train_rows if spec.site_rows else split.train, config, np.random.default_rng(0), no_progress)
    assert seen == [config]


def test_the_federate_page_shows_the_refusal_and_disables_run_until_the_setting_reads_the_parameter():
    from tests.test_app_pages import app, assert_clean

    at = app("pages/2_Federate.py").run()
    at.selectbox(key="fed_method").set_value("ge-mf").run()
    at.number_input(key="fed_p_ge-mf_beta_m").set_value(3.0).run()
    assert_clean(at)
    shown = [e.value.replace("\\", "") for e in at.error]
    assert len(shown) == 1 and shown[0].startswith(
        "ge-mf fits exact global effects unless private_preprocessing is on: its parameter beta_m, given as 3, "
        "would be ignored (beta_m is read only then); set private_preprocessing=true or drop beta_m from the "
        "method's parameters"), shown
    assert at.button(key="fed_run").disabled
    at.checkbox(key="fed_p_ge-mf_private_preprocessing").set_value(True).run()
    assert not at.error and not at.button(key="fed_run").disabled, [e.value for e in at.error]


def test_dp_popularity_reads_its_holdout_evidence_only_with_the_local_blend(monkeypatch):
    """Without local_blend round 2 fits every user on the DP popularity column alone: a hold-out
    evidence asked for is refused (the fit is the same without it); with it the value reaches round 2."""
    from dpfed_core.federation.protocol import build_method

    ds = rating_dataset()
    config = RunConfig(method="dp-popularity", epsilon=2.0, mode="observed", rank=2, seed=1, n_hidden=3,
                       simulation=True, prototype_params={"holdout_evidence": 2.0})
    with pytest.raises(ConfigError) as refused:
        check_run(ds, config)
    assert str(refused.value) == (
        "dp-popularity ranks every user by the plain DP popularity list unless local_blend is on: its parameter "
        "holdout_evidence, given as 2, would be ignored (holdout_evidence is read only then); set local_blend=true "
        "or drop holdout_evidence from prototype_params") and refused.value.param == "prototype_params"
    default = config.replace(prototype_params={"holdout_evidence": 1.0})
    check_run(ds, default)
    asked, ran = (_overall(ds, c, monkeypatch) for c in (config, default))
    assert asked == ran
    blended = config.replace(prototype_params={"local_blend": True, "holdout_evidence": 2.0})
    check_run(ds, blended)
    assert build_method(blended, ds.value_max).holdout_evidence == 2.0


@pytest.mark.parametrize("name, params, why", [
    ("dp-als", {"local_blend": False, "holdout_evidence": 2.0},
     "dp-als fits every user on the broadcast factors alone unless local_blend is on: its parameter "
     "holdout_evidence, given as 2, would be ignored"),
    ("dp-als", {"local_blend": False, "round2_default": "alone"}, "its parameter round2_default, given as alone"),
    ("dp-cooccurrence", {"local_blend": False, "round2_default": "alone"},
     "dp-cooccurrence weighs the federation's parts alone, with no default of the entity's own to keep, unless "
     "local_blend is on: its parameter round2_default, given as alone, would be ignored (round2_default is read "
     "only then); set local_blend=true"),
], ids=["dp-als-evidence", "dp-als-default", "dp-cooccurrence-default"])
def test_a_summable_methods_round_2_setting_is_refused_without_the_local_blend(name, params, why, monkeypatch):
    """Without local_blend round 2 reads neither the evidence (dp-als) nor the small-entity default: the
    value is refused, and the run with it is the run without it; with the blend it is accepted."""

    ds = rating_dataset()
    config = RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, seed=1, n_hidden=3, k=2, max_iter=5,
                       simulation=True, prototype_params=params)
    with pytest.raises(ConfigError) as refused:
        check_run(ds, config)
    assert why in str(refused.value) and refused.value.param == "prototype_params", str(refused.value)
    plain = config.replace(prototype_params={"local_blend": False})
    check_run(ds, plain)
    assert _overall(ds, config, monkeypatch) == _overall(ds, plain, monkeypatch)
    check_run(ds, config.replace(prototype_params={**params, "local_blend": True}))


@pytest.mark.parametrize("name", ["dp-prototypes", "dp-gaussian"])
def test_the_lsh_tree_settings_are_refused_unless_the_candidates_come_from_the_lsh_coreset(name, monkeypatch):
    """The private partition grows no LSH tree: its settings are refused (the run with one is the run
    without it); with candidates=lsh they reach the release."""
    from dpfed_core.federation.protocol import build_method

    ds = rating_dataset()
    config = RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, seed=1, n_hidden=3, k=2, max_iter=5,
                       simulation=True, prototype_params={"lsh_node_factor": 5.0})
    with pytest.raises(ConfigError) as refused:
        check_run(ds, config)
    assert str(refused.value) == (
        f"{name} finds its candidates by the private partition unless candidates is lsh: its parameter "
        "lsh_node_factor, given as 5, would be ignored (lsh_node_factor is read only then); set candidates=lsh or "
        "drop lsh_node_factor from prototype_params"), str(refused.value)
    plain = config.replace(prototype_params={})
    assert _overall(ds, config, monkeypatch) == _overall(ds, plain, monkeypatch)
    lsh = config.replace(prototype_params={"candidates": "lsh", "lsh_node_factor": 5.0})
    check_run(ds, lsh)
    assert build_method(lsh, ds.value_max).lsh_node_factor == 5.0


#: Each setting of the private partition and its local search, at another value than its default.
PARTITION_OTHER = {"projection_dim": 5, "n_grids": 2, "depth": 3, "max_candidates": 1, "search_steps": 1,
                   "final_choice": False}


def _release(ds: FederatedDataset, config: RunConfig, monkeypatch) -> tuple:
    """What the run releases (its scores and its ledger's rows), with the parameter check skipped."""
    from dpfed_core.evaluation.experiments import run_method

    with monkeypatch.context() as m:
        m.setattr(specs, "check_parameters_used", lambda config: None)
        result = run_method(ds, config)[1]
    rows = [(r.entity, r.stage, r.epsilon, r.delta) for r in result.ledger.rows]
    return result.entity_factors().scores(np.arange(ds.n_users)), rows


@pytest.mark.parametrize("name", ["dp-prototypes", "dp-gaussian"])
def test_the_partition_settings_are_read_by_the_partition_alone(name, monkeypatch):
    """The LSH coreset projects nothing, grows no grid and runs no private local search: under
    candidates=lsh each of those settings is refused naming the fix, and the run with it is the run
    without it; under the private partition (k clusters: cluster_size none) each changes what the run
    releases."""
    # a declared catalogue: every item is fitted (no DP catalogue that could keep none of them)
    ds = rating_dataset(n=80, item_source="declared")
    base = RunConfig(method=name, epsilon=2.0, mode="observed", rank=2, seed=1, n_hidden=3, k=2, max_iter=5,
                     simulation=True, prototype_params={"cluster_size": None})
    lsh = base.replace(prototype_params={"cluster_size": None, "candidates": "lsh"})
    lsh_plain, partition_plain = _release(ds, lsh, monkeypatch), _release(ds, base, monkeypatch)
    unchanged, unread = [], []
    for key, value in PARTITION_OTHER.items():
        given = lsh.replace(prototype_params={**lsh.params, key: value})
        with pytest.raises(ConfigError) as refused:
            check_run(ds, given)
        assert str(refused.value) == (
            f"{name} grows an LSH tree over the unprojected rows, with no grid partition and no private local "
            f"search, unless candidates is partition: its parameter {key}, given as "
            f"{str(value).lower()}, would be ignored ({key} is read only then); set candidates=partition or "
            f"drop {key} from prototype_params"), str(refused.value)
        scores, rows = _release(ds, given, monkeypatch)
        if not (np.array_equal(scores, lsh_plain[0]) and rows == lsh_plain[1]):
            unread.append(key)
        partition = base.replace(prototype_params={**base.params, key: value})
        check_run(ds, partition)
        scores, rows = _release(ds, partition, monkeypatch)
        if np.array_equal(scores, partition_plain[0]) and rows == partition_plain[1]:
            unchanged.append(key)
    assert not unread, f"refused under candidates=lsh yet changed the run: {unread}"
    assert not unchanged, f"accepted under the private partition yet changed nothing: {unchanged}"


def test_a_run_whose_dp_catalogue_keeps_no_item_refuses_an_unread_parameter_too():
    """With no item selected the method's fit is never reached: the answer that stands in for it
    refuses the parameter as the fit would."""
    from dpfed_core.evaluation.experiments import run_method

    ds, config = rating_dataset(), _direct("dp-gaussian", {"lsh_depth": 4})
    with pytest.raises(ConfigError, match="its parameter lsh_depth, given as 4, would be ignored"):
        run_method(ds, config)
    document = run_method(ds, config.replace(method_params={}))[0]
    assert any("0 of the data's 24 items selected" in n for n in document["notes"]), document["notes"]


def test_the_cli_takes_a_list_parameter_as_comma_separated_numbers_and_refuses_an_unspent_mf_share(capsys):
    """``--param split=…`` reaches the method as its five shares (not refused as a malformed number):
    friedman-isgd reads all five; friedman-ge refuses a fifth share it would leave unspent, in one line."""
    from dpfed_core.cli import main

    run = ["run", "--data", "sample:synthetic", "--dry-run", "--method"]
    assert main([*run, "friedman-isgd", "--param", "split=0.1,0.2,0.1,0.2,0.4"]) == 0
    assert main([*run, "xin-pmd", "--param", "values=1,2,3,4,5"]) == 0
    capsys.readouterr()
    assert main([*run, "friedman-ge", "--param", "split=0.1,0.2,0.1,0.2,0.4"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        "error: friedman-ge releases private global effects only and fits no factors: the fifth (MF) share of its "
        "parameter split, given as 0.1,0.2,0.1,0.2,0.4, would be left unspent (only friedman-isgd, friedman-psgd "
        "and friedman-pals spend it on their factorisation); give 0 as the fifth share of split in --param"), err
    assert main([*run, "friedman-ge", "--param", "split=0.1,0.4,0.1,0.4,0"]) == 0
