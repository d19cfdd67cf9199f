"""A run that learned nothing says why and which control fixes it: never a plain
success."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from dpfed_core.cli.main import render_error
from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.evaluation.experiments import run_method


def _small(item_source="data", n=12):
    """Users who favour popular items (item j chosen with probability ∝ 1/(j + 1)): learnable."""
    g = np.random.default_rng(0)
    p = 1.0 / np.arange(1, 16)
    X = sp.csr_matrix((g.random((3 * n, 15)) < 0.9 * p / p.max()).astype(float))
    ds = FederatedDataset.from_parts(X, np.repeat(["a", "b", "c"], n), value_kind="counts", value_max=1.0,
                                     name="small")
    return replace(ds, item_source=item_source)


def test_an_empty_dp_catalogue_is_a_warning_naming_the_catalogue():
    doc, _ = run_method(_small(), RunConfig(method="dp-cooccurrence", epsilon=0.5, rank=2, simulation=True))
    codes = [w["code"] for w in doc["warnings"]]
    assert "empty-catalogue" in codes
    w = doc["warnings"][codes.index("empty-catalogue")]
    assert "--items" in render_error(ConfigError(w["text"], param=w["param"]))


def test_a_run_that_learned_something_has_no_such_warning():
    doc, _ = run_method(_small("declared", n=60), RunConfig(method="local", rank=2))
    assert not [w for w in doc["warnings"] if w["code"] in ("empty-catalogue", "chance-ranking")]


def test_entities_without_test_users_are_named_not_counted_as_wins():
    ds = _small("declared", n=60)
    X = sp.vstack([ds.X, sp.csr_matrix((1, ds.n_items))]).tocsr()
    ds2 = FederatedDataset.from_parts(X, np.r_[np.repeat(["a", "b", "c"], 60), ["d"]], value_kind="counts",
                                      value_max=1.0, name="small+empty")
    doc, _ = run_method(replace(ds2, item_source="declared"), RunConfig(method="individual", rank=2))
    (w,) = [w for w in doc["warnings"] if w["code"] == "no-test-users"]
    assert "d" in w["text"]


def test_a_declared_entity_without_users_is_named_apart_without_advice_that_cannot_help_it():
    """No n_hidden or test_fraction gives a test user to an entity that has no users: it is said to have
    none, apart from the entities whose users are too few or hold too few entries."""
    ds = _small("declared", n=60)
    X = sp.vstack([ds.X, sp.csr_matrix((1, ds.n_items))]).tocsr()
    ds2 = FederatedDataset.from_parts(X, np.r_[np.repeat(["a", "b", "c"], 60), ["d"]], value_kind="counts",
                                      value_max=1.0, name="small+empty", entities=["a", "b", "c", "d", "e"])
    doc, _ = run_method(replace(ds2, item_source="declared"), RunConfig(method="individual", rank=2))
    by_code = {w["code"]: w for w in doc["warnings"]}
    assert by_code["no-users"]["text"] == ("1 declared entity has no users in the data, so there is nothing to "
                                           "evaluate there (not a win): e")
    assert by_code["no-users"]["param"] is None
    assert by_code["no-test-users"]["text"].startswith("1 entity has no test users") and ": d." in \
        by_code["no-test-users"]["text"]


# ------------------------------------------------------------------------------------ the rules, by hand
def _warnings(mar, entities=(), method="dp-gaussian", catalogue=None, **cfg):
    from dpfed_core.evaluation.experiments import learned_nothing_warnings
    from dpfed_core.methods import MethodResult, get_method
    from dpfed_core.privacy.ledger import PrivacyLedger

    result = MethodResult(np.zeros((2, 1)), np.zeros((3, 1)), PrivacyLedger(1.0, 1e-6),
                          extra={} if catalogue is None else {"catalogue": catalogue})
    metrics = {"overall": {"mar": mar}, "entities": [{"name": n, "n_test_users": t} for n, t in entities]}
    return learned_nothing_warnings(_small(), RunConfig(method=method, **cfg), get_method(method), metrics, result)


def test_a_ranking_within_the_margin_of_chance_is_warned_and_names_epsilon_only_for_a_dp_method():
    (w,) = _warnings(0.485, epsilon=1.0)
    assert w["code"] == "chance-ranking" and w["param"] == "epsilon" and "MAR 0.485" in w["text"]
    assert _warnings(0.47) == []
    (w,) = _warnings(0.49, method="central")
    assert w["param"] is None and "check the data and the method" in w["text"]


def test_a_chance_ranking_names_only_the_controls_that_can_lift_it():
    """More ε while ε is finite; secure aggregation only for a summable method run without it; a
    declared catalogue only where the run selected one by DP. At ε = ∞ none of them: no noise was added."""
    def text(**kw):
        (w,) = _warnings(0.5, **{"epsilon": 1.0, **kw})
        return w["text"].split(": ", 1)[1], w["param"]

    assert text() == ("raise ε (epsilon=EPSILON)", "epsilon")  # dp-gaussian: not summable, declared items
    assert text(method="dp-cooccurrence") == (
        "raise ε (epsilon=EPSILON) or use secure aggregation (aggregation=secure)", "epsilon")
    assert text(method="dp-cooccurrence", catalogue=[0, 2]) == (
        "raise ε (epsilon=EPSILON), use secure aggregation (aggregation=secure), or declare the item catalogue "
        "(items=FILE)", "epsilon")
    assert text(method="dp-cooccurrence", aggregation="secure", catalogue=[1]) == (
        "raise ε (epsilon=EPSILON) or declare the item catalogue (items=FILE)", "epsilon")
    assert text(method="dp-cooccurrence", epsilon=float("inf")) == (
        "no noise was added (ε = ∞), so check the data and the method", None)


def test_an_empty_catalogue_is_the_one_reason_given_for_a_chance_ranking():
    """What the entities keep is the method's rule, not what the result's columns look like: a prototype
    method's round 2 (and a summable method's with its local blend) keeps each entity's own model;
    dp-popularity's default keeps nothing, so nothing was learned."""
    ws = _warnings(0.5, catalogue=[], epsilon=1.0)
    assert [w["code"] for w in ws] == ["empty-catalogue"]
    assert "(each entity recommends from its own model alone)" in ws[0]["text"]
    assert ws[0]["text"].endswith(": declare the item catalogue (items=FILE, a formulary) or raise ε (epsilon=EPSILON)")
    (w,) = _warnings(0.5, catalogue=[], epsilon=1.0, method="dp-popularity", aggregation="secure")
    assert "shared nothing and nothing was learned:" in w["text"]
    (w,) = _warnings(0.5, catalogue=[], epsilon=1.0, method="dp-cooccurrence")
    assert w["text"].endswith(": declare the item catalogue (items=FILE, a formulary), raise ε (epsilon=EPSILON), "
                              "or use secure aggregation (aggregation=secure)")
    (w,) = _warnings(0.5, catalogue=[], epsilon=1.0, method="dp-cooccurrence", aggregation="secure")
    assert w["text"].endswith(": declare the item catalogue (items=FILE, a formulary) or raise ε (epsilon=EPSILON)")


