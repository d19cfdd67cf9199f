"""What a deployment node and the server do with each message, step by step, without starting Flower:
a node's run state between messages and its release log, the server's checks of the replies and of a
secure sum's parts, and what a deployment needs before anything starts."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("flwr")
from flwr.app import ConfigRecord  # noqa: E402

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.data.dataset import FederatedDataset  # noqa: E402
from dpfed_core.errors import ConfigError  # noqa: E402
from dpfed_core.deployment import client_app as ca  # noqa: E402
from dpfed_core.deployment import server_app as sa  # noqa: E402
from dpfed_core.deployment.deployed import check_deployable, check_site_policy, read_local_reports  # noqa: E402
from dpfed_core.deployment.launcher import DeploymentError  # noqa: E402
from dpfed_core.deployment.site_policy import SiteLog, load_policy, write_policy  # noqa: E402
from dpfed_core.deployment.wire import dumps  # noqa: E402
from dpfed_core.privacy.ledger import LedgerRow  # noqa: E402
from dpfed_core.privacy.statement import epsilon_that_holds


def _context(**node_config):
    return SimpleNamespace(state=SimpleNamespace(config_records={}, array_records={}), node_config=node_config,
                           run_id=7)


# ============================================================================ a node, between messages
def test_a_nodes_release_seconds_add_up_over_the_stages_of_a_run():
    ctx = _context()
    ca._remember_seconds(ctx, "release_seconds", 1.5)
    ca._remember_seconds(ctx, "release_seconds", 2.0, add=True)
    ca._remember_seconds(ctx, "release_seconds", 0.25, add=True)
    assert ca._seconds(ctx) == {"release_seconds": 3.75}
    ca._remember_seconds(ctx, "release_seconds", 1.0)  # a new first stage starts the count again
    assert ca._seconds(ctx) == {"release_seconds": 1.0}


def test_the_released_catalogue_keys_outlive_a_later_stages_public_result():
    ctx = _context()
    ca._store_public(ctx, ca.CATALOGUE_STAGE, {"keys": np.array([4, 9, 17])})
    ca._store_public(ctx, "popularity", {"items": np.array([0, 2])})
    ca._store_public(ctx, "co-occurrence", {"items": np.array([1])})
    np.testing.assert_array_equal(ctx.state.array_records[ca.CATALOGUE_KEY]["keys"].numpy(), [4, 9, 17])
    np.testing.assert_array_equal(ctx.state.array_records[ca.PUBLIC_KEY]["items"].numpy(), [1])


def test_broadcast_catalogue_keys_that_are_no_distinct_bucket_numbers_are_refused():
    """A key −1 would wrap onto bucket 4095 (marking the site's items there released) and a repeated key
    would give two rows of V one bucket: the site refuses both."""
    from dpfed_core.errors import DpfedError

    ca._store_public(_context(), ca.CATALOGUE_STAGE, {"keys": np.array([0, 9, 4095])})
    ca._store_public(_context(), ca.CATALOGUE_STAGE, {"keys": np.array([], dtype=float)})  # nothing passed
    for keys in ([-1, 4], [4, 4096], [4, 9, 4], [1.5, 2.0], [[1, 2]]):
        ctx = _context()
        with pytest.raises(DpfedError, match="broadcast catalogue keys are not distinct bucket numbers 0…4095"):
            ca._store_public(ctx, ca.CATALOGUE_STAGE, {"keys": np.array(keys)})
        assert ca.CATALOGUE_KEY not in ctx.state.array_records
    with pytest.raises(DpfedError, match="broadcast catalogue keys"):
        ca._store_public(_context(), ca.CATALOGUE_STAGE, {})


def test_a_nodes_shares_read_the_declared_catalogues_columns_only():
    """The run's JSON states the declared catalogue's size; a node whose shard holds items outside it
    (after it) computes its shares from the declared columns only, refuses a shard narrower than the
    catalogue, and a prototype release on such a shard is refused (its width would be the node's own)."""
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.errors import DpfedError

    X = sp.csr_matrix(np.arange(1.0, 25.0).reshape(4, 6))
    shard = SimpleNamespace(entity="clinic A", train=X)
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    rec = {"config": run_json(cfg, "declared", 4)}
    assert ca._declared_size(rec, shard) == 4
    rows = ca._on_keys(shard, _context(), False, ca._declared_size(rec, shard))
    assert rows.shape == (4, 4)
    assert ca._on_keys(shard, _context(), False, 6).shape == (4, 6)
    assert ca._declared_size({"config": run_json(cfg, "declared", None)}, shard) == 6
    with pytest.raises(DpfedError, match="declares a catalogue of 9 items, more than this site's shard holds") as err:
        ca._declared_size({"config": run_json(cfg, "declared", 9)}, shard)
    # the shard's width is the site's own count: in its log, never in what the coordinator is told
    assert "6" not in str(err.value) and "6 columns" in err.value.for_site()


def test_a_node_reads_its_declared_catalogue_from_its_own_shard_not_from_the_run(tmp_path):
    """A site's export states how many of its columns are the declared catalogue (the rest are its
    own items, never in a message): a run that leaves the size out, or names more (up to the shard's
    whole width), cannot make the node's shares read — and their length count — the site's own items."""
    from dpfed_core.deployment.shards import load_shard, write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.errors import DpfedError
    from dpfed_core.evaluation.experiments import make_split

    X = sp.csr_matrix(np.random.default_rng(2).poisson(0.5, (36, 12)).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), value_kind="counts", value_max=5,
                                     name="own items", item_source="declared", n_declared=8)
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    shard = load_shard(write_shards(ds, make_split(ds, cfg), tmp_path / "shards")[0])
    assert shard.train.shape[1] == 12 and shard.n_declared == 8
    assert ca._declared_size({"config": run_json(cfg, "declared", 8)}, shard) == 8
    assert ca._declared_size({"config": run_json(cfg, "declared", None)}, shard) == 8
    for other in (12, 10, 9, 10 ** 6):
        with pytest.raises(DpfedError, match=f"declares a catalogue of {other} items, this site's shard declares 8") as err:
            ca._declared_size({"config": run_json(cfg, "declared", other)}, shard)
        assert "12" not in str(err.value).replace(str(other), "")  # its own items' count stays home
    assert ca._declared_size({"config": run_json(cfg, "declared", 4)}, shard) == 4  # a part of the public list
    every = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), value_kind="counts", value_max=5,
                                        name="all declared", item_source="declared")
    assert load_shard(write_shards(every, make_split(every, cfg), tmp_path / "every")[0]).n_declared == 12


@pytest.mark.parametrize("declared", [True, False])
def test_a_site_with_a_declared_catalogue_refuses_a_run_that_selects_one_from_its_columns(tmp_path, monkeypatch,
                                                                                         declared):
    """The catalogue mode is the run JSON's field: a coordinator that asks a site whose export declares
    its catalogue for a federation-wide selection would have every column name — the site's own items
    too — hashed into the catalogue share. Refused before anything is charged; a site whose items are
    read from its data (or all declared) takes part in the selection."""
    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.evaluation.experiments import make_split

    X = sp.csr_matrix(np.random.default_rng(2).poisson(0.5, (36, 12)).astype(float))
    names = np.array([f"drug {i}" for i in range(12)], dtype=object)
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), item_names=names, value_kind="counts",
                                     value_max=5, name="c",
                                     **({"item_source": "declared", "n_declared": 8} if declared else {}))
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    policy = write_policy(tmp_path / "p.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=5.0,
                          store=str(tmp_path / "{site}.sqlite3"))
    ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(policy)})
    monkeypatch.setattr(ca, "Message", lambda content, reply_to=None: SimpleNamespace(content=content))
    reply = ca.decide(SimpleNamespace(content={"config": {"config": run_json(cfg, "secure"), "n-entities": 3}}), ctx)
    meta = reply.content["meta"]
    if declared:
        assert (meta["decision"], meta["rule"]) == ("refused", "item_catalogue")
        assert ca.ACCEPTED_KEY not in ctx.state.config_records
        from dpfed_core.deployment.site_policy import remaining_budget
        assert all(b["spent_epsilon"] == 0 for b in remaining_budget(load_policy(policy).store_for("A")))
    else:
        assert meta["decision"] == "accepted"


def test_a_run_marks_its_draws_in_the_store_it_was_charged_in_whatever_the_policy_says_later(tmp_path, monkeypatch):
    """The site's operator edits the store key while a run is under way: the run's draws are still marked
    (and its releases logged) in the store its charge is in, so neither the site's own withdrawal nor the
    coordinator's gives back the charge of a run that drew — and no release id of another store is touched."""
    from dpfed_core.deployment import site_policy as sp_
    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.evaluation.experiments import make_split

    X = sp.csr_matrix(np.random.default_rng(2).poisson(0.5, (36, 12)).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), value_kind="counts", value_max=5, name="c",
                                     item_names=np.array([f"d{i}" for i in range(12)], dtype=object),
                                     item_source="declared")
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    keys = dict(methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=5.0)
    policy = write_policy(tmp_path / "p.toml", **keys, store="old/site.sqlite3")
    old, new = tmp_path / "old" / "site.sqlite3", tmp_path / "new" / "site.sqlite3"
    monkeypatch.setattr(ca, "Message", lambda content, reply_to=None: SimpleNamespace(content=content))
    rec = {"config": run_json(cfg, "declared"), "n-entities": 3}
    ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(policy), "coordinator": "c"})
    assert ca.decide(SimpleNamespace(content={"config": rec}), ctx).content["meta"]["decision"] == "accepted"
    write_policy(tmp_path / "p.toml", **keys, store="new/site.sqlite3")  # mid-run
    ca._require_accepted(ctx, rec, "release", ca._load(ctx, 3))  # marked before the share is drawn
    spent = sp_.remaining_budget(old)[0]["spent_epsilon"]
    assert spent > 0
    (out,) = sp_.withdraw_by_site(old, "7")
    assert (out["decision"], out["stages"]) == ("kept", ["release"])
    assert ca.withdraw(SimpleNamespace(content={"config": rec}), ctx).content["meta"]["decision"] == "kept"
    assert sp_.remaining_budget(old)[0]["spent_epsilon"] == pytest.approx(spent)
    assert not new.exists()


@pytest.mark.parametrize("epsilon, decision", [(1.0, "refused"), (math.inf, "accepted")])
def test_a_site_whose_items_come_from_its_data_refuses_a_dp_run_that_calls_them_declared(tmp_path, monkeypatch,
                                                                                         epsilon, decision):
    """Items read from a site's own data are no public list: a DP run labelled "declared" would shape the
    site's shares by its own item count and read every item it holds. Refused before anything is
    charged; a non-private run (which the site's policy must allow anyway) is not about the catalogue."""
    from dpfed_core.deployment.shards import load_shard, write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.evaluation.experiments import make_split

    X = sp.csr_matrix(np.random.default_rng(2).poisson(0.5, (36, 13)).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), value_kind="counts", value_max=5, name="c",
                                     item_names=np.array([f"x{i}" for i in range(13)], dtype=object))
    assert ds.item_source != "declared"
    cfg = RunConfig(method="dp-popularity", epsilon=epsilon, aggregation="secure")
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    assert load_shard(shards[0]).item_source == ds.item_source
    policy = write_policy(tmp_path / "p.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=5.0,
                          allow_non_private=True, store=str(tmp_path / "{site}.sqlite3"))
    ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(policy)})
    monkeypatch.setattr(ca, "Message", lambda content, reply_to=None: SimpleNamespace(content=content))
    reply = ca.decide(SimpleNamespace(content={"config": {"config": run_json(cfg, "declared"), "n-entities": 3}}),
                      ctx)
    meta = reply.content["meta"]
    assert meta["decision"] == decision
    if decision == "refused":
        assert meta["rule"] == "item_catalogue" and ca.ACCEPTED_KEY not in ctx.state.config_records


