"""The coordinator checks every site reply it uses where it arrives: a node of the Simulation Engine
(in-process backend) sends what this dpfed's site never sends (tests/tamper_replies.py), and the run
ends with one error naming the site and the message, no result file, and the sites told to withdraw."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr")

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.deployment import DeploymentError, write_shards  # noqa: E402
from dpfed_core.deployment.deployed import run_deployed  # noqa: E402
from dpfed_core.evaluation.experiments import make_split  # noqa: E402
from tests.test_deployment import lab_policy, three_clinics  # noqa: E402

TESTS = str(Path(__file__).resolve().parent)
KMEANS = RunConfig(method="kmeans", k=4, rank=3, max_iter=30, simulation=True, server_weighting="counts")


def tampered_run(monkeypatch, kind: str, cfg: RunConfig, declared: bool = True,
                 site: str = "clinic B", dump_dir: Path | None = None) -> tuple[str, list]:
    """Run ``cfg`` with ``site``'s replies tampered as ``kind`` (the server's copies of the replies in
    ``dump_dir``, if given); returns (the run's error, result files)."""
    from dpfed_core.deployment.launcher import Guard
    from dpfed_core.deployment.simulation_engine import SimulatedFederation

    monkeypatch.setenv("PYTHONPATH", TESTS + (os.pathsep + os.environ["PYTHONPATH"]
                                              if os.environ.get("PYTHONPATH") else ""))
    monkeypatch.setenv("DPFED_PLUGINS", "tamper_replies")
    monkeypatch.setenv("DPFED_TEST_TAMPER", kind)
    monkeypatch.setenv("DPFED_TEST_TAMPER_SITE", site)
    ds = three_clinics(declared=declared)
    guard = Guard()
    try:
        shards = write_shards(ds, make_split(ds, cfg), guard.path / "shards")
        with SimulatedFederation(shards, None, ds.entity_names, guard=guard,
                                 site_policy=lab_policy(guard.path)) as fed:
            with pytest.raises(DeploymentError) as err:
                run_deployed(ds, cfg, federation=fed, round_timeout=60, timeout=240, engine="simulation",
                             dump_dir=dump_dir)
            written = list(Path(fed.dir).glob("result_*"))
    finally:
        guard.close()
    return str(err.value), written


PROTOTYPE_CASES = [
    ("wide", "round-1 prototypes", r"prototypes of shape \(\d+, 41\), expected k × 40"),
    ("flat", "round-1 prototypes", r"prototypes of shape \(\d+,\), expected k × 40"),
    ("cube", "round-1 prototypes", r"prototypes of shape \(1, \d+, 40\), expected k × 40"),
    ("nan", "round-1 prototypes", "not finite"),
    ("counts-long", "round-1 cluster sizes", "5 cluster sizes of shape \\(5,\\) for 4 prototypes"),
    ("counts-inf", "round-1 cluster sizes", "not finite"),
    ("other-entity", "round-1 prototypes", "names entity 'clinic A' \\(index 1\\), but the site's decision named "
                                           "'clinic B'"),
    ("bad-ledger", "round-1 prototypes", "ledger rows are not JSON"),
    ("foreign-ledger", "round-1 prototypes", "ledger row is charged to entity 'clinic A'"),
    ("no-meta", "round-1 prototypes", "names no entity"),
    ("round2-index", "round-2 acknowledgement", "index 6"),
]


@pytest.mark.parametrize("kind, what, problem", PROTOTYPE_CASES, ids=[c[0] for c in PROTOTYPE_CASES])
def test_a_prototype_sites_bad_reply_ends_the_run_naming_the_site_and_the_message(monkeypatch, kind, what,
                                                                                    problem):
    import re

    message, written = tampered_run(monkeypatch, kind, KMEANS)
    assert re.search(f"{what} from clinic B: .*{problem}", message), message
    assert "DPFED_PLUGINS" in message and "Traceback" not in message and "Error:" not in message
    # every site released its prototypes before the reply was read: each was told, and keeps its charge
    assert "kept their charge" in message, message
    assert written == []


POPULARITY = RunConfig(method="dp-popularity", epsilon=1.0, rank=3, simulation=True, aggregation="secure")
SHARE_CASES = [
    ("share-long", True, r"masked share \(SecAgg\+ collect masked vectors\)",
     "a share of 41 entries, while the other sites' have 40"),
    ("catalogue-short", False, r"masked share \(SecAgg\+ collect masked vectors \[catalogue\]\)",
     r"share of shape \(4095,\), expected \(4096,\)"),
]


@pytest.mark.parametrize("kind, declared, what, problem", SHARE_CASES, ids=[c[0] for c in SHARE_CASES])
def test_a_secure_sum_share_of_another_length_ends_the_run_naming_the_site(monkeypatch, kind, declared, what,
                                                                          problem):
    import re

    message, written = tampered_run(monkeypatch, kind, POPULARITY, declared=declared)
    assert re.search(f"{what} from clinic B: .*{problem}", message), message
    assert "kept their charge" in message and written == []


def _masked_reply(*parts):
    from types import SimpleNamespace

    from flwr.common import ndarray_to_bytes
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key

    return SimpleNamespace(content=SimpleNamespace(config_records={
        RECORD_KEY_CONFIGS: {Key.MASKED_PARAMETERS: [ndarray_to_bytes(np.asarray(p)) for p in parts]}}))


M = 2 ** 32  # SecAgg+'s modulus (secagg_ranges)


def test_a_masked_share_is_read_for_its_public_length_and_finiteness_only():
    from dpfed_core.deployment.server_app import DeploymentRunError, check_masked

    share = check_masked("clinic B", "masked share", _masked_reply([7], np.arange(5)), 5, M)
    assert share.tolist() == [0, 1, 2, 3, 4]
    assert check_masked("clinic B", "masked share", _masked_reply([7], np.arange(6)), None, M).size == 6
    for parts, length, problem in [(([7], np.arange(6)), 5, r"shape \(6,\), expected \(5,\)"),
                                   (([7], np.arange(4)), 5, r"shape \(4,\), expected \(5,\)"),
                                   (([7], np.arange(6).reshape(2, 3)), None, r"shape \(2, 3\)"),
                                   (([7], [0.0, np.nan, 1.0]), 3, "not finite"),
                                   (([np.inf], [0, 2, 1]), 3, "not finite"),
                                   ((np.arange(3),), 3, "weight entry and the share")]:
        with pytest.raises(DeploymentRunError, match=f"masked share from clinic B: .*{problem}"):
            check_masked("clinic B", "masked share", _masked_reply(*parts), length, M)


def test_a_masked_entry_outside_the_modulus_range_is_refused_naming_the_site_and_the_range():
    """SecAgg+ sums the masked vectors modulo M: an entry below 0, at or above M, or not an integer
    would change the unmasked sum without a word (or fail in Flower's arithmetic)."""
    from dpfed_core.deployment.server_app import DeploymentRunError, check_masked

    # the largest and smallest entries SecAgg+'s masking gives (int64 on the wire), weight entry included
    for weight, share in [([M - 1], np.array([0, M - 1, 5], dtype=np.int64)),
                          ([0], np.array([0, 0, 0], dtype=np.uint32))]:
        assert check_masked("clinic B", "masked share", _masked_reply(weight, share), 3, M).tolist() == share.tolist()
    for weight, share in [([7], [0, -1, 5]), ([7], [0, M, 5]), ([-1], [0, 1, 5]), ([M], [0, 1, 5]),
                          ([7], [0.0, 1.5, 5.0]), ([7], [0.0, 1.0, 5.0]), ([7.0], [0, 1, 5])]:
        with pytest.raises(DeploymentRunError, match=r"masked share from clinic B: the masked vector has entries "
                                                     r"that are not integers in \[0, 4294967296\)"):
            check_masked("clinic B", "masked share", _masked_reply(weight, np.asarray(share)), 3, M)


MASKED_CASES = ["masked-negative", "masked-modulus", "masked-float"]


@pytest.mark.parametrize("kind", MASKED_CASES)
def test_a_masked_vector_outside_the_modulus_range_ends_the_run_at_its_arrival(monkeypatch, kind):
    message, written = tampered_run(monkeypatch, kind, POPULARITY)
    assert (r"masked share (SecAgg+ collect masked vectors) from clinic B: the masked vector has entries that are "
            "not integers in [0, 4294967296)") in message, message
    assert message.count("from clinic B") == 1 and "Traceback" not in message
    assert "kept their charge" in message and written == []


def test_a_refused_masked_vector_is_not_copied_to_the_dump_folder(monkeypatch, tmp_path):
    """The server's compliance copy holds the masked vectors it checked: a step whose shares are
    refused (clinic B's one entry longer than the others') leaves none of them there, while the
    steps before it (SecAgg+'s keys) are copied."""
    import json

    from dpfed_core.deployment.server_app import SECAGG_FIT_STEP

    message, written = tampered_run(monkeypatch, "share-long", POPULARITY, dump_dir=tmp_path / "dump")
    assert "a share of 41 entries, while the other sites' have 40" in message, message
    labels = [json.loads(p.read_text())["label"] for p in (tmp_path / "dump").glob("*.json")]
    assert f"secagg{SECAGG_FIT_STEP - 1}" in labels, labels
    assert not any(label.startswith(f"secagg{SECAGG_FIT_STEP}") for label in labels), labels


def test_a_sites_prototypes_counts_and_ledger_rows_are_checked_and_a_noisy_negative_count_is_kept():
    from flwr.app import Array, ArrayRecord, ConfigRecord

    from dpfed_core.deployment.server_app import (DeploymentRunError, check_coalition, check_ledger,
                                                  check_prototypes)
    from dpfed_core.deployment.wire import dumps

    def content(P, c=None):
        arrays = {"prototypes": Array(np.asarray(P, dtype=float))}
        if c is not None:
            arrays["counts"] = Array(np.asarray(c, dtype=float))
        return {"release": ArrayRecord(arrays)}

    P, c = check_prototypes("clinic B", content(np.ones((2, 3)), [-1.5, 4.0]), 3, True)
    assert P.shape == (2, 3) and c.tolist() == [-1.5, 4.0]  # a DP count below 0: the fit clips it
    assert check_prototypes("clinic B", content(np.ones((2, 3))), 3, False)[1] is None
    with pytest.raises(DeploymentRunError, match=r"shape \(2, 4\), expected k × 3"):
        check_prototypes("clinic B", content(np.ones((2, 4))), 3, False)
    with pytest.raises(DeploymentRunError, match=r"shape \(2, 2\), expected k × 3"):
        check_prototypes("clinic B", content(np.ones((2, 2))), 3, False)
    with pytest.raises(DeploymentRunError, match="round-1 cluster sizes from clinic B: the reply has no 'counts'"):
        check_prototypes("clinic B", content(np.ones((2, 3))), 3, True)
    with pytest.raises(DeploymentRunError, match="1 cluster sizes of shape \\(1,\\) for 2 prototypes"):
        check_prototypes("clinic B", content(np.ones((2, 3)), [1.0]), 3, True)
    with pytest.raises(DeploymentRunError, match="round-1 prototypes from clinic B: the reply holds no release"):
        check_prototypes("clinic B", {}, 3, False)

    row = {"entity": "clinic B", "stage": "round 1", "mechanism": "gaussian", "epsilon": 0.5, "delta": 1e-6,
           "sensitivity": 1.0, "noise_scale": 2.0}
    meta = ConfigRecord({"ledger": dumps([row]), "note": ""})
    assert check_ledger("clinic B", "round-1 prototypes", meta, "clinic B") == [row]
    for bad, problem in [({**row, "epsilon": -0.5}, "ε = -0.5"), ({**row, "delta": float("nan")}, "δ = nan"),
                         ({k: v for k, v in row.items() if k != "stage"}, "lacks a field")]:
        with pytest.raises(DeploymentRunError, match=problem):
            check_ledger("clinic B", "round-1 prototypes", ConfigRecord({"ledger": dumps([bad]), "note": ""}),
                         "clinic B")
    with pytest.raises(DeploymentRunError, match="not a list of rows"):
        check_ledger("clinic B", "round-1 prototypes", ConfigRecord({"ledger": dumps(row), "note": ""}), "clinic B")
    assert check_coalition("clinic B", "round-2 acknowledgement", ConfigRecord({"coalition_epsilon": "\"inf\""})) \
        == float("inf")
    assert check_coalition("clinic B", "round-2 acknowledgement", ConfigRecord({"coalition_epsilon": "2.5"})) == 2.5
    for bad in ("null", "-1", "\"x\"", "{"):
        with pytest.raises(DeploymentRunError, match="round-2 acknowledgement from clinic B: its coalition ε"):
            check_coalition("clinic B", "round-2 acknowledgement", ConfigRecord({"coalition_epsilon": bad}))


def test_deploy_local_prints_a_sites_bad_reply_as_one_message_and_writes_nothing(tmp_path, monkeypatch, capsys):
    from dpfed_core.cli.main import main

    monkeypatch.setenv("PYTHONPATH", TESTS + (os.pathsep + os.environ["PYTHONPATH"]
                                              if os.environ.get("PYTHONPATH") else ""))
    monkeypatch.setenv("DPFED_PLUGINS", "")
    monkeypatch.setenv("DPFED_TEST_TAMPER", "nan")
    monkeypatch.setenv("DPFED_TEST_TAMPER_SITE", "South")
    out = tmp_path / "dep.json"
    code = main(["deploy-local", "--data", "sample:clinic", "--federation", "region", "--method", "kmeans",
                 "--simulation", "--engine", "simulation", "--plugin", "tamper_replies",
                 "--site-policy", str(lab_policy(tmp_path)), "--out", str(out)])
    err = capsys.readouterr().err
    assert code != 0 and not out.exists()
    assert "round-1 prototypes from South: its 'prototypes' has entries that are not finite" in err, err
    assert "Traceback" not in err and err.count("round-1 prototypes from South") == 1


def test_shares_of_a_method_that_states_no_length_must_agree_and_the_odd_site_is_named():
    from dpfed_core.deployment.server_app import DeploymentRunError, check_share_lengths

    check_share_lengths("masked share", {"A": 40, "B": 40, "C": 40})
    check_share_lengths("masked share", {})
    with pytest.raises(DeploymentRunError, match="masked share from B, D: a share of 39, 41 entries, while the other "
                                                 "sites' have 40"):
        check_share_lengths("masked share", {"D": 41, "A": 40, "B": 39, "C": 40, "E": 40})
    with pytest.raises(DeploymentRunError, match=r"masked share from A, B: shares of different lengths \(A: 40, B: 41\)"):
        check_share_lengths("masked share", {"B": 41, "A": 40})


def test_shares_that_all_miss_the_methods_public_length_end_the_run_at_their_arrival(monkeypatch):
    """Every site sends a popularity share one entry longer than the 40 declared items: the shares
    agree with each other, so only the method's public length (its share_length) shows them wrong."""
    import re

    cfg = RunConfig(method="dp-cooccurrence", epsilon=1.0, rank=3, max_iter=60, simulation=True,
                    aggregation="secure", method_params={"max_items": 30})
    message, written = tampered_run(monkeypatch, "share-long", cfg, site="*")
    assert re.search(r"masked share \(SecAgg\+ collect masked vectors \[popularity\]\) from clinic [ABC]: a share "
                     r"of shape \(41,\), expected \(40,\)", message), message
    assert "kept their charge" in message and written == []


def test_a_decision_the_server_cannot_read_ends_the_run_and_the_sites_that_accepted_give_their_charge_back(
        monkeypatch):
    message, written = tampered_run(monkeypatch, "no-decision", KMEANS)
    assert "site policy decision from clinic B: the reply is no decision" in message, message
    assert "nothing was released by any site; 2 of the 2 site(s) that accepted gave their charge back" in message
    assert written == []


def test_two_sites_accepting_as_one_entity_end_the_run_at_the_decisions_and_every_accepting_site_withdraws(
        monkeypatch):
    """clinic B's decision names clinic A: both would be charged, asked for releases and fitted as one
    entity. The run stops before any share, naming the entity and both nodes, and every site that
    accepted (the two as well) is told to give its charge back."""
    import re

    message, written = tampered_run(monkeypatch, "same-entity", KMEANS)
    assert re.search(r"site policy decisions: nodes \d+, \d+ accepted as the same entity 'clinic A' \(give every "
                     r"SuperNode its own shard\); nothing was released by any site; 3 of the 3 site\(s\) that "
                     r"accepted gave their charge back", message), message
    assert written == []


def test_a_site_accepting_at_another_sites_index_ends_the_run_at_the_decisions(monkeypatch):
    """clinic B's decision gives clinic A's index: its share would take clinic A's place in the run. The run
    stops before any share, naming both entities and the index, and every accepting site withdraws."""
    message, written = tampered_run(monkeypatch, "same-index", KMEANS)
    assert ("site policy decisions: entities 'clinic A', 'clinic B' accepted at the same index 0 (give every "
            "SuperNode its own shard); nothing was released by any site; 3 of the 3 site(s) that accepted gave "
            "their charge back") in message, message
    assert written == []


def deciding_run(monkeypatch) -> tuple:
    """A server run at its decision step, without a grid: ``(run, nodes told to withdraw, a reply maker)``;
    set ``run.transport.send_and_receive`` to hand it the replies."""
    from types import SimpleNamespace

    from tests.test_deployment_apps import _reply, _run, sa

    monkeypatch.setattr(sa, "Message", lambda content, dst_node_id, message_type: SimpleNamespace(
        content=content, metadata=SimpleNamespace(dst_node_id=dst_node_id, message_type=message_type)))
    run = _run(3)
    run.config_json, run.decisions = "{}", []
    told: list[int] = []
    run.withdraw = lambda nodes: told.extend(nodes) or ""
    t = run.transport
    t.log = t.dump = t.progress = lambda *a, **k: None
    return run, told, _reply


def test_two_accepting_replies_under_one_entity_are_refused_before_either_is_recorded(monkeypatch):
    from dpfed_core.deployment.server_app import DeploymentRunError

    run, told, _reply = deciding_run(monkeypatch)
    t = run.transport

    def decision(node, entity, word="accepted"):
        return _reply(node, {"meta": {"entity": entity, "decision": word, "rule": "", "message": "", "index": node - 5}})

    t.send_and_receive = lambda msgs, timeout: [decision(7, "clinic A"), decision(5, "clinic B"),
                                                decision(6, "clinic A")]
    with pytest.raises(DeploymentRunError, match="site policy decisions: nodes 6, 7 accepted as the same entity "
                                                 "'clinic A'") as err:
        run.site_decisions([5, 6, 7])
    assert sorted(told) == [5, 6, 7] and err.value.ledger_rows == 0
    assert t.entity_of_node == {} and t.index_of_node == {}
    # one of the two refused: a refusal, not two entities in the run (the accepting site is told)
    told.clear()
    t.send_and_receive = lambda msgs, timeout: [decision(7, "clinic A"), decision(5, "clinic B"),
                                                decision(6, "clinic A", "refused")]
    with pytest.raises(DeploymentRunError, match=r"1 of 3 site\(s\) refused the run"):
        run.site_decisions([5, 6, 7])
    assert sorted(told) == [5, 7]


def test_accepting_replies_at_one_index_or_outside_the_run_are_refused_before_any_share(monkeypatch):
    """Two names at one entity index (or an index the run does not have) would be fitted into one row of V
    and charged, and found only after every site had released: the run stops at the decisions, every
    accepting site is told to withdraw, and no node is recorded."""
    from dpfed_core.deployment.server_app import DeploymentRunError

    run, told, _reply = deciding_run(monkeypatch)
    t = run.transport

    def decision(node, entity, index, word="accepted"):
        return _reply(node, {"meta": {"entity": entity, "decision": word, "rule": "", "message": "",
                                      "index": index}})

    t.send_and_receive = lambda msgs, timeout: [decision(5, "clinic A", 0), decision(6, "clinic B", 1),
                                                decision(7, "clinic C", 1)]
    with pytest.raises(DeploymentRunError, match="site policy decisions: entities 'clinic B', 'clinic C' accepted "
                                                 r"at the same index 1 \(give every SuperNode its own shard\); "
                                                 "nothing was released") as err:
        run.site_decisions([5, 6, 7])
    assert sorted(told) == [5, 6, 7] and err.value.ledger_rows == 0
    assert t.entity_of_node == {} and t.index_of_node == {}
    for index in (3, -1, True, 1.0):
        told.clear()
        t.send_and_receive = lambda msgs, timeout: [decision(5, "clinic A", 0), decision(6, "clinic B", 1),
                                                    decision(7, "clinic C", index)]
        with pytest.raises(DeploymentRunError, match=f"node 7 accepted as entity 'clinic C' at index {index!r}, "
                                                     r"not one of 0…2"):
            run.site_decisions([5, 6, 7])
        assert sorted(told) == [5, 6, 7]
    # a refusing site's index is not read (it takes no place in the run); the others' indices are all kept
    told.clear()
    t.send_and_receive = lambda msgs, timeout: [decision(5, "clinic A", 0), decision(6, "clinic B", 1),
                                                decision(7, "clinic C", 1, "refused")]
    with pytest.raises(DeploymentRunError, match=r"1 of 3 site\(s\) refused the run"):
        run.site_decisions([5, 6, 7])
    assert sorted(told) == [5, 6]
    t.send_and_receive = lambda msgs, timeout: [decision(5, "clinic A", 0), decision(6, "clinic B", 1),
                                                decision(7, "clinic C", 2)]
    assert [d["entity"] for d in run.site_decisions([5, 6, 7])] == ["clinic A", "clinic B", "clinic C"]
    assert t.index_of_node == {5: 0, 6: 1, 7: 2}


def test_a_silent_site_beside_a_reply_without_a_decision_ends_the_run_naming_the_silent_site(monkeypatch):
    """A reply whose meta record lacks ``decision`` is no acceptance (not a KeyError of the server): the
    run stops at the silent site, and only the site that accepted is told to withdraw."""
    from dpfed_core.deployment.server_app import DeploymentRunError

    run, told, _reply = deciding_run(monkeypatch)
    t = run.transport
    t.entity_of_node = {3: "clinic C"}
    t.send_and_receive = lambda msgs, timeout: [
        _reply(1, {"meta": {"entity": "clinic 1", "decision": "accepted", "rule": "", "message": ""}}),
        _reply(2, {"meta": {"entity": "clinic 2", "rule": "", "message": ""}})]
    with pytest.raises(DeploymentRunError, match="site policy decisions: no reply within 30 s from clinic C .*; "
                                                 "nothing was released by any site") as err:
        run.site_decisions([1, 2, 3])
    assert told == [1] and err.value.ledger_rows == 0
