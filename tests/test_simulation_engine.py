"""``deploy-local --engine simulation`` — Flower's Simulation Engine with the in-process
backend (default) or Flower's Ray backend (``--sim-backend ray``).

The in-process backend runs the same ServerApp/ClientApp (SecAgg+ and its mod included) under
Flower's own engine; runs use the labelled simulation mode, so V, every metric and the ledger must
equal the in-process run's, and the document must say which backend carried the messages.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr", reason="Flower (flwr) is not installed: pip install -r requirements-deploy.txt")

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.deployment import DeploymentError, write_shards  # noqa: E402
from dpfed_core.deployment.deployed import run_deployed  # noqa: E402
from dpfed_core.deployment.launcher import Guard  # noqa: E402
from dpfed_core.deployment.simulation_engine import SimulatedFederation, available  # noqa: E402
from dpfed_core.evaluation.experiments import make_split, run_method  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_deployment import _assert_same_run, _gone, _processes_mentioning, lab_policy, three_clinics  # noqa: E402

COOC_CFG = RunConfig(method="dp-cooccurrence", epsilon=1.0, rank=3, max_iter=60, simulation=True,
                     aggregation="secure", max_dropouts=1, method_params={"max_items": 30})


def _run(cfg: RunConfig, backend: str, **kw):
    """(doc, V, private folder) of one simulated run whose shards live in a Guard's private folder."""
    ds = three_clinics()
    guard = Guard()
    shards = write_shards(ds, make_split(ds, cfg), guard.path / "shards")
    fed = SimulatedFederation(shards, None, ds.entity_names, guard=guard, backend=backend,
                              site_policy=lab_policy(guard.path)).start()
    try:
        doc, V = run_deployed(ds, cfg, federation=fed, round_timeout=120, timeout=300, engine="simulation",
                              sim_backend=backend, return_model=True, **kw)
    finally:
        fed.close()
        private = guard.path
        guard.close()
    return doc, V, private


def _nothing_left(private: Path) -> None:
    end = time.monotonic() + 20
    while time.monotonic() < end and _processes_mentioning(str(private)):
        time.sleep(0.2)
    assert _processes_mentioning(str(private)) == [], "a process of the simulated run outlived it"
    assert not private.exists(), "the shard copies outlived the run"


def test_inprocess_backend_runs_two_secure_sums_and_equals_the_in_process_run():
    """dp-cooccurrence (two SecAgg+ sums and a public broadcast) under Flower's engine with the
    in-process backend: the in-process run's V, metrics and ledger; the document names the backend."""
    ds = three_clinics()
    doc, V, private = _run(COOC_CFG, "inprocess")
    ref, res = run_method(ds, COOC_CFG)
    np.testing.assert_array_equal(V, res.V[:, :V.shape[1]])  # exact: grid shares, integer sums
    _assert_same_run(doc, ref)
    dep = doc["deployment"]
    assert dep["engine"] == "flower-simulation" and dep["simulation_backend"] == "inprocess"
    assert "inprocess backend" in dep["transport"] and "no Ray" in dep["transport"]
    assert [(s["stage"]) for s in dep["secure_aggregation"]["stages"]] == ["popularity", "co-occurrence"]
    contents = {m["content"] for m in doc["messages"]}
    assert any(c.startswith("SecAgg+ collect masked vectors [co-occurrence] + public result of the popularity sum")
               for c in contents)
    _nothing_left(private)


def test_the_ray_backend_stays_selectable_and_gives_the_same_run():
    """--sim-backend ray: Flower's own Ray backend, same result as the in-process run."""
    if not available("ray")[0]:
        if os.environ.get("CI"):
            raise AssertionError(available("ray")[1])
        pytest.skip(available("ray")[1])
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=3, simulation=True, aggregation="secure",
                    max_dropouts=1)
    doc, _V, private = _run(cfg, "ray")
    ref, _ = run_method(three_clinics(), cfg)
    _assert_same_run(doc, ref)
    assert doc["deployment"]["simulation_backend"] == "ray" and "Ray actor" in doc["deployment"]["transport"]
    _nothing_left(private)