def test_a_prototype_release_on_a_catalogue_that_leaves_items_out_reads_the_catalogues_columns_only():
    """A prototype method deploys on a declared catalogue that leaves a site's own items out: its release
    reads the catalogue's columns (the shard's first ones) without the entries round 2 validates on."""
    import dataclasses

    from dpfed_core.models.blend import released_rows

    ds = dataclasses.replace(FederatedDataset.from_parts(sp.csr_matrix(np.ones((4, 5))), np.array(list("aabb")),
                                                         value_kind="implicit", item_source="declared"), n_declared=3)
    check_deployable(ds, RunConfig(method="dp-gaussian", epsilon=1.0))
    check_deployable(ds, RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"))
    train = sp.csr_matrix(np.arange(1, 21, dtype=float).reshape(4, 5))
    shard = SimpleNamespace(train=train)
    rows = ca._prototype_rows(shard, 3)
    assert rows.shape == (4, 3)
    np.testing.assert_array_equal(rows.toarray(), released_rows(train).toarray()[:, :3])
    assert ca._prototype_rows(shard, 5) is train


def _row(stage, epsilon, delta, rho):
    return LedgerRow(entity="clinic A", stage=stage, mechanism="Gaussian", epsilon=epsilon, delta=delta,
                     sensitivity=1.0, noise_scale=1.0, rho=rho)


def test_a_sites_release_log_sums_its_rows_and_states_rho_only_when_every_row_has_one(tmp_path):
    policy = write_policy(tmp_path / "p.toml", methods=["dp-cooccurrence"], max_epsilon=2.0, max_delta=1e-5,
                          budget_epsilon=5.0, store=str(tmp_path / "stores" / "{site}.sqlite3"))
    ctx = _context(**{"policy-path": str(policy)})
    shard = SimpleNamespace(entity="clinic A")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure")
    ca._log_release(ctx, shard, cfg, "secure sum [popularity]",
                    [_row("popularity", 0.4, 1e-7, 0.01), _row("popularity", 0.1, math.nan, 0.02)], [(3,)], 100)
    ca._log_release(ctx, shard, cfg, "secure sum [co-occurrence]",
                    [_row("co-occurrence", 0.5, 2e-7, 0.03), _row("co-occurrence", 0.0, 0.0, None)], [(6,)], 200)
    rows = SiteLog(load_policy(policy).store_for("clinic A")).rows()
    assert [r["stage"] for r in rows] == ["secure sum [popularity]", "secure sum [co-occurrence]"]
    assert rows[0]["epsilon"] == pytest.approx(0.5) and rows[0]["delta"] == pytest.approx(1e-7)  # NaN: no δ
    assert rows[0]["rho"] == pytest.approx(0.03)
    assert rows[1]["epsilon"] == pytest.approx(0.5) and rows[1]["rho"] is None  # one row without ρ



def test_a_sites_release_log_states_a_fused_sums_epsilon_as_its_stages_compose(tmp_path):
    """One secure sum carrying both stages of a run at ε = 1 (each row ε ≈ 0.714 by its own ρ): the
    stages compose by zCDP to the run's ε, and the log says so — not their sum, 1.43, a release above
    the site's max_epsilon that never happened."""
    from dpfed_core.privacy.accounting import zcdp_epsilon_of_rho

    policy = write_policy(tmp_path / "p.toml", methods=["dp-cooccurrence"], max_epsilon=1.0, max_delta=1e-5,
                          budget_epsilon=5.0, store=str(tmp_path / "stores" / "{site}.sqlite3"))
    ctx = _context(**{"policy-path": str(policy)})
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, delta=1e-6, aggregation="secure")
    rho = 0.01217798415224804
    assert zcdp_epsilon_of_rho(rho, 5e-7) == pytest.approx(0.714, abs=1e-3)
    ca._log_release(ctx, SimpleNamespace(entity="clinic A"), cfg, "secure sum [popularity+co-occurrence]",
                    [_row("popularity", 0.7138739, 5e-7, rho), _row("co-occurrence", 0.7138739, 5e-7, rho)], [(9,)], 10)
    (row,) = SiteLog(load_policy(policy).store_for("clinic A")).rows()
    assert row["epsilon"] == pytest.approx(1.0, abs=1e-6) and row["epsilon"] <= 1.0 + 1e-9
    assert row["rho"] == pytest.approx(2 * rho) and row["delta"] == pytest.approx(1e-6)



def test_a_site_checks_a_secure_sums_setup_against_its_policy_before_secagg_sees_it(tmp_path):
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key, Stage

    from dpfed_core.deployment.site_policy import PolicyRefused
    from dpfed_core.deployment.wire import run_json, secagg_shares, secagg_threshold

    policy = write_policy(tmp_path / "p.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=5.0,
                          store=str(tmp_path / "{site}.sqlite3"))
    ctx = _context(**{"policy-path": str(policy)})

    def secagg(stage, n=30, k=None, t=None):
        k = secagg_shares(n, 0) if k is None else k
        t = secagg_threshold(n, 0, 30) if t is None else t
        configs = {Key.STAGE: stage, Key.SAMPLE_NUMBER: n, Key.SHARE_NUMBER: k, Key.THRESHOLD: t}
        return SimpleNamespace(metadata=SimpleNamespace(message_type="train"),
                               content=SimpleNamespace(config_records={RECORD_KEY_CONFIGS: configs}))

    def passed(msg, context):
        return "handed to SecAgg+"

    with pytest.raises(PolicyRefused, match="before this site accepted"):
        ca.site_policy_mod(secagg(Stage.SETUP), ctx, passed)
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run_json(cfg, "declared", 8),
                                                             "n-entities": 30, "operation": "op"})
    assert ca.site_policy_mod(secagg(Stage.SETUP), ctx, passed) == "handed to SecAgg+"
    with pytest.raises(PolicyRefused, match="public rule"):
        ca.site_policy_mod(secagg(Stage.SETUP, k=5, t=5), ctx, passed)
    with pytest.raises(PolicyRefused, match="participants"):
        ca.site_policy_mod(secagg(Stage.SETUP, n=12), ctx, passed)
    assert ca.site_policy_mod(secagg(Stage.COLLECT_MASKED_VECTORS, k=5, t=5), ctx, passed) == "handed to SecAgg+"



def test_a_site_never_reveals_both_key_shares_of_one_node_nor_unmasks_a_sum_short_of_its_noise(tmp_path):
    """SecAgg+'s unmasking asks each node for a live neighbour's self-mask seed share or a dropped one's
    pairwise-key share. A node named both (or twice, or this node named dropped) would let the server strip
    that node's masks; more dropped neighbours than the run and the site tolerate leaves a sum with less
    noise than the run's σ. The site refuses both before SecAgg+ reveals anything."""
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key, Stage

    from dpfed_core.deployment.site_policy import PolicyRefused
    from dpfed_core.deployment.wire import run_json

    policy = write_policy(tmp_path / "p.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=5.0,
                          store=str(tmp_path / "{site}.sqlite3"), max_dropouts=1)
    ctx = _context(**{"policy-path": str(policy)})
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure", max_dropouts=1)
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run_json(cfg, "declared", 8),
                                                             "n-entities": 5, "operation": "op"})

    def unmask(active, dead, own=7):
        configs = {Key.STAGE: Stage.UNMASK, Key.ACTIVE_NODE_ID_LIST: active, Key.DEAD_NODE_ID_LIST: dead}
        return SimpleNamespace(metadata=SimpleNamespace(message_type="train", dst_node_id=own),
                               content=SimpleNamespace(config_records={RECORD_KEY_CONFIGS: configs}))

    def passed(msg, context):
        return "handed to SecAgg+"

    assert ca.site_policy_mod(unmask([7, 11, 12, 13], []), ctx, passed) == "handed to SecAgg+"
    assert ca.site_policy_mod(unmask([7, 11, 12], [13]), ctx, passed) == "handed to SecAgg+"  # one tolerated
    with pytest.raises(PolicyRefused, match="1 node\\(s\\) both live and dropped.*nothing was revealed"):
        ca.site_policy_mod(unmask([7, 11, 12, 13], [13]), ctx, passed)
    with pytest.raises(PolicyRefused, match="this node as dropped while it answers"):
        ca.site_policy_mod(unmask([11, 12, 13], [7]), ctx, passed)
    with pytest.raises(PolicyRefused, match="a node twice"):
        ca.site_policy_mod(unmask([7, 11, 11, 12], []), ctx, passed)
    with pytest.raises(PolicyRefused, match="2 dropped neighbour.*sized for 1.*less noise"):
        ca.site_policy_mod(unmask([7, 11, 12], [13, 14]), ctx, passed)
    # the run's own tolerance binds too: a run sized for no dropout unmasks none
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord(
        {"config": run_json(RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"), "declared", 8),
         "n-entities": 5, "operation": "op"})
    with pytest.raises(PolicyRefused, match="1 dropped neighbour.*sized for 0"):
        ca.site_policy_mod(unmask([7, 11, 12], [13]), ctx, passed)


def test_a_later_stages_share_is_refused_before_the_previous_stages_public_result_arrives(tmp_path):
    """dp-cooccurrence's co-occurrence shares read the items the popularity sum chose: asked for them
    before that public result reached the node, the node says so and draws nothing."""
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.errors import DpfedError
    from dpfed_core.evaluation.experiments import make_split

    ds = _clinics(3)
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure", method_params={"max_items": 4})
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    policy = write_policy(tmp_path / "p.toml", methods=["dp-cooccurrence"], max_epsilon=1.0, budget_epsilon=5.0,
                          store=str(tmp_path / "{site}.sqlite3"))
    ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(policy)})
    run = run_json(cfg, "declared", ds.n_items)
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run, "n-entities": 3, "operation": "op"})
    ins = FitIns(ndarrays_to_parameters([]), {"config": run, "n-entities": 3, "stage": "co-occurrence"})
    msg = SimpleNamespace(content=compat.fitins_to_recorddict(ins, keep_input=True))  # as the mods hand it on
    with pytest.raises(DpfedError, match="'co-occurrence' reached this node before the public items"):
        ca.secure_share(msg, ctx)
    assert ca.STATE_KEY not in ctx.state.config_records  # nothing drawn, nothing kept



@pytest.mark.parametrize("method, labels", [
    ("dp-popularity", [None, "release"]),  # no stage field: the first stage, under another name
    ("dp-cooccurrence", ["popularity+co-occurrence", "popularity"]),  # a fused sum, then a part of it
    ("dp-cooccurrence", ["popularity+co-occurrence", "co-occurrence"]),
    ("dp-cooccurrence", ["popularity+co-occurrence", None]),
])
def test_a_stage_is_released_once_whatever_label_the_secure_sum_gives_it(tmp_path, monkeypatch, method, labels):
    """The site's odometer charged the run once: a coordinator that asks for a stage it already has
    under another label (the field left out, or a fused sum's part on its own) gets a refusal and no
    second share — a second share with fresh noise would average the first one's noise down."""
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.site_policy import PolicyRefused
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.evaluation.experiments import make_split

    ds = _clinics(3)
    cfg = RunConfig(method=method, epsilon=1.0, aggregation="secure",
                    method_params={"max_items": 16} if method == "dp-cooccurrence" else {})
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    policy = write_policy(tmp_path / "p.toml", methods=[method], max_epsilon=1.0, budget_epsilon=5.0,
                          store=str(tmp_path / "{site}.sqlite3"))
    ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(policy)})
    run = run_json(cfg, "declared", ds.n_items)
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run, "n-entities": 3, "operation": "op"})
    # the reply as Flower would carry it, outside a Flower task
    monkeypatch.setattr(ca, "Message", lambda content, reply_to=None: SimpleNamespace(content=content))
    monkeypatch.setattr(ca, "message_bytes", lambda _msg: 0)

    def share(label):
        ins = {"config": run, "n-entities": 3, **({} if label is None else {"stage": label})}
        msg = SimpleNamespace(content=compat.fitins_to_recorddict(FitIns(ndarrays_to_parameters([]), ins),
                                                                  keep_input=True))  # as the mods hand it on
        return ca.secure_share(msg, ctx)

    first, again = labels
    share(first)
    with pytest.raises(PolicyRefused) as err:
        share(again)
    assert err.value.rule == "one_request_per_run"
    released = [r for r in SiteLog(load_policy(policy).store_for("clinic 0")).rows() if r["decision"] == "released"]
    assert len(released) == 1


