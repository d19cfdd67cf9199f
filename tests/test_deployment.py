"""The protocol on a real local Flower deployment (one SuperLink, one SuperNode process per
entity, the ServerApp), compared with the in-process run.

One deployment serves every test of this module (start-up is the slow part); the node-death test
runs last because it kills a node. dp-cooccurrence (two SecAgg+ sums: ~10 round trips, each a few
seconds of Flower's polling and ClientApp start-up, with the CPU mostly idle) runs on a second
3-node deployment in a background thread from the start of the module, so it overlaps the others. Runs use the labelled simulation mode so the noise, and hence
V and every metric, must equal the in-process run's.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

try:
    import flwr  # noqa: F401
except ImportError:  # CI installs requirements-deploy.txt (make test), so there this is a failure
    if os.environ.get("CI"):
        raise
    pytest.skip("Flower (flwr) is not installed: pip install -r requirements-deploy.txt", allow_module_level=True)

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.data.dataset import FederatedDataset  # noqa: E402
from dpfed_core.errors import ConfigError  # noqa: E402
from dpfed_core.deployment.deployed import run_deployed  # noqa: E402
from dpfed_core.evaluation.experiments import make_split, run_method  # noqa: E402
from dpfed_core.deployment import DeploymentError, LocalFederation, write_shards  # noqa: E402
from dpfed_core.deployment.server_app import POLICY_REPLY, ROUND2_REPLY, SECAGG_STAGES  # noqa: E402
from dpfed_core.federation.summable import secagg_ranges  # noqa: E402
from dpfed_core.reporting.report_sections import released_from_messages  # noqa: E402

METRICS = ("train_rmse", "test_rmse", "mar", "precision_at_10", "recall_at_10", "ndcg_at_10")


#: eICU-like drug names (mixed case, units, punctuation, non-ASCII): what a node hashes to the public
#: buckets of a federation-wide catalogue when the data declares none.
DRUGS = [f"{d} {dose}" for d in ("ASPIRIN", "heparin sodium", "Ringer’s lactate", "acétaminophène", "KCl (20 mEq)",
                                 "insulin lispro", "Ondansetron HCl", "NS 0.9%")
         for dose in ("81 MG TAB", "5,000 unit/mL", "1000 mL", "325 mg", "4 mg/2 mL")]


def three_clinics(features: bool = False, declared: bool = True) -> FederatedDataset:
    rng = np.random.default_rng(11)
    n, m, r = 150, 40, 3
    U = rng.gamma(1.0, 1.0, size=(n, r))
    V = rng.gamma(1.0, 1.0, size=(m, r))
    X = sp.csr_matrix(np.minimum(rng.poisson(0.4 * U @ V.T), 10).astype(float))
    ent = np.repeat(["clinic A", "clinic B", "clinic C"], [60, 50, 40])
    # declared: the 40 items are the generator's own list, a public catalogue (SPEC rev. 2); else the
    # names are read from the data (item_source="data") and a DP run must select its catalogue
    ds = FederatedDataset.from_parts(X, ent, item_names=np.array(DRUGS, dtype=object), value_kind="counts",
                                     value_max=10, name="three clinics",
                                     **({"item_source": "declared"} if declared else {}))
    if features:  # public item features: 5 dose forms × 8 drugs, one-hot
        import dataclasses

        ds = dataclasses.replace(ds, item_features=np.tile(np.eye(5), (8, 1)),
                                 item_feature_names=[f"form {k}" for k in range(5)])
    return ds


def lab_policy(folder) -> Path:
    """The site policy of these test sites: every deployable method (the example plug-in's too),
    simulation and non-private methods allowed — these tests compare a deployment with the in-process
    run in the labelled simulation mode — and each site's store in the test's own folder."""
    from pathlib import Path

    from dpfed_core.deployment.deployed import deployable_methods
    from dpfed_core.deployment.site_policy import write_policy

    folder = Path(folder)
    return write_policy(folder / "site_policy.toml", methods=[*deployable_methods(), "dp-item-reach-example"],
                        max_epsilon=1e6, max_delta=1e-3, budget_epsilon=1e9, budget_delta=9e-3,
                        store=str(folder / "site_stores" / "{site}.sqlite3"), allow_simulation=True,
                        allow_non_private=True, max_dropouts=10)


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    ds = three_clinics()
    base = tmp_path_factory.mktemp("deploy")
    # Every run below uses seed 0 and the default split, so one set of shards serves them all.
    shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), base / "shards")
    fed = LocalFederation(shards, base / "flower", ds.entity_names, site_policy=lab_policy(base)).start()
    yield ds, fed, base
    fed.close()


COOC_ITEMS = 30  # < 40 items: the popularity stage chooses the items, so a public list is broadcast
COOC_CFG = RunConfig(method="dp-cooccurrence", epsilon=1.0, rank=3, max_iter=60, simulation=True,
                     aggregation="secure", max_dropouts=1, method_params={"max_items": COOC_ITEMS})


@pytest.fixture(scope="module", autouse=True)
def cooccurrence_deployment(tmp_path_factory):
    """The dp-cooccurrence run on its own deployment, started in a thread (see the module doc)."""
    import threading

    from dpfed_core.deployment.shards import write_item_features

    ds = three_clinics(features=True)
    base = tmp_path_factory.mktemp("deploy_cooc")
    shards = write_shards(ds, make_split(ds, COOC_CFG), base / "shards")
    features = write_item_features(ds.item_features, ds.item_feature_names, base / "item_features.npz")
    fed = LocalFederation(shards, base / "flower", ds.entity_names, item_features=features,
                          site_policy=lab_policy(base)).start()
    out: dict = {"dump": base / "received"}

    def work():
        try:
            out["result"] = run_deployed(ds, COOC_CFG, federation=fed, round_timeout=120, timeout=300,
                                         dump_dir=out["dump"], return_model=True)
        except BaseException as exc:  # re-raised by the test that checks the run
            out["error"] = exc

    thread = threading.Thread(target=work, name="dp-cooccurrence deployment", daemon=True)
    thread.start()
    out["thread"] = thread
    yield out
    fed.close()  # ends a run that is still going (only when its test was deselected)
    thread.join(60)


def _guarded_federation(kind, ds, cfg):
    """(guard, started federation of ``kind``) whose shards live in the guard's private folder."""
    from dpfed_core.deployment.launcher import Guard

    guard = Guard()
    shards = write_shards(ds, make_split(ds, cfg), guard.path / "shards")
    return guard, kind(shards, None, ds.entity_names, guard=guard, site_policy=lab_policy(guard.path)).start()


#: What only the carrier decides (when, how the messages went, how long, the deployment section, the
#: carrier's notes); everything else of the deployed document must equal the in-process one.
CARRIER_KEYS = {"created", "deployment", "messages", "timings", "notes", "odometer", "history_id"}
CARRIER_TRUST = {"in_process", "sum"}


def _assert_same_document(dep, ref, path: str = "", catalogue: bool = False) -> None:
    if isinstance(ref, dict):
        assert isinstance(dep, dict), path
        skip = CARRIER_KEYS if path == "" else CARRIER_TRUST if path == ".privacy.trust" else set()
        assert set(dep) - skip == set(ref) - skip, (path, set(dep) ^ set(ref))
        for k in set(ref) - skip:
            _assert_same_document(dep[k], ref[k], f"{path}.{k}", catalogue)
    elif isinstance(ref, list):
        assert isinstance(dep, list) and len(dep) == len(ref), path
        for i, (a, b) in enumerate(zip(dep, ref)):
            _assert_same_document(a, b, f"{path}[{i}]", catalogue)
    elif isinstance(ref, float):
        assert dep == pytest.approx(ref, rel=1e-9, abs=1e-12, nan_ok=True), path
    else:
        assert dep == ref, path


def _assert_same_run(dep: dict, ref: dict) -> None:
    # one protocol, two carriers: the whole document is the in-process one but what the carrier decides
    _assert_same_document(dep, ref, catalogue=any("catalogue" in r["stage"] for r in ref["privacy"]["ledger"]))
    assert [e["name"] for e in dep["entities"]] == [e["name"] for e in ref["entities"]]
    for d, r in zip([*dep["entities"], dep["overall"]], [*ref["entities"], ref["overall"]]):
        assert d["n_users"] == r["n_users"] and d["n_test_users"] == r["n_test_users"]
        for k in METRICS:
            assert d[k] == pytest.approx(r[k], rel=1e-9, abs=1e-12), (d["name"], k)
    assert dep["privacy"]["epsilon"] == ref["privacy"]["epsilon"]
    assert dep["privacy"]["delta"] == ref["privacy"]["delta"]
    assert len(dep["privacy"]["ledger"]) == len(ref["privacy"]["ledger"]) > 0
    if "trust" in ref["privacy"]:
        # one protocol, two carriers: the same trust record and notes (federation.summable_protocol),
        # the deployment's naming Flower's SecAgg+ as the carrier of its sums
        from dpfed_core.federation.summable_protocol import IN_PROCESS_NOTE, NO_SECAGG_NOTE

        t_dep, t_ref = dep["privacy"]["trust"], ref["privacy"]["trust"]
        assert (t_dep["in_process"], t_ref["in_process"]) == (False, True) and "SecAgg+" in t_dep["sum"]
        # both state the whole run's guarantee (a federation-wide catalogue's rows included)
        for k in ("aggregation", "max_dropouts", "against_server", "against_server_and_other_entities"):
            assert t_dep[k] == pytest.approx(t_ref[k]), k
        assert t_ref["against_server"]["epsilon"] == pytest.approx(ref["privacy"]["epsilon"], rel=1e-6)
        # without secure aggregation the in-process run's server saw each share; the deployment's received
        # their sum through SecAgg+, and its notes say so instead
        carrier = {n for n in ref["notes"] if n in (IN_PROCESS_NOTE, NO_SECAGG_NOTE) or "the server summed them" in n}
        assert set(ref["notes"]) - carrier <= set(dep["notes"]), set(ref["notes"]) - set(dep["notes"])
    # The deployment lists each entity's rows together, the in-process run stage by stage.
    order = {name: h for h, name in enumerate(e["name"] for e in ref["entities"])}

    def by_entity(rows):
        return sorted(rows, key=lambda r: order.get(r["entity"], -1))

    for a, b in zip(by_entity(dep["privacy"]["ledger"]), by_entity(ref["privacy"]["ledger"])):
        assert (a["entity"], a["stage"], a["mechanism"]) == (b["entity"], b["stage"], b["mechanism"])
        for k in ("epsilon", "delta", "sensitivity", "noise_scale"):
            assert a[k] == pytest.approx(b[k], nan_ok=True)


def _deployed_and_in_process(ds, cfg, fed, dump):
    """``(doc, V, ref, res)``: the run on ``fed`` (replies kept in ``dump``) and in process; asserts
    the broadcast V equals the in-process V exactly and the documents agree (:func:`_assert_same_run`)."""
    doc, V = run_deployed(ds, cfg, federation=fed, round_timeout=120, timeout=300, dump_dir=dump, return_model=True)
    ref, res = run_method(ds, cfg)
    np.testing.assert_array_equal(V, res.V)
    _assert_same_run(doc, ref)
    return doc, V, ref, res


@pytest.fixture(scope="module")
def prototypes_run(deployment):
    """dp-gaussian on the deployment, its replies kept in ``received_prototypes``: ``(cfg, events, doc,
    V)``. A fixture, so that a test reading the replies has them whichever tests run beside it."""
    ds, fed, base = deployment
    cfg = RunConfig(method="dp-gaussian", epsilon=2.0, k=5, rank=3, max_iter=60, simulation=True)
    events = []
    doc, V = run_deployed(ds, cfg, federation=fed, progress=events.append, round_timeout=120, timeout=300,
                          return_model=True, dump_dir=base / "received_prototypes")
    return cfg, events, doc, V


@pytest.fixture(scope="module")
def popularity_run(deployment):
    """dp-popularity under SecAgg+, its replies kept in ``received_popularity``: ``(cfg, dump, doc, V,
    ref, res)``."""
    ds, fed, base = deployment
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=3, simulation=True, aggregation="secure",
                    max_dropouts=1)
    dump = base / "received_popularity"
    return (cfg, dump, *_deployed_and_in_process(ds, cfg, fed, dump))  # V exact: grid shares, integer secure sum