def test_a_node_with_a_bad_shard_stops_the_run_with_one_clear_error(tmp_path):
    """A node whose shard is unreadable: the run stops with the node's one message that it cannot read
    its shard (no result); the file's path, the site's own, stays in the site's log, never sent."""
    ds = three_clinics()
    cfg = RunConfig(method="kmeans", k=4, rank=3, max_iter=20, simulation=True)
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    shards[1].write_bytes(b"not a shard")
    with SimulatedFederation(shards, tmp_path / "sim", ds.entity_names, site_policy=lab_policy(tmp_path)) as fed:
        with pytest.raises(DeploymentError, match=r"site policy.*cannot read its shard; the reason is in the site's "
                                                  r"own log") as err:
            run_deployed(ds, cfg, federation=fed, round_timeout=60, timeout=120, engine="simulation")
    assert "entity_001" not in str(err.value)
    assert not list((tmp_path / "sim").glob("result_*.npz"))


_KILL_SCRIPT = """
import json, sys, time
sys.path.insert(0, {repo!r})
sys.path.insert(0, {tests!r})
from dpfed_core.config import RunConfig
from dpfed_core.deployment.deployed import run_deployed
from dpfed_core.deployment.launcher import Guard
from dpfed_core.deployment.shards import write_shards
from dpfed_core.deployment.simulation_engine import SimulatedFederation
from dpfed_core.evaluation.experiments import make_split
from test_deployment import lab_policy, three_clinics
ds = three_clinics()
cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=3, simulation=True, aggregation="secure")
guard = Guard()
shards = write_shards(ds, make_split(ds, cfg), guard.path / "shards")
fed = SimulatedFederation(shards, None, ds.entity_names, guard=guard, site_policy=lab_policy(guard.path)).start()

def stall(ev):
    if ev["event"] == "nodes_connected":
        print(json.dumps({{"dir": str(guard.path), "pids": [fed.proc.pid]}}), flush=True)
        time.sleep(600)  # the test SIGKILLs this process here, mid-run

run_deployed(ds, cfg, federation=fed, engine="simulation", progress=stall)
"""


def test_sigkill_of_the_launcher_mid_run_leaves_no_engine_and_no_shard(tmp_path):
    """SIGKILL the process that runs a simulated run: the engine's child process (its ServerApp
    thread and the ClientApps' worker threads) and the private folder with the shards go with it."""
    repo = str(Path(__file__).resolve().parents[1])
    script = _KILL_SCRIPT.format(repo=repo, tests=str(Path(__file__).resolve().parent))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        info = json.loads(proc.stdout.readline())
    except BaseException:
        proc.kill()
        raise
    private = Path(info["dir"])
    assert list((private / "shards").glob("*.npz")) and all(not _gone(p) for p in info["pids"])
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    end = time.monotonic() + 20
    while time.monotonic() < end and (private.exists() or not all(_gone(p) for p in info["pids"])):
        time.sleep(0.2)
    assert all(_gone(p) for p in info["pids"]), "the Simulation Engine outlived its launcher"
    _nothing_left(private)


def test_cli_sim_backend_is_checked_before_anything_starts(capsys, tmp_path):
    from dpfed_core.cli.main import main

    out = tmp_path / "f.json"
    args = ["deploy-local", "--data", "sample:synthetic", "--method", "kmeans", "--out", str(out)]
    assert main([*args, "--sim-backend", "ray"]) == 2
    err = capsys.readouterr().err
    assert "--sim-backend ray applies to --engine simulation" in err and "Traceback" not in err
    assert "starting" not in err
    assert main([*args, "--engine", "simulation", "--sim-backend", "threads"]) == 2
    err = capsys.readouterr().err
    assert "--sim-backend" in err and "'inprocess', 'ray'" in err and "starting" not in err
    assert not out.exists()
    with pytest.raises(DeploymentError, match="--sim-backend 'threads'"):
        SimulatedFederation([], backend="threads")


