"""The command line as a user runs it: documents written, one-line errors, exit codes."""
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpfed_core.cli import main
from dpfed_core.errors import ConfigError, DpfedError
from tests.toy import toy_csv

REPO = Path(__file__).resolve().parents[1]


def _toy_csv(path: Path, n_entities=3, users=30, items=25, seed=0) -> Path:
    return toy_csv(path, n_entities, users, items, seed)


TOY_ARGS = ["--user-col", "patient", "--item-col", "drug", "--value-col", "count", "--entity-col", "hospital",
            "--value-kind", "counts", "--value-max", "5"]


def test_issue_check_command_on_movielens(ml100k_dir, tmp_path):
    out = tmp_path / "r.json"
    code = main(["run", "--data", str(ml100k_dir), "--method", "kmeans", "--mode", "zero", "--rank", "10",
                 "--k", "50", "--seed", "0", "--out", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert len(doc["entities"]) >= 10
    assert {"config", "entities", "overall", "privacy", "messages", "timings"} <= set(doc)
    assert doc["privacy"]["epsilon"] == "inf"
    # the reference protocol measured ≈ 0.065 for k-means prototypes
    assert 0.05 < doc["overall"]["mar"] < 0.08


def test_run_with_compare_and_sweep(tmp_path, capsys):
    csv = _toy_csv(tmp_path / "toy.csv")
    out = tmp_path / "r.json"
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "5", "--rank", "3",
                 "--compare", "individual,popularity", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert set(doc["comparison"]) == {"individual", "popularity"}
    assert [e["name"] for e in doc["entities"]] == ["hospital 0", "hospital 1", "hospital 2"]
    printed = capsys.readouterr().out
    assert "individual" in printed and "mar" in printed
    sw = tmp_path / "s.json"
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "5", "--rank", "3",
                 "--seeds", "0,1", "--references", "individual", "--out", str(sw)]) == 0
    sdoc = json.loads(sw.read_text())
    assert len(sdoc["runs"]) == 4 and "crossing_epsilon" in sdoc


def test_compare_naming_the_method_itself_runs_it_once_and_says_so(tmp_path, capsys):
    csv = _toy_csv(tmp_path / "toy.csv")
    common = ["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "5", "--rank", "3"]
    assert main([*common, "--compare", "kmeans,individual", "--dry-run"]) == 0
    got = capsys.readouterr()
    assert "dry run: run of kmeans compared with individual — " in got.out, got.out
    assert "note: --compare names the --method kmeans itself: it runs once" in got.err
    assert main([*common, "--compare", "kmeans"]) == 0
    got = capsys.readouterr()
    assert "predicted for 2 runs" not in got.err and "kmeans" in got.out, got.err


def test_a_sweep_of_one_seed_prints_no_sd_and_no_crossing(tmp_path, capsys):
    """``--seeds 1`` is the seed 1 alone: the table's sd column is a dash, not 0.0000, and the crossing
    says it cannot be stated from one seed."""
    csv = _toy_csv(tmp_path / "toy.csv")
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "5", "--rank", "3",
                 "--seeds", "1", "--references", "individual"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.startswith(("kmeans ", "individual "))]
    assert rows and all(r[-1] == "—" for r in rows), out
    assert "one seed has no spread over seeds" in out and "pays from" not in out
    assert "mar over seeds 1, zero mode\n" in out  # counts: zero is run's mode too, nothing to warn of
    ratings = [a if a != "counts" else "ratings" for a in TOY_ARGS]
    assert main(["sweep", "--data", str(csv), *ratings, "--method", "kmeans", "--k", "5", "--rank", "3",
                 "--seeds", "1", "--references", "individual"]) == 0
    assert ("mar over seeds 1, zero mode (a ranking metric's default; `run` uses observed on ratings: --mode "
            "observed to compare)") in capsys.readouterr().out


def test_ranking_metrics_of_observed_mode_models_carry_the_dashboards_note(tmp_path, capsys):
    """The note the Evaluate page shows under an observed-mode comparison, said by run and sweep too,
    with the flag that switches to zero mode; a zero-mode table carries none."""
    csv = _toy_csv(tmp_path / "toy.csv")
    ratings = [a if a != "counts" else "ratings" for a in TOY_ARGS]
    common = ["--data", str(csv), *ratings, "--method", "kmeans", "--k", "5", "--rank", "3"]
    said = ("Compare rankings in zero mode (--mode zero); compare RMSE in observed mode. The verdict against each "
            "entity alone stays on MAR: every site's blend, local's too, is chosen for ranking, and a lower RMSE "
            "can come from shrinkage alone (a random V lowers it too).")
    assert main(["run", *common, "--mode", "observed", "--compare", "local"]) == 0
    out = capsys.readouterr().out
    assert "note: Observed mode: each model fits only the values" in out and said in out, out
    assert main(["sweep", *common, "--mode", "observed", "--seeds", "0", "--references", "local"]) == 0
    assert said in capsys.readouterr().out
    assert main(["run", *common, "--mode", "zero", "--compare", "local"]) == 0
    assert "Observed mode" not in capsys.readouterr().out


def test_a_crossing_line_names_a_setting_by_its_flag(tmp_path, capsys):
    """A crossing that cannot be stated says which setting would make it one, as the flag that sets it
    (the Trade-off page names the control)."""
    csv = _toy_csv(tmp_path / "toy.csv")
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "5", "--rank", "3",
                 "--seeds", "0,1", "--references", "local", "--metric", "test_rmse", "--mode", "zero"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("crossing: "))
    assert "not meaningful in zero mode" in line and "or --mode observed for ratings" in line, line
    assert "mode=" not in line


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--epsilon", "0"], "ε must be a positive"),
        (["--epsilon", "-1"], "ε must be a positive"),
        (["--k", "500"], "largest entity"),
        (["--rank", "0"], "rank"),
        (["--method", "magic"], "unknown method"),
    ],
)
def test_bad_parameters_one_line_error(tmp_path, capsys, extra, needle):
    csv = _toy_csv(tmp_path / "toy.csv")
    code = main(["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_bad_data_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("patient,drug,count,hospital\na,x,lots,h1\n")
    assert main(["run", "--data", str(bad), *TOY_ARGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "count" in err and "Traceback" not in err
    assert main(["run", "--data", str(tmp_path / "missing.csv")]) == 2
    assert bad.read_text() == "patient,drug,count,hospital\na,x,lots,h1\n"  # never modified


def test_a_run_on_a_declared_catalogue_that_leaves_items_out_says_what_is_shared(tmp_path, capsys, monkeypatch):
    """``--items`` naming 20 of the toy table's 25 drugs: the header counts both, the load's note says how
    many rows stay the hospitals' own, the run's note says every message is shaped by the 20, and the
    document's messages are."""
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "store.sqlite3"))
    csv = _toy_csv(tmp_path / "toy.csv")
    drugs = sorted(pd.read_csv(csv)["drug"].astype(str).unique())
    items = tmp_path / "items.txt"
    items.write_text("".join(f"{d}\n" for d in drugs[:20]))
    out_json = tmp_path / "r.json"
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--items", str(items), "--method", "dp-cooccurrence",
                 "--aggregation", "secure", "--epsilon", "2", "--rank", "3", "--simulation", "--out",
                 str(out_json)]) == 0
    out = capsys.readouterr().out
    assert f"× {len(drugs)} items (20 declared and shared, {len(drugs) - 20} the entities' own) in 3 entities" in out
    assert "not in the declared item catalogue" in out and "as their entities' own items: never shared" in out
    assert "every message is shaped by its 20 items" in out
    doc = json.loads(out_json.read_text())
    assert doc["dataset"]["n_declared"] == 20 and doc["dataset"]["n_items"] == len(drugs)
    # item vectors, the co-occurrence's upper triangle (20·21/2) and V, all on the 20 declared items
    assert {m["shape"][0] for m in doc["messages"]} == {20, 210}, doc["messages"]


def test_the_catalogue_forecast_names_the_cli_flag_that_declares_the_catalogue(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "store.sqlite3"))
    csv = _toy_csv(tmp_path / "toy.csv")
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--entities-from-data", "--method", "dp-cooccurrence",
                 "--epsilon", "1", "--dry-run"]) == 0
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("catalogue: ")]
    assert "declare the catalogue (--items FILE)" in line and "items=" not in line


@pytest.mark.parametrize("command", [["run"], ["sweep", "--epsilons", "1", "--seeds", "0"],
                                     ["audit", "--entity", "0", "--runs", "8"]], ids=["run", "sweep", "audit"])
def test_a_dry_run_states_what_the_loader_inferred_merged_or_accepted(tmp_path, capsys, monkeypatch, command):
    """A dry run is where a release is planned: the loader's notes (the entity list read from the data, repeated
    rows merged) are stated there, in the flags' words, as a run states them with its result."""
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "store.sqlite3"))
    csv = _toy_csv(tmp_path / "toy.csv")
    with csv.open("a", encoding="utf-8") as f:  # one (user, item) row repeated
        f.write(csv.read_text(encoding="utf-8").splitlines()[1] + "\n")
    assert main([*command, "--data", str(csv), *TOY_ARGS, "--entities-from-data", "--duplicates", "sum",
                 "--dry-run"]) == 0
    notes = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("note: ")]
    assert any("the entity list is read from the data (accepted with --entities-from-data)" in n for n in notes), notes
    assert any(n.startswith("note: merged 1 repeated (user, item) rows") for n in notes), notes
    assert not (tmp_path / "store.sqlite3").exists()