def test_a_policy_file_a_site_cannot_read_is_a_refusal_that_names_no_site_file(tmp_path, monkeypatch, capsys):
    """The coordinator learns the rule (policy_file); the reason, which names the site's own files, is
    in the SuperNode's log only."""
    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.evaluation.experiments import make_split

    ds = _clinics(3)
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    broken = tmp_path / "secret-folder" / "policy.toml"
    broken.parent.mkdir()
    broken.write_text("methods = [\n", encoding="utf-8")
    ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(broken)})
    monkeypatch.setattr(ca, "Message", lambda content, reply_to=None: SimpleNamespace(content=content))
    reply = ca.decide(SimpleNamespace(content={"config": {"config": run_json(cfg, "declared", ds.n_items),
                                                          "n-entities": 3}}), ctx)
    meta = reply.content["meta"]
    assert meta["decision"] == "refused" and meta["rule"] == "policy_file"
    assert "secret-folder" not in str(meta["message"])
    assert "secret-folder" in capsys.readouterr().err  # the site's operator has the reason


def test_a_share_entry_beyond_secaggs_range_is_refused_not_clipped(tmp_path, capsys):
    """Every user of these sites holds item 0 at 10⁶ (the public bound): the exact sum of one site's
    rows is ≈ 10⁷, beyond SecAgg+'s ±2²³ for 3 entities (but within twice that) — SecAgg+ would clip
    it silently and the sum would be wrong, so the node refuses."""
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.errors import DpfedError
    from dpfed_core.evaluation.experiments import make_split
    from dpfed_core.federation.summable import secagg_ranges

    X = sp.csr_matrix((np.full(36, 1e6), (np.arange(36), np.zeros(36, dtype=int))), shape=(36, 8))
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), value_kind="counts", value_max=1e6,
                                     name="large values", item_source="declared")
    cfg = RunConfig(method="dp-popularity", epsilon=math.inf, aggregation="secure")
    split = make_split(ds, cfg)
    shards = write_shards(ds, split, tmp_path / "shards")
    policy = write_policy(tmp_path / "p.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=1.0,
                          allow_non_private=True, store=str(tmp_path / "{site}.sqlite3"))
    ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(policy)})
    run = run_json(cfg, "declared", ds.n_items)
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run, "n-entities": 3, "operation": "op"})
    ins = FitIns(ndarrays_to_parameters([]), {"config": run, "n-entities": 3, "stage": "release"})
    msg = SimpleNamespace(content=compat.fitins_to_recorddict(ins, keep_input=True))
    clip = secagg_ranges(3)[2]
    with pytest.raises(DpfedError, match="beyond SecAgg\\+'s range") as err:
        ca.secure_share(msg, ctx)
    # the error reaches the server: it names the range, never the entry of this one site's share
    assert "entry of" not in str(err.value)
    peak = float(capsys.readouterr().err.split("entry of ")[1].split(" ")[0])  # the site's own log has it
    assert clip < peak <= 2 * clip


def test_a_share_with_entries_that_are_not_finite_is_refused_not_quantised(tmp_path, monkeypatch):
    """A method's share holding NaN passed the range check (NaN > clip is false) and SecAgg+ quantised
    it to some integer: the sum every site is sent was wrong without a word."""
    import dataclasses

    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.errors import DpfedError
    from dpfed_core.evaluation.experiments import make_split

    X = sp.csr_matrix((np.ones(36), (np.arange(36), np.arange(36) % 8)), shape=(36, 8))
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), value_kind="counts", value_max=1,
                                     name="small values", item_source="declared")
    cfg = RunConfig(method="dp-popularity", epsilon=math.inf, aggregation="secure")
    shards = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")
    run = run_json(cfg, "declared", ds.n_items)
    ins = FitIns(ndarrays_to_parameters([]), {"config": run, "n-entities": 3, "stage": "release"})
    msg = SimpleNamespace(content=compat.fitins_to_recorddict(ins, keep_input=True))
    real = ca.stage_share

    def share_with(value):
        def stage_share(*args):
            share = real(*args)
            return dataclasses.replace(share, values=np.where(np.arange(share.values.size) == 2, value,
                                                              share.values))
        return stage_share

    for i, bad in enumerate((np.nan, np.inf, -np.inf)):
        policy = write_policy(tmp_path / f"p{i}.toml", methods=["dp-popularity"], max_epsilon=1.0,
                              budget_epsilon=1.0, allow_non_private=True, store=str(tmp_path / f"{i}{{site}}.sqlite3"))
        ctx = _context(**{"data-path": str(shards[0]), "policy-path": str(policy)})
        ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run, "n-entities": 3, "operation": "op"})
        monkeypatch.setattr(ca, "stage_share", share_with(bad))
        with pytest.raises(DpfedError, match="A: the dp-popularity release share has entries that are not finite"):
            ca.secure_share(msg, ctx)


# ============================================================================ the server, reading replies
def _transport(names=None):
    t = object.__new__(sa._Transport)
    t.round_timeout = 30.0
    t.entity_of_node = dict(names or {})
    t.index_of_node = {}
    return t


def _sent(*nodes):
    return [SimpleNamespace(metadata=SimpleNamespace(dst_node_id=n)) for n in nodes]


def _reply(node, content=None):
    return SimpleNamespace(metadata=SimpleNamespace(src_node_id=node), has_error=lambda: False,
                           content=dict(content or {}))


def test_a_node_that_does_not_answer_or_answers_with_an_error_stops_the_run_naming_it():
    t = _transport({1: "clinic A", 2: "clinic B", 3: "clinic C"})
    assert t.check_replies(_sent(1, 2), [_reply(2), _reply(1)], "round 1") == []
    with pytest.raises(sa.DeploymentRunError, match=r"round 1: no reply within 30 s from clinic B, clinic C"):
        t.check_replies(_sent(1, 2, 3), [_reply(1)], "round 1")
    with pytest.raises(sa.DeploymentRunError, match=r"from clinic B, clinic C"):
        t.check_replies(_sent(1, 2, 3), [_reply(1)], "round 2", tolerate=1)
    # within what the caller tolerates: the silent nodes, for it to record
    assert t.check_replies(_sent(1, 2, 3), [_reply(1)], "round 2", tolerate=2) == [2, 3]
    failed = _reply(3, {"error": {"message": "round 1: shard belongs to another federation"}})
    with pytest.raises(sa.DeploymentRunError, match="round 1: clinic C: round 1: shard belongs"):
        t.check_replies(_sent(1, 3), [_reply(1), failed], "round 1")
    # an error record without its message still names the site (not a KeyError of the server)
    with pytest.raises(sa.DeploymentRunError, match="round 1: clinic C: it failed and gave no reason"):
        t.check_replies(_sent(1, 3), [_reply(1), _reply(3, {"error": {}})], "round 1")


def test_a_site_lost_after_the_secure_sums_leaves_the_run_within_max_dropouts_and_beyond_stops():
    """Round 2 (or a public broadcast) after every secure sum is complete: a site that does not answer
    misses only its own model — within max_dropouts of a summable run it leaves the run, named with the
    step; one more, an error reply, or any loss in a run without dropouts stops the run naming them."""
    def run_with(method, max_dropouts, replies, dropped=None):
        run = _run(3, dropped)
        run.dropped_at = {}
        run.config = RunConfig(method=method, epsilon=1.0, max_dropouts=max_dropouts)
        t = run.transport
        t.entity_of_node = {1: "clinic A", 2: "clinic B", 3: "clinic C"}
        events = []
        t.send_and_receive = lambda msgs, timeout: replies
        t.log = t.dump = lambda *a, **k: None
        t.progress = lambda event, **info: events.append((event, info))
        return run, events

    run, events = run_with("dp-popularity", 1, [_reply(1), _reply(2)])
    got = run.exchange(_sent(1, 2, 3), 2, "item factors V", sa.ROUND2_REPLY, "round 2")
    assert [r.metadata.src_node_id for r in got] == [1, 2]
    assert run.dropped == {3: "clinic C"} and run.dropped_at == {"clinic C": "round 2"}
    assert events == [("dropout", {"entities": ["clinic C"], "stage": "round 2", "contributors": None})]
    # one already lost in a secure sum: the budget of one is spent
    run, _ = run_with("dp-popularity", 1, [_reply(1)], dropped={2: "clinic B"})
    with pytest.raises(sa.DeploymentRunError, match="round 2: no reply within 30 s from clinic C"):
        run.exchange(_sent(1, 3), 2, "item factors V", sa.ROUND2_REPLY, "round 2")
    run, _ = run_with("dp-popularity", 0, [_reply(1), _reply(2)])
    with pytest.raises(sa.DeploymentRunError, match="from clinic C"):
        run.exchange(_sent(1, 2, 3), 2, "item factors V", sa.ROUND2_REPLY, "round 2")
    run, _ = run_with("dp-popularity", 1, [_reply(1), _reply(3, {"error": {"message": "disk full"}})])
    with pytest.raises(sa.DeploymentRunError, match="clinic C: disk full"):
        run.exchange(_sent(1, 2, 3), 2, "item factors V", sa.ROUND2_REPLY, "round 2")
    assert run.dropped == {}


def test_a_serverapp_interrupted_by_flowers_heartbeat_says_so_before_it_exits(monkeypatch):
    """Flower's heartbeat thread raises SIGINT in the ServerApp when the SuperLink stops acknowledging
    the run's task: the launcher must read one error event, not wait its whole timeout."""
    events = []

    class Interrupted:
        def __init__(self, grid, context):
            self.transport = SimpleNamespace(bell=None, progress=lambda event, **info: events.append((event, info)))

        def run(self):
            raise KeyboardInterrupt

    monkeypatch.setattr(sa, "_Run", Interrupted)
    with pytest.raises(KeyboardInterrupt):
        sa.main(None, None)
    assert [e for e, _ in events] == ["error"] and "SuperLink ended the run's task" in events[0][1]["message"]


def test_a_run_that_fails_after_every_site_accepted_tells_the_sites_still_in_it_and_says_what_they_answered(
        monkeypatch):
    """Every site accepted and was charged; a run that then fails (a secure sum short of its sites, a node's
    error) tells each site still in it that the run ended — a site whose own store says it drew nothing gives
    its charge back — without holding the failed run up for a full round timeout, and the coordinator's
    error says what the sites answered. A site lost earlier is not asked."""
    events, told = [], []
    run = _run(3, dropped={3: "clinic 3"})
    run.transport.progress = lambda event, **info: events.append((event, info))
    run.transport.bell = None
    run.withdrawal_note, run.withdrawals = "", {}
    run.config = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    run.timings = {}
    run.wait_for_nodes = lambda: [1, 2, 3]
    run.site_decisions = lambda nodes: None

    def failed(nodes, summable, t_start):
        raise sa.DeploymentRunError("secure aggregation ended with 1 of 3 entities")

    def withdraw(nodes, why=sa.WITHDRAW_REQUEST, timeout=None):
        told.append((nodes, why, timeout))
        return "; 2 of the 2 site(s) that accepted gave their charge back"

    run.rounds, run.withdraw = failed, withdraw
    monkeypatch.setattr(sa, "_Run", lambda grid, context: run)
    sa.main(None, None)
    assert told == [([1, 2], sa.WITHDRAW_AFTER_FAILURE, sa.WITHDRAW_TIMEOUT_S)]
    # a site lost earlier was not asked: what it drew is unknown, so the coordinator keeps its charge
    assert events == [("error", {"message": "secure aggregation ended with 1 of 3 entities; 2 of the 2 site(s) "
                                            "that accepted gave their charge back"})]
    # every site asked, every one drew nothing: nothing was released, the coordinator gives its charge back
    events.clear()
    run.dropped = {}
    run.withdraw = lambda nodes, why=None, timeout=None: (
        setattr(run, "withdrawals", {"withdrawn": ["a"] * len(nodes), "kept": [], "no_answer": 0}) or "; all back")
    sa.main(None, None)
    assert events == [("error", {"message": "secure aggregation ended with 1 of 3 entities; all back",
                                 "ledger_rows": 0})]
    run.withdraw = lambda nodes, why=None, timeout=None: (
        setattr(run, "withdrawals", {"withdrawn": ["a", "b"], "kept": ["c"], "no_answer": 0}) or "; one kept")
    events.clear()
    sa.main(None, None)
    assert "ledger_rows" not in events[0][1]
    run.withdraw = withdraw
    # a run that finishes tells no site anything
    told.clear()
    run.rounds = lambda nodes, summable, t_start: None
    run.run()
    assert told == []