def test_each_simulated_node_reads_its_own_files_whole_when_their_paths_hold_the_path_separator(monkeypatch):
    """A workdir or a site policy whose path holds ':' (os.pathsep): a list joined by it gave each node a
    piece of a path, and every site refused the run (its policy file or shard 'cannot be read') while the
    operator's pre-check had read the same file."""
    from types import SimpleNamespace

    from dpfed_core.deployment import client_app as ca
    from dpfed_core.deployment.simulation_engine import node_environment

    job = {"shards": [f"/w{os.pathsep}d/shards/entity_{h:03d}.npz" for h in range(3)],
           "reports": [f"/w{os.pathsep}d/reports/{h}.json" for h in range(3)],
           "policies": ["/etc/a.toml", f"/etc/x{os.pathsep}y/b.toml", "/etc/c.toml"], "features": []}
    for key, value in node_environment(job).items():
        monkeypatch.setenv(key, value)
    for h in range(3):
        ctx = SimpleNamespace(node_config={"partition-id": h})
        assert ca._simulated(ctx, ca.SIM_SHARDS_ENV) == job["shards"][h]
        assert ca._simulated(ctx, ca.SIM_REPORTS_ENV) == job["reports"][h]
        assert ca._simulated(ctx, ca.SIM_POLICIES_ENV) == job["policies"][h]
    assert ca._simulated(SimpleNamespace(node_config={"partition-id": 3}), ca.SIM_SHARDS_ENV) is None
    assert ca._simulated(SimpleNamespace(node_config={}), ca.SIM_SHARDS_ENV) is None


def test_deploy_local_runs_in_a_workdir_whose_path_holds_the_path_separator(tmp_path, capsys):
    from dpfed_core.cli.main import main

    if not available()[0]:
        pytest.skip(available()[1])
    work = tmp_path / f"w{os.pathsep}d"
    work.mkdir()
    argv = ["deploy-local", "--data", "sample:clinic", "--federation", "region", "--method", "dp-popularity",
            "--epsilon", "1", "--engine", "simulation", "--workdir", str(work), "--store", str(tmp_path / "c.sqlite3")]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.count(": accepted") == 4 and "refused" not in out


def test_the_engine_is_offered_only_with_a_backend_it_has_and_the_document_says_which_carried_the_messages(
        monkeypatch):
    """An unknown backend and a Ray backend without Ray are refused naming the flag and what installs it; the
    transport line the result document carries names the backend, where the ClientApps ran, and that no
    network (so no TLS, no node authentication) was involved."""
    import importlib.util
    from importlib.metadata import version

    from dpfed_core.deployment import simulation_engine as se

    assert se.available("bogus") == (False, "--sim-backend 'bogus': choose inprocess or ray")
    assert se.available("inprocess") == (True, f"flwr {version('flwr')}, in-process backend")
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else find(name, *a))
    ok, why = se.available("ray")
    assert not ok and "requirements-deploy.txt" in why and "--sim-backend inprocess" in why
    inproc, ray = se.transport("inprocess"), se.transport("ray")
    assert inproc.startswith("Flower Simulation Engine, inprocess backend") and "worker threads" in inproc
    assert ray.startswith("Flower Simulation Engine, ray backend") and "Ray actor process" in ray
    assert all(t.endswith("no network, so no TLS and no node authentication") for t in (inproc, ray))
    assert se.TRANSPORT == inproc


def test_each_simulated_node_reads_its_own_shard_report_policy_and_features_by_partition():
    """Node h of the simulation (Flower's partition-id h) reads the h-th shard, report, policy and feature file
    the launcher listed, and nothing when a list is not given."""
    from types import SimpleNamespace

    from dpfed_core.deployment import client_app
    from dpfed_core.deployment.simulation_engine import node_environment

    job = {"shards": ["a.npz", "b.npz", "c.npz"], "reports": ["a.json", "b.json", "c.json"],
           "policies": ["a.toml", "b.toml", "c.toml"], "features": ["f.csv", "f.csv", "f.csv"]}
    env = node_environment(job)
    bare = node_environment({"shards": job["shards"], "reports": job["reports"]})
    assert set(bare) == {client_app.SIM_SHARDS_ENV, client_app.SIM_REPORTS_ENV}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        for h in range(3):
            ctx = SimpleNamespace(node_config={"partition-id": h})
            assert [client_app._simulated(ctx, k) for k in (client_app.SIM_SHARDS_ENV, client_app.SIM_REPORTS_ENV,
                                                            client_app.SIM_POLICIES_ENV, client_app.SIM_FEATURES_ENV)
                    ] == [job["shards"][h], job["reports"][h], job["policies"][h], job["features"][h]]
        assert client_app._simulated(SimpleNamespace(node_config={"partition-id": 3}), client_app.SIM_SHARDS_ENV) is None
        assert client_app._simulated(SimpleNamespace(node_config={}), client_app.SIM_SHARDS_ENV) is None