@pytest.fixture(scope="module")
def catalogue_run(deployment):
    """dp-popularity under SecAgg+ on data without a declared catalogue, its replies kept in
    ``received_catalogue``: ``(und, cfg, dump, doc, V, ref, res)``."""
    ds, fed, base = deployment
    und = three_clinics(declared=False)
    cfg = RunConfig(method="dp-popularity", epsilon=4.0, rank=3, simulation=True, aggregation="secure",
                    max_dropouts=1)
    dump = base / "received_catalogue"
    return (und, cfg, dump, *_deployed_and_in_process(und, cfg, fed, dump))  # V exact: the same keys, integer sums


def test_prototypes_on_flower_equal_the_in_process_run(deployment, prototypes_run):
    ds = deployment[0]
    cfg, events, doc, V = prototypes_run
    ref, res = run_method(ds, cfg)
    np.testing.assert_allclose(V, res.V, rtol=1e-10, atol=1e-12)
    _assert_same_run(doc, ref)
    # Per-node progress: each entity reported both rounds.
    for ev in ("round1_done", "round2_done"):
        assert sorted(e["entity"] for e in events if e["event"] == ev) == sorted(ds.entity_names)
    # The message log is what Flower carried: prototypes up, V down, with the serialised size.
    msgs = doc["messages"]
    up = [m for m in msgs if m["round"] == 1 and m["receiver"] == "server"]
    assert sorted(m["sender"] for m in up) == sorted(ds.entity_names)
    for m in up:
        assert m["records"] == ["meta", "release"]
        # At least the float64 payload of the prototypes, plus a bounded envelope.
        assert 8 * int(np.prod(m["shape"])) < m["bytes"] < 8 * int(np.prod(m["shape"])) + 8000
    down = [m for m in msgs if m["content"] == "item factors V"]
    assert len(down) == 3 and all(m["shape"] == list(V.shape) for m in down)
    assert doc["deployment"]["bytes_on_wire"] == sum(m["bytes"] for m in msgs)


def test_summable_release_goes_through_secagg_and_equals_in_process(deployment, popularity_run):
    ds = deployment[0]
    cfg, dump, doc, V, ref, res = popularity_run
    sec = doc["deployment"]["secure_aggregation"]
    assert sec["reconstruction_threshold"] == 2 and sec["max_dropouts"] == 1
    trust = doc["privacy"]["trust"]
    assert trust["against_server_and_other_entities"]["epsilon"] > trust["against_server"]["epsilon"]

    # The server received no share in the clear: entity → server messages are SecAgg+ stage replies
    # and round-2 acknowledgements only ...
    up = [m for m in doc["messages"] if m["receiver"] == "server"]
    assert {m["content"] for m in up} == {
        "SecAgg+ setup (public keys) (reply)", "SecAgg+ share keys (encrypted key shares) (reply)",
        "SecAgg+ collect masked vectors (reply)", "SecAgg+ unmask (key shares) (reply)",
        ROUND2_REPLY, POLICY_REPLY}
    assert all("release" not in m["records"] for m in up)
    # each masked vector is logged with its public length; the protocol's other messages carry no array
    collect = "SecAgg+ collect masked vectors (reply)"
    assert [m["shape"] for m in up if m["content"] == collect] == [[ds.n_items]] * 3
    assert all(m["shape"] is None for m in up if m["content"] != collect)
    released = {r["content"].split(" (")[0]: r for r in released_from_messages(doc)
                if r["what"].endswith("entity → server")}
    assert f"shape {ds.n_items}," in released["SecAgg+ collect masked vectors"]["content"]
    assert "shape no array" in released["SecAgg+ setup"]["content"]
    # ... and the vectors it did receive are masked: uniform over [0, 2³²), unrelated to the shares,
    # while their sum minus the masks (SecAgg+'s unmasking) gave exactly Σ shares (V above).
    target, modulus, clip = secagg_ranges(3)
    shares = ref_shares(ds, cfg)
    masked = [np.load(p) for p in sorted(dump.glob("*secagg3*.npz"))]
    assert len(masked) == 3
    vectors = [z[k] for z in masked for k in z.files if k.endswith(".1")]  # [0] is the weight factor
    assert len(vectors) == 3
    quantised = [np.rint((s + clip) * target / (2 * clip)) for s in shares]
    for v in vectors:
        assert v.shape == (ds.n_items,)
        assert v.max() > modulus / 4  # a quantised share is < T = 2³⁰ = M/4; masked values are not
        for q in quantised:
            assert np.mean(v == q) < 0.05
    np.testing.assert_array_equal(np.maximum(np.sum(shares, axis=0), 0.0), V[:, 0])


