"""A node that sends the coordinator a reply this dpfed's site never makes, for the server's checks of
what arrives (tests/test_deployment_replies.py).

Imported as a plug-in (``DPFED_PLUGINS=tamper_replies``) by every process of a deployment, it changes
the ClientApp only in the Simulation Engine's process, and only the replies of the site named by
``DPFED_TEST_TAMPER_SITE`` (``*``: every site's shares); ``DPFED_TEST_TAMPER`` says what it sends instead (a key of
:data:`KINDS`): a release, a share before SecAgg+ masks it, a reply's meta record, or (:data:`MASKED`) the
masked vector SecAgg+'s mod hands the server.
"""
from __future__ import annotations

import dataclasses
import os
import sys

import numpy as np

#: What the tampered site sends: each a bad reply the server must name.
KINDS = ("wide", "nan", "flat", "cube", "counts-long", "counts-inf", "other-entity", "bad-ledger",
         "foreign-ledger", "share-long", "catalogue-short", "round2-index", "no-meta", "no-decision",
         "same-entity", "same-index", "masked-negative", "masked-modulus", "masked-float")

#: The masked-vector kinds: the site's masked share (after SecAgg+'s masking) with its first entry made
#: negative, equal to the modulus, or the whole share made fractional.
MASKED = {"masked-negative": lambda v, m: _first(v, -1), "masked-modulus": lambda v, m: _first(v, m),
          "masked-float": lambda v, m: v + 0.5}


def _first(v, value):
    v = v.copy()
    v[0] = value
    return v


def _site() -> str:
    return os.environ.get("DPFED_TEST_TAMPER_SITE", "")


def _kind() -> str:
    return os.environ.get("DPFED_TEST_TAMPER", "")


def _install() -> None:
    from flwr.app import ConfigRecord, RecordDict

    ca = sys.modules["dpfed_core.deployment.client_app"]  # being imported: this module is its plug-in
    kind = _kind()
    real_release, real_share, real_message = ca.release_prototypes, ca.stage_share, ca.Message

    def release_prototypes(method, X, rng, entity, epsilon, delta):
        release, rows = real_release(method, X, rng, entity, epsilon, delta)
        if entity != _site():
            return release, rows
        P, c = np.array(release.prototypes, dtype=float), release.counts
        if kind == "wide":
            P = np.hstack([P, np.zeros((P.shape[0], 1))])
        elif kind == "nan":
            P[0, 0] = np.nan
        elif kind == "flat":
            P = P.ravel()
        elif kind == "cube":
            P = P[None]
        elif kind == "counts-long" and c is not None:
            c = np.append(c, 1.0)
        elif kind == "counts-inf" and c is not None:
            c = np.array(c, dtype=float)
            c[-1] = np.inf
        return dataclasses.replace(release, prototypes=P, counts=c), rows

    def stage_share(method, X, rng, ledger_view, n_entities, stage, public):
        share = real_share(method, X, rng, ledger_view, n_entities, stage, public)
        if kind == "share-long" and _site() in (ledger_view.entity, "*"):
            share = dataclasses.replace(share, values=np.append(share.values, 0.0))
        return share

    def Message(content, *args, **kwargs):  # noqa: N802 - stands in for Flower's Message
        meta = content["meta"] if isinstance(content, RecordDict) and "meta" in content.keys() else None
        asked = kwargs.get("reply_to")
        if (meta is not None and kind == "same-entity" and str(meta.get("entity", "")) == _site()
                and asked is not None and asked.metadata.message_type == "query.policy"):
            content["meta"] = ConfigRecord({**dict(meta), "entity": "clinic A"})
            return real_message(content, *args, **kwargs)
        if (meta is not None and kind == "same-index" and str(meta.get("entity", "")) == _site()
                and asked is not None and asked.metadata.message_type == "query.policy"):
            content["meta"] = ConfigRecord({**dict(meta), "index": 0})
            return real_message(content, *args, **kwargs)
        if meta is not None and kind == "no-decision" and str(meta.get("entity", "")) == _site():
            content["meta"] = ConfigRecord({**dict(meta), "decision": "maybe"})
            return real_message(content, *args, **kwargs)
        if meta is not None and str(meta.get("entity", "")) == _site() and "decision" not in meta.keys():
            fields = dict(meta)
            if "release" in content.keys():
                if kind == "other-entity":
                    fields["entity"] = "clinic A"
                elif kind == "bad-ledger":
                    fields["ledger"] = "[{not json"
                elif kind == "foreign-ledger":
                    fields["ledger"] = fields["ledger"].replace(_site(), "clinic A")
                elif kind == "no-meta":
                    content = RecordDict({"release": content["release"]})
                    return real_message(content, *args, **kwargs)
            elif kind == "round2-index":
                fields["index"] = int(fields["index"]) + 5
            content["meta"] = ConfigRecord(fields)
        return real_message(content, *args, **kwargs)

    real_secaggplus = ca.secaggplus_mod

    def secaggplus_mod(msg, context, call_next):
        from flwr.common import bytes_to_ndarray, ndarray_to_bytes
        from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key, Stage

        from dpfed_core.deployment.shards import load_shard
        from dpfed_core.federation.summable import secagg_ranges

        configs = msg.content.config_records.get(RECORD_KEY_CONFIGS)
        collect = configs is not None and configs.get(Key.STAGE) == Stage.COLLECT_MASKED_VECTORS  # SecAgg+ pops it
        reply = real_secaggplus(msg, context, call_next)
        if (kind in MASKED and collect and not reply.has_error()
                and load_shard(str(ca._data_path(context))).entity == _site()):
            out = reply.content.config_records[RECORD_KEY_CONFIGS]
            weight, share = (bytes_to_ndarray(b) for b in out[Key.MASKED_PARAMETERS])
            share = MASKED[kind](share, secagg_ranges(2)[1])  # the modulus: the same for every federation
            out[Key.MASKED_PARAMETERS] = [ndarray_to_bytes(weight), ndarray_to_bytes(share)]
        return reply

    ca.release_prototypes, ca.stage_share, ca.Message = release_prototypes, stage_share, Message
    ca.secaggplus_mod = secaggplus_mod  # read when the train handler is registered, after the plug-ins load
    if kind == "catalogue-short":
        from dpfed_core.privacy import catalogue as cat

        real_catalogue = cat.secure_catalogue_share

        def secure_catalogue_share(*args, **kwargs):
            values, coalition = real_catalogue(*args, **kwargs)
            ledger_view = next(a for a in args if hasattr(a, "entity"))
            return (values[:-1] if ledger_view.entity == _site() else values), coalition

        cat.secure_catalogue_share = secure_catalogue_share


_main = getattr(sys.modules.get("__main__"), "__spec__", None)
if (_main is not None and _main.name == "dpfed_core.deployment.simulation_engine" and _kind()
        and "dpfed_core.deployment.client_app" in sys.modules):
    _install()