def test_the_in_process_backend_hands_each_clientapp_copies_and_wraps_its_failures(monkeypatch):
    """As Ray's process boundary does: the ClientApp gets copies of the message and the node's context (what it
    writes on them never reaches the engine's objects), the engine gets a copy of the reply and the updated
    context back, a ClientApp's failure is Flower's ClientAppException and a failure to load it is left as it
    is; the engine's worker count is the configured CPUs."""
    from flwr.app import ConfigRecord, Context, Message, RecordDict
    from flwr.clientapp.client_app import ClientAppException, LoadClientAppError
    from flwr.supercore.task_identity import TaskIdentity

    from dpfed_core.deployment.inprocess_backend import InProcessBackend

    for name in ("_run_id", "_node_id", "_task_id"):  # what a task process knows of itself
        monkeypatch.setattr(TaskIdentity, name, 1)
    msg = Message(content=RecordDict({"c": ConfigRecord({"x": 1})}), dst_node_id=5, message_type="train")
    ctx = Context(run_id=1, node_id=5, node_config={"partition-id": 0}, state=RecordDict(), run_config={})
    seen = {}

    def app(message, context):
        seen["message"], seen["context"] = message, context
        message.content["c"]["x"] = 99  # a ClientApp writing on what it was given
        context.state["s"] = ConfigRecord({"step": 2})
        return Message(content=RecordDict({"r": ConfigRecord({"y": 2})}), reply_to=message)

    backend = InProcessBackend({"init_args": {"num_cpus": 3}})
    assert backend.num_workers == 3 and InProcessBackend({}).num_workers == max(1, os.cpu_count() or 1)
    with pytest.raises(ValueError, match="build"):
        backend.process_message(msg, ctx)
    backend.build(lambda: app)
    reply, new_ctx = backend.process_message(msg, ctx)
    assert seen["message"] is not msg and seen["context"] is not ctx
    assert msg.content["c"]["x"] == 1 and "s" not in ctx.state
    assert new_ctx.state["s"]["step"] == 2 and new_ctx is not seen["context"]
    assert reply.content["r"]["y"] == 2

    def broken(message, context):
        raise RuntimeError("the site's shard is unreadable")

    backend.build(lambda: broken)
    with pytest.raises(ClientAppException, match="the site's shard is unreadable"):
        backend.process_message(msg, ctx)

    def unloadable():
        raise LoadClientAppError("no ClientApp at that reference")

    backend.build(unloadable)
    with pytest.raises(LoadClientAppError):
        backend.process_message(msg, ctx)


def test_deploy_local_is_charged_to_its_store_and_a_non_private_one_needs_permission_on_capped_data(tmp_path, capsys):
    """A deployment is a release of the coordinator's odometer named by --store: a non-private one on data
    with a cap is refused naming --allow-non-private before anything is computed; a DP one is charged there and
    its budget line says so."""
    from dpfed_core.cli.main import main
    from dpfed_core.data.loaders import load_data
    from dpfed_core.privacy.odometer import BudgetOdometer

    if not available()[0]:
        pytest.skip(available()[1])
    store = tmp_path / "c.sqlite3"
    data = ["--data", "sample:clinic", "--federation", "region"]
    assert main(["budget", "set-cap", *data, "--store", str(store), "--epsilon", "5"]) == 0
    base = ["deploy-local", *data, "--method", "dp-popularity", "--engine", "simulation", "--store", str(store)]
    capsys.readouterr()
    assert main([*base, "--epsilon", "inf", "--sim-backend", "ray"]) == 2
    err = capsys.readouterr().err
    assert "non-private" in err and "--allow-non-private" in err and "Nothing was computed" in err, err
    assert "Simulation Engine (ray backend)" in err, err  # the backend asked for, not the default
    assert main([*base, "--epsilon", "1"]) == 0, capsys.readouterr().err
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("budget")]
    assert line.startswith(f"budget ({store}): every entity has spent ε = ") and "cap ε = 5" in line, line
    key = BudgetOdometer(store).account_key(load_data("sample:clinic", federation="region"))
    assert [r["method"] for r in BudgetOdometer(store).releases(key)] == ["dp-popularity"]
