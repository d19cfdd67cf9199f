"""The secure sum's workflow with sites lost at every step, driven in one process.

The server side is the workflow the ServerApp runs (:func:`_dropout_safe_secaggplus`, Flower's
SecAggPlusWorkflow with the nodes lost before they dealt their key shares taken out); each node is
Flower's own ``secaggplus_mod`` with a Context of its own, every message serialised to Flower's
protobuf and back as between two processes. A node "lost from step k" answers nothing from that
message round on. What must hold: within the reconstruction threshold the unmasked sum is exactly
the contributors' values (those whose masked vector came in), beyond it nothing is unmasked.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

pytest.importorskip("flwr")

from flwr.app import ArrayRecord, ConfigRecord, Context, Error, Message, RecordDict  # noqa: E402
from flwr.client.mod import secaggplus_mod  # noqa: E402
from flwr.common import Code, FitRes, Status, ndarrays_to_parameters  # noqa: E402
from flwr.common.serde import message_from_proto, message_to_proto  # noqa: E402
from flwr.compat.common import recorddict_compat as compat  # noqa: E402
from flwr.server import ServerConfig  # noqa: E402
from flwr.server.client_manager import SimpleClientManager  # noqa: E402
from flwr.server.compat.grid_client_proxy import GridClientProxy  # noqa: E402
from flwr.server.compat.legacy_context import LegacyContext  # noqa: E402
from flwr.server.strategy import FedAvg  # noqa: E402
from flwr.server.workflow import SecAggPlusWorkflow  # noqa: E402
from flwr.server.workflow.constant import MAIN_CONFIGS_RECORD, MAIN_PARAMS_RECORD, Key  # noqa: E402

from dpfed_core.deployment.server_app import SECAGG_STAGES, _dropout_safe_secaggplus  # noqa: E402

CLIP, TARGET, MODULUS = 8.0, 2 ** 22, 2 ** 40
#: one quantisation step of a value, times the five contributors at most
TOL = 5 * 2 * CLIP / TARGET


@pytest.fixture(autouse=True)
def _task_identity(monkeypatch):
    """The process-wide identity a ServerApp task has (Flower's run_serverapp sets it)."""
    from flwr.supercore.task_identity import TaskIdentity

    for k, v in (("_task_id", 1), ("_run_id", 1), ("_node_id", 0)):
        monkeypatch.setattr(TaskIdentity, k, v)


def _copy(msg: Message) -> Message:
    return message_from_proto(message_to_proto(msg))


def secure_sum(n_nodes: int, threshold: int, lost: dict[int, int], workflow=None):
    """Run one secure sum of ``n_nodes`` nodes (ids 101, 102, …; node i's value ``(i + 1)·v``) with
    ``lost[node] = k``: the node answers no message round from the k-th (0: setup, 1: share keys,
    2: collect masked vectors, 3: unmask). Returns ``(contributors, sum, their values' sum)`` or None
    when nothing was unmasked."""
    nodes = list(range(101, 101 + n_nodes))
    base = np.array([0.5, -1.25, 2.0, 0.0, 3.75])
    values = {n: base * (i + 1) / n_nodes for i, n in enumerate(nodes)}
    contexts = {n: Context(run_id=1, node_id=n, node_config={}, state=RecordDict(), run_config={}) for n in nodes}
    step = {"i": 0}

    class Grid:
        def send_and_receive(self, messages, *, timeout=None):
            k = step["i"]
            step["i"] += 1
            replies = []
            for m in messages:
                n = m.metadata.dst_node_id
                if lost.get(n, len(SECAGG_STAGES)) <= k:
                    continue  # a lost node: no reply, as after the round timeout

                def fit(msg, ctx, n=n):
                    res = FitRes(status=Status(Code.OK, ""), parameters=ndarrays_to_parameters([values[n]]),
                                 num_examples=1, metrics={})
                    return Message(compat.fitres_to_recorddict(res, True), reply_to=msg)

                try:
                    replies.append(_copy(secaggplus_mod(_copy(m), contexts[n], fit)))
                except Exception as exc:  # noqa: BLE001 — a failing node answers with an error, as Flower's does
                    replies.append(Message(Error(code=0, reason=f"{type(exc).__name__}: {exc}"), reply_to=m))
            return replies

    class SumOnly(FedAvg):
        contributors: set | None = None

        def aggregate_fit(self, server_round, results, failures):
            SumOnly.contributors = {proxy.node_id for proxy, _ in results}
            return (results[0][1].parameters if results else None), {}

    grid = Grid()
    legacy = LegacyContext(Context(run_id=1, node_id=0, node_config={}, state=RecordDict(), run_config={}),
                           ServerConfig(num_rounds=1),
                           SumOnly(fraction_fit=1.0, min_fit_clients=n_nodes, min_available_clients=n_nodes),
                           SimpleClientManager())
    for n in nodes:
        legacy.client_manager.register(GridClientProxy(n, grid, 1))
    legacy.state.array_records[MAIN_PARAMS_RECORD] = ArrayRecord()
    legacy.state.config_records[MAIN_CONFIGS_RECORD] = ConfigRecord({Key.CURRENT_ROUND: 1})
    cls = workflow or _dropout_safe_secaggplus()
    cls(num_shares=1.0, reconstruction_threshold=threshold, max_weight=1.0, clipping_range=CLIP,
        quantization_range=TARGET, modulus_range=MODULUS, timeout=1.0)(grid, legacy)
    if SumOnly.contributors is None:
        return None
    mean = legacy.state.array_records[MAIN_PARAMS_RECORD].to_numpy_ndarrays()[0]
    who = SumOnly.contributors
    return who, mean * len(who), sum(values[n] for n in who)


#: every way nodes 103 and 104 can be lost (one of them or both, at each step but setup)
PATTERNS = [{103: a} for a in (1, 2, 3)] + [{103: a, 104: b} for a, b in itertools.product((1, 2, 3), repeat=2)]


@pytest.mark.parametrize("lost", PATTERNS, ids=lambda p: ",".join(f"{n} from {SECAGG_STAGES[k].split(' (')[0][8:]}"
                                                                  for n, k in p.items()))
def test_within_the_threshold_the_sum_is_exactly_the_contributors_values(lost):
    """Five nodes, threshold 3 (two may drop out): whatever step a node is lost at, the sum is
    unmasked and equals the values of the nodes whose masked vectors came in — a node lost before
    the collect step contributes nothing, one lost after it is in the sum."""
    out = secure_sum(5, 3, lost)
    assert out is not None, "nothing unmasked within the threshold"
    who, total, expected = out
    assert who == {n for n in range(101, 106) if lost.get(n, 4) > 2}
    np.testing.assert_allclose(total, expected, rtol=0, atol=TOL)


def test_a_node_lost_before_it_dealt_its_key_shares_breaks_flowers_own_workflow():
    """Why the workflow is patched: Flower 1.42's keeps such a node as 'dead' and asks the others for
    shares of its key that it never dealt (every survivor fails, nothing is unmasked). The same loss
    one step later (after the shares were dealt) is one Flower handles."""
    assert secure_sum(4, 3, {103: 1}, workflow=SecAggPlusWorkflow) is None
    assert secure_sum(4, 3, {103: 2}, workflow=SecAggPlusWorkflow) is not None
    who, total, expected = secure_sum(4, 3, {103: 1})
    assert who == {101, 102, 104}
    np.testing.assert_allclose(total, expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("step", [1, 2])
def test_beyond_the_threshold_nothing_is_unmasked(step):
    """Three of five lost (threshold 3): fewer key shares than the threshold, no sum."""
    assert secure_sum(5, 3, {102: step, 103: step, 104: step}) is None


def test_another_flowers_workflow_runs_as_it_is_and_says_what_that_means(monkeypatch, capsys):
    """The subclass is written against Flower 1.42's two stages (fingerprints in flower_internals):
    a Flower whose share-keys stage differs gets its own workflow back, with one line saying a site
    lost at that step would make the sum fail."""
    from dpfed_core.deployment import flower_internals as fi

    def their_share_keys(self, grid, context, state):  # a "new Flower" body
        return False

    monkeypatch.setattr(SecAggPlusWorkflow, "share_keys_stage", their_share_keys)
    monkeypatch.setattr(fi, "_WARNED", set())
    assert _dropout_safe_secaggplus() is SecAggPlusWorkflow
    err = capsys.readouterr().err
    assert "'secaggplus-share-keys'" in err and "secure sum fail" in err and "only slower" not in err
    monkeypatch.undo()
    assert _dropout_safe_secaggplus() is not SecAggPlusWorkflow