def test_a_reply_that_says_its_node_is_gone_counts_as_no_reply():
    """Flower answers for a lost node with an error reply (its objects never arrived, the node stopped
    heartbeating, the message expired), sent from the ServerApp's own node id: the transport drops it,
    so the step sees that node as missing — within max_dropouts a loss, not a failure naming "node 0"."""
    from flwr.common.constant import ErrorCode

    def reply(to, node, code=None):
        return SimpleNamespace(metadata=SimpleNamespace(src_node_id=node, reply_to_message_id=to),
                               has_error=lambda: code is not None, error=SimpleNamespace(code=code, reason="gone"),
                               content={})

    for code in (ErrorCode.MESSAGE_UNAVAILABLE, ErrorCode.REPLY_MESSAGE_UNAVAILABLE, ErrorCode.NODE_UNAVAILABLE):
        t = _transport({1: "clinic A", 2: "clinic B"})
        t.bell, t.node_bells = None, []
        answers = [reply("m1", 1), reply("m2", 0, code)]
        t.grid = SimpleNamespace(push_messages=lambda msgs: ["m1", "m2"], pull_messages=lambda ids: answers)
        got = t.send_and_receive(_sent(1, 2), timeout=5)
        assert [r.metadata.src_node_id for r in got] == [1]
        assert t.check_replies(_sent(1, 2), got, "round 2", tolerate=1) == [2]
    # a node that failed (its ClientApp raised) is a failure, kept and reported
    t = _transport({1: "clinic A", 2: "clinic B"})
    t.bell, t.node_bells = None, []
    failed = [reply("m1", 1), reply("m2", 2, ErrorCode.CLIENT_APP_RAISED_EXCEPTION)]
    t.grid = SimpleNamespace(push_messages=lambda msgs: ["m1", "m2"], pull_messages=lambda ids: failed)
    assert len(t.send_and_receive(_sent(1, 2), timeout=5)) == 2


def test_a_replys_objects_are_pulled_for_at_most_the_round_timeout(monkeypatch):
    """A node killed between pushing its reply and its reply's objects: the ServerApp's pull gives up
    after the round timeout (Flower then answers with an error reply) instead of Flower's 2 h."""
    import time

    import flwr.superlink.grid.http_grid as http_grid
    from flwr.supercore.inflatable.inflatable_utils import ObjectPullError, ObjectUnavailableError

    monkeypatch.setattr(http_grid, "pull_objects", http_grid.pull_objects)  # restored after the test
    sa.bound_reply_pulls(0.3)

    def never_there(object_id):
        raise ObjectUnavailableError(object_id)

    t0 = time.monotonic()
    with pytest.raises(ObjectPullError, match="timeout or retry limit"):
        # (Flower's own try limit is kept finite here so that an unbounded pull fails the test, not hangs it)
        http_grid.pull_objects(object_ids=["a", "b"], pull_object_fn=never_there, initial_backoff=0.05,
                               backoff_cap=0.05, max_tries_per_object=100)
    assert time.monotonic() - t0 < 2.0
    assert http_grid.pull_objects(object_ids=["a"], pull_object_fn=lambda i: b"x") == {"a": b"x"}



def test_a_replys_objects_are_pulled_no_later_than_the_steps_deadline_and_a_grace(monkeypatch):
    """Within a step, a reply whose objects never come is given up at the step's deadline plus a grace
    (for a live node still uploading a reply that came in time), not a whole round timeout later: a
    step that loses several nodes mid-upload ends near its deadline. Between steps, the round timeout."""
    import time

    import flwr.superlink.grid.http_grid as http_grid
    from flwr.supercore.inflatable.inflatable_utils import ObjectPullError, ObjectUnavailableError

    clock = {"t": 100.0}
    monkeypatch.setattr(sa.time, "monotonic", lambda: clock["t"])
    monkeypatch.setattr(sa, "_step_deadline", [None])
    assert sa.reply_objects_bound(600.0) == 600.0  # no step
    sa._step_deadline[0] = 110.0
    assert sa.reply_objects_bound(600.0) == 10.0 + sa.REPLY_OBJECTS_GRACE  # 10 s left, then the grace
    assert sa.reply_objects_bound(12.0) == 12.0  # never beyond the round timeout
    clock["t"] = 500.0
    assert sa.reply_objects_bound(600.0) == sa.REPLY_OBJECTS_GRACE  # past the deadline: the grace only
    assert sa.reply_objects_bound(12.0) == 12.0  # (the grace at most the round timeout)
    monkeypatch.setattr(sa.time, "monotonic", time.monotonic)

    # Flower's pull, bounded through the same function (its own try limit kept at 5 s here)
    monkeypatch.setattr(http_grid, "pull_objects", http_grid.pull_objects)  # restored after the test
    monkeypatch.setattr(sa, "REPLY_OBJECTS_GRACE", 0.2)
    sa.bound_reply_pulls(100.0)

    def never_there(object_id):
        raise ObjectUnavailableError(object_id)

    sa._step_deadline[0] = time.monotonic() + 0.3
    t0 = time.monotonic()
    with pytest.raises(ObjectPullError, match="timeout or retry limit"):
        http_grid.pull_objects(object_ids=["a"], pull_object_fn=never_there, initial_backoff=0.05,
                               backoff_cap=0.05, max_tries_per_object=100)
    assert time.monotonic() - t0 < 1.5  # 0.3 s to the deadline + 0.2 s grace, not Flower's 5 s

    # the transport sets the step's deadline while it pulls and clears it after the step
    seen = []
    t = _transport({1: "clinic A"})
    t.bell, t.node_bells = None, []
    answer = SimpleNamespace(metadata=SimpleNamespace(src_node_id=1, reply_to_message_id="m1"),
                             has_error=lambda: False, content={})
    t.grid = SimpleNamespace(push_messages=lambda msgs: ["m1"],
                             pull_messages=lambda ids: seen.append(sa._step_deadline[0]) or [answer])
    before = time.monotonic()
    assert len(t.send_and_receive(_sent(1), timeout=40)) == 1
    assert len(seen) == 1 and before + 40 <= seen[0] <= time.monotonic() + 40
    assert sa._step_deadline[0] is None

def test_replies_stored_while_a_pull_waits_out_a_half_uploaded_reply_still_count(monkeypatch):
    """A node killed between pushing its reply and its objects holds the pull that finds it for the
    whole reply-object bound (the round timeout), so the step's deadline passes inside that pull. The
    nodes that answered meanwhile answered in time: their replies are pulled before the step ends,
    and only the killed node is missing."""
    from flwr.common.constant import ErrorCode

    clock = {"t": 0.0}
    monkeypatch.setattr(sa.time, "monotonic", lambda: clock["t"])

    def reply(to, node, code=None):
        return SimpleNamespace(metadata=SimpleNamespace(src_node_id=node, reply_to_message_id=to),
                               has_error=lambda: code is not None, error=SimpleNamespace(code=code, reason="gone"),
                               content={})

    pulls = []

    def pull_messages(ids):
        pulls.append(sorted(ids))
        if len(pulls) == 1:  # clinic B has answered
            return [reply("m2", 2)]
        if len(pulls) == 2:  # clinic C's reply is there without its objects: the pull waits out the bound
            clock["t"] += 30.0
            return [reply("m3", 0, ErrorCode.MESSAGE_UNAVAILABLE)]
        return [reply("m1", 1)]  # clinic A's reply, stored while the previous pull waited

    t = _transport({1: "clinic A", 2: "clinic B", 3: "clinic C"})
    t.bell, t.node_bells = None, []
    t.grid = SimpleNamespace(push_messages=lambda msgs: ["m1", "m2", "m3"], pull_messages=pull_messages)
    monkeypatch.setattr(sa.time, "sleep", lambda s: clock.__setitem__("t", clock["t"] + s))
    got = t.send_and_receive(_sent(1, 2, 3), timeout=30)
    assert sorted(r.metadata.src_node_id for r in got) == [1, 2]
    assert pulls == [["m1", "m2", "m3"], ["m1", "m3"], ["m1"]]
    assert t.check_replies(_sent(1, 2, 3), got, "round 2", tolerate=1) == [3]
    # a pull that begins after the deadline is the last one: no further pull for a node still silent
    pulls.clear()
    clock["t"] = 0.0
    t.grid = SimpleNamespace(push_messages=lambda msgs: ["m1", "m2"], pull_messages=lambda ids: pulls.append(1) or [])
    assert t.send_and_receive(_sent(1, 2), timeout=1) == [] and clock["t"] >= 1


def test_the_progress_file_is_read_a_whole_line_at_a_time(tmp_path):
    """The ServerApp may be appending an event while the launcher reads: a line without its newline
    is left for the next read, never parsed half-written."""
    from dpfed_core.deployment.launcher import ProgressFile

    path = tmp_path / "progress.jsonl"
    seen = []
    events = ProgressFile(path, seen.append, "run 1")
    path.write_text('{"event": "submitted"}\n{"event": "secagg_st', encoding="utf-8")
    assert [e["event"] for e in events.read()] == ["submitted"]
    with open(path, "a", encoding="utf-8") as f:
        f.write('age", "stage": "SecAgg+ setup"}\n')
    assert [e["event"] for e in events.read()] == ["secagg_stage"] and events.last == "secagg_stage"
    assert [e["event"] for e in seen] == ["submitted", "secagg_stage"]


def _run(n_entities, dropped=None):
    run = object.__new__(sa._Run)
    run.transport = _transport()
    run.n_entities = n_entities
    run.dropped = dict(dropped or {})
    return run


def test_the_server_orders_replies_by_entity_and_counts_a_dropped_entity_as_present():
    def meta(node, h, name):
        return _reply(node, {"meta": {"index": h, "entity": name}})

    run = _run(3)
    got = run.identify([meta(12, 2, "C"), meta(10, 0, "A"), meta(11, 1, "B")])
    assert [r.metadata.src_node_id for r in got] == [10, 11, 12]
    assert run.transport.entity_of_node == {10: "A", 11: "B", 12: "C"}
    with pytest.raises(sa.DeploymentRunError, match="expected 0…2"):
        _run(3).identify([meta(10, 0, "A"), meta(12, 2, "C")])
    after = _run(3, dropped={11: "B"})  # B dropped out of a secure sum within max_dropouts
    assert [r.metadata.src_node_id for r in after.identify([meta(10, 0, "A"), meta(12, 2, "C")])] == [10, 12]
    with pytest.raises(sa.DeploymentRunError, match="two SuperNodes serve entity"):
        _run(3).identify([meta(10, 0, "A"), meta(11, 0, "A"), meta(12, 2, "C")])
    # a node naming a place outside the declared federation is no entity of it, even with the count right
    with pytest.raises(sa.DeploymentRunError, match="expected 0…2"):
        _run(3).identify([meta(10, 0, "A"), meta(11, 1, "B"), meta(12, 3, "D")])


class _Fused:
    """Two stages in one secure sum: 4 entries, then 3 on the items the first fixes ahead."""

    name = "fused-example"

    def share_length(self, stage, n_items, public):
        return 4 if stage == "a" else len(public["items"])

    def public_ahead(self, stage, n_items):
        return {} if stage == "a" else {"items": np.array([0, 1, 2])}


def test_a_fused_sum_is_split_by_its_stages_public_lengths_and_a_mismatch_stops_the_run():
    assert sa._SecureSum.fused_lengths(_Fused(), ("a",), 9, {}, 11) == [11]
    assert sa._SecureSum.fused_lengths(_Fused(), ("a", "b"), 9, {}, 7) == [4, 3]
    with pytest.raises(sa.DeploymentRunError, match="has 8 entries, not the 4 \\+ 3"):
        sa._SecureSum.fused_lengths(_Fused(), ("a", "b"), 9, {}, 8)
    sa._SecureSum.check_ahead(_Fused(), "b", 9, {"items": np.array([0, 1, 2])})
    for public in ({}, {"items": np.array([0, 1, 5])}):
        with pytest.raises(sa.DeploymentRunError, match="fixed ahead"):
            sa._SecureSum.check_ahead(_Fused(), "b", 9, public)