def ref_shares(ds, cfg, method=None, **share_args) -> list[np.ndarray]:
    """Each entity's share as its node draws it in the labelled simulation mode (the same rows and
    streams as the in-process run): of ``method`` (default: the run's dp-popularity), with
    ``share_args`` for its ``share`` — ``rngs``: the entities' streams when one stage follows another
    on them, else fresh ones from the run's seed."""
    from dpfed_core.federation.summable import make_summable_method
    from dpfed_core.privacy.ledger import PrivacyLedger
    from dpfed_core.models.blend import released_rows
    from dpfed_core.privacy.noise import method_generator

    split = make_split(ds, cfg)
    rngs = share_args.pop("rngs", None) or method_generator(cfg.seed, private=True,
                                                            simulation=True).spawn(ds.n_entities + 1)
    m = method or make_summable_method("dp-popularity", value_max=ds.value_max, epsilon=cfg.epsilon,
                                       delta=cfg.delta, max_dropouts=cfg.max_dropouts)
    # a site's shares read its rows without the entries its round 2 validates on
    return [m.share(released_rows(split.train[sl]), rngs[h], PrivacyLedger(1.0, 1e-6).for_entity(name),
                    ds.n_entities, **share_args).values
            for h, (name, sl) in enumerate(zip(ds.entity_names, ds.entity_slices()))]


def test_a_method_that_pools_raw_data_is_refused(deployment):
    ds, fed, _ = deployment
    with pytest.raises(ConfigError, match="does not run as a deployment"):
        run_deployed(ds, RunConfig(method="central"), federation=fed)


def test_a_declared_catalogue_that_leaves_items_out_shapes_every_message_and_equals_in_process(deployment):
    """The fixture's shards, run with a declared catalogue of their first 30 of 40 columns (the last 10
    are items the data holds outside it): every secure sum and V have the declared catalogue's length,
    each node scores its own 10 items in round 2, and V, every metric and every ledger row equal the
    in-process run's; a prototype method's prototypes and V are shaped by the catalogue too, each node
    scoring its own items by its site model, and equal the in-process run's."""
    import dataclasses

    ds, fed, base = deployment
    part = dataclasses.replace(ds, n_declared=30)
    cfg = RunConfig(method="dp-popularity", epsilon=2.0, rank=3, simulation=True, aggregation="secure",
                    max_dropouts=1, method_params={"local_blend": True})
    doc, V, ref, res = _deployed_and_in_process(part, cfg, fed, base / "received_declared_part")
    assert V.shape[0] == 40 and np.all(V[30:] == 0) and np.any(V[:30] != 0)
    sec = doc["deployment"]["secure_aggregation"]
    assert [s["length"] for s in sec["stages"]] == [30]
    down = [m for m in doc["messages"] if m["content"].startswith("item factors V")]
    assert down and all(m["shape"][0] == 30 for m in down)
    assert doc["notes"][0].startswith("the declared item catalogue is what is shared: every message is shaped by "
                                      "its 30 items")
    assert doc["dataset"]["n_declared"] == 30
    # the items outside the catalogue are scored: a node's own model ranks them, not a zero row
    scores = res.entity_factors().scores(np.arange(part.n_users))
    assert np.ptp(scores[:, 30:], axis=1).max() > 0
    proto = RunConfig(method="dp-gaussian", epsilon=2.0, k=5, rank=3, max_iter=60, simulation=True)
    doc, V = run_deployed(part, proto, federation=fed, round_timeout=120, timeout=300, return_model=True,
                          dump_dir=base / "received_declared_part_prototypes")
    ref, res = run_method(part, proto)
    np.testing.assert_allclose(V, res.V, rtol=1e-10, atol=1e-12)
    _assert_same_run(doc, ref)
    up = [m for m in doc["messages"] if m["round"] == 1 and m["receiver"] == "server"]
    assert up and all(m["shape"][1] == 30 for m in up)
    assert "each entity scores the ones it has rows for with its own model" in doc["notes"][0]
    scores = res.entity_factors().scores(np.arange(part.n_users))
    assert np.ptp(scores[:, 30:], axis=1).max() > 0


def test_a_secure_sum_selects_the_catalogue_of_undeclared_data_and_equals_in_process(deployment, catalogue_run):
    """On Flower: data without a declared catalogue (eICU-like names read from the data),
    dp-popularity under SecAgg+. A catalogue stage first (one SecAgg+ sum of the nodes' bounded bucket
    counts + Gaussian shares, the server's threshold, the released keys broadcast), then the method on
    the K keys; V, every metric and every ledger row equal the in-process run's."""
    from dpfed_core.privacy import catalogue as cat

    ds = deployment[0]
    und, cfg, dump, doc, V, ref, res = catalogue_run
    assert und.item_source != "declared" and list(und.item_names) == list(ds.item_names)  # the fixture's shards
    K = res.extra["catalogue_keys"]
    assert 0 < K < cat.SECURE_CATALOGUE_BUCKETS and 0 < len(res.extra["catalogue"]) <= und.n_items
    assert doc["warnings"] == ref["warnings"]
    stages = [r["stage"] for r in doc["privacy"]["ledger"]]
    assert stages == ["catalogue"] * 3 + ["item totals"] * 3  # stage by stage, as in process
    sec = doc["deployment"]["secure_aggregation"]
    assert [(s["stage"], s["length"]) for s in sec["stages"]] == [("catalogue", cat.SECURE_CATALOGUE_BUCKETS),
                                                                  ("release", K)]
    assert doc["notes"][0].startswith(f"no declared item catalogue: federation-wide DP selection under secure "
                                      f"aggregation kept {K} of")
    # Up: SecAgg+ replies of both sums and round 2; down: the K released keys, carried by the next
    # sum's share instructions (no message round of their own, no acknowledgement).
    up = {m["content"] for m in doc["messages"] if m["receiver"] == "server"}
    assert "SecAgg+ collect masked vectors [catalogue] (reply)" in up and ROUND2_REPLY in up
    assert not any("acknowledgement (public result stored)" == c for c in up)
    bc = [m for m in doc["messages"] if m["content"].endswith(f"+ public result of the catalogue sum (keys [{K}])")]
    assert len(bc) == 3 and all(m["receiver"] != "server" and m["content"].startswith("SecAgg+ collect masked vectors")
                                for m in bc)
    assert all(m["shape"] == [K] for m in bc)  # the public keys it carries
    vectors = {m["content"]: m["shape"] for m in doc["messages"] if m["receiver"] == "server"
               and m["content"].startswith("SecAgg+ collect masked vectors")}
    assert vectors == {"SecAgg+ collect masked vectors [catalogue] (reply)": [cat.SECURE_CATALOGUE_BUCKETS],
                       "SecAgg+ collect masked vectors (reply)": [K]}, vectors
    assert not any(m["content"].startswith("public result of") for m in doc["messages"])
    # The catalogue vectors the server received are masked, the length of the public B.
    target, modulus, clip = secagg_ranges(3)
    files = sorted(dump.glob("*secagg3_catalogue_*.npz"))
    vectors = [z[k] for z in map(np.load, files) for k in z.files if k.endswith(".1")]
    assert len(vectors) == 3 and all(v.shape == (cat.SECURE_CATALOGUE_BUCKETS,) and v.max() > modulus / 4
                                     for v in vectors)


def _secagg_rounds(doc: dict) -> set[str]:
    """The SecAgg+ message rounds of a run, as the server's log names them."""
    return {m["content"].split(" + public result")[0] for m in doc["messages"]
            if m["receiver"] != "server" and m["content"].startswith("SecAgg+")}


@pytest.mark.parametrize("declared", [True, False], ids=["declared catalogue", "federation-wide catalogue"])
def test_stages_whose_inputs_public_facts_fix_share_one_secure_sum(deployment, declared):
    """dp-cooccurrence on a catalogue of at most max_items items: the co-occurrence shares read every
    item whatever the popularity sum says, so both stages ride in one SecAgg+ sum (4 message rounds,
    not 8) — after the federation-wide catalogue too, on its K released keys. The same shares, the
    same sums: V, every metric and every ledger row equal the in-process run's."""
    from dpfed_core.privacy import catalogue as cat

    ds, fed, base = deployment
    data = ds if declared else three_clinics(declared=False)
    cfg = RunConfig(method="dp-cooccurrence", epsilon=4.0, rank=3, max_iter=60, simulation=True,
                    aggregation="secure", max_dropouts=1)
    dump = base / f"received_fused_{declared}"
    doc, V = run_deployed(data, cfg, federation=fed, round_timeout=120, timeout=300, dump_dir=dump,
                          return_model=True)
    ref, res = run_method(data, cfg)
    np.testing.assert_array_equal(V, res.V[:, :V.shape[1]])  # exact: grid shares, integer sums
    _assert_same_run(doc, ref)
    m = data.n_items if declared else res.extra["catalogue_keys"]
    pair = m * (m + 1) // 2
    sec = doc["deployment"]["secure_aggregation"]
    fused = {"stage": "popularity+co-occurrence", "length": m + pair,
             "parts": [["popularity", m], ["co-occurrence", pair]]}
    catalogue = [] if declared else [{"stage": "catalogue", "length": cat.SECURE_CATALOGUE_BUCKETS, "parts": None}]
    assert [{k: s.get(k) for k in fused} for s in sec["stages"]] == [*catalogue, fused]
    ledger = [r["stage"] for r in doc["privacy"]["ledger"]]
    assert ledger == ([] if declared else ["catalogue"] * 3) + ["popularity"] * 3 + ["co-occurrence"] * 3
    label = "[popularity+co-occurrence]"
    rounds = _secagg_rounds(doc)
    assert {r for r in rounds if r.endswith(label)} == {f"{s} {label}" for s in SECAGG_STAGES}
    assert len(rounds) == 4 * (1 if declared else 2)  # one SecAgg+ protocol per secure sum
    # the masked vectors the server received carry both stages: the public length m + m(m+1)/2
    files = sorted(dump.glob("*secagg3_popularity+co-occurrence_*.npz"))
    vectors = [z[k] for z in map(np.load, files) for k in z.files if k.endswith(".1")]
    assert len(vectors) == 3 and all(v.shape == (m + pair,) for v in vectors)