def test_a_run_prints_its_trust_model_and_every_warning_of_its_document(tmp_path, capsys):
    """What the CLI prints of a run is what its document holds: the trust model with the coalition ε of
    a secure run, and each warning (here: hospitals without test users) with the flag that fixes it."""
    out_json = tmp_path / "r.json"
    assert main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--aggregation", "secure",
                 "--simulation", "--test-fraction", "0.01", "--out", str(out_json)]) == 0
    out = capsys.readouterr().out
    doc = json.loads(out_json.read_text())
    coal = doc["privacy"]["trust"]["against_server_and_other_entities"]["epsilon"]
    from dpfed_core.privacy.statement import epsilon_that_holds

    (trust,) = [line for line in out.splitlines() if line.startswith("trust model: ")]
    # a simulation's seeded noise gives no ε: the coalition's is stated only as production's would be
    assert trust.startswith("trust model: secure aggregation") and "gives ε" not in trust
    assert trust.endswith(f"none: simulation noise is reproducible from the seed (would be "
                          f"ε = {epsilon_that_holds(coal)}, δ = 1e-06 with production noise)")
    assert doc["warnings"] and all(w["text"][:40] in out for w in doc["warnings"])
    # the one setting that gives these entities test users: every one has users of enough entries, too few
    # of them for a 1 % fraction
    assert "raise --test-fraction above" in out and "lower --n-hidden" not in out