# ============================================================================ before anything starts
def test_a_simulation_run_needs_a_given_policy_that_allows_it(tmp_path):
    sim = RunConfig(method="dp-popularity", epsilon=1.0, simulation=True)
    with pytest.raises(ConfigError, match="--simulation needs a site policy"):
        check_site_policy(sim, None)
    strict = write_policy(tmp_path / "strict.toml", methods=["dp-popularity"], max_epsilon=1.0,
                          budget_epsilon=5.0, store=str(tmp_path / "{site}.sqlite3"))
    with pytest.raises(ConfigError, match="does not allow simulation"):
        check_site_policy(sim, strict)
    check_site_policy(sim.replace(simulation=False), strict)
    check_site_policy(sim.replace(simulation=False), None)  # a policy matching the run is written


def test_a_run_every_local_site_would_refuse_is_one_error_naming_the_flag_before_anything_starts(tmp_path):
    """deploy-local gives every local site the one policy: a run it refuses by a rule is refused before
    Flower starts, naming the rule and the flag that meets it, and a policy written for one site is
    refused as the shared one; the sites' own refusals read once per distinct reason."""
    ds = _clinics(3)
    policy = write_policy(tmp_path / "p.toml", methods=["dp-popularity"], max_epsilon=0.5, budget_epsilon=5.0,
                          store=str(tmp_path / "{site}.sqlite3"))
    run = RunConfig(method="dp-popularity", epsilon=1.0)
    with pytest.raises(ConfigError, match=r"every site would refuse this run under rule 'max_epsilon' .*ε = 1 per "
                                          r"run is above the site's max_epsilon = 0.5\. Change --epsilon, or "
                                          r"max_epsilon in the policy"):
        check_site_policy(run, policy, ds)
    check_site_policy(run.replace(epsilon=0.5), policy, ds)
    with pytest.raises(ConfigError, match=r"rule 'methods' .* Change --method"):
        check_site_policy(run.replace(method="dp-cooccurrence", epsilon=0.5), policy, ds)
    with pytest.raises(ConfigError, match=r"rule 'max_dropouts' .* Change --max-dropouts") as err:
        check_site_policy(run.replace(epsilon=0.5, max_dropouts=1), policy, ds)
    # as the CLI prints it: the run's flag is a flag, the policy's rule and key stay as the file writes them
    from dpfed_core.cli.main import render_error

    shown = render_error(err.value)
    assert "rule 'max_dropouts' of --site-policy" in shown and "site's max_dropouts = 0" in shown, shown
    assert shown.endswith("Change --max-dropouts, or max_dropouts in the policy (nothing was charged or started)"), shown
    # ε = ∞ makes a DP method's release exact: a finite --epsilon meets allow_non_private, not only --method
    with pytest.raises(ConfigError, match=r"rule 'allow_non_private' .* Change --epsilon \(a finite ε\) or --method, "
                                          r"or allow_non_private in the policy"):
        check_site_policy(run.replace(epsilon=math.inf), policy, ds)
    one = write_policy(tmp_path / "one.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=5.0,
                       store=str(tmp_path / "{site}.sqlite3"), site=ds.entity_names[0])
    with pytest.raises(ConfigError, match=r"written for site 'clinic 0' \(its site key\)"):
        check_site_policy(run, one, ds)
    refused = [{"entity": e, "rule": "max_epsilon", "message": "ε = 1 is above 0.5"} for e in ("A", "B", "C")]
    refused.append({"entity": "D", "rule": "max_delta", "message": "δ too large"})
    assert sa.refusal_lines(refused) == ("A, B, C (rule max_epsilon): ε = 1 is above 0.5; D (rule max_delta): "
                                         "δ too large")
    # a site's own refusal text starts with its rule: the clause says the rule once
    from dpfed_core.deployment.site_policy import PolicyRefused

    said = [{"entity": e, "rule": "budget_epsilon",
             "message": str(PolicyRefused("budget_epsilon", "the run (ε = 1) would pass this site's budget"))}
            for e in ("A", "B")]
    assert sa.refusal_lines(said) == "A, B (rule budget_epsilon): the run (ε = 1) would pass this site's budget"


def test_each_sites_own_policy_and_store_folder_are_checked_before_anything_starts(tmp_path):
    """One policy per site: each is checked against the run (a refusal names the site and its file), the
    list must give every site one, and a store folder a site's policy names must exist."""
    ds = _clinics(3)
    keys = dict(methods=["dp-popularity"], budget_epsilon=5.0, store=str(tmp_path / "{site}.sqlite3"))
    loose = write_policy(tmp_path / "loose.toml", max_epsilon=1.0, **keys)
    tight = write_policy(tmp_path / "tight.toml", max_epsilon=0.5, **keys)
    run = RunConfig(method="dp-popularity", epsilon=1.0)
    check_site_policy(run, [loose, loose, loose], ds)
    with pytest.raises(ConfigError, match=r"site 'clinic 2' would refuse this run under rule 'max_epsilon' of "
                                          r"--site-policy .*tight\.toml"):
        check_site_policy(run, [loose, loose, tight], ds)
    with pytest.raises(ConfigError, match="2 site policies for 3 entities"):
        check_site_policy(run, [loose, loose], ds)
    gone = write_policy(tmp_path / "gone.toml", max_epsilon=1.0,
                        **{**keys, "store": str(tmp_path / "stores" / "site.sqlite3")})
    (tmp_path / "stores").rmdir()
    with pytest.raises(ConfigError, match=r"--site-policy .*gone\.toml: the store folder .*stores does not exist.*"
                                          r"every site would refuse the run"):
        check_site_policy(run, gone, ds)


def test_a_row_bound_the_method_derives_is_checked_against_value_bounds_before_anything_starts(tmp_path):
    """dp-gaussian without row_norm scales rows to Λ∞·√min(m, 64) = 5·√8 on the clinics' 8 items: a policy
    whose value_bounds exclude it is one error naming the rule and the flag before Flower starts."""
    ds = _clinics(3)
    run = RunConfig(method="dp-gaussian", epsilon=1.0, k=2)
    keys = dict(methods=["dp-gaussian"], max_epsilon=1.0, budget_epsilon=5.0, store=str(tmp_path / "{site}.sqlite3"))
    with pytest.raises(ConfigError, match=r"rule 'value_bounds' .*'row_norm': 14\.14.*dp-gaussian's default for "
                                          r"this run.* Change --value-max or the method's bound parameters"):
        check_site_policy(run, write_policy(tmp_path / "narrow.toml", value_bounds=[0, 10], **keys), ds)
    check_site_policy(run, write_policy(tmp_path / "wide.toml", value_bounds=[0, 15], **keys), ds)
    check_site_policy(run.replace(method_params={"row_norm": 10.0}),
                      write_policy(tmp_path / "named.toml", value_bounds=[0, 10], **keys), ds)


def _clinics(n_entities):
    rng = np.random.default_rng(2)
    X = sp.csr_matrix(rng.poisson(0.5, (12 * n_entities, 8)).astype(float))
    ent = np.repeat([f"clinic {h}" for h in range(n_entities)], 12)
    return FederatedDataset.from_parts(X, ent, value_kind="counts", value_max=5, name="clinics",
                                       item_source="declared")


def test_a_deployment_needs_two_entities_and_dropouts_only_for_summable_methods():
    check_deployable(_clinics(2), RunConfig(method="dp-popularity", epsilon=1.0))
    with pytest.raises(ConfigError, match="at least 2 entities, the data has 1"):
        check_deployable(_clinics(1), RunConfig(method="dp-popularity", epsilon=1.0))
    with pytest.raises(ConfigError, match="--max-dropouts applies to summable methods"):
        check_deployable(_clinics(3), RunConfig(method="kmeans", max_dropouts=1))


def test_the_local_reports_are_this_runs_and_a_dropped_entity_has_none(tmp_path):
    names = ["clinic 0", "clinic 1", "clinic 2"]
    fed = SimpleNamespace(entity_names=names, report_path=lambda h: tmp_path / f"{h}.report.json")
    for h in (0, 2):
        (tmp_path / f"{h}.report.json").write_text(dumps({"run_id": 5, "entity": names[h]}))
    assert [r["entity"] for r in read_local_reports(fed, 5, skip=("clinic 1",))] == ["clinic 0", "clinic 2"]
    with pytest.raises(DeploymentError, match="'clinic 1': no local evaluation report"):
        read_local_reports(fed, 5)
    with pytest.raises(DeploymentError, match="from run 5, not run 6"):
        read_local_reports(fed, 6, skip=("clinic 1",))



def test_reports_that_do_not_match_are_shown_against_the_entities_that_did_not_drop_out():
    from dpfed_core.deployment.deployed import _document
    from dpfed_core.methods import get_method

    ds = _clinics(3)
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, max_dropouts=1)
    res = {"entities": [{"entity": "clinic 2", "index": 2}, {"entity": "clinic 0", "index": 0}],
           "dropped": ["clinic 1"]}
    fed = SimpleNamespace(insecure=False)
    with pytest.raises(DeploymentError) as err:
        _document(ds, cfg, get_method(cfg.method), res, [{"entity": "clinic 0"}, {"entity": "clinic 1"}], fed, {})
    assert str(err.value).endswith("['clinic 0', 'clinic 1'] vs ['clinic 0', 'clinic 2']")


def test_a_shard_written_before_it_stated_its_item_source_is_refused_naming_write_shards(tmp_path):
    """A node reads its declared catalogue and where its items come from in its own shard; a shard of
    the format without them would leave both to the coordinator's message: refused, with the fix."""
    from dpfed_core.deployment.shards import load_shard, write_shards
    from dpfed_core.errors import ConfigError
    from dpfed_core.evaluation.experiments import make_split

    X = sp.csr_matrix(np.ones((6, 4)))
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B"], 3), value_kind="counts", value_max=5, name="d")
    path = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")[0]
    assert load_shard(path).item_source == ds.item_source
    with np.load(path, allow_pickle=False) as z:
        old = {k: z[k] for k in z.files if k not in ("item_source", "n_declared")}
    old["version"] = np.asarray(1)
    with open(path, "wb") as f:
        np.savez(f, **old)
    with pytest.raises(ConfigError, match="format version 1, expected 2; rewrite it with `python -m dpfed_core "
                                          "write-shards`"):
        load_shard(path)


# ============================================================================ a site's handlers, its own law
def _site(tmp_path, monkeypatch, method="dp-popularity", **policy_keys):
    """The first site of three clinics: its shard, its policy file and a node context naming both;
    the handlers' replies as plain objects (outside a Flower task)."""
    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.evaluation.experiments import make_split

    ds = _clinics(3)
    shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")
    keys = {"methods": [method], "max_epsilon": 1.0, "budget_epsilon": 5.0, "store": str(tmp_path / "{site}.sqlite3"),
            **policy_keys}
    policy = write_policy(tmp_path / "p.toml", **keys)
    monkeypatch.setattr(ca, "Message", lambda content, reply_to=None: SimpleNamespace(content=content))
    monkeypatch.setattr(ca, "message_bytes", lambda _msg: 0)
    return ds, load_policy(policy), _context(**{"data-path": str(shards[0]), "policy-path": str(policy)})


def _ask(cfg, n_entities=3, n_items=8):
    from dpfed_core.deployment.wire import run_json

    return SimpleNamespace(content={"config": {"config": run_json(cfg, "declared", n_items), "n-entities": n_entities}})


def _one_run() -> float:
    """A site's spend after one Gaussian run at ε = 1 (δ 1e-6) under a budget δ of 1e-4: its ρ read at half
    the budget's δ (zCDP, as the coordinator's odometer composes)."""
    from dpfed_core.privacy.accounting import zcdp_epsilon_of_rho
    from dpfed_core.privacy.noise import zcdp_rho_for_epsilon

    return zcdp_epsilon_of_rho(zcdp_rho_for_epsilon(1.0, 1e-6), 5e-5)


def _spent(policy) -> float:
    from dpfed_core.privacy.odometer import BudgetOdometer

    odo = BudgetOdometer(policy.store_for("clinic 0"))
    return sum(b.spent_epsilon for d in odo.datasets() for b in odo.balance(d["key"]))