def test_entities_without_test_users_are_counted_and_the_first_five_named():
    names = [f"site {i}" for i in range(7)]
    (w,) = _warnings(0.2, [(n, 0) for n in names] + [("kept", 4)])
    assert w["code"] == "no-test-users" and w["param"] == "test_fraction"
    assert w["text"].startswith("7 entities have no test users")
    assert "site 0, site 1, site 2, site 3, site 4 and 2 more." in w["text"]
    # both settings that give an entity test users are named: a test user needs more than n_hidden entries
    assert w["text"].endswith("drawn from those: lower n_hidden when their users hold fewer, or raise test_fraction")
    (w,) = _warnings(0.2, [("alone", 0), ("kept", 4)])
    assert w["text"].startswith("1 entity has no test users") and ": alone." in w["text"]


def test_the_fix_for_entities_without_test_users_is_the_one_their_data_allows():
    """An entity whose users all hold n_hidden entries or fewer gets a test user only from a lower
    n_hidden (no fraction can draw one); an entity of too few users only from a larger test_fraction
    (its share rounds to none); each is named, with the value that would do it."""
    from dpfed_core.evaluation.experiments import learned_nothing_warnings
    from dpfed_core.methods import MethodResult, get_method
    from dpfed_core.privacy.ledger import PrivacyLedger

    g = np.random.default_rng(1)
    big = (g.random((40, 12)) < 0.7).astype(float)
    short = np.zeros((6, 12))
    short[:, :3] = 1.0  # six users of 3 entries each: none holds more than n_hidden = 5
    pair = np.zeros((2, 12))
    pair[:, :8] = 1.0  # two users of 8 entries: 0.2 · 2 rounds to no test user
    ds = FederatedDataset.from_parts(sp.csr_matrix(np.vstack([big, short, pair])),
                                     np.r_[np.repeat("big", 40), np.repeat("short", 6), np.repeat("pair", 2)],
                                     value_kind="counts", value_max=1.0, name="mixed")
    result = MethodResult(np.zeros((2, 1)), np.zeros((3, 1)), PrivacyLedger(1.0, 1e-6), extra={})

    def warning(names):
        metrics = {"overall": {"mar": 0.2}, "entities": [{"name": "big", "n_test_users": 8}]
                   + [{"name": n, "n_test_users": 0} for n in names]}
        (w,) = learned_nothing_warnings(ds, RunConfig(method="individual"), get_method("individual"), metrics, result)
        return w

    w = warning(["short"])
    assert w["param"] == "n_hidden" and w["text"].endswith(": lower n_hidden to at most 2"), w["text"]
    w = warning(["pair"])
    assert w["param"] == "test_fraction" and w["text"].endswith(": raise test_fraction above 0.25"), w["text"]
    w = warning(["short", "pair"])
    assert w["param"] == "test_fraction"
    assert w["text"].endswith("lower n_hidden to at most 2 for the 1 whose users all hold 5 entries or fewer "
                              "and raise test_fraction above 0.25 for the 1 whose users are too few for the fraction")