def test_module_entry_point_and_help():
    r = subprocess.run([sys.executable, "-m", "dpfed_core", "run", "--help"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--epsilon" in r.stdout and "examples:" in r.stdout
    r = subprocess.run([sys.executable, "-m", "dpfed_core", "methods"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "dp-prototypes" in r.stdout and "central" in r.stdout
    r = subprocess.run([sys.executable, "-m", "dpfed_core", "run", "--data", "nowhere.csv"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr


def test_cli_defaults_are_the_dashboards_and_a_run_reproduces_across_front_ends(tmp_path, capsys):
    """No flag: the CLI runs the dashboard's starting configuration (the recommended DP method with
    secure aggregation, its ε, rank and iterations); the dashboard's "same run on the command line"
    reproduces a run exactly, and the CLI's document sets the dashboard's controls back to it."""
    import shlex

    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.defaults import cli_command, default_config
    from dpfed_core.ui.defaults import widget_state

    ds = load_data("sample:clinic", federation="region")
    dashboard = default_config(ds)
    assert (dashboard.method, dashboard.aggregation, dashboard.max_iter) == ("dp-cooccurrence", "secure", 100)
    out = tmp_path / "d.json"
    assert main(["run", "--data", "sample:clinic", "--federation", "region", "--simulation", "--out", str(out)]) == 0
    cfg = json.loads(out.read_text())["config"]
    for key in ("method", "epsilon", "delta", "rank", "lam", "mode", "seed", "max_iter", "test_fraction",
                "n_hidden", "aggregation", "server_weighting"):
        assert cfg[key] == getattr(dashboard, key) or str(cfg[key]) == str(getattr(dashboard, key)), key
    # a non-default run of the dashboard, written out as a command line, gives the same document
    changed = dashboard.replace(epsilon=1.0, rank=4, max_iter=30, lam=0.5, seed=3, simulation=True,
                                test_fraction=0.25, n_hidden=4)
    from dpfed_core.evaluation.experiments import make_split, run_method

    ref, _ = run_method(ds, changed, make_split(ds, changed))
    line = cli_command(changed, "sample:clinic", {"federation": "region"}, out=str(tmp_path / "c.json"))
    argv = shlex.split(line)[3:]  # after "python -m dpfed_core"
    assert argv[0] == "run" and main(argv) == 0, capsys.readouterr().err
    got = json.loads((tmp_path / "c.json").read_text())
    assert got["overall"] == pytest.approx(ref["overall"]) and got["config"]["max_iter"] == 30
    # and back: the CLI's document sets the dashboard's controls to the same values
    state = widget_state(got["config"])
    assert (state["fed_method"], state["fed_epsilon"], state["fed_rank"], state["fed_max_iter"], state["fed_lam"],
            state["fed_seed"], state["fed_secure"], state["fed_n_hidden"]) == \
        ("dp-cooccurrence", 1.0, 4, 30, 0.5, 3, True, 4)


def cli_sweep(line: str):
    """What ``sweep`` makes of a command line, through its own parser and steps: (args, data, the
    run settings every point starts from) — nothing computed, nothing charged."""
    import shlex

    from dpfed_core.cli.args import load_dataset
    from dpfed_core.cli.main import build_parser, check_sweep_args, sweep_config

    argv = shlex.split(line, comments=True)
    assert argv[:4] == ["python", "-m", "dpfed_core", "sweep"], argv
    args = build_parser("sweep").parse_args(argv[3:])
    check_sweep_args(args)
    dataset = load_dataset(args)
    return args, dataset, sweep_config(args, dataset)


#: Trade-off page settings: (data options, changes to the Federate page's run, method swept, ε grid text,
#: seeds text, reference lines, headline metric, "Allow non-private releases").
PAGE_SWEEPS = [
    ({}, {}, "dp-cooccurrence", "0.1, 0.3, 1, 3, 10, inf", "0, 1, 2",
     ["central", "individual", "local", "dp-popularity"], "mar", False),
    ({"federation": "region"}, dict(mode="observed", simulation=True, rank=4, lam=0.5, max_iter=30, k=7,
                                    server_weighting="counts", prototype_params={"trials": 2}),
     "dp-gaussian", "0.5, 2", "3, 11", ["local", "kmeans"], "test_rmse", True),
    ({}, dict(delta=1e-5, test_fraction=0.25, n_hidden=4, seed=5), "dp-popularity", "inf, 0.25", "7", [],
     "ndcg_at_10", False),
]


@pytest.mark.parametrize("options,changes,method,grid_text,seeds_text,refs,metric,allow", PAGE_SWEEPS)
def test_the_trade_off_pages_sweep_command_is_the_sweep_the_page_runs(options, changes, method, grid_text,
                                                                      seeds_text, refs, metric, allow):
    """The Trade-off page's "same sweep on the command line", read by the CLI's own parser and steps,
    is every run of the page's sweep — method, ε grid, seeds, references, mode, rank, δ, trust model,
    simulation — with the page's headline metric and its "Allow non-private releases"."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.ui import engine as dash

    ds = load_data("sample:clinic", **options)
    base = dash.default_config(ds).replace(**changes)     # the Federate page's last run
    config = dash.with_method(base, method)               # as the page makes it
    grid, seeds = dash.parse_grid(grid_text), dash.parse_seeds(seeds_text)
    line = dash.sweep_command(config, grid, seeds, refs, metric, "sample:clinic", options, allow_non_private=allow)
    assert "#" not in line, line                           # nothing left out
    args, cli_ds, cli_config = cli_sweep(line)
    assert dash.dataset_fingerprint(cli_ds) == dash.dataset_fingerprint(ds)
    assert (args.epsilons, args.seeds, args.references, args.metric) == (grid, seeds, refs, metric)
    assert args.allow_non_private is allow and args.out == "sweep.json"
    page_runs = dash.sweep_configs(config, grid, seeds, refs)
    assert dash.sweep_configs(cli_config, args.epsilons, args.seeds, args.references) == page_runs
    assert {r.mode for r in page_runs} == {config.mode} and len(page_runs) > len(grid) - 1


def test_a_sweep_command_says_the_reference_k_it_cannot_set():
    """A method without prototypes takes no --k, so its prototype references would run with the default
    k: the command says so instead of reproducing another sweep in silence."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.defaults import DEFAULT_K
    from dpfed_core.ui import engine as dash

    ds = load_data("sample:clinic")
    config = dash.default_config(ds).replace(k=DEFAULT_K + 3)
    line = dash.sweep_command(config, [1.0], [0, 1], ["local", "kmeans"], "mar", "sample:clinic", {})
    assert line.endswith(f"# not expressible as flags here: k = {DEFAULT_K + 3} of kmeans "
                         f"(this command runs it with k = {DEFAULT_K})"), line
    _, _, cli_config = cli_sweep(line)
    got = dash.sweep_configs(cli_config, [1.0], [0, 1], ["local", "kmeans"])
    want = dash.sweep_configs(config, [1.0], [0, 1], ["local", "kmeans"])
    assert [c.k for c in got if c.method == "kmeans"] == [DEFAULT_K] * 2 != [c.k for c in want if c.method == "kmeans"]
    assert "#" not in dash.sweep_command(config.replace(k=DEFAULT_K), [1.0], [0, 1], ["local", "kmeans"])


def test_every_method_starts_from_the_settings_the_federate_page_keeps_when_the_method_changes():
    """The page's controls keep ε, rank and the secure toggle when another method is chosen; a flag left
    out on the command line must give the same value for that method."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.defaults import default_config
    from dpfed_core.federation.protocol import is_summable
    from dpfed_core.methods import METHODS, available_methods

    ds = load_data("sample:clinic")
    page = default_config(ds)
    available_methods()
    for name, spec in METHODS.items():
        cfg = default_config(ds, name)
        assert cfg.rank == page.rank and cfg.delta == page.delta, name
        if spec.uses_epsilon:
            assert cfg.epsilon == page.epsilon, name
        assert cfg.aggregation == (page.aggregation if is_summable(name) else "none"), name


@pytest.mark.parametrize("extra,needles", [
    (["--method", "kmeans", "--epsilon", "1", "--aggregation", "secure"],
     ["--epsilon is not used by --method kmeans", "not a DP method", "--aggregation"]),
    (["--method", "dp-cooccurrence", "--k", "5"], ["--k is not used by --method dp-cooccurrence", "no k"]),
    (["--method", "dp-cooccurrence", "--server-weighting", "counts"], ["--server-weighting is not used"]),
    (["--param", "max_iter=100"], ["use --max-iter instead"]),
    (["--max-dropouts", "1", "--aggregation", "none"], ["applies to the secure aggregation of a summable method",
                                                        "or use --aggregation secure"]),
    (["--epsilon", "0"], ["ε must be a positive number", "[--epsilon]"]),
    (["--method", "dp-prototypes", "--k", "0"], ["k must be a positive whole number", "[--k]"]),
    (["--rank", "0"], ["rank must be a positive whole number", "[--rank]"]),
])
def test_a_flag_the_run_cannot_use_is_refused_naming_the_flag(capsys, extra, needles):
    assert main(["run", "--data", "sample:clinic", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and all(n in err for n in needles), err


def test_param_values_are_the_run_method_s_and_compared_methods_keep_their_defaults(tmp_path, capsys):
    """One rule for --param: the values belong to --method; a compared method without the key runs
    (it was refused) with its own defaults, and the output says so."""
    out = tmp_path / "r.json"
    assert main(["run", "--data", "sample:clinic", "--method", "dp-cooccurrence", "--param", "pop_share=0.3",
                 "--compare", "local,dp-popularity", "--simulation", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "pop_share=0.3 are dp-cooccurrence's; local, dp-popularity ran with their own defaults" in printed
    doc = json.loads(out.read_text())
    assert doc["config"]["prototype_params"] == {"pop_share": 0.3} or doc["config"]["prototype_params"] == {"pop_share": "0.3"}
    assert set(doc["comparison"]) == {"local", "dp-popularity"}
    # a misspelt key is still an error for the run's own method
    assert main(["run", "--data", "sample:clinic", "--method", "dp-cooccurrence", "--param", "pop_shar=0.3",
                 "--compare", "local", "--simulation"]) == 2
    err = capsys.readouterr().err
    assert "no parameter 'pop_shar'" in err and "[--param]" in err


def test_replacing_the_method_leaves_the_old_method_s_parameters_behind():
    from dpfed_core.config import RunConfig

    cfg = RunConfig(method="dp-cooccurrence", prototype_params={"pop_share": 0.3}, method_params={"max_items": 50})
    assert cfg.replace(method="dp-popularity").params == {}
    assert cfg.replace(method="dp-cooccurrence", epsilon=2.0).params == {"pop_share": 0.3, "max_items": 50}
    assert cfg.replace(epsilon=2.0).params == cfg.params
    assert cfg.replace(method="dp-popularity", prototype_params={"row_norm": 1.0}).params == {"row_norm": 1.0}


def test_audit_refuses_a_key_no_audited_method_declares_before_anything_is_charged(tmp_path, capsys):
    store = tmp_path / "budget.sqlite3"
    assert main(["audit", "--data", "sample:clinic", "--entity", "0", "--methods", "dp-cooccurrence",
                 "--param", "pop_shar=0.3", "--runs", "8", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert "'pop_shar'" in err and "dp-cooccurrence: " in err and "pop_share" in err and "[--param]" in err
    assert not store.exists()


def test_an_audit_of_a_mistyped_user_is_one_error_before_anything_is_charged(tmp_path, capsys):
    from dpfed_core.data.loaders import load_data

    ds = load_data("sample:clinic")
    first, other = ds.entity_names[0], ds.entity_names[1]
    stranger = str(ds.user_ids[ds.entity_slices()[1]][0])
    store = tmp_path / "budget.sqlite3"
    base = ["audit", "--data", "sample:clinic", "--entity", first, "--methods", "dp-popularity", "--epsilons", "1",
            "--store", str(store)]
    for target, said in (("user:nobody", f"no user with id 'nobody' in entity {first!r} (nor in any other)"),
                         (f"user:{stranger}", f"the user with id {stranger!r} is in entity {other!r}, not in "
                                              f"{first!r}")):
        for extra in ([], ["--dry-run"]):
            assert main([*base, "--targets", target, *extra]) == 2
            err = capsys.readouterr().err
            assert said in err and "[--targets]" in err, err
    assert not store.exists()  # nothing reserved, nothing logged as a failed release


def test_a_real_target_of_a_one_user_entity_is_refused_before_anything_is_charged(tmp_path, capsys):
    """An entity of one user has no outlier, typical or named user to audit against the others: the audit
    says so, naming the entity, its users and the flags that fix it, before it is planned, dry-run or
    reserved — the store gains no release, not even a failed non-private one (with --others data that
    one would be charged to every entity)."""
    import sqlite3
    from contextlib import closing

    csv = _toy_csv(tmp_path / "toy.csv", n_entities=2, users=20)
    solo = pd.DataFrame({"patient": ["solo0", "solo0"], "drug": ["item 1", "item 3"], "count": [2, 1],
                         "hospital": ["hospital solo", "hospital solo"]})
    pd.concat([pd.read_csv(csv), solo]).to_csv(csv, index=False)
    store = tmp_path / "budget.sqlite3"
    base = ["audit", "--data", str(csv), *TOY_ARGS, "--methods", "dp-popularity", "--epsilons", "1", "--runs", "8",
            "--store", str(store)]
    assert main([*base, "--entity", "hospital 0", "--targets", "synthetic"]) == 0  # a store with a release in it
    capsys.readouterr()

    def contents():
        with closing(sqlite3.connect(store)) as con:
            return list(con.iterdump())

    before = contents()
    for targets, extra in (("outlier", []), ("synthetic,typical", []), ("user:solo0", []), ("outlier", ["--dry-run"]),
                           ("outlier", ["--others", "data"])):
        assert main([*base, "--entity", "hospital solo", "--targets", targets, *extra]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
        assert "needs an entity with at least 2 users, and entity 'hospital solo' has 1:" in err, err
        assert "(--targets synthetic)" in err and "another entity (--entity)" in err, err
        assert contents() == before, (targets, extra)  # nothing reserved, charged or logged as failed
    assert main([*base, "--entity", "hospital solo", "--targets", "synthetic", "--dry-run"]) == 0


def test_progress_is_plain_lines_on_a_stderr_that_is_no_terminal(monkeypatch, capsys):
    """A log or a pipe gets no bar (tqdm draws none there): a line with the share done, the stage and
    the time left every PLAIN_PROGRESS_SECONDS instead, so a long run is never silent."""
    import importlib

    monkeypatch.setattr(importlib.import_module("dpfed_core.cli.args"), "PLAIN_PROGRESS_SECONDS", 0.0)
    assert main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--simulation"]) == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("run dp-popularity: ")]
    assert len(lines) >= 30  # one per event: 30 hospitals in round 1 and in round 2
    assert any("round 1" in ln for ln in lines) and any("round 2" in ln for ln in lines)
    assert all("%" in ln and "elapsed" in ln for ln in lines)


def test_list_and_number_flags_accept_their_whole_range_and_refuse_an_empty_entry():
    import argparse

    from dpfed_core.cli.args import MAX_SEED, float_list, parse_float, seed_list

    assert seed_list(f"0,{MAX_SEED}") == [0, MAX_SEED]
    with pytest.raises(argparse.ArgumentTypeError, match="from 0 to 2\\^63"):
        seed_list(f"{MAX_SEED + 1}")
    assert [parse_float(t) for t in ("inf", "+inf", "Infinity", "∞")] == [np.inf] * 4
    with pytest.raises(argparse.ArgumentTypeError, match="finite number or the word 'inf'"):
        parse_float("1e400")
    assert float_list("0.5, 1,inf") == [0.5, 1.0, np.inf]
    with pytest.raises(argparse.ArgumentTypeError, match="an empty entry between commas"):
        float_list("1,,2")


def test_param_values_are_typed_as_written():
    from dpfed_core.cli.args import parse_params

    got = parse_params(["a=True", "b=FALSE", "c=3", "d=0.5", "e=none", "f=catalogue:0.2", "max-items=7"])
    assert got == {"a": True, "b": False, "c": 3, "d": 0.5, "e": None, "f": "catalogue:0.2", "max_items": 7}
    assert type(got["c"]) is int and got["a"] is True


def test_run_settings_at_their_limits_are_accepted_and_beyond_them_named(capsys):
    from dpfed_core.cli.args import run_config
    from dpfed_core.cli.main import build_parser
    from dpfed_core.config import MAX_LAM
    from dpfed_core.data.loaders import load_data

    ds = load_data("sample:synthetic")
    parse = build_parser("run").parse_args
    cfg = run_config(parse(["run", "--data", "x", "--method", "dp-cooccurrence", "--lam", f"{MAX_LAM:g}",
                            "--rank", str(ds.n_items), "--delta", "1e-7"]), ds)
    assert (cfg.lam, cfg.rank, cfg.delta) == (MAX_LAM, ds.n_items, 1e-7)
    with pytest.raises(DpfedError, match=f"--rank {ds.n_items + 1} is more than the data allows: at most {ds.n_items}"):
        run_config(parse(["run", "--data", "x", "--method", "kmeans", "--rank", str(ds.n_items + 1)]), ds)
    assert main(["run", "--data", "sample:synthetic", "--method", "kmeans", "--delta", "1e-6"]) == 2
    err = capsys.readouterr().err
    assert "--delta is not used by --method kmeans" in err and "not a DP method" in err


def test_a_run_draws_production_noise_unless_simulation_is_asked_and_keeps_each_setting_given():
    """Seeded noise only where --simulation is written: a run without it draws from the operating
    system's entropy (its config says so, and the ledger labels follow it); --top-n and
    --server-weighting reach the run as given."""
    from dpfed_core.cli.args import run_config
    from dpfed_core.cli.main import build_parser
    from dpfed_core.data.loaders import load_data

    ds = load_data("sample:synthetic")
    parse = build_parser("run").parse_args
    production = run_config(parse(["run", "--data", "x", "--method", "dp-gaussian"]), ds)
    assert production.simulation is False
    assert run_config(parse(["run", "--data", "x", "--method", "dp-gaussian", "--simulation"]), ds).simulation is True
    given = run_config(parse(["run", "--data", "x", "--method", "dp-gaussian", "--top-n", "7",
                              "--server-weighting", "counts"]), ds)
    assert (given.top_n, given.server_weighting) == (7, "counts")
    assert (production.top_n, production.server_weighting) != (7, "counts")


def test_write_shards_splits_with_the_seed_it_is_given(tmp_path, capsys):
    from dpfed_core.config import RunConfig
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.experiments import make_split

    assert main(["write-shards", "--data", "sample:synthetic", "--seed", "5", "--out-dir", str(tmp_path)]) == 0
    ds = load_data("sample:synthetic")
    split = make_split(ds, RunConfig(seed=5))
    sl = ds.entity_slices()[0]
    with np.load(tmp_path / "entity_000.npz") as shard:
        got = shard["test_users"].tolist()
    want = [int(u) - sl.start for u in split.test_users if sl.start <= u < sl.stop]
    assert got == want and got != [int(u) - sl.start for u in make_split(ds, RunConfig(seed=0)).test_users
                                   if sl.start <= u < sl.stop]
    assert f"{ds.entity_names[0]}: " in capsys.readouterr().out


def test_a_site_writes_the_shard_of_its_own_export_at_its_place_in_the_declared_federation(tmp_path, capsys):
    """The documented step of a real site: its export names its one entity; --declared-entities places it in
    the federation (a federation of one entity is no federation only when nothing else declares it). Only its
    own shard is written; a list without its name, or an export holding an entity the list lacks, is one
    error naming --declared-entities, with nothing written."""
    from dpfed_core.deployment.shards import load_shard

    export = tmp_path / "site-b.csv"
    export.write_text("bank,customer,product,count\n" + "".join(
        f"site-b,c{u},{p},{1 + (u + j) % 3}\n" for u in range(2) for j, p in enumerate(["Crédit Ünï", "Savings|Plus"])),
        encoding="utf-8")
    base = ["write-shards", "--data", str(export), "--entity-col", "bank", "--user-col", "customer", "--item-col",
            "product", "--value-col", "count", "--value-max", "5"]
    out = tmp_path / "shards"
    assert main([*base, "--out-dir", str(out), "--declared-entities", "site-a,site-b,site-c"]) == 0, \
        capsys.readouterr().err
    assert f"site-b: {out / 'entity_001.npz'}" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == ["entity_001.npz"]
    shard = load_shard(out / "entity_001.npz")
    assert (shard.entity, shard.index, shard.n_entities) == ("site-b", 1, 3)
    assert shard.train.shape[0] == 2 and sorted(shard.item_names) == ["Crédit Ünï", "Savings|Plus"]
    for declared, what in (("site-a,Site-B,site-c", "no row belongs to a declared entity"),
                           ("site-b", "leaves one entity ('site-b')")):
        bad = tmp_path / f"bad-{declared}"
        assert main([*base, "--out-dir", str(bad), "--declared-entities", declared]) == 2
        err = capsys.readouterr().err
        assert what in err and "fix --declared-entities" in err and "Traceback" not in err, err
        assert "one name per line" not in err, err  # a comma-separated flag, not a list file
        assert not bad.exists() or not list(bad.iterdir())
    two = tmp_path / "two.csv"
    two.write_text(export.read_text(encoding="utf-8") + "site-x,c9,Mortgage,1\n", encoding="utf-8")
    bad = tmp_path / "bad-undeclared"
    assert main([*base[:2], str(two), *base[3:], "--out-dir", str(bad), "--declared-entities", "site-a,site-b"]) == 2
    err = capsys.readouterr().err
    assert "1 row (" in err and "not in the declared entity list ('site-x')" in err, err
    assert "fix --declared-entities" in err and "Traceback" not in err, err
    assert not bad.exists() or not list(bad.iterdir())


def test_write_shards_names_the_files_of_an_earlier_export_it_leaves_in_its_folder(tmp_path, capsys):
    """A folder written to twice keeps what the second export does not replace: the 30 hospitals' shards
    under the 4 regions' four. The second export says so and which export they are from; a first export
    into an empty folder says nothing of the kind."""
    out = tmp_path / "shards"
    assert main(["write-shards", "--data", "sample:clinic", "--out-dir", str(out)]) == 0
    assert "also holds" not in capsys.readouterr().err
    assert main(["write-shards", "--data", "sample:clinic", "--federation", "region", "--out-dir", str(out)]) == 0
    err = capsys.readouterr().err
    assert "also holds 26 shard file(s) this export did not write (entity_004.npz" in err, err
    assert "26 of them from another export" in err and "empty --out-dir" in err, err
    assert len(list(out.glob("entity_*.npz"))) == 30  # nothing of the user's is removed


def test_the_report_never_writes_over_a_document_it_reads(tmp_path, capsys):
    docs = {flag: tmp_path / f"{flag}.json" for flag in ("run", "sweep", "audit")}
    for p in docs.values():
        p.write_text("{}")
    for flag, path in docs.items():
        argv = ["report", *[a for f, p in docs.items() for a in (f"--{f}", str(p))], "--out", str(path)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"--{flag}" in err and path.read_text() == "{}", err


def test_an_error_names_the_flag_that_fixes_it_and_the_k_note_reads_the_runs_own_cluster_size():
    from dpfed_core.cli.main import _k_note, render_error
    from dpfed_core.config import RunConfig
    from dpfed_core.errors import ConfigError

    assert render_error(ConfigError("must be positive", param="epsilon")) == "must be positive [--epsilon]"
    assert render_error(ConfigError("--epsilon must be positive", param="epsilon")) == "--epsilon must be positive"
    assert "clip(⌊n̂ / 50⌋, 1, 10)" in _k_note(RunConfig(method="dp-gaussian", k=10,
                                                          prototype_params={"cluster_size": 50}))
    assert "clip(⌊n̂ / 1000⌋, 1, 10)" in _k_note(RunConfig(method="dp-gaussian", k=10))


def test_the_cli_and_the_federate_page_call_k_a_maximum_in_the_same_cases():
    """One rule: a private prototype method with a cluster size and k above 1 picks each entity's k
    from its noisy size; the CLI's note and the Federate page's caption appear exactly then."""
    from dpfed_core.cli.main import _k_note
    from dpfed_core.config import RunConfig
    from dpfed_core.federation.prototypes import PROTOTYPE_METHODS
    from dpfed_core.ui.catalogue import k_note

    seen = set()
    for method in PROTOTYPE_METHODS:
        for k in (1, 2, 5):
            for params in ({}, {"cluster_size": None}, {"cluster_size": 50.0}):
                config = RunConfig(method=method, k=k, prototype_params=params)
                cli, page = _k_note(config), k_note(method, config)
                assert bool(cli) == ("maximum" in page), (method, k, params, cli, page)
                expected = (PROTOTYPE_METHODS[method](k=k, value_max=1.0).private and k > 1
                            and params.get("cluster_size", 0) is not None)
                assert bool(cli) == expected, (method, k, params, cli)
                seen.add(expected)
    assert seen == {True, False}


def test_the_run_table_states_each_methods_ledger_epsilon_and_overall_numbers(capsys):
    """A row of the run's table is the method's own document: the ε its ledger guarantees (which may
    be below the request) and its overall metrics — never the request, never one entity's values."""
    keys = ["mar", "test_rmse", "train_rmse", "precision_at_10", "recall_at_10", "ndcg_at_10"]
    overall = dict(zip(keys, [0.1234, 1.5, 0.75, 0.2, 0.3, 0.4]))
    entity = dict(zip(keys, [0.4321, 9.0, 9.0, 0.9, 0.9, 0.9]))
    doc = {"privacy": {"epsilon": 0.62, "requested_epsilon": 1.0}, "overall": overall,
           "entities": [{"name": "A", **entity}]}
    from dpfed_core.cli.main import _print_table

    _print_table({"dp-gaussian": doc}, 10)
    row = capsys.readouterr().out.splitlines()[1].split()
    assert row[:3] == ["dp-gaussian", "0.62", "0.1234"]
    assert [float(x) for x in row[2:]] == [overall[k] for k in keys]
    # rounded up as the dashboard and the report state it, never below what holds
    _print_table({"dp-gaussian": {**doc, "privacy": {"epsilon": 0.92031}}, "local": {**doc, "privacy": {"epsilon": 0}},
                  "central": {**doc, "privacy": {"epsilon": float("inf")}}}, 10)
    rows = [line.split()[:2] for line in capsys.readouterr().out.splitlines()[1:]]
    assert rows == [["dp-gaussian", "0.9204"], ["local", "0"], ["central", "∞"]]


def test_a_sweep_says_when_its_method_does_not_beat_dp_popularity_inconclusive_included(tmp_path, capsys):
    """Against the DP popularity list the sweep prints every ε where the method does not beat it, an
    inconclusive one (one seed: no spread to judge by) as much as a loss."""
    csv = _toy_csv(tmp_path / "toy.csv")
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "dp-cooccurrence", "--rank", "3",
                 "--epsilons", "1", "--seeds", "0", "--references", "dp-popularity", "--simulation"]) == 0
    out = capsys.readouterr().out
    assert "ε = 1: dp-cooccurrence inconclusive (" in out, out


def test_a_terminated_run_unwinds_as_an_interrupted_one_its_charge_kept_and_marked_failed(tmp_path, capsys,
                                                                                         monkeypatch):
    """SIGTERM (a scheduler's stop, `kill`) during a charged run: one line on stderr, exit 130, the release
    closed as failed in the store (never left 'reserved'), no output file, and the handler put back."""
    import os
    import signal

    from dpfed_core.evaluation import experiments
    from dpfed_core.privacy.odometer import BudgetOdometer

    real = experiments.run_method

    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(experiments, "run_method", terminated)
    before = signal.getsignal(signal.SIGTERM)
    store, out = tmp_path / "s.sqlite3", tmp_path / "r.json"
    rc = main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilon", "1", "--store", str(store),
               "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 130 and err.startswith("interrupted:") and "stays charged, marked failed" in err, err
    # it names the budget show that lists that release: this run's data flags and store
    assert (f"(`python -m dpfed_core budget show --data sample:clinic --store {store}` lists it)" in err), err
    assert signal.getsignal(signal.SIGTERM) is before and not out.exists()
    (ds,) = BudgetOdometer(store).datasets()
    assert [r["status"] for r in BudgetOdometer(store).releases(ds["key"])] == ["failed"]


def test_a_method_list_and_a_document_of_the_wrong_kind_are_named_by_their_flags(tmp_path, capsys):
    """An unknown method is named by the list it came from (a run's --compare, a sweep's --references),
    and a report given a run as its sweep or audit by that flag."""
    csv = _toy_csv(tmp_path / "toy.csv")
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--compare", "local,bogus"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("[--compare]")
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--seeds", "0",
                 "--references", "local,bogus"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("[--references]")
    run = tmp_path / "r.json"
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--out", str(run)]) == 0
    capsys.readouterr()
    for flag, needle in (("--sweep", "no 'runs'"), ("--audit", "not a `python -m dpfed_core audit` result")):
        out = tmp_path / "rep.html"
        assert main(["report", "--run", str(run), flag, str(run), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert needle in err and err.rstrip().endswith(f"[{flag}]") and not out.exists(), err


def test_hidden_entries_above_every_users_entries_say_the_largest_value_that_draws_test_users(tmp_path, capsys):
    assert main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--n-hidden", "1000",
                 "--store", str(tmp_path / "s.sqlite3"), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "no entity will have a test user" in err and "lower --n-hidden to at most 78" in err, err
    assert "--test-fraction" not in err.split("undefined:")[1]


def test_a_sweep_whose_entities_will_have_no_test_user_says_so_before_it_is_charged(tmp_path, capsys):
    """Every point of such a sweep would be charged with no metric to compare: the warning a run gives,
    with the flag that fixes it, comes before the dry run's plan (and before any charge)."""
    assert main(["sweep", "--data", "sample:clinic", "--method", "dp-popularity", "--n-hidden", "1000",
                 "--epsilons", "1", "--seeds", "0", "--references", "", "--store", str(tmp_path / "s.sqlite3"),
                 "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: ") and "no entity will have a test user" in err, err
    assert "lower --n-hidden to at most 78" in err, err


def test_a_grid_for_a_method_without_epsilon_and_a_negative_grid_are_named(tmp_path, capsys):
    assert main(["sweep", "--data", "sample:clinic", "--method", "local", "--epsilons", "1", "--seeds", "0",
                 "--store", str(tmp_path / "s.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "--epsilons is not used by --method local" in err, err
    # a value starting with a minus reaches its own check instead of argparse's "expected one argument"
    assert main(["sweep", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilons", "-1,3",
                 "--seeds", "0", "--store", str(tmp_path / "s.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert "must be positive" in err and "[--epsilons]" in err and "expected one argument" not in err, err
    assert main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilon", "-2"]) == 2
    assert "ε must be a positive number" in capsys.readouterr().err


def test_an_unknown_method_is_tagged_with_the_flag_that_named_it(capsys):
    for flag in ("--method", "--compare"):
        assert main(["run", "--data", "sample:clinic", flag, "nosuch"]) == 2
        err = capsys.readouterr().err
        assert err.count("error:") == 1 and "unknown method 'nosuch'" in err and err.rstrip().endswith(f"[{flag}]")


@pytest.mark.parametrize("argv", [
    ["run", "--data", "{table}", "--method", "dp-popularity"],
    ["sweep", "--data", "{table}", "--method", "dp-popularity", "--epsilons", "1", "--seeds", "0", "--references", ""],
    ["budget", "show", "--data", "{table}"],
    ["audit", "--data", "{table}", "--entity", "a"],
])
def test_a_table_given_as_the_store_is_the_one_line_said_and_left_untouched(tmp_path, capsys, argv):
    """A table without a declared catalogue says its catalogue forecast first: the store's check comes
    before it, once, and the table is not changed."""
    table = tmp_path / "orders.csv"
    rows = ["site,patient,drug"] + [f"s{i % 3},p{i},d{i % 7}" for i in range(60)]
    table.write_text("\n".join(rows) + "\n")
    before = table.read_bytes()
    argv = [a.replace("{table}", str(table)) for a in argv]
    assert main([*argv, "--store", str(table)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and err.startswith("error: ") and "not a dpfed store" in err, err
    assert "--store" in err and table.read_bytes() == before


def test_a_store_path_naming_a_directory_is_the_one_line_said(tmp_path, capsys):
    """Said before the data are loaded: no planning line (the catalogue's forecast) comes first."""
    assert main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--store", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and err.startswith("error: ") and "is a directory" in err, err
    assert err.rstrip().endswith("[--store]")


def test_an_explicit_duplicates_rule_is_applied_or_refused_never_ignored(tmp_path, capsys):
    """Counts add up by default; --duplicates error stops at a repeat of counts too; a ratings rule
    given for counts is refused by name instead of being silently replaced by the sum."""
    table = tmp_path / "dup.csv"
    rows = ["site,patient,drug,count"] + [f"s{i % 3},p{i},d{i % 5},1" for i in range(30)] + ["s0,p0,d0,2"]
    table.write_text("\n".join(rows) + "\n")
    base = ["run", "--data", str(table), "--user-col", "patient", "--item-col", "drug", "--value-col", "count",
            "--entity-col", "site", "--entities-from-data", "--value-max", "5", "--rank", "1", "--simulation",
            "--method", "local", "--dry-run"]
    assert main(base) == 0
    assert main([*base, "--duplicates", "error"]) == 2
    err = capsys.readouterr().err
    assert "user 'p0' has item 'd0' more than once" in err and "repeated rows of counts are then added up" in err, err
    assert main([*base, "--duplicates", "last"]) == 2
    err = capsys.readouterr().err
    assert "merges repeated ratings; repeated rows of counts always add up" in err and "--duplicates" in err, err
    assert main([*base, "--duplicates", "sum"]) == 0  # the counts' own rule, said explicitly


@pytest.mark.parametrize("fraction", ["0", "1"])
def test_a_test_fraction_at_either_end_says_the_bounds_are_excluded(capsys, fraction):
    assert main(["run", "--data", "sample:clinic", "--test-fraction", fraction, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --test-fraction {fraction} must be strictly between 0 and 1"), err


def test_a_sweeps_line_against_dp_popularity_states_the_methods_mean_first_as_its_document_does(tmp_path, capsys):
    """"ε = 1: dp-cooccurrence inconclusive (0.2134 vs 0.2456)": the swept method's mean, then the DP popularity
    list's — the two figures of the document's row, in the order the sentence names them."""
    csv = _toy_csv(tmp_path / "toy.csv")
    out = tmp_path / "s.json"
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "dp-cooccurrence", "--rank", "3",
                 "--epsilons", "1", "--seeds", "0", "--references", "dp-popularity", "--simulation",
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    row = json.loads(out.read_text())["versus_dp_popularity"]["mar"][0]
    assert f"{row['mean']:.4f}" != f"{row['dp_popularity_mean']:.4f}"
    assert (f"ε = 1: dp-cooccurrence {row['verdict']} ({row['mean']:.4f} vs {row['dp_popularity_mean']:.4f})"
            in printed), printed


def test_a_sweep_prints_every_note_of_its_document(tmp_path, capsys):
    """A sweep states the notes its document keeps (here: --k is a maximum for dp-gaussian's automatic k), as
    a run does: the terminal says what the document says."""
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.errors import render_message

    csv = _toy_csv(tmp_path / "toy.csv")
    out = tmp_path / "s.json"
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "dp-gaussian", "--k", "4", "--rank", "3",
                 "--epsilons", "1", "--seeds", "0", "--references", "local", "--simulation", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    notes = json.loads(out.read_text()).get("notes") or []
    assert any("treats --k 4 as a maximum" in n for n in notes), notes
    for n in notes:
        assert f"note: {render_message(n, CLI_NAMES)}" in printed, (n, printed)


def test_the_dashboards_command_line_writes_every_setting_the_run_used_and_none_it_did_not():
    import math

    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.defaults import cli_command, sweep_command

    secure = {"method": "dp-cooccurrence", "epsilon": 2.0, "delta": 1e-6, "rank": 3, "seed": 4,
              "aggregation": "secure", "max_dropouts": 1, "method_params": {"pop_share": None}}
    line = cli_command(secure, "d.csv", {"headerless": True, "drop_missing": False})
    assert "--aggregation secure" in line and "--max-dropouts 1" in line and "--param pop_share=none" in line
    assert "--epsilon 2 --delta 1e-06" in line and " --no-header " in line
    assert "--drop-missing" not in line and "True" not in line and "False" not in line
    proto = cli_command({"method": "dp-gaussian", "epsilon": 1.0, "k": 4, "prototype_params": {"split": 0.3}}, "d.csv")
    assert "--k 4" in proto and "--param split=0.3" in proto and "--server-weighting none" in proto
    local = cli_command({"method": "local", "epsilon": math.inf, "rank": 3, "seed": 4}, "d.csv")
    assert "--epsilon" not in local and "--delta" not in local and "--aggregation" not in local
    # a sweep sets ε and the seed for each of its runs: the run's own are not written beside its grid
    sweep = cli_command(secure, "d.csv", command="sweep", per_point=("epsilon", "seed"))
    assert "--epsilon " not in sweep and "--seed" not in sweep and "--delta 1e-06" in sweep and "--rank 3" in sweep
    assert "--epsilons" not in sweep_command(RunConfig(method="local"), [1.0], [0, 1], ["dp-popularity"], "mar", "d.csv")
    # every digit of a typed ε, δ or λ: the line spends the budget the page did, not one rounded to 6 digits
    typed = cli_command({"method": "dp-cooccurrence", "epsilon": 0.1234567, "delta": 1.23456789e-7,
                         "lam": 0.123456789}, "d.csv")
    assert "--epsilon 0.1234567 --delta 1.23456789e-07" in typed and "--lam 0.123456789" in typed


def test_a_flag_whose_value_starts_with_a_minus_is_told_to_take_it_attached(capsys):
    """argparse reads ``--user-col -A`` as a flag without its value: the one error line says how to give
    such a value (attached), naming the flag."""
    assert main(["run", "--data", "sample:clinic", "--user-col", "-A"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: argument --user-col") and err.count("\n") == 1, err
    assert "a value that starts with '-' is written attached, --user-col=VALUE" in err, err


def test_the_trust_note_names_the_aggregation_flag_only_when_the_run_sets_it(tmp_path, capsys):
    """The summable methods of a table run under the run's trust model: a summable run's note names
    --aggregation, the flag that changes it; a run of another method has no such flag to name."""
    common = ["run", "--data", "sample:clinic", "--simulation", "--store", str(tmp_path / "s.sqlite3")]
    assert main([*common, "--method", "dp-popularity", "--aggregation", "none", "--epsilon", "1",
                 "--compare", "popularity"]) == 0
    (note,) = [ln for ln in capsys.readouterr().out.splitlines() if "ran without secure aggregation" in ln]
    assert note.startswith("note: dp-popularity ran") and note.endswith("(--aggregation)"), note
    assert main([*common, "--method", "popularity", "--compare", "dp-popularity"]) == 0
    (note,) = [ln for ln in capsys.readouterr().out.splitlines() if "secure aggregation" in ln]
    assert note.startswith("note: dp-popularity ran") and "--aggregation" not in note, note


@pytest.mark.parametrize("command", ["run", "deploy-local"])
def test_a_runs_output_never_overwrites_a_list_it_reads_whatever_its_name(tmp_path, capsys, command):
    """--out naming the declared entity list (a .json name passes the suffix check) is refused before any
    work, naming both flags, and the list is left as it was."""
    csv = _toy_csv(tmp_path / "toy.csv")
    ents = tmp_path / "entities.json"
    ents.write_text("hospital 0\nhospital 1\nhospital 2\n")
    before = ents.read_bytes()
    assert main([command, "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "3", "--rank", "2",
                 "--entities", str(ents), "--out", str(ents)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out") and "--entities" in err and err.count("\n") == 1, err
    assert ents.read_bytes() == before


def test_a_verdict_is_said_of_a_federation_never_of_an_entity_alone(tmp_path, capsys):
    """The verdict line compares the federation with each entity alone: a run of an entity-alone method
    compared with the other has no federation to judge, so no verdict line."""
    common = ["run", "--data", "sample:clinic", "--store", str(tmp_path / "s.sqlite3")]
    assert main([*common, "--method", "local", "--compare", "individual"]) == 0
    assert "verdict:" not in capsys.readouterr().out
    assert main([*common, "--method", "popularity", "--compare", "local"]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("verdict: ")]
    assert "the federation is" in line, line


@pytest.mark.parametrize("grid,flag", [(["--epsilons", "1,1", "--seeds", "0"], "--epsilons"),
                                       (["--epsilons", "1", "--seeds", "0,1,0"], "--seeds")])
def test_a_sweep_grid_that_repeats_a_value_is_refused_naming_its_flag_before_the_data_is_read(tmp_path, capsys,
                                                                                             grid, flag):
    store = tmp_path / "s.sqlite3"
    assert main(["sweep", "--data", str(tmp_path / "absent.csv"), "--method", "dp-popularity", *grid,
                 "--references", "", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {flag} repeats") and err.count("\n") == 1, err
    assert not store.exists()


def test_a_sweep_metric_that_is_not_one_is_refused_listing_the_metrics_of_its_top_n(tmp_path, capsys):
    store = tmp_path / "s.sqlite3"
    assert main(["sweep", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilons", "1", "--seeds", "0",
                 "--references", "", "--top-n", "5", "--metric", "precision_at_10", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --metric 'precision_at_10' is not a metric") and err.count("\n") == 1, err
    assert "precision_at_5, recall_at_5, ndcg_at_5" in err and "internal error" not in err, err
    assert not store.exists()


def test_a_param_given_twice_or_malformed_is_refused_and_none_is_read_in_any_case():
    from dpfed_core.cli.args import parse_params

    assert parse_params(["cluster_size=None", "support=NONE"]) == {"cluster_size": None, "support": None}
    for items in (["support=2", "support=3"], ["max-items=2", "max_items=3"]):
        with pytest.raises(DpfedError, match="is given more than once"):
            parse_params(items)
    for bad in ("support", "=3"):
        with pytest.raises(DpfedError, match="--param expects KEY=VALUE"):
            parse_params([bad])
    for bad in ("1_0", "1,5", "1e400", "nan"):
        with pytest.raises(DpfedError, match="not a number as written"):
            parse_params([f"support={bad}"])


@pytest.mark.parametrize("extra,needle", [
    (["--encoding", "klingon"], "--encoding 'klingon' is not a known text encoding"),
    (["--k", "100000"], "--k 100000 is above"),
    (["--top-n", "100000"], "--top-n 100000 is more than the"),
])
def test_a_setting_beyond_what_the_machine_or_the_data_allows_is_refused_naming_its_flag(tmp_path, capsys, extra,
                                                                                        needle):
    csv = _toy_csv(tmp_path / "toy.csv")
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--rank", "2", *extra,
                 "--store", str(tmp_path / "s.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1, err
    assert "internal error" not in err and not (tmp_path / "s.sqlite3").exists()


def test_a_runs_output_never_names_the_item_features_it_reads(tmp_path, capsys):
    csv = _toy_csv(tmp_path / "toy.csv")
    drugs = sorted(pd.read_csv(csv)["drug"].astype(str).unique())
    features = tmp_path / "features.json"
    features.write_text("drug,class\n" + "".join(f"{d},{'ab'[i % 2]}\n" for i, d in enumerate(drugs)))
    before = features.read_bytes()
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "3", "--rank", "2",
                 "--item-features", str(features), "--store", str(tmp_path / "s.sqlite3"), "--out", str(features)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --out") and "--item-features" in err and err.count("\n") == 1, err
    assert features.read_bytes() == before


def test_the_method_list_shows_each_methods_parameters_only_when_asked(capsys):
    assert main(["methods"]) == 0
    plain = capsys.readouterr().out
    assert "dp-cooccurrence" in plain and "--param" not in plain and "privacy:" not in plain
    assert main(["methods", "--params"]) == 0
    full = capsys.readouterr().out
    assert full.startswith(plain.splitlines()[0]) and "--param " in full and ", default " in full


def test_a_runs_statement_prints_every_note_and_the_settings_line_of_its_document(tmp_path, capsys):
    """Each note of the run's document is printed with the flags of its settings, the settings line is the
    report's, and a warning tagged with a setting names the flag that fixes it."""
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.cli.main import print_run_statement
    from dpfed_core.errors import render_message
    from dpfed_core.reporting.paper import paper_differences_text

    out_json = tmp_path / "r.json"
    assert main(["run", "--data", "sample:clinic", "--method", "dp-gaussian", "--k", "3", "--epsilon", "1",
                 "--simulation", "--store", str(tmp_path / "s.sqlite3"), "--out", str(out_json)]) == 0
    lines = capsys.readouterr().out.splitlines()
    doc = json.loads(out_json.read_text())
    assert doc["notes"] and all(f"note: {render_message(n, CLI_NAMES)}" in lines for n in doc["notes"])
    assert f"settings: {paper_differences_text(doc['config'], doc)}" in lines
    print_run_statement({**doc, "notes": [], "privacy": {},
                         "warnings": [{"text": "no item was shared at this budget", "param": "epsilon"}]})
    assert "warning: no item was shared at this budget [--epsilon]" in capsys.readouterr().out.splitlines()


def test_a_sites_refusal_keeps_its_policy_keys_where_a_coordinator_error_names_flags():
    """A deployment's error carries the sites' own words: a policy key such as max_dropouts stays as the
    policy file writes it; the coordinator's own error of the same text names the flag."""
    from dpfed_core.cli.main import render_error
    from dpfed_core.errors import ConfigError, DeploymentError

    text = "site 'a' refused the run: max_dropouts = 2 is above its policy's max_dropouts = 1"
    assert render_error(DeploymentError(text)) == text
    assert render_error(ConfigError(text)) == text.replace("max_dropouts", "--max-dropouts")


def test_a_stray_number_after_a_value_given_attached_is_named_as_itself():
    """Only a flag still waiting for its value takes a following negative number: after --epsilon=1 a
    stray -2 is an argument of its own, said so, never glued onto the value before it."""
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["run", "--data", "sample:clinic", "--method", "dp-popularity", "--epsilon=1", "-2"]) == 2
    assert err.getvalue().startswith("error: unrecognized arguments: -2"), err.getvalue()


@pytest.mark.parametrize("exc,said", [
    (PermissionError(13, "Permission denied", "/data/r.json"), "error: could not read or write /data/r.json: "
                                                               "Permission denied"),
    (MemoryError(), "error: out of memory; use a smaller dataset, --rank or --k"),
    (RecursionError(), "error: an input is nested too deeply to read"),
    (KeyError("mar"), "error: internal error KeyError: 'mar' — a bug in dpfed, not in your input"),
])
def test_whatever_escapes_a_command_is_one_error_line_never_a_traceback(monkeypatch, capsys, exc, said):
    import importlib

    def failing(args):
        raise exc

    monkeypatch.setattr(importlib.import_module("dpfed_core.cli.main"), "cmd_methods", failing)
    assert main(["methods"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1, err


@pytest.mark.parametrize("flag", ["--epsilons", "--seeds"])
def test_an_empty_grid_is_refused_naming_its_flag(tmp_path, capsys, flag):
    grid = {"--epsilons": "1", "--seeds": "0", flag: " "}
    assert main(["sweep", "--data", "sample:clinic", "--method", "dp-popularity", "--references", "",
                 *[a for f, v in grid.items() for a in (f, v)], "--store", str(tmp_path / "s.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: argument {flag}: expected comma-separated") and err.count("\n") == 1, err
    assert not (tmp_path / "s.sqlite3").exists()


def test_a_count_starts_at_one_and_a_noise_shrink_factor_is_above_one():
    import argparse

    from dpfed_core.cli.args import positive_whole_number, shrink_factor

    assert positive_whole_number("1") == 1 and shrink_factor("1.5") == 1.5
    for parse, text in ((positive_whole_number, "0"), (shrink_factor, "1"), (shrink_factor, "inf")):
        with pytest.raises(argparse.ArgumentTypeError, match=repr(text)):
            parse(text)



@pytest.mark.parametrize("command,flag,bad,needle", [
    ("deploy-local", "--round-timeout", "nan", "expected a number of seconds > 0"),
    ("deploy-local", "--round-timeout", "-5", "expected a number of seconds > 0"),
    ("deploy-local", "--round-timeout", "0", "expected a number of seconds > 0"),
    ("deploy-local", "--round-timeout", "inf", "expected a number of seconds > 0"),
    ("deploy-local", "--round-timeout", "1_0", "expected a number of seconds > 0"),
    ("audit", "--delta", "1_0", "expected a number"),
    ("audit", "--delta", "nan", "expected a number"),
    ("audit", "--confidence", "nan", "expected a number"),
    ("audit", "--k", "1_0", "expected a whole number"),
    ("audit", "--runs", "2_00", "expected a whole number"),
    ("audit", "--max-dropouts", "1_0", "expected a whole number"),
])
def test_a_number_flag_written_in_no_plain_decimal_or_out_of_range_is_refused_before_anything_starts(
        tmp_path, capsys, command, flag, bad, needle):
    # a server that waited nan or -5 s would never give up or give up before any node answered, after the
    # whole deployment had started; '1_0' is Python's 10, never what a user meant as a number
    store = tmp_path / "s.sqlite3"
    # an audit read wrongly would only print its plan (--dry-run), never run its releases
    dry = ["--dry-run"] if command == "audit" else []
    assert main([command, "--data", "sample:clinic", "--federation", "region", flag, bad, *dry,
                 "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: argument {flag}: {needle}") and repr(bad) in err, err
    assert err.count("\n") == 1 and not store.exists(), err


def test_a_deployment_given_a_round_timeout_no_server_can_wait_is_refused_before_it_starts(tmp_path):
    pytest.importorskip("flwr")
    from dpfed_core.cli.args import CLI_NAMES
    from dpfed_core.config import RunConfig
    from dpfed_core.data.samples import load_sample
    from dpfed_core.deployment.deployed import run_deployed
    from dpfed_core.ui.inputs import CONTROL_NAMES

    ds = load_sample("clinic", federation="region")
    cfg = RunConfig(method="dp-popularity", epsilon=1.0)
    for bad in (float("nan"), -5.0, 0.0, float("inf")):
        with pytest.raises(DpfedError) as err:
            run_deployed(ds, cfg, workdir=tmp_path, round_timeout=bad)
        assert err.value.param == "round_timeout" and "number of seconds > 0" in str(err.value)
        # each front end names its own control
        assert "--round-timeout" in err.value.render(CLI_NAMES)
        assert "Round timeout (s)" in err.value.render(CONTROL_NAMES)
    assert not any(tmp_path.iterdir())


def test_an_undefined_metric_is_printed_as_a_dash_never_nan(capsys):
    """A metric no test user measured is undefined: the run's table prints —, as the sweep's table and
    the report do, never 'nan' (nor fails on a metric read back as null)."""
    from dpfed_core.cli.main import _print_table

    nan = float("nan")
    doc = {"privacy": {"epsilon": 1.0}, "overall": {"mar": nan, "test_rmse": None, "train_rmse": 0.66,
                                                    "precision_at_5": nan, "recall_at_5": nan, "ndcg_at_5": 0.25}}
    _print_table({"dp-popularity": doc}, 5)
    head, row = capsys.readouterr().out.splitlines()
    assert head.split()[-3:] == ["precision_at_5", "recall_at_5", "ndcg_at_5"]
    assert row.split() == ["dp-popularity", "1", "—", "—", "0.6600", "—", "—", "0.2500"]


@pytest.mark.parametrize("method,params,stage,epsilon", [
    ("dp-prototypes", ["split=sums:0"], "sums", 1.0),
    ("dp-prototypes", ["split=size:0"], "size", 1.0),
    ("dp-prototypes", ["split=support:0", "support=3"], "support", 1.0),
    ("dp-prototypes", ["split=choice:0", "trials=2", "cluster_size=none"], "choice", 1.0),
    ("dp-gaussian", ["split=counts:0"], "counts", 1.0),
    ("dp-gaussian", ["split=search:0", "candidates=lsh"], "search", 1.0),
    # below ε = 1 the coreset's centres are the prototypes at k > 1, but an automatic k of 1 recovers them
    ("dp-gaussian", ["split=sums:0", "candidates=lsh"], "sums", 0.5),
])
def test_a_zero_share_for_a_stage_that_runs_is_refused_before_the_dry_run_naming_the_split_method_and_stage(
        capsys, method, params, stage, epsilon):
    """A stage given no share of ε would draw at ε = 0 (an error mid-run, after other entities drew): the dry
    run refuses it first, whatever k the noisy size then gives, naming the parameter, the method and the
    stage, and the dashboard says the same through its budget split's controls."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.service import check_run
    from dpfed_core.ui import engine as dash

    args = [a for p in params for a in ("--param", p)]
    assert main(["run", "--data", "sample:synthetic", "--method", method, "--epsilon", str(epsilon), *args,
                 "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{method} parameter split: the '{stage}' stage runs and needs a positive share of ε, got 0" in err, err
    assert "[--param split]" in err and "Traceback" not in err
    ds = load_data("sample:synthetic")
    given = dict(p.split("=", 1) for p in params)
    given["split"] = {stage: 0.0}
    for key, value in list(given.items()):
        given[key] = None if value == "none" else int(value) if isinstance(value, str) and value.isdigit() else value
    config = dash.default_config(ds, method).replace(prototype_params=given, epsilon=epsilon)
    with pytest.raises(ConfigError) as exc:
        check_run(ds, config)
    said = dash.friendly_message(exc.value).replace("\\", "")  # shown as Markdown: escapes dropped
    assert f"the '{stage}' stage runs and needs a positive share" in said and "“Budget split” (Advanced)" in said


@pytest.mark.parametrize("params,said", [
    (["projection_dim=30"], "dp-gaussian parameter projection_dim must be a whole number in [1, 24]"),
    (["split=delta_candidates:0"], "dp-gaussian: delta_candidates must be in (0, 1], got 0.0"),
    (["candidates=lsh", "trials=2"], "dp-gaussian: trials > 1 is not supported with candidates='lsh'"),
])
def test_a_method_parameter_the_release_cannot_use_is_refused_naming_the_method_and_where_to_set_it(
        capsys, params, said):
    """A parameter the method's own checks refuse (a projection dimension above what it supports, no δ for the
    candidates, trials with the LSH coreset) is named with the method it was given for — dp-gaussian, not the
    class's other name — and the flag that sets it; the dashboard names its control."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.service import check_run
    from dpfed_core.ui import engine as dash

    args = [a for p in params for a in ("--param", p)]
    assert main(["run", "--data", "sample:synthetic", "--method", "dp-gaussian", *args, "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert said in err and err.endswith("[--param]"), err
    ds = load_data("sample:synthetic")
    given = {k: (int(v) if v.isdigit() else {"delta_candidates": 0.0} if k == "split" else v)
             for k, v in (p.split("=", 1) for p in params)}
    with pytest.raises(ConfigError) as exc:
        check_run(ds, dash.default_config(ds, "dp-gaussian").replace(prototype_params=given))
    shown = dash.friendly_message(exc.value)
    assert "the method's parameters" in shown and "dp-prototypes" not in shown, shown
def test_a_dp_method_compared_with_a_non_private_run_runs_and_is_charged_at_the_default_epsilon(tmp_path, capsys):
    """kmeans spends no ε (its ε is ∞): dp-popularity compared with it runs at the default ε that
    --epsilon's help states, is recorded and charged at it, and the output says so — never ∞ under a DP
    method's name."""
    from dpfed_core.evaluation.defaults import default_config
    from dpfed_core.data.loaders import load_data
    import sqlite3

    store = tmp_path / "s.sqlite3"
    out = tmp_path / "r.json"
    assert main(["run", "--data", "sample:synthetic", "--method", "kmeans", "--compare", "dp-popularity,popularity",
                 "--simulation", "--store", str(store), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    want = default_config(load_data("sample:synthetic"), "dp-popularity")
    assert math.isfinite(want.epsilon)
    doc = json.loads(out.read_text())
    assert float(doc["comparison"]["dp-popularity"]["privacy"]["epsilon"]) == pytest.approx(want.epsilon)
    assert doc["comparison"]["popularity"]["privacy"]["epsilon"] == "inf"
    (row,) = [ln for ln in printed.splitlines() if ln.startswith("dp-popularity ")]
    assert row.split()[1] == f"{want.epsilon:g}", row
    (note,) = [n for n in doc["notes"] if "default ε" in n]
    assert note.startswith(f"dp-popularity is run at the default ε = {want.epsilon:g} per entity") and "kmeans" in note
    with sqlite3.connect(store) as db:
        recorded = dict(db.execute("SELECT method, epsilon FROM releases").fetchall())
    assert float(recorded["dp-popularity"]) == pytest.approx(want.epsilon)


def _wide_csv(path: Path) -> Path:
    """A user × item matrix (one column per item) with a drug column beside it."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"patient": [f"p{u}" for u in range(30)], "hospital": [f"h{u % 3}" for u in range(30)],
                       "drug": [f"d{u % 7}" for u in range(30)]})
    for i in range(1, 7):
        df[f"item{i}"] = rng.integers(0, 4, 30)
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("flags, flag, column", [
    (["--item-col", "item1"], "--item-col", "item1"),
    (["--item-col", "drug", "--value-col", "item2", "--duplicates", "sum"], "--value-col", "item2"),
])
def test_a_wide_tables_item_column_is_refused_as_the_item_or_the_value(tmp_path, capsys, flags, flag, column):
    """item1 … item6 are one column per item: read as the item column, each cell (0 … 3) became an item id
    and the run went ahead on a wrong dataset; read as the value column, another item's cells became
    every row's value. One error names the flag and says what the table is."""
    csv = _wide_csv(tmp_path / "wide.csv")
    assert main(["run", "--data", str(csv), "--user-col", "patient", "--entity-col", "hospital", *flags,
                 "--value-kind", "counts", "--value-max", "3", "--entities-from-data", "--method", "kmeans",
                 "--rank", "2", "--store", str(tmp_path / "s.sqlite3")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: column '{column}' cannot be the ") and f"({flag})" in err, err
    assert "the 6 columns item1 … item6 are one column per item (a wide table)" in err, err
    # the same table as Parquet: the same refusal, whatever the reader
    from dpfed_core.data.long_table import load_long_table

    roles = dict(zip(flags[::2], flags[1::2]))
    pq = tmp_path / "wide.parquet"
    pd.read_csv(csv).to_parquet(pq)
    with pytest.raises(DpfedError, match="one column per item") as exc:
        load_long_table(pq, user_col="patient", item_col=roles["--item-col"],
                        value_col=roles.get("--value-col"), entity_col="hospital", value_kind="counts",
                        value_max=3, entities_from_data=True)
    assert exc.value.param == flag[2:].replace("-", "_")


@pytest.mark.parametrize("kind, cli, page", [
    ("counts", "leave out --duplicates error: repeated rows of counts are then added up.",
     "leave out “Repeated (user, item) rows” on the Data page set to error: repeated rows of counts are then "
     "added up."),
    ("implicit", "leave out --duplicates error: repeated rows of implicit data then count once.",
     "leave out “Repeated (user, item) rows” on the Data page set to error: repeated rows of implicit data then "
     "count once."),
    ("ratings", "merge them with --duplicates last (keep the last) or --duplicates mean (average them).",
     "merge them with “Repeated (user, item) rows” on the Data page set to last (keep the last) or “Repeated "
     "(user, item) rows” set to mean (average them)."),
])
def test_a_repeated_row_is_one_sentence_naming_the_flag_and_the_control_for_every_value_kind(
        tmp_path, capsys, kind, cli, page):
    """--duplicates error stops at a repeated (user, item) row: the message is one sentence that names the
    flag on the command line and the control on the Data page, for every kind of value: no rule's words
    nested in another's parentheses, no flag or control tacked on after it."""
    import re

    from dpfed_core.data.long_table import load_long_table
    from dpfed_core.ui.inputs import friendly_message

    csv = tmp_path / "dup.csv"
    csv.write_text("patient,drug,v,hospital\np1,d1,2,h0\np1,d1,3,h0\np2,d2,1,h1\n")
    cols = dict(user_col="patient", item_col="drug", value_col="v", entity_col="hospital")
    head = (f"{csv}, data row 1 (line 2): user 'p1' has item 'd1' more than once (1 repeated row). Remove the "
            "repeats, or ")
    assert main(["run", "--data", str(csv), *[x for k, v in cols.items() for x in (f"--{k.replace('_', '-')}", v)],
                 "--value-kind", kind, "--value-max", "5", "--duplicates", "error", "--entities-from-data",
                 "--method", "kmeans", "--store", str(tmp_path / "s.sqlite3")]) == 2
    assert capsys.readouterr().err == f"error: {head}{cli}\n"
    with pytest.raises(DpfedError) as exc:
        load_long_table(csv, **cols, value_kind=kind, value_max=5, duplicates="error", entities_from_data=True)
    assert re.sub(r"\\(.)", r"\1", friendly_message(exc.value)) == head + page


def test_top_n_is_bounded_by_the_catalogue_as_its_help_says(tmp_path, capsys):
    """--top-n above the data's items was accepted up to 10 000 (a top-30 list of 25 items, whose
    precision@30 can never reach 1), while its error spoke of the items: the bound is the catalogue,
    stated in --top-n's help, and the catalogue itself is accepted."""
    csv = _toy_csv(tmp_path / "toy.csv")  # 25 items
    common = ["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--rank", "2", "--dry-run",
              "--store", str(tmp_path / "s.sqlite3")]
    assert main([*common, "--top-n", "26"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: --top-n 26 is more than the 25 items of these data: a top-N list holds at most 25; "
                   "pass --top-n 25 or less\n"), err
    assert main([*common, "--top-n", "25"]) == 0, capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "N of precision/recall/NDCG@N (default 10; at most the number of items)" in \
        " ".join(capsys.readouterr().out.split())