def test_a_site_decides_on_the_row_bound_its_method_derives_before_any_charge(tmp_path, monkeypatch):
    """A run that names no row_norm: the site checks dp-gaussian's own default Λ∞·√min(m, 64) (5·√8 on the
    run's 8 declared items) against its value_bounds, refuses it outside them with nothing charged, and
    accepts it within."""
    run = RunConfig(method="dp-gaussian", epsilon=1.0, k=2)
    ds, policy, ctx = _site(tmp_path / "narrow", monkeypatch, method="dp-gaussian", value_bounds=[0, 10])
    meta = ca.decide(_ask(run), ctx).content["meta"]
    assert (meta["decision"], meta["rule"]) == ("refused", "value_bounds"), meta
    assert "'row_norm': 14.14" in str(meta["message"]) and "dp-gaussian's default" in str(meta["message"]), meta
    assert _spent(policy) == 0
    # a run JSON that states no catalogue size: checked at the largest default (5·√64), never at the shard's
    # own width, which the refusal would tell the coordinator
    meta = ca.decide(_ask(run, n_items=None), ctx).content["meta"]
    assert (meta["decision"], meta["rule"]) == ("refused", "value_bounds") and "'row_norm': 40.0" in str(meta["message"])
    assert "14.14" not in str(meta["message"]) and _spent(policy) == 0
    ds, policy, ctx = _site(tmp_path / "wide", monkeypatch, method="dp-gaussian", value_bounds=[0, 15])
    assert ca.decide(_ask(run), ctx).content["meta"]["decision"] == "accepted"
    assert _spent(policy) == pytest.approx(1.0)  # a prototype release is charged its ε


@pytest.mark.parametrize("method, params, named", [
    ("dp-gaussian", {"row_norm": -1}, "row_norm"),
    ("dp-gaussian", {"row_nrom": 3.0}, "'row_nrom'"),
    ("dp-popularity", {"row_norm": "wide"}, "row_norm"),
    ("kmeans", {"n_init": 0}, "n_init"),
    ("dp-gaussian", {"trials": 2, "candidates": "lsh"}, "trials > 1 is not supported with candidates='lsh'"),
], ids=["out of range", "unknown name", "wrong type", "non-private method", "checked by the release"])
def test_a_request_whose_method_parameter_is_invalid_is_refused_naming_it_and_charges_nothing(
        tmp_path, monkeypatch, capsys, method, params, named):
    """A coordinator's request whose method cannot take one of its parameters is malformed: the site refuses it
    under 'run_parameters' naming the parameter and what is wrong — a decision, logged in the site's release log
    and its own log like any refusal, not a failure of the node — and charges nothing. A later release asked
    under it is refused before anything is marked drawn; the same run with a valid parameter is accepted. The
    decision builds the method as the node's handlers do, with the checks its release makes before it draws:
    a combination of parameters the release refuses is refused when the site decides, not after a charge."""
    ds, policy, ctx = _site(tmp_path, monkeypatch, method=method, allow_non_private=True)
    valid = RunConfig(method=method, epsilon=1.0 if method != "kmeans" else math.inf, k=2, seed=0)
    bad = _ask(valid.replace(method_params=params))
    reply = ca.decide(bad, ctx).content
    assert "error" not in reply, reply
    meta = reply["meta"]
    assert (meta["decision"], meta["rule"], meta["entity"]) == ("refused", "run_parameters", "clinic 0"), meta
    assert named in str(meta["message"]), meta
    assert ca.ACCEPTED_KEY not in ctx.state.config_records and _spent(policy) == 0
    logged = [r for r in SiteLog(policy.store_for("clinic 0")).rows() if r["decision"] == "refused"]
    assert [r["rule"] for r in logged] == ["run_parameters"] and named in logged[0]["note"]
    assert "run_parameters" in capsys.readouterr().err
    # no release is drawn on it: there is no acceptance to draw on
    asked = ca.round1(bad, ctx).content if method != "dp-popularity" else None
    if asked is not None:
        assert "release" not in asked and "accepted_request" in str(asked["error"]["message"])
    assert ca._released_stages(ctx) == [] and _spent(policy) == 0
    assert ca.decide(_ask(valid), ctx).content["meta"]["decision"] == "accepted"


def test_a_request_for_a_method_the_node_does_not_have_is_refused_without_listing_the_nodes_methods(
        tmp_path, monkeypatch):
    """A run naming a method this node has no class for (a misspelling, a plug-in the site never loaded) is a
    'run_parameters' refusal naming the method, charged nothing — not a node failure whose text would list
    every method the node has, its plug-ins included (the site's own configuration)."""
    ds, policy, ctx = _site(tmp_path, monkeypatch, method="dp-popularity")
    reply = ca.decide(_ask(RunConfig(method="dp-popularty", epsilon=1.0)), ctx).content
    assert "error" not in reply, reply
    meta = reply["meta"]
    assert (meta["decision"], meta["rule"]) == ("refused", "run_parameters") and "'dp-popularty'" in meta["message"]
    assert not any(name in meta["message"] for name in ("dp-popularity", "kmeans", "dp-cooccurrence")), meta
    assert ca.ACCEPTED_KEY not in ctx.state.config_records and _spent(policy) == 0


@pytest.mark.parametrize("edit, named", [
    (lambda d: d.update(speed="fast"), "'speed' this node does not know"),
    (lambda d: d.update(rank="eight"), "the run's instructions cannot be read"),
], ids=["unknown field", "wrong kind of value"])
def test_run_instructions_the_node_cannot_read_are_refused_not_a_node_failure(tmp_path, monkeypatch, capsys,
                                                                             edit, named):
    """Run instructions this node cannot read — a field it does not know (a coordinator of another version),
    a value of the wrong kind — are the coordinator's request, refused under 'run_parameters' naming what is
    wrong, charged nothing, said in the site's own log; not a failure of the node."""
    import json

    ds, policy, ctx = _site(tmp_path, monkeypatch, method="dp-popularity")
    asked = _ask(RunConfig(method="dp-popularity", epsilon=1.0))
    d = json.loads(asked.content["config"]["config"])
    edit(d)
    asked.content["config"]["config"] = json.dumps(d)
    reply = ca.decide(asked, ctx).content
    assert "error" not in reply, reply
    meta = reply["meta"]
    assert (meta["decision"], meta["rule"], meta["entity"]) == ("refused", "run_parameters", "clinic 0"), meta
    assert named in str(meta["message"]), meta
    assert ca.ACCEPTED_KEY not in ctx.state.config_records and _spent(policy) == 0
    assert "run_parameters" in capsys.readouterr().err


def test_the_coordinator_says_which_parameter_a_site_refused_a_run_for(tmp_path, monkeypatch):
    """A site's 'run_parameters' refusal reaches the user as every refusal does — the ServerApp's error, the
    launcher's DeploymentError read from its progress file and the CLI's one line — with the parameter named
    as the run wrote it, not rewritten into a flag."""
    import json

    from dpfed_core.cli.main import render_error
    from dpfed_core.deployment.launcher import ProgressFile

    ds, policy, ctx = _site(tmp_path, monkeypatch, method="dp-gaussian")
    meta = ca.decide(_ask(RunConfig(method="dp-gaussian", epsilon=1.0, k=2, method_params={"row_norm": -1})),
                     ctx).content["meta"]
    monkeypatch.setattr(sa, "Message", lambda content, dst_node_id, message_type: SimpleNamespace(
        content=content, metadata=SimpleNamespace(dst_node_id=dst_node_id, message_type=message_type)))
    run = _run(2)
    run.config_json, run.decisions = "{}", []
    run.withdraw = lambda nodes: ""
    t = run.transport
    t.log = t.dump = t.progress = lambda *a, **k: None
    t.send_and_receive = lambda msgs, timeout: [
        _reply(1, {"meta": dict(meta)}),
        _reply(2, {"meta": {"entity": "clinic 1", "decision": "accepted", "rule": "", "message": ""}})]
    with pytest.raises(sa.DeploymentRunError, match=r"clinic 0 \(rule run_parameters\)") as err:
        run.site_decisions([1, 2])
    assert err.value.ledger_rows == 0
    progress = tmp_path / "progress.jsonl"
    progress.write_text(json.dumps({"event": "error", "message": str(err.value), "ledger_rows": 0}) + "\n")
    with pytest.raises(DeploymentError) as shown:
        ProgressFile(progress, None, "run 7").read()
    line = render_error(shown.value)
    assert "rule run_parameters" in line and "row_norm must be a number in (0, ∞)" in line and "got -1" in line, line


def test_a_sites_decision_reads_the_value_bound_and_the_federation_from_its_own_shard(tmp_path, monkeypatch):
    """The request a site checks carries its shard's own value bound (5 here, outside value_bounds
    [0, 2]), a run declaring another federation size than the shard's is not this site's run, and a
    second request in the same run that differs from the accepted one is refused, not 'already accepted'."""
    ds, policy, ctx = _site(tmp_path, monkeypatch, value_bounds=[0, 2])
    meta = ca.decide(_ask(RunConfig(method="dp-popularity", epsilon=1.0)), ctx).content["meta"]
    assert (meta["decision"], meta["rule"]) == ("refused", "value_bounds") and "value_max" in str(meta["message"])

    ds, policy, ctx = _site(tmp_path / "b", monkeypatch)
    reply = ca.decide(_ask(RunConfig(method="dp-popularity", epsilon=1.0), n_entities=4), ctx)
    assert "error" in reply.content and "4" in str(reply.content["error"]["message"])
    assert not policy.store_for("clinic 0").exists()  # nothing decided, nothing charged
    cfg = RunConfig(method="dp-popularity", epsilon=1.0)
    assert ca.decide(_ask(cfg), ctx).content["meta"]["decision"] == "accepted"
    assert ca.decide(_ask(cfg), ctx).content["meta"]["message"] == "already accepted"
    meta = ca.decide(_ask(cfg.replace(epsilon=0.5)), ctx).content["meta"]
    assert (meta["decision"], meta["rule"]) == ("refused", "accepted_request")
    assert _spent(policy) == pytest.approx(_one_run())