def test_a_chance_ranking_is_one_message_naming_each_fix_once_in_either_front_end():
    """Each remedy of a chance ranking is named once, as the CLI's flag or the dashboard's control: no
    control appended after the ones the message names, no code names left."""
    from dpfed_core.ui.inputs import friendly_message

    (w,) = _warnings(0.5, method="dp-cooccurrence", catalogue=[0, 2], epsilon=1.0)
    cli = render_error(ConfigError(w["text"], param=w["param"]))
    assert cli.endswith(": raise ε (--epsilon EPSILON), use secure aggregation (--aggregation secure), or declare "
                        "the item catalogue (--items FILE)"), cli
    page = friendly_message(ConfigError(w["text"], param=w["param"])).replace("\\", "")
    assert page.endswith(": raise ε (“ε per entity” on the Federate page), use secure aggregation (“Secure "
                         "aggregation” switched on), or declare the item catalogue (the “Item "
                         "catalogue” / “Formulary” upload on the Data page)"), page
    for said in (cli, page):
        assert ") (" not in said and ") [" not in said and "=" not in said.split(": ", 1)[1]


def test_in_observed_mode_a_chance_ranking_is_said_but_is_not_a_run_that_learned_nothing():
    """An observed-mode model fits the values it observed, not which items a user chose (the dashboard says
    so under its rankings): a chance MAR is a warning naming what to judge it by, and the run's outcome is
    complete, not "learned nothing"; an empty DP catalogue still is."""
    from dpfed_core.ui.inputs import friendly_message
    from dpfed_core.ui.tables import LEARNED_NOTHING, run_outcome

    (w,) = _warnings(0.5, method="dp-cooccurrence", epsilon=1.0, mode="observed")
    assert w["code"] == "observed-ranking" and w["code"] not in LEARNED_NOTHING and w["param"] == "mode"
    assert "MAR 0.500" in w["text"] and "test RMSE" in w["text"] and "raise" not in w["text"]
    assert render_error(ConfigError(w["text"], param=w["param"])).endswith("compare rankings in zero mode (--mode zero)")
    page = friendly_message(ConfigError(w["text"], param=w["param"])).replace("\\", "")
    assert page.endswith("(“Observation mode” on the Federate page set to zero)") and "set it with" not in page
    state, label = run_outcome({"warnings": [w], "privacy": {"label": "ε = 1"}}, 2.0)
    assert state == "complete" and "learned nothing" not in label
    (z,) = _warnings(0.5, method="dp-cooccurrence", epsilon=1.0, mode="zero")
    assert z["code"] == "chance-ranking" and run_outcome({"warnings": [z], "privacy": {"label": ""}}, 2.0)[0] == "error"
    assert [w["code"] for w in _warnings(0.5, catalogue=[], epsilon=1.0, mode="observed")] == ["empty-catalogue"]