def test_without_secure_aggregation_the_catalogue_is_selected_federation_wide_and_a_prototype_method_is_refused(
        deployment):
    """--aggregation none on data without a declared catalogue: every site's bucket histogram carries
    the full noise, the server thresholds their sum, and the run equals the in-process one; what the
    run says of the trust model is what crossed the wire (shares carried by SecAgg+). A prototype
    method's per-entity selection is no deployment round: refused."""
    ds, fed, _ = deployment
    und = three_clinics(declared=False)
    cfg = RunConfig(method="dp-popularity", epsilon=4.0, simulation=True)
    doc = run_deployed(und, cfg, federation=fed, round_timeout=120, timeout=300)
    ref, res = run_method(und, cfg)
    _assert_same_run(doc, ref)
    assert [r["stage"] for r in doc["privacy"]["ledger"]][:3] == ["catalogue"] * 3
    assert res.extra["catalogue_keys"] > 0
    assert "full noise" in doc["privacy"]["trust"]["sum"] and "received their sum only" in doc["privacy"]["trust"]["sum"]
    assert not any("the server sees each release" in n or "the server summed them" in n for n in doc["notes"])
    with pytest.raises(ConfigError, match="per-entity DP catalogue selection .* does not run as a deployment"):
        run_deployed(und, RunConfig(method="dp-gaussian", epsilon=1.0, aggregation="secure"), federation=fed)


def test_public_item_features_must_reach_the_nodes(deployment, tmp_path):
    from dpfed_core.deployment.shards import load_item_features, write_item_features

    ds, fed, _ = deployment  # started without item features
    with pytest.raises(ConfigError, match="SuperNodes were started without them"):
        run_deployed(three_clinics(features=True), RunConfig(method="dp-popularity", epsilon=1.0,
                                                             aggregation="secure"), federation=fed)
    path = write_item_features(np.ones((40, 2)), ["a", "b"], tmp_path / "f.npz")
    assert load_item_features(path, 40)[1] == ["a", "b"]
    with pytest.raises(ConfigError, match="item-features"):
        load_item_features(path, 41)
    with pytest.raises(ConfigError, match="does not exist.*item-features"):
        load_item_features(tmp_path / "missing.npz", 40)