@pytest.mark.parametrize("released", [True, False], ids=["a stage released", "nothing drawn"])
def test_a_site_told_its_run_ended_refunds_only_what_its_own_record_says_it_never_released(tmp_path, monkeypatch,
                                                                                          released):
    """query.withdraw only asks: the site reads its own record of the run — a stage it marked released
    keeps the charge, nothing released gives it back — and either way it draws nothing more in the run."""
    from dpfed_core.deployment.shards import load_shard
    from dpfed_core.deployment.site_policy import PolicyRefused

    ds, policy, ctx = _site(tmp_path, monkeypatch)
    ask = _ask(RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure"))
    assert ca.decide(ask, ctx).content["meta"]["decision"] == "accepted"
    # a withdrawal of another request than the one accepted is not about this run: nothing given back
    other = ca.withdraw(_ask(RunConfig(method="dp-popularity", epsilon=0.5, aggregation="secure")), ctx)
    assert (other.content["meta"]["decision"], other.content["meta"]["rule"]) == ("kept", "accepted_request")
    assert _spent(policy) == pytest.approx(_one_run())
    ca._require_accepted(ctx, ask.content["config"])  # and the accepted run goes on
    shard = load_shard(ctx.node_config["data-path"])
    if released:
        ca._require_accepted(ctx, ask.content["config"], "release", shard)  # marked before its draw
    meta = ca.withdraw(ask, ctx).content["meta"]
    assert meta["decision"] == ("kept" if released else "withdrawn")
    assert _spent(policy) == pytest.approx(_one_run() if released else 0.0)
    # asked again (a retried message): the same answer from the same record, not a refusal read as "kept"
    again = ca.withdraw(ask, ctx).content["meta"]
    assert (again["decision"], again["rule"]) == (meta["decision"], "")
    assert _spent(policy) == pytest.approx(_one_run() if released else 0.0)
    # refused by the node's own record of the withdrawal, whether or not the charge was given back
    with pytest.raises(PolicyRefused, match="withdrew from this run when the coordinator said"):
        ca._require_accepted(ctx, ask.content["config"], "another stage", shard)


def test_a_malformed_share_request_marks_nothing_drawn_and_a_drawn_stage_stays_marked(tmp_path, monkeypatch):
    """A secure sum's instructions are checked whole before its stages are marked drawn in the site's store:
    a label repeating a stage draws nothing, so the site can still release the stage and, had it drawn
    nothing, give the run's charge back; a stage it drew keeps the charge. A catalogue larger than the
    site's shard declares is refused when the site decides, before any charge."""
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    from dpfed_core.deployment.site_policy import withdraw_by_site
    from dpfed_core.errors import DpfedError

    ds, policy, ctx = _site(tmp_path, monkeypatch, method="dp-cooccurrence")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure", method_params={"max_items": 16})
    ask = _ask(cfg)
    assert ca.decide(ask, ctx).content["meta"]["decision"] == "accepted"

    def share(label):
        ins = {**ask.content["config"], "stage": label}
        return ca.secure_share(SimpleNamespace(content=compat.fitins_to_recorddict(
            FitIns(ndarrays_to_parameters([]), ins), keep_input=True)), ctx)

    with pytest.raises(DpfedError, match="not known ahead"):
        share("popularity+popularity")
    assert ca._released_stages(ctx) == []
    share("popularity")  # the stage the malformed label named is still this site's to release
    assert [o["decision"] for o in withdraw_by_site(policy.store_for("clinic 0"), "7")] == ["kept"]
    assert _spent(policy) > 0

    ds, policy, ctx = _site(tmp_path / "size", monkeypatch, method="dp-cooccurrence")
    meta = ca.decide(_ask(cfg, n_items=9), ctx).content["meta"]
    assert (meta["decision"], meta["rule"]) == ("refused", "item_catalogue")
    assert ca.ACCEPTED_KEY not in ctx.state.config_records and _spent(policy) == 0


def test_a_site_that_drew_nothing_after_a_malformed_label_gives_its_charge_back(tmp_path, monkeypatch):
    """The malformed label's refusal comes before the store's mark: the site's own withdrawal finds no
    stage drawn and gives the run's charge back."""
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    from dpfed_core.deployment.site_policy import withdraw_by_site
    from dpfed_core.errors import DpfedError

    ds, policy, ctx = _site(tmp_path, monkeypatch, method="dp-cooccurrence")
    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation="secure", method_params={"max_items": 16})
    ask = _ask(cfg)
    assert ca.decide(ask, ctx).content["meta"]["decision"] == "accepted"
    ins = {**ask.content["config"], "stage": "popularity+popularity"}
    with pytest.raises(DpfedError, match="not known ahead"):
        ca.secure_share(SimpleNamespace(content=compat.fitins_to_recorddict(
            FitIns(ndarrays_to_parameters([]), ins), keep_input=True)), ctx)
    assert [o["decision"] for o in withdraw_by_site(policy.store_for("clinic 0"), "7")] == ["withdrawn"]
    assert _spent(policy) == pytest.approx(0.0)


def test_what_a_site_tells_the_coordinator_of_a_failure_holds_no_count_of_its_own_items_nor_its_paths(
        tmp_path, monkeypatch):
    """A site whose shard holds 8 declared items and 4 of its own: a broadcast V of any other row count
    than the catalogue's (the shard's width among them) is refused naming the run's catalogue only; a
    failure inside the node (a library's message counting its columns) and a shard of another federation
    reach the coordinator without the site's count or path, which its own log keeps."""
    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.evaluation.experiments import make_split

    X = sp.csr_matrix(np.random.default_rng(2).poisson(0.5, (36, 12)).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["A", "B", "C"], 12), value_kind="counts", value_max=5,
                                     name="own items", item_source="declared", n_declared=8)
    cfg = RunConfig(method="kmeans", k=3, seed=0)
    shard = write_shards(ds, make_split(ds, cfg), tmp_path / "shards")[0]
    ctx = _context(**{"data-path": str(shard), "report-path": str(tmp_path / "report.json")})
    monkeypatch.setattr(ca, "Message", lambda content, reply_to=None: SimpleNamespace(content=content))
    run = run_json(cfg, "declared", 8)
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run, "n-entities": 3, "operation": "op"})

    def round2(V):
        return ca.round2(SimpleNamespace(content={"config": {"config": run, "n-entities": 3},
                                                  "model": {"V": SimpleNamespace(numpy=lambda: V)}}), ctx).content

    ok = round2(np.ones((8, 3)))
    assert "meta" in ok
    for rows in (7, 9, 12, 13):
        err = str(round2(np.ones((rows, 3)))["error"]["message"])
        assert f"has shape ({rows}, 3); the run has 8 items in its declared catalogue" in err
        assert "12" not in err.replace(f"({rows}, 3)", "")
    assert "not finite" in str(round2(np.full((8, 3), np.nan))["error"]["message"])
    monkeypatch.setattr(ca, "entity_statistics", lambda *a: np.ones((12, 4)) @ np.ones((5, 1)))
    err = str(round2(np.ones((8, 3)))["error"]["message"])
    assert "12" not in err and "site's own log" in err
    reply = ca.decide(SimpleNamespace(content={"config": {"config": run, "n-entities": 4}}), ctx).content
    err = str(reply["error"]["message"])
    assert "federation of 3 entities, the run declares 4" in err and str(shard) not in err and "shards" not in err


def test_a_prototype_release_is_given_once_per_accepted_run(tmp_path, monkeypatch):
    """round1 claims its stage before it draws: the coordinator asking the same run's prototypes again
    gets an error naming the rule, and the site's log holds one release."""
    ds, policy, ctx = _site(tmp_path, monkeypatch, method="kmeans", allow_non_private=True)
    ask = _ask(RunConfig(method="kmeans", k=3, seed=0))
    assert ca.decide(ask, ctx).content["meta"]["decision"] == "accepted"
    first = ca.round1(ask, ctx)
    assert "release" in first.content
    again = ca.round1(ask, ctx)
    assert "release" not in again.content and "one_request_per_run" in str(again.content["error"]["message"])
    rows = [r for r in SiteLog(policy.store_for("clinic 0")).rows() if r["decision"] == "released"]
    assert len(rows) == 1 and math.isinf(rows[0]["epsilon"])  # a non-private release is stated as one


def test_a_secure_sums_setup_is_checked_against_the_accepted_runs_dropouts_not_the_sites_most(tmp_path):
    """A site that would allow one dropout accepted a run declaring none: its shares carry σ/√H, so a
    setup whose threshold lets one live site be claimed dropped is refused before SecAgg+ sees it."""
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key, Stage

    from dpfed_core.deployment.site_policy import PolicyRefused
    from dpfed_core.deployment.wire import run_json, secagg_shares, secagg_threshold

    policy = write_policy(tmp_path / "p.toml", methods=["dp-popularity"], max_epsilon=1.0, budget_epsilon=5.0,
                          store=str(tmp_path / "{site}.sqlite3"), max_dropouts=1)
    ctx = _context(**{"policy-path": str(policy)})
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run_json(cfg, "declared", 8),
                                                             "n-entities": 3, "operation": "op"})

    def setup(k, t):
        configs = {Key.STAGE: Stage.SETUP, Key.SAMPLE_NUMBER: 3, Key.SHARE_NUMBER: k, Key.THRESHOLD: t}
        return SimpleNamespace(metadata=SimpleNamespace(message_type="train"),
                               content=SimpleNamespace(config_records={RECORD_KEY_CONFIGS: configs}))

    def passed(msg, context):
        return "handed to SecAgg+"

    assert ca.site_policy_mod(setup(secagg_shares(3, 0), secagg_threshold(3, 0, 3)), ctx, passed) == "handed to SecAgg+"
    with pytest.raises(PolicyRefused, match="tolerates") as err:
        ca.site_policy_mod(setup(3, 2), ctx, passed)
    assert err.value.rule == "max_dropouts"


def test_each_site_of_a_simulation_draws_the_in_process_runs_stream_of_its_own_index():
    """Simulation only (production draws OS entropy): site h's stream is the in-process run's h-th
    spawn, so the deployment reproduces it, and no two sites share noise."""
    from dpfed_core.privacy.noise import method_generator

    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure", simulation=True, seed=5)
    want = [g.random(4) for g in method_generator(5, private=True, simulation=True).spawn(4)[:3]]
    got = [ca._summable_rng(cfg, 3, h, _context()).random(4) for h in range(3)]
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    assert not np.array_equal(got[0], got[1])


def test_a_shard_or_a_features_file_that_is_not_what_its_format_says_is_refused(tmp_path):
    """A shard is read without unpickling (an object array in it is refused, nothing executable
    loads), and the public item features must be finite and have a name per column."""
    from dpfed_core.deployment.shards import load_item_features, load_shard, write_shards
    from dpfed_core.evaluation.experiments import make_split

    ds = _clinics(2)
    path = write_shards(ds, make_split(ds, RunConfig(seed=0)), tmp_path / "shards")[0]
    with np.load(path, allow_pickle=False) as z:
        parts = {k: z[k] for k in z.files}
    parts["item_names"] = np.asarray(list(parts["item_names"]), dtype=object)
    with open(path, "wb") as f:
        np.savez(f, **parts)
    with pytest.raises(ConfigError, match="not a dpfed shard file"):
        load_shard(path)
    for features, names in ((np.full((8, 2), np.nan), ["a", "b"]), (np.ones((8, 2)), ["a"])):
        bad = tmp_path / "features.npz"
        np.savez(bad, version=np.asarray(1), features=features, names=np.asarray(names))
        with pytest.raises(ConfigError, match="item features"):
            load_item_features(bad, 8)


def test_site_policies_are_one_file_or_one_per_site_with_paths_a_node_config_can_carry(tmp_path):
    """A list of policies of another length than the sites would give a site none (or another's);
    a quote in a path would end the node config's string and let the rest of the path set other keys."""
    from dpfed_core.deployment.launcher import _policy_paths

    one = tmp_path / "p.toml"
    assert _policy_paths(one, 3) == [one.resolve()] * 3
    with pytest.raises(DeploymentError, match="2 site policies for 3 sites"):
        _policy_paths([one, one], 3)
    with pytest.raises(DeploymentError, match="quote"):
        _policy_paths(tmp_path / "a' data-path='x.toml", 2)


def test_a_sites_coalition_epsilon_counts_the_catalogues_share_and_states_the_coordinators_figure(tmp_path,
                                                                                                  monkeypatch):
    """A run that selects its catalogue federation-wide takes two shares of this site: against the server
    colluding with every other site its people have the ε of both, composed by zCDP (ρ adds up, converted
    once at the run's δ) as the coordinator composes them — its log states the coordinator's figure for the
    run as planned (the catalogue's row already counts the method's share at its planned ρ), below the two
    ε summed; a max_coalition_epsilon between that figure and the sum lets the run through, one between
    the catalogue's share alone and the figure stops the catalogue's share — the first, so no noise is spent
    on a run the site refuses and its stage is not marked drawn — and the ledger rows the site reports in
    round 2 are both shares'."""
    from flwr.common import FitIns, ndarrays_to_parameters
    from flwr.compat.common import recorddict_compat as compat

    from dpfed_core.deployment.site_policy import PolicyRefused
    from dpfed_core.deployment.wire import PUBLIC_AFTER_FIELD, PUBLIC_FIELD, loads, pack_arrays, run_json
    from dpfed_core.evaluation.catalogue_run import coalition_with_catalogue
    from dpfed_core.privacy import catalogue as cat
    from dpfed_core.privacy.ledger import ZCDP, PrivacyLedger

    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")

    def shares(ctx):
        """The catalogue's share, then the method's; yields the ε each alone gives against the coalition."""
        run = run_json(cfg, "secure")
        ctx.state.config_records[ca.ACCEPTED_KEY] = ConfigRecord({"config": run, "n-entities": 3, "operation": "op"})
        keys = np.unique(cat.item_buckets(ca._load(ctx, 3).item_names, cat.SECURE_CATALOGUE_BUCKETS))
        for extra in ({"stage": "catalogue"}, {PUBLIC_AFTER_FIELD: "catalogue", PUBLIC_FIELD: pack_arrays({"keys": keys})}):
            ins = {"config": run, "n-entities": 3, **extra}
            ca.secure_share(SimpleNamespace(content=compat.fitins_to_recorddict(
                FitIns(ndarrays_to_parameters([]), ins), keep_input=True)), ctx)
            kept = ctx.state.config_records[ca.STATE_KEY]
            ledgers.append(loads(str(kept["ledger"])))
            yield float(loads(str(kept["coalition_epsilon"])))

    def coordinators(rows, method):
        """The coordinator's figure from the rows the site reports (re-spent as deployed.py does)."""
        ledger = PrivacyLedger(cfg.epsilon, cfg.delta)
        for row in rows:
            ledger.spend(**{k: (math.nan if v is None else v) for k, v in row.items()})
        return coalition_with_catalogue(cfg, 3, method, ledger)

    ledgers = []
    ds, policy, ctx = _site(tmp_path, monkeypatch)
    catalogue, method = shares(ctx)
    # the ledger rows round 2 reports hold the catalogue's rows, then the method's
    assert ledgers[0] and len(ledgers[1]) > len(ledgers[0]) and ledgers[1][:len(ledgers[0])] == ledgers[0]
    assert 0 < catalogue < math.inf and 0 < method < math.inf
    so_far, whole = coordinators(ledgers[0], method), coordinators(ledgers[1], method)
    assert so_far < whole < so_far + method  # ρ adds up: tighter than the two ε summed
    # the catalogue's share states the run as planned (the method's share at its planned ρ, an upper bound
    # of its row): the coordinator's figure for the whole run, not the catalogue's alone
    notes = [r["note"] for r in SiteLog(policy.store_for("clinic 0")).rows() if r["decision"] == "released"]
    assert notes == [f"against the server with every other site: ε = {epsilon_that_holds(whole)}, "
                     f"δ = {cfg.delta:.3g} (the run as "
                     f"planned: its stages so far, and its later stages at their planned ρ; {ZCDP})"] * 2
    assert epsilon_that_holds(so_far) != epsilon_that_holds(whole)
    ds, roomy, ctx = _site(tmp_path / "roomy", monkeypatch, max_coalition_epsilon=(whole + so_far + method) / 2)
    assert len(list(shares(ctx))) == 2  # within the cap as the coordinator states the run
    ds, tight, ctx = _site(tmp_path / "tight", monkeypatch, max_coalition_epsilon=(so_far + whole) / 2)
    with pytest.raises(PolicyRefused) as err:
        next(shares(ctx))
    assert err.value.rule == "max_coalition_epsilon"
    assert "with its catalogue share, the run as planned" in str(err.value)
    with SiteLog(tight.store_for("clinic 0")).store.read() as con:
        assert con.execute("SELECT COUNT(*) FROM site_draws").fetchone()[0] == 0  # nothing marked drawn
    # a simulation run's rows state no ε against the coordinator: its seed reproduces the noise
    cfg = cfg.replace(simulation=True)
    ds, sim, ctx = _site(tmp_path / "sim", monkeypatch, allow_simulation=True)
    assert len(list(shares(ctx))) == 2
    notes = [r["note"] for r in SiteLog(sim.store_for("clinic 0")).rows() if r["decision"] == "released"]
    assert notes == [ca.SIMULATION_RELEASE_NOTE] * 2 and "ε = ∞" in ca.SIMULATION_RELEASE_NOTE


def test_a_site_that_does_not_decide_stops_the_run_before_any_share_and_the_others_get_their_charge_back(
        monkeypatch):
    """Every site's decision is needed before the first share: a silent site is no acceptance, and the
    run stops naming it instead of asking the others for their shares. Nothing was drawn anywhere: the
    sites that accepted are told the run ended (they give back their charge), as when a site refuses,
    and the coordinator's odometer is told no site drew (ledger_rows = 0)."""
    monkeypatch.setattr(sa, "Message", lambda content, dst_node_id, message_type: SimpleNamespace(
        content=content, metadata=SimpleNamespace(dst_node_id=dst_node_id, message_type=message_type)))
    run = _run(3)
    run.config_json, run.decisions = "{}", []
    told = []
    run.withdraw = lambda nodes: told.extend(nodes) or ""
    t = run.transport
    t.log = t.dump = t.progress = lambda *a, **k: None
    t.entity_of_node = {3: "clinic C"}
    accepted = [_reply(n, {"meta": {"entity": f"clinic {n}", "decision": "accepted", "rule": "", "message": ""}})
                for n in (1, 2)]
    t.send_and_receive = lambda msgs, timeout: accepted
    with pytest.raises(sa.DeploymentRunError, match="site policy decisions: no reply within 30 s from clinic C") as err:
        run.site_decisions([1, 2, 3])
    assert told == [1, 2] and err.value.ledger_rows == 0
    # a refusal, and a decision that is neither word (no acceptance, named as a reply that is no decision): the
    # run stops before any share and the sites that accepted are told
    for decision, rule, said in (("refused", "max_epsilon", r"1 of 3 site\(s\) refused the run — clinic C \(rule max_epsilon\)"),
                                 ("", "", r"site policy decision from clinic C: the reply is no decision")):
        told.clear()
        t.send_and_receive = lambda msgs, timeout, d=decision, r=rule: accepted + [_reply(3, {"meta": {
            "entity": "clinic C", "decision": d, "rule": r, "message": "above" if d else ""}})]
        with pytest.raises(sa.DeploymentRunError, match=said):
            run.site_decisions([1, 2, 3])
        assert told == [1, 2]


def test_a_secure_sum_is_the_contributors_exact_sum_and_never_released_with_fewer_than_h_minus_d(monkeypatch):
    """Each share carries σ/√(H − d): the server takes the sum of at least H − d contributors (their
    mean, as SecAgg+ returns it, times their number — never times H), records the site that dropped
    out, and stops the run when fewer contributed, whatever the SecAgg+ workflow let through; its
    reconstruction threshold stays H − d after a loss."""
    from flwr.app import ArrayRecord, Context, RecordDict
    from flwr.common import Code, FitRes, Status, ndarrays_to_parameters
    from flwr.server.workflow.constant import MAIN_PARAMS_RECORD

    def summed_by(contributors: int, dropped=None):
        class Workflow:
            """SecAgg+ as the server drives it, with ``contributors`` of the nodes' shares unmasked."""

            def __init__(self, **kw) -> None:
                setup.update(kw)

            def __call__(self, grid, legacy) -> None:
                proxies = list(legacy.client_manager.all().values())[:contributors]
                results = [(p, FitRes(Status(Code.OK, ""), ndarrays_to_parameters([np.full(4, 0.25)]), 1, {}))
                           for p in proxies]
                legacy.strategy.aggregate_fit(1, results, [])
                legacy.state.array_records[MAIN_PARAMS_RECORD] = ArrayRecord([np.full(4, 0.25)])  # their mean

        monkeypatch.setattr(sa, "_dropout_safe_secaggplus", lambda: Workflow)
        lost, setup = [], {}
        transport = SimpleNamespace(round_timeout=30.0, progress=lambda *a, **k: None, log=lambda *a, **k: None,
                                    dump=lambda *a, **k: None, name=lambda n: f"clinic {n}")
        run = SimpleNamespace(n_entities=3, dropped=dict(dropped or {}), transport=transport, config_json="{}", pending_public=None,
                              context=Context(run_id=1, node_id=0, node_config={}, state=RecordDict(), run_config={}),
                              grid=None, lose=lambda nodes, step, **event: lost.extend(nodes))
        method = SimpleNamespace(max_dropouts=1, stages=("release",))
        total, info = sa._SecureSum(run)([1, 2, 3], method, None)
        return total, info, lost, setup

    total, info, lost, setup = summed_by(3)
    np.testing.assert_array_equal(total, np.full(4, 0.75))
    assert info["contributors"] == 3 and lost == []
    total, info, lost, setup = summed_by(2)  # one site lost: within max_dropouts
    np.testing.assert_array_equal(total, np.full(4, 0.5))
    assert info["contributors"] == 2 and lost == [3]
    # a later sum after that loss: the threshold stays H − d (the survivors the noise was sized for),
    # never the live nodes' count minus d, which would let the server rebuild a live site's mask alone
    total, info, lost, setup = summed_by(2, dropped={3: "clinic 3"})
    assert setup["reconstruction_threshold"] == 2 and info["reconstruction_threshold"] == 2
    with pytest.raises(sa.DeploymentRunError, match="ended with 1 of 3 entities, fewer than the 2 the run needs"):
        summed_by(1)


def test_a_secure_sum_that_stops_on_silent_nodes_names_them_the_step_and_the_timeout_flag(monkeypatch):
    """A node that sends nothing within the round timeout (dead, or only slow) at a step of SecAgg+
    leaves the protocol without an error reply: the refusal says which entities went quiet, at which
    step, how long the server waited and the flag that lengthens the wait."""
    from flwr.app import Context, RecordDict
    from flwr.common import ndarray_to_bytes
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key

    # what a node's masked vector looks like to the server: SecAgg+'s weight entry, then the share
    masked = SimpleNamespace(config_records={RECORD_KEY_CONFIGS: {Key.MASKED_PARAMETERS: [
        ndarray_to_bytes(np.array([1])), ndarray_to_bytes(np.arange(4))]}})

    def envelope(dst=None, src=None):
        return SimpleNamespace(metadata=SimpleNamespace(dst_node_id=dst, src_node_id=src), has_error=lambda: False,
                               content=masked)

    class Workflow:
        """SecAgg+ whose masked vectors came from one node only: too few to unmask, no aggregate."""

        def __init__(self, **kw) -> None:
            pass

        def __call__(self, grid, legacy) -> None:
            for answering in ([1, 2, 3], [1, 2, 3], [1]):
                grid.send_and_receive([envelope(dst=n) for n in (1, 2, 3)], timeout=12.0)
                replies.append(answering)

    replies: list = []
    monkeypatch.setattr(sa, "_dropout_safe_secaggplus", lambda: Workflow)
    logged: list = []  # the transport's message log: each logged message is a row of it
    transport = SimpleNamespace(round_timeout=12.0, progress=lambda *a, **k: None, messages=logged,
                                log=lambda *a, **k: logged.append({}),
                                dump=lambda *a, **k: None, name=lambda n: f"clinic {n}",
                                send_and_receive=lambda msgs, timeout: [envelope(src=n) for n in
                                                                        ([1, 2, 3], [1, 2, 3], [1])[len(replies)]])
    run = SimpleNamespace(n_entities=3, dropped={}, transport=transport, config_json="{}", pending_public=None,
                          context=Context(run_id=1, node_id=0, node_config={}, state=RecordDict(), run_config={}),
                          grid=None, lose=lambda nodes, step, **event: None)
    method = SimpleNamespace(max_dropouts=1, stages=("release",))
    with pytest.raises(sa.DeploymentRunError) as err:
        sa._SecureSum(run)([1, 2, 3], method, None)
    message = str(err.value)
    assert "ended with 0 of 3 entities, fewer than the 2 the run needs" in message
    assert ("no answer within the round timeout (12 s; --round-timeout, or Round timeout on the Federate page "
            "lengthens it) from clinic 2, clinic 3 at SecAgg+ collect masked vectors") in message
    assert "see the SuperNode logs" not in message and "nothing was unmasked" in message


def test_one_policy_per_site_is_checked_site_by_site_before_anything_starts(tmp_path):
    """run_deployed takes a list of per-site policies as the federations do: each is read and checked
    for its own site (a list of paths was a TypeError), and a site its policy refuses is named."""
    from dpfed_core.data.loaders import load_data
    from dpfed_core.deployment.deployed import check_site_policy
    from dpfed_core.deployment.site_policy import PolicyWouldRefuse, write_policy

    ds = load_data("sample:clinic", federation="region")
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6)
    pols = [write_policy(tmp_path / f"{i}.toml", methods=["dp-popularity"], max_epsilon=2.0, budget_epsilon=5.0,
                         store=f"s{i}.sqlite3") for i in range(ds.n_entities)]
    check_site_policy(cfg, pols, ds)  # every site accepts
    strict = write_policy(tmp_path / "strict.toml", methods=["dp-popularity"], max_epsilon=0.5, budget_epsilon=5.0,
                          store="t.sqlite3")
    with pytest.raises(PolicyWouldRefuse, match=rf"site '{ds.entity_names[2]}' would refuse this run under rule "
                                                "'max_epsilon'"):
        check_site_policy(cfg, [*pols[:2], strict, *pols[3:]], ds)
    with pytest.raises(ConfigError, match="3 site policies for 4 entities"):
        check_site_policy(cfg, pols[:3], ds)