def test_federate_page_offers_flower_execution():
    """The Federate page's "separate processes (Flower)" option: its run button, and the specific
    error for a method that cannot be deployed (no deployment is started here)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    repo = Path(__file__).resolve().parents[1]
    at = AppTest.from_file(str(repo / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/2_Federate.py").run()
    at.radio(key="fed_execution").set_value("separate processes (Flower)").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button(key="fed_run_flower") is not None
    assert at.text_input(key="fed_site_policy").value == ""  # each site's policy file (empty: matching the run)
    # the control a "no answer within the round timeout" message names, at the CLI's default
    assert at.number_input(key="fed_round_timeout").value == 600
    assert at.number_input(key="fed_round_timeout").label == "Round timeout (s)"
    assert not any(b.key == "fed_run" for b in at.button)
    # the deployment's own command line, with the panel's settings as flags
    assert any(c.value.startswith("python -m dpfed_core deploy-local --data sample:clinic")
               and c.value.endswith("--round-timeout 600") for c in at.code), [c.value for c in at.code]
    at.selectbox(key="fed_method").set_value("central").run()
    assert any("does not run as a deployment" in e.value for e in at.error)




def test_the_panels_command_line_is_the_same_deployment_for_deploy_local():
    """What the panel writes out parses with deploy-local's own parser into the very configuration
    the panel runs, with its round timeout and site policy (a path with a space quoted)."""
    import shlex

    from dpfed_core.cli.args import load_dataset, run_config
    from dpfed_core.cli.main import build_parser
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.defaults import default_config
    from dpfed_core.ui.deployment_panel import deploy_command

    ds = load_data("sample:clinic", federation="region")
    for cfg in (default_config(ds), default_config(ds).replace(method="dp-popularity", epsilon=0.5, aggregation="none",
                                                               seed=4, simulation=True)):
        line = deploy_command(cfg, "sample:clinic", {"federation": "region"}, "/srv/site policy.toml", 90.0)
        argv = shlex.split(line)[3:]
        assert argv[0] == "deploy-local", line
        args = build_parser(argv[0]).parse_args(argv)
        assert (args.round_timeout, args.site_policy) == (90.0, "/srv/site policy.toml")
        parsed = run_config(args, load_dataset(args))
        assert parsed.to_dict() == cfg.to_dict(), line
    assert "--site-policy" not in deploy_command(cfg, "sample:clinic", {}, None, 600.0)


def test_deploy_local_prints_the_trust_model_and_a_run_that_learned_nothing_as_run_does(tmp_path, capsys):
    """A deployment whose DP catalogue kept nothing reads as ``run`` reads it: the trust model line and
    the same warning naming the controls, never a plain success — "nothing was learned" for a method
    whose round 2 keeps no own parts (dp-popularity's default), "its own model alone" for one that does,
    in process and deployed alike (labelled simulation noise: the same selection in both)."""
    import random

    from dpfed_core.cli.main import main

    rnd = random.Random(1)
    rows = ["user,item,n,site"] + [f"u{u},drug {i},1,{'ABC'[u % 3]}" for u in range(150)
                                   for i in rnd.sample(range(60), 6)]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "sites.txt").write_text("A\nB\nC\n")
    common = ["--data", str(tmp_path / "t.csv"), "--user-col", "user", "--item-col", "item", "--value-col", "n",
              "--value-kind", "counts", "--value-max", "1", "--entity-col", "site", "--entities",
              str(tmp_path / "sites.txt"), "--epsilon", "0.05", "--aggregation", "secure", "--simulation",
              "--store", str(tmp_path / "store.sqlite3")]
    for method, says in (("dp-popularity", "and nothing was learned:"),
                         ("dp-cooccurrence", "(each entity recommends from its own model alone):")):
        printed = {}
        for command in ("run", "deploy-local"):
            extra = ["--site-policy", str(lab_policy(tmp_path))] if command == "deploy-local" else []
            assert main([command, *common, "--method", method, *extra]) == 0, capsys.readouterr().err
            out = capsys.readouterr().out.splitlines()
            printed[command] = {k: [line for line in out if line.startswith(k)] for k in ("trust model:", "warning:")}
        warnings = printed["deploy-local"]["warning:"]
        assert warnings == printed["run"]["warning:"], printed
        assert [w for w in warnings if w.startswith("warning: no item passed the DP catalogue selection")
                and says in w and "--items FILE" in w], (method, warnings)
        (trust,) = printed["deploy-local"]["trust model:"]
        assert "secure aggregation" in trust

def _flower_page(store, federation: str = "region"):
    """The Federate page with Execution = Flower on the clinic sample federated by ``federation``,
    charging the budget store ``store`` (the dashboard's store, named by DPFED_STORE)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    repo = Path(__file__).resolve().parents[1]
    at = AppTest.from_file(str(repo / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.selectbox(key="sample_spec").set_value("sample:clinic").run()
    at.selectbox(key="sample_fed").set_value(federation).run()
    at.button(key="load_sample").click().run()
    at.switch_page("pages/2_Federate.py").run()
    at.radio(key="fed_execution").set_value("separate processes (Flower)").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _releases(store, at) -> list:
    from dpfed_core.privacy.odometer import BudgetOdometer
    from dpfed_core.privacy.store import Store
    from dpfed_core.ui.history import owner_key

    return BudgetOdometer(Store(store)).releases(owner_key(at.session_state["dataset"]))


def test_a_flower_run_from_the_page_is_charged_recorded_and_kept_in_the_history(monkeypatch, tmp_path):
    """The panel's deployment goes through the one run service, as deploy-local does: the release is
    charged to the owner's store before the nodes start, the document carries the odometer's record
    and the accountant, and the run is kept in the history, where opening it says why it cannot be
    reopened on the pages (its user factors stayed at the nodes) and offers its document."""
    store = tmp_path / "dashboard.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(store))
    at = _flower_page(store)
    at.number_input(key="fed_round_timeout").set_value(120)
    at.button(key="fed_run_flower").click().run()
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    doc = at.session_state["fed_flower_doc"]
    assert doc["deployment"]["supernodes"] == at.session_state["dataset"].n_entities
    odometer = doc["odometer"]
    assert odometer["store"] == str(store) and len(odometer["releases"]) == 1
    assert [r["id"] for r in _releases(store, at)] == odometer["releases"]
    assert doc["privacy"]["accountant"], "the accountant across releases is noted in the document"
    assert at.get("download_button")[0].proto.label == "Download the result document (JSON)"
    assert any(e.label.startswith("Notes from this run") for e in at.expander)  # as an in-process run shows them

    # a new session (as after a reload): the History lists the run and shows it from its document
    at = _flower_page(store)
    assert "fed_flower_doc" not in at.session_state
    at.switch_page("pages/8_History.py").run()
    table = at.dataframe[0].value
    (label,) = [w for w, k in zip(table["what"], table["kind"]) if k == "run"]
    assert "on Flower" in label, label
    at.button(key="hist_open").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("a Flower deployment: each entity's user factors stayed at its node" in i.value for i in at.info)
    assert any(f"MAR {doc['overall']['mar']:.4f}" in m.value for m in at.markdown)
    assert [b.proto.label for b in at.get("download_button")] == ["Download its result document (JSON)"]
    # and the Flower panel shows it again: its nodes, message log and ledger, read from the document
    at.switch_page("pages/2_Federate.py").run()
    at.radio(key="fed_execution").set_value("separate processes (Flower)").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["fed_flower_doc"]["overall"] == doc["overall"]
    assert any(m.value.startswith("**Last Flower run**") for m in at.markdown)


def test_the_flower_panel_refuses_a_bad_site_policy_in_its_own_words_before_charging(monkeypatch, tmp_path):
    """The checks deploy-local makes before charging, made by the panel too: an unreadable policy file,
    or a simulation without a policy that allows it, stops the run before any release, and the
    message names the page's controls, not the command line's flags."""
    store = tmp_path / "dashboard.sqlite3"
    monkeypatch.setenv("DPFED_STORE", str(store))
    at = _flower_page(store)
    at.text_input(key="fed_site_policy").set_value(str(tmp_path / "missing.toml")).run()
    at.button(key="fed_run_flower").click().run()
    (err,) = [e.value for e in at.error]
    assert "cannot read the site policy" in err and "“Site policy” (Execution: separate processes)" in err.replace(
        "\\", ""), err
    assert "--" not in err, err
    assert "fed_flower_doc" not in at.session_state
    assert _releases(store, at) == []
    at.text_input(key="fed_site_policy").set_value("").run()
    at.toggle(key="fed_simulation").set_value(True).run()
    at.button(key="fed_run_flower").click().run()
    (err,) = [e.value for e in at.error]
    assert "needs a site policy that allows it" in err and "“Simulation” toggle" in err and "--" not in err, err
    assert "fed_flower_doc" not in at.session_state

def test_deploy_local_cli_refuses_bad_input_before_starting_anything(capsys, tmp_path):
    from dpfed_core.cli.main import main

    out = tmp_path / "f.json"
    assert main(["deploy-local", "--data", "sample:synthetic", "--method", "central", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "does not run as a deployment" in err and "--method" in err and "starting" not in err
    assert main(["deploy-local", "--data", "sample:synthetic", "--method", "kmeans", "--max-dropouts", "1",
                 "--out", str(out)]) == 2
    assert "--max-dropouts = 1 applies to the secure aggregation of a summable method" in capsys.readouterr().err
    assert main(["deploy-local", "--data", "sample:synthetic", "--method", "kmeans", "--port-range", "9-5",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--port-range" in err and "Traceback" not in err
    assert main(["deploy-local", "--data", "sample:synthetic", "--method", "kmeans", "--site-policy",
                 str(tmp_path / "missing.toml"), "--out", str(out)]) == 2
    err = capsys.readouterr().err  # the coordinator's flag that names the file, not a SuperNode's setting
    assert "cannot read the site policy" in err and "fix --site-policy" in err and "node-config" not in err, err
    from dpfed_core.deployment.simulation_engine import available

    if not available()[0]:
        assert main(["deploy-local", "--data", "sample:synthetic", "--method", "kmeans", "--engine", "simulation",
                     "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "--engine" in err and "Ray" in err
    assert not out.exists()


def test_the_simulation_engine_gives_its_nodes_the_public_item_features(tmp_path):
    """Public item features reach the simulated nodes as they reach SuperNodes: the run equals the
    in-process one, whose round 2 reads them."""
    from dpfed_core.deployment.launcher import Guard
    from dpfed_core.deployment.shards import write_item_features
    from dpfed_core.deployment.simulation_engine import SimulatedFederation, available

    if not available()[0]:
        if os.environ.get("CI"):
            raise AssertionError(available()[1])
        pytest.skip(available()[1])
    ds = three_clinics(features=True)
    cfg = RunConfig(method="dp-cooccurrence", epsilon=2.0, rank=3, simulation=True, aggregation="secure")
    guard = Guard()
    try:
        shards = write_shards(ds, make_split(ds, cfg), guard.path / "shards")
        feats = write_item_features(ds.item_features, ds.item_feature_names, guard.path / "item_features.npz")
        with SimulatedFederation(shards, None, ds.entity_names, guard=guard, site_policy=lab_policy(guard.path),
                                 item_features=feats) as fed:
            doc = run_deployed(ds, cfg, federation=fed, round_timeout=120, timeout=300, engine="simulation")
    finally:
        guard.close()
    ref, _ = run_method(ds, cfg)
    _assert_same_run(doc, ref)
    # the features changed the run: without them the nodes' round 2 differs
    plain, _ = run_method(three_clinics(), cfg)
    assert plain["overall"]["mar"] != ref["overall"]["mar"]


def test_simulation_engine_runs_the_same_apps_and_equals_in_process():
    """--engine simulation: the same ServerApp and ClientApp (SecAgg+ and its mod included) under
    Flower's Simulation Engine (default: in-process backend) give the in-process run's metrics and
    ledger; the document names the engine and its transport; the engine's process and the shard
    copies are gone afterwards (tests/test_simulation_engine.py: the Ray backend, kill paths)."""
    import time

    from dpfed_core.deployment.simulation_engine import SimulatedFederation, available

    if not available()[0]:
        if os.environ.get("CI"):
            raise AssertionError(available()[1])
        pytest.skip(available()[1])
    ds = three_clinics()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=3, simulation=True, aggregation="secure",
                    max_dropouts=1)
    guard, fed = _guarded_federation(SimulatedFederation, ds, cfg)
    try:
        doc = run_deployed(ds, cfg, federation=fed, round_timeout=120, timeout=300, engine="simulation")
    finally:
        fed.close()
        private = guard.path
        guard.close()
    ref, _ = run_method(ds, cfg)
    _assert_same_run(doc, ref)
    dep = doc["deployment"]
    assert dep["engine"] == "flower-simulation" and "Simulation Engine" in dep["transport"]
    assert dep["secure_aggregation"]["reconstruction_threshold"] == 2
    contents = [m["content"] for m in doc["messages"]]
    assert any(c.startswith("SecAgg+ collect masked vectors") for c in contents)
    assert ROUND2_REPLY in contents
    # The engine's process (and Ray's workers, with that backend) carry the shard list (the private
    # folder's path) in their environment.
    end = time.monotonic() + 20
    while time.monotonic() < end and _processes_mentioning(str(private)):
        time.sleep(0.2)
    assert _processes_mentioning(str(private)) == []
    assert not private.exists()


def test_a_plug_in_method_runs_through_deploy_local(tmp_path, monkeypatch, capsys):
    """The example plug-in (tests/example_method.py) through the real deployment path: `deploy-local
    --plugin example_method` imports it here and, through DPFED_PLUGINS, on every node; the result
    equals `run`'s, and the run service recorded it (odometer note in the document)."""
    import json
    from pathlib import Path

    from dpfed_core.cli.main import main

    tests_dir = str(Path(__file__).resolve().parent)
    monkeypatch.setenv("PYTHONPATH", tests_dir + (os.pathsep + os.environ["PYTHONPATH"]
                                                  if os.environ.get("PYTHONPATH") else ""))
    monkeypatch.setenv("DPFED_PLUGINS", "")
    common = ["--data", "sample:clinic", "--federation", "region", "--method", "dp-item-reach-example",
              "--epsilon", "1", "--aggregation", "secure", "--simulation", "--param", "power=2"]
    dep_out, run_out = tmp_path / "dep.json", tmp_path / "run.json"
    assert main(["deploy-local", *common, "--plugin", "example_method", "--site-policy", str(lab_policy(tmp_path)),
                 "--out", str(dep_out)]) == 0, \
        capsys.readouterr().err
    assert os.environ["DPFED_PLUGINS"] == "example_method"
    assert main(["run", *common, "--out", str(run_out)]) == 0, capsys.readouterr().err
    dep, ref = json.loads(dep_out.read_text()), json.loads(run_out.read_text())
    assert dep["method"]["name"] == "dp-item-reach-example" and dep["deployment"]["supernodes"] == 4
    _assert_same_run(dep, ref)
    # Recorded by the run service, in the store the tests name (conftest's DPFED_STORE).
    assert dep["odometer"]["store"] == os.environ["DPFED_STORE"]
    # A module that cannot be imported: one clear error naming --plugin, nothing written.
    bad = tmp_path / "bad.json"
    assert main(["deploy-local", *common, "--plugin", "no_such_plugin_module", "--site-policy",
                 str(lab_policy(tmp_path)), "--out", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "no_such_plugin_module" in err and "--plugin" in err and "Traceback" not in err
    assert not bad.exists()


def test_the_run_service_charges_and_records_a_run_done_by_a_runner(tmp_path):
    """deploy-local's coordinator hands its deployment to execute_run as the run step: the service
    validates, charges the store before the runner runs, and records the document."""
    from dpfed_core.evaluation.service import execute_run
    from dpfed_core.privacy.odometer import BudgetOdometer
    from dpfed_core.privacy.store import Store

    ds = three_clinics()
    cfg = RunConfig(method="dp-popularity", epsilon=0.5, rank=3)
    store = Store(tmp_path / "budget.sqlite3")
    seen = []

    def runner(dataset, config, split):
        key = BudgetOdometer(store).register(dataset)
        seen.append((split, max(b.spent_epsilon for b in BudgetOdometer(store).balance(key))))
        return run_method(dataset, config, split)

    out = execute_run(ds, cfg, store=store, runner=runner)
    assert len(seen) == 1 and seen[0][0] is not None
    # charged (reserved) before the run step started: at most the requested ε (the zCDP filter may state less)
    assert 0.4 < seen[0][1] <= 0.5 * (1 + 1e-9)
    assert out.odometer["store"] == str(store.path) and out.history_id is not None
    assert out.doc["privacy"]["epsilon"] == pytest.approx(0.5)
    with pytest.raises(ConfigError, match="compares no methods"):
        execute_run(ds, cfg, store=store, runner=runner, compare=["kmeans"])
    with pytest.raises(ConfigError, match="does not run as a deployment"):
        from dpfed_core.deployment.deployed import check_deployable

        check_deployable(ds, RunConfig(method="central"))


def test_shards_hold_one_entity_each_and_bad_paths_say_how_to_fix(tmp_path):
    from dpfed_core.deployment import load_shard

    ds = three_clinics()
    split = make_split(ds, RunConfig(seed=0))
    paths = write_shards(ds, split, tmp_path)
    for h, (p, sl) in enumerate(zip(paths, ds.entity_slices())):
        s = load_shard(p)
        assert (s.entity, s.index, s.n_entities) == (ds.entity_names[h], h, 3)
        assert (s.train != split.train[sl]).nnz == 0 and (s.test != split.test[sl]).nnz == 0
        expected = split.test_users[(split.test_users >= sl.start) & (split.test_users < sl.stop)] - sl.start
        np.testing.assert_array_equal(s.test_users, expected)
    assert not list(tmp_path.glob("*.tmp"))
    with pytest.raises(ConfigError, match="data-path"):
        load_shard(tmp_path / "missing.npz")
    (tmp_path / "junk.npz").write_bytes(b"not a shard")
    with pytest.raises(ConfigError, match="not a dpfed shard"):
        load_shard(tmp_path / "junk.npz")
    # A site that exports only its own entity records its place in the declared federation.
    site = write_shards(ds, split, tmp_path / "site", declared=["clinic Z", *ds.entity_names])
    assert load_shard(site[1]).index == 2 and load_shard(site[1]).n_entities == 4
    with pytest.raises(ConfigError, match="--declared-entities"):
        write_shards(ds, split, tmp_path / "bad", declared=["clinic A"])


def test_cooccurrence_runs_one_secure_sum_per_stage_and_equals_in_process(cooccurrence_deployment):
    """dp-cooccurrence: a SecAgg+ sum of the popularity shares, the server's item choice broadcast
    (public), a SecAgg+ sum of the packed co-occurrence shares, V down. Same V and metrics as the
    in-process run; the server received masked vectors and acknowledgements only."""
    from dpfed_core.federation.summable import make_summable_method, unpack_symmetric
    from dpfed_core.privacy.noise import method_generator

    ds, M, cfg = three_clinics(features=True), COOC_ITEMS, COOC_CFG
    bg = cooccurrence_deployment
    bg["thread"].join(400)
    assert not bg["thread"].is_alive(), "the dp-cooccurrence deployment did not finish within its timeouts"
    if "error" in bg:
        raise bg["error"]
    doc, V = bg["result"]
    dump = bg["dump"]
    ref, res = run_method(ds, cfg)
    # res.V also holds each entity's local columns (never sent): the broadcast V is its first block.
    assert V.shape == (ds.n_items, 3 + 1)
    np.testing.assert_array_equal(V, res.V[:, :V.shape[1]])  # exact: grid shares, integer sums
    _assert_same_run(doc, ref)
    # the public item features reached every node (its --node-config) and are declared as in process
    assert [r["stage"] for r in doc["privacy"]["ledger"]] == ["popularity"] * 3 + ["co-occurrence"] * 3 + ["public input"] * 3
    assert all(r["epsilon"] == 0 and "form 0" in r["note"] for r in doc["privacy"]["ledger"]
               if r["stage"] == "public input")
    sec = doc["deployment"]["secure_aggregation"]
    assert [(s["stage"], s["length"]) for s in sec["stages"]] == [("popularity", ds.n_items),
                                                                  ("co-occurrence", M * (M + 1) // 2)]
    assert sec["reconstruction_threshold"] == 2 and sec["kept_directions"] >= 1

    # Entity → server: SecAgg+ stage replies for both sums and acknowledgements.
    up = [m for m in doc["messages"] if m["receiver"] == "server"]
    secagg = {f"{label} [{stage}] (reply)" for stage in ("popularity", "co-occurrence")
              for label in ("SecAgg+ setup (public keys)", "SecAgg+ share keys (encrypted key shares)",
                            "SecAgg+ collect masked vectors", "SecAgg+ unmask (key shares)")}
    assert {m["content"] for m in up} == secagg | {ROUND2_REPLY, POLICY_REPLY}
    assert all("release" not in m["records"] and "public" not in m["records"] for m in up)
    # Server → entity between the sums: the public item list only, inside the co-occurrence sum's
    # share instructions.
    bc = [m for m in doc["messages"] if m["content"] == ("SecAgg+ collect masked vectors [co-occurrence] + public "
                                                         f"result of the popularity sum (items [{M}])")]
    assert len(bc) == 3 and all(m["receiver"] != "server" for m in bc)

    # The in-process shares (same streams as the nodes in simulation) and the sums they add up to.
    public = res.extra["public"]
    items = np.asarray(public["items"])
    assert items.size == M
    method = make_summable_method("dp-cooccurrence", value_max=ds.value_max, epsilon=1.0, delta=cfg.delta,
                                  max_dropouts=1, max_items=M, rank=3, lam=cfg.lam, max_iter=60)
    rngs = method_generator(cfg.seed, private=True, simulation=True).spawn(ds.n_entities + 1)
    shares = {stage: ref_shares(ds, cfg, method, rngs=rngs, stage=stage, public={"items": items})
              for stage in ("popularity", "co-occurrence")}  # the second stage's draws follow the first's
    np.testing.assert_array_equal(np.sum(shares["co-occurrence"], axis=0), res.extra["secure_sum"])
    np.testing.assert_array_equal(np.sort(np.argsort(-np.sum(shares["popularity"], axis=0), kind="stable")[:M]),
                                  items)
    assert unpack_symmetric(res.extra["secure_sum"], M).shape == (M, M)

    # Every array the server received is a masked vector of the collect stage; none is a share.
    target, modulus, clip = secagg_ranges(3)
    with_arrays = [p for p in sorted(dump.glob("*.npz")) if np.load(p).files]
    assert with_arrays and all("secagg3_" in p.name for p in with_arrays)
    for stage, length in (("popularity", ds.n_items), ("co-occurrence", M * (M + 1) // 2)):
        files = sorted(dump.glob(f"*secagg3_{stage}_*.npz"))
        vectors = [z[k] for z in map(np.load, files) for k in z.files if k.endswith(".1")]
        assert len(vectors) == 3
        quantised = [np.rint((s + clip) * target / (2 * clip)) for s in shares[stage]]
        for v in vectors:
            assert v.shape == (length,)
            assert v.max() > modulus / 4  # quantised shares are < T = M/4; masked values are not
            for q in quantised:
                assert np.mean(v == q) < 0.05


# ---------------------------------------------------------------------------------------------
# nothing exact on the wire. Every field of every reply the server received, in the four
# runs above (a DP prototype method, dp-popularity, dp-popularity on a federation-wide DP catalogue and
# dp-cooccurrence through SecAgg+), is one of these; a count of users, a metric sum or a timing would be a new key and fail the test.

#: record name → the keys it may carry, and what each is.
ALLOWED_FIELDS = {
    # identity and public fields of the protocol
    "meta": {"entity": "entity name (public: the declared federation)", "index": "position in it",
             "ledger": "ledger rows: the DP mechanisms' public parameters", "note": "the release's note",
             "coalition_epsilon": "ε against the server with all other entities (from H and d)",
             "decision": "the site's policy decision (accepted / refused)", "rule": "the policy rule of a refusal",
             "message": "the refusal's reason (the request and the site's policy; empty on acceptance)"},
    # round-1 DP release of a prototype method
    "release": {"prototypes": "DP prototypes", "counts": "DP cluster sizes"},
    # SecAgg+ (Flower's protocol fields): public keys, encrypted shares, masked vectors, key shares
    "secaggplus_configs": {"pk1": "public key", "pk2": "public key", "dsts": "node ids", "ctxts": "ciphertexts",
                           "masked_params": "masked vector", "nids": "node ids", "shares": "key shares"},
    "fitres.status": {"code": "0", "message": "empty"},
    "fitres.metrics": {},
    "fitres.num_examples": {"num_examples": "the constant 1 (SecAgg+'s weight, not a count)"},
    "ack": {"stored": "names of the public arrays stored"},
}
LEDGER_KEYS = {"entity", "stage", "mechanism", "epsilon", "delta", "sensitivity", "noise_scale", "note", "sampler",
               "rho"}  # ρ: OpenDP's map of the (public) σ, Δ and size


def test_the_server_receives_only_masked_vectors_dp_releases_and_public_fields(deployment, cooccurrence_deployment,
                                                                                 prototypes_run, popularity_run,
                                                                                 catalogue_run):
    import json

    ds, _, base = deployment
    bg = cooccurrence_deployment
    bg["thread"].join(400)
    dumps = [base / "received_prototypes", base / "received_popularity", base / "received_catalogue", bg["dump"]]
    files = sorted(p for d in dumps for p in d.glob("*.json"))
    labels = {p.name.split("_")[1] for p in files}
    assert {"round1", "round2", "secagg1", "secagg2", "secagg3", "secagg4"} <= labels
    # one reply per node per exchange: 3 (prototypes: 2 rounds) + 3 × 5 (popularity) + 3 × 9 (catalogue,
    # popularity — which carries the keys — and round 2) + 3 × 9 (co-occurrence: two sums, round 2)
    assert len(files) >= 3 * 2 + 3 * 5 + 3 * 9 + 3 * 9
    assert any("secagg3_catalogue" in p.name for p in files)
    for path in files:
        info = json.loads(path.read_text())
        assert info["error"] is None, path.name
        for rname, fields in info["records"].items():
            assert rname in ALLOWED_FIELDS, f"{path.name}: record {rname!r} is not a protocol record"
            for key, value in fields.items():
                if key == "__kind__":
                    continue
                assert key in ALLOWED_FIELDS[rname], f"{path.name}: {rname}.{key} is not a public field"
                if rname == "meta" and key == "ledger":
                    for row in json.loads(value):
                        assert set(row) <= LEDGER_KEYS
                if rname == "fitres.num_examples":
                    assert value == 1
        npz = np.load(path.with_suffix(".npz"))
        if "round2" in path.name:
            assert npz.files == []  # no array at all in round 2: V stays with the node as U_h does
    # No exact statistic anywhere in the bytes' descriptions.
    text = " ".join(p.read_text() for p in files)
    for word in ("n_users", "n_test_users", "train_sse", "test_sse", "mar_num", "ndcg", "seconds", "stats"):
        assert word not in text


def test_each_node_keeps_its_evaluation_and_the_document_says_where_it_came_from(deployment):
    """The metrics in the document come from the nodes' local reports (deploy-local: one operator
    holds every shard), labelled so; each report sits on its node's side."""
    import json

    ds, fed, _ = deployment
    cfg = RunConfig(method="kmeans", k=4, rank=3, max_iter=20, simulation=True)
    doc = run_deployed(ds, cfg, federation=fed, round_timeout=120, timeout=300)
    dep = doc["deployment"]
    assert "not sent to the server" in dep["evaluation_source"] and "local reports" in dep["evaluation_source"]
    assert any("local reports" in n for n in doc["notes"])
    for h, name in enumerate(ds.entity_names):
        rep = json.loads(fed.report_path(h).read_text())
        assert rep["entity"] == name and rep["run_id"] == int(dep["run_id"])
        assert rep["evaluator"] == "dpfed_core.evaluation.partial.entity_statistics"
    ref, _ = run_method(ds, cfg)
    _assert_same_run(doc, ref)
    # TLS and node authentication by default, and the document says so.
    assert dep["insecure"] is False and dep["transport"].startswith("TLS")


def test_the_superlink_speaks_tls_only_and_accepts_only_registered_nodes(deployment, tmp_path):
    """A plain-HTTP client gets no answer from the SuperLink, and a SuperNode whose key was not
    registered is refused (Flower's node authentication)."""
    import subprocess
    import sys
    import urllib.request

    from dpfed_core.deployment.security import make_node_key

    ds, fed, _ = deployment
    assert fed.tls is not None and not fed.insecure
    with pytest.raises(Exception):
        urllib.request.urlopen(f"http://127.0.0.1:{fed.port}/", timeout=5).read()
    key = make_node_key(tmp_path, "stranger")
    bindir = os.path.dirname(sys.executable)
    out = subprocess.run([os.path.join(bindir, "flower-supernode"), "--superlink", f"127.0.0.1:{fed.port}",
                          "--root-certificates", str(fed.tls.ca), "--auth-supernode-private-key", str(key.private),
                          "--port", str(__import__("dpfed_core.deployment.launcher", fromlist=["free_port"]).free_port()),
                          "--host", "127.0.0.1", "--isolation", "process", "--max-retries", "1",
                          "--max-wait-time", "10"],
                         capture_output=True, text=True, timeout=60, env={**os.environ, "FLWR_TELEMETRY_ENABLED": "0"})
    assert out.returncode != 0
    assert len(fed.dead_nodes()) == 0


def test_port_range_is_used_and_a_full_range_is_a_clear_error(tmp_path):
    import socket

    from dpfed_core.deployment.launcher import free_ports, parse_port_range

    lo = free_ports(1)[0]
    lo = max(1024, min(lo, 65000))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        busy = s.getsockname()[1]
        with pytest.raises(DeploymentError, match=r"--port-range.*free port"):
            free_ports(2, (busy, busy))
    with pytest.raises(DeploymentError, match="--port-range"):
        parse_port_range("80-90")
    with pytest.raises(DeploymentError, match="--port-range"):
        parse_port_range("abc")
    got = free_ports(3, (lo, min(lo + 200, 65535)))
    assert len(set(got)) == 3 and all(lo <= p <= lo + 200 for p in got)


_KILL_SCRIPT = """
import json, sys, time
sys.path.insert(0, {repo!r})
from dpfed_core.deployment.launcher import LocalFederation, Guard
from dpfed_core.deployment.shards import write_shards
from dpfed_core.config import RunConfig
from dpfed_core.evaluation.experiments import make_split
sys.path.insert(0, {tests!r})
from test_deployment import three_clinics
ds = three_clinics()
guard = Guard()
shards = write_shards(ds, make_split(ds, RunConfig(seed=0)), guard.path / "shards")
fed = LocalFederation(shards, None, ds.entity_names, guard=guard).start()
pids = [fed.zygote.proc.pid] + [p.pid for p in fed.processes()]
print(json.dumps({{"dir": str(guard.path), "pids": pids}}), flush=True)
time.sleep(600)
"""


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _processes_mentioning(text: str) -> list[int]:
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            for what in ("cmdline", "environ"):  # forks of the zygote carry the run's folder in FLWR_HOME
                try:
                    with open(f"/proc/{d}/{what}", "rb") as f:
                        if text.encode() in f.read() and not _gone(int(d)):
                            found.append(int(d))
                            break
                except OSError:
                    pass
    return found


def test_sigkill_of_the_launcher_leaves_no_process_and_no_shard(tmp_path):
    """SIGKILL the launcher of a running deployment: its watchdog ends every process group and
    removes the private folder with the shard copies; a stale folder of an earlier killed run
    (its owner gone) is removed at the next start."""
    import json
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from dpfed_core.deployment.launcher import PRIVATE_PREFIX, Guard

    repo = str(Path(__file__).resolve().parents[1])
    script = _KILL_SCRIPT.format(repo=repo, tests=str(Path(__file__).resolve().parent))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        line = proc.stdout.readline()
        info = json.loads(line)
    except BaseException:
        proc.kill()
        raise
    private = Path(info["dir"])
    assert private.is_dir() and (private.stat().st_mode & 0o777) == 0o700
    assert list((private / "shards").glob("*.npz"))
    assert all(not _gone(p) for p in info["pids"])
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    end = time.monotonic() + 20
    while time.monotonic() < end and (private.exists() or not all(_gone(p) for p in info["pids"])
                                      or _processes_mentioning(str(private))):
        time.sleep(0.2)
    assert not private.exists(), "the shard copies outlived the launcher"
    assert all(_gone(p) for p in info["pids"]), "a deployment process outlived the launcher"
    assert _processes_mentioning(str(private)) == []

    # A stale folder whose owner is gone (e.g. a launcher killed together with its watchdog).
    import tempfile

    stale = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))
    (stale / "owner").write_text(f"{proc.pid}\n")  # the killed launcher: no longer running
    (stale / "shards").mkdir()
    (stale / "shards" / "entity_000.npz").write_bytes(b"private")
    g = Guard()
    try:
        assert not stale.exists()
        assert g.path.exists()
    finally:
        g.close()
    assert not g.path.exists()


def test_the_launchers_control_requests_are_forks_and_a_failed_one_is_one_line(deployment, tmp_path):
    """The launcher's Control API requests run in forks of the warm interpreter (it never loads
    Flower's client itself): each leaves its answer file; a request that fails (an app folder that
    does not exist) is one DeploymentError naming why, and the deployment goes on serving."""
    ds, fed, base = deployment
    assert (fed.dir / "control_001_register.json").read_text() == "{}"  # the node keys' registration
    with pytest.raises(DeploymentError) as err:
        fed.control.start_run(tmp_path / "no_such_app", {})
    assert str(err.value).strip() and "\n" not in str(err.value)
    assert not fed.dead_nodes() and fed.superlink.poll() is None
    fed.control.stop_run(987654321)  # a run that does not exist: best effort, never raises


def test_a_control_request_to_no_superlink_writes_its_error_and_exits_1(tmp_path):
    import json

    from dpfed_core.deployment.control import control_request, run_control
    from dpfed_core.deployment.launcher import APP_DIR, free_port

    answer = tmp_path / "answer.json"
    with pytest.raises(SystemExit) as code:
        run_control([control_request(free_port(), None, "start", app_dir=APP_DIR, overrides={"config": "{}"}),
                      str(answer)])
    assert code.value.code == 1
    out = json.loads(answer.read_text())
    assert set(out) == {"error"} and "did not accept the ServerApp" in out["error"]
    assert not (tmp_path / "answer.json.tmp").exists()
    with pytest.raises(ValueError, match="unknown Control API action"):
        control_request(1, None, "delete")


def test_a_node_dying_mid_run_stops_the_run_with_a_clear_message(deployment):
    """Runs last on the shared deployment: it kills a node."""
    ds, fed, base = deployment
    cfg = RunConfig(method="kmeans", k=5, rank=3, max_iter=30)

    def crash_after_round1(ev):
        if ev["event"] == "round1_done" and ev["entity"] == "clinic B":
            fed.kill_node(1)

    with pytest.raises(DeploymentError, match=r"SuperNode of entity 'clinic B'.*died.*no result was written"):
        run_deployed(ds, cfg, federation=fed, progress=crash_after_round1, round_timeout=120, timeout=300)
    assert not list((base / "flower").glob("result_*.npz"))


#: (when a node is killed, whom, how many shares the sum holds, the step the site is lost in)
KILLS = {
    # after setup, before (or just after) it dealt its key shares: its mask never entered the sum
    "lost before its share": ("SecAgg+ setup", [2], 2, "secure sum"),
    # after its masked vector was in: the sum is complete with it, the site misses only round 2
    "lost after its share was summed": ("SecAgg+ collect masked vectors", [2], 3, "round 2"),
    "two lost, beyond max-dropouts": ("SecAgg+ share keys", [1, 2], None, None),
}


@pytest.mark.parametrize("case", list(KILLS))
def test_a_node_killed_in_a_secure_sum_within_max_dropouts_completes_and_beyond_stops(case):
    """--aggregation secure --max-dropouts 1 and nodes killed at a step of the secure sum. One node:
    the run completes for the two others with the exact sum of the shares that entered it (its noise
    shares were sized for H − d = 2) and says which entity dropped out and where (no model or metrics
    for it) — whether the node died before its key shares reached the others (its pairwise masks were
    never added: the survivors' sum) or after its masked vector was in (all three shares; the site only
    misses round 2). Two: fewer key shares than the threshold, nothing is unmasked, one clear message
    naming the entities and no output. Either way no process (ServerApp included) and no shard are left."""
    import time

    stage, victims, contributors, lost_in = KILLS[case]
    ds = three_clinics()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=3, simulation=True, aggregation="secure",
                    max_dropouts=1)
    guard, fed = _guarded_federation(LocalFederation, ds, cfg)
    pids = [fed.zygote.proc.pid] + [p.pid for p in fed.processes()]
    events = []

    def crash_in_the_sum(ev):
        events.append(ev)
        if ev["event"] == "secagg_stage" and ev.get("stage", "").startswith(stage):
            for h in victims:
                fed.kill_node(h)

    def steps() -> str:
        return "; ".join(f"{e['event']} {e.get('stage', '')} {e.get('replies', '')}/{e.get('sent', '')}".strip()
                         for e in events)

    try:
        if contributors is not None:
            try:
                # a live node's step takes ≈ 0.5 s here; a dead node costs the step this whole wait
                doc, V = run_deployed(ds, cfg, federation=fed, progress=crash_in_the_sum, round_timeout=12,
                                      timeout=180, return_model=True)
            except DeploymentError as exc:
                raise AssertionError(f"{exc}\nsteps seen: {steps()}") from None
            assert doc["deployment"]["dropped"] == ["clinic C"]
            assert doc["deployment"]["dropped_at"]["clinic C"].startswith(lost_in)
            assert [e["name"] for e in doc["entities"]] == ["clinic A", "clinic B"]
            assert doc["deployment"]["secure_aggregation"]["contributors"] == contributors
            note = ("clinic C dropped out during a secure sum" if lost_in == "secure sum"
                    else "clinic C (round 2) stopped answering after every secure sum was complete")
            assert any(note in n for n in doc["notes"]), doc["notes"]
            assert math.isfinite(doc["overall"]["mar"])
            # the unmasked sum is exactly the contributors' shares: every mask removed, none left over
            shares = ref_shares(ds, cfg)[:contributors]
            np.testing.assert_array_equal(V[:, 0], np.maximum(np.sum(shares, axis=0), 0.0))
        else:
            with pytest.raises(DeploymentError, match=r"entity 'clinic B'.*'clinic C'"):
                run_deployed(ds, cfg, federation=fed, progress=crash_in_the_sum, round_timeout=12, timeout=180)
            assert not any(e["event"] == "done" for e in events), steps()
    finally:
        fed.close()
        private = guard.path
        guard.close()
    end = time.monotonic() + 10
    while time.monotonic() < end and _processes_mentioning(str(private)):
        time.sleep(0.2)
    assert _processes_mentioning(str(private)) == []
    assert all(_gone(p) for p in pids)
    assert not private.exists()
