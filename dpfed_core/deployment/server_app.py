"""The Flower ServerApp: the coordinator's side of the two-round protocol (SPEC §1).

``main(grid, context)`` (a custom ``@app.main()``) runs:

1. Wait until the declared number of SuperNodes is connected (``connect-timeout``), then ask every
   site to accept the run's request (``query.policy``, :mod:`.site_policy`) and wait for every
   decision: any refusal ends the run before a share is drawn, and each site that accepted is told
   (``query.withdraw``) so that it can give its own charge back.
2. Round 1 — prototype methods: ``grid.send_and_receive`` of ``query.round1`` to every node; each
   reply carries that entity's prototypes and ledger rows. Summable methods: Flower's
   :class:`~flwr.server.workflow.SecAggPlusWorkflow` (setup, share keys, collect masked vectors,
   unmask) driven from this main; the server only ever holds masked vectors and their sum.
   Multi-stage summable methods (``dp-cooccurrence``: popularity, then co-occurrence) run one
   SecAgg+ secure sum per stage; between two stages the server calls the method's ``combine`` on
   the sum and sends every node the public result the next stage needs (e.g. the items chosen from
   the DP popularity sum) inside the next sum's share instructions — post-processing of released
   sums only. Stages whose inputs public facts fix (``dp-cooccurrence`` on a catalogue of at most
   ``max_items`` items: the co-occurrence shares read every item) ride in one secure sum instead
   (:func:`~dpfed_core.federation.summable.fused_stages`: the same shares, one SecAgg+ protocol, the
   sum split by the stages' public lengths). Data without a
   declared item catalogue (run JSON ``item_catalogue="secure"``) first runs the federation-wide DP
   catalogue: one SecAgg+ sum of the nodes' bounded bucket counts and Gaussian shares, the server's
   threshold (:func:`dpfed_core.privacy.catalogue.secure_catalogue_keys`), the released keys
   broadcast; the method then runs on those K keys.
3. Server: stack the prototypes (entity order) and fit V (:func:`fit_nmf`), or V from the sums.
4. Round 2: ``query.round2`` with V to every node; each fits U_h locally, evaluates itself with
   its own installed evaluator, writes the report to its own disk and replies with its identity
   (and, for a summable method, its public ledger rows) only: no count, no metric sum, no timing.

The run object splits into the transport (:class:`_Transport`: push/pull, message log, dump,
progress), the secure sum (:class:`_SecureSum`: SecAgg+ driven from this main) and the rounds
(:class:`_Run`: the sites' decisions, round 1, the server's fit, round 2).

Every message sent and received is logged with its size as Flower serialises it (:mod:`.wire`);
``dump-dir`` keeps a copy of every payload the server received (the tests of what crosses the wire read it).
Any failure — an error reply, a node that does not answer within ``round-timeout``, a node lost in
the secure sum, a reply the server cannot use (each is checked where it arrives: shapes the run's
public facts give, finite values, the entity the site's decision named, well-formed ledger rows;
:func:`bad_reply`) — ends the run with one clear message in the progress file and no result file.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from flwr.app import Array, ArrayRecord, ConfigRecord, Context, Message, RecordDict
from flwr.common.constant import ErrorCode
from flwr.serverapp import Grid, ServerApp

from dpfed_core.errors import DeploymentError, DpfedError
from dpfed_core.deployment.plugins import load_plugins
from dpfed_core.deployment.doorbell import Doorbell, ring
from dpfed_core.deployment.wire import (PUBLIC_AFTER_FIELD, PUBLIC_FIELD, SUM_OF_STAGES, catalogue_from_json,
                                        catalogue_size_from_json, config_from_json, dumps, loads, message_bytes,
                                        pack_arrays, secagg_shares, secagg_threshold)
from dpfed_core.deployment.hooks import (combine_stage, method_config, prototype_method_is_private, public_broadcast,
                                         server_notes, summable_method)
from dpfed_core.federation.summable import (GRID, SUMMABLE_METHODS, fused_inputs, fused_stages, secagg_ranges,
                                            to_grid)
from dpfed_core.models.factorization import fit_nmf
from dpfed_core.privacy.noise import method_generator

# The operator's plug-in methods (DPFED_PLUGINS, set by deploy-local --plugin or by the site):
# imported from this node's own configuration, never from anything a message names.
load_plugins()

app = ServerApp()

#: The longest pause between two pulls of the ServerApp (seconds); see :meth:`_Transport.send_and_receive`.
POLL_MAX = 0.05
#: The same with a doorbell (local deployment, :mod:`.doorbell`): a node rings after pushing its
#: reply, so a pull is only the fallback for a lost datagram.
POLL_RUNG_MAX = 1.0

#: Which of SecAggPlusWorkflow's message rounds (1-based) carries the fit instructions.
SECAGG_FIT_STEP = 3
SECAGG_STAGES = ("SecAgg+ setup (public keys)", "SecAgg+ share keys (encrypted key shares)",
                 "SecAgg+ collect masked vectors", "SecAgg+ unmask (key shares)")


#: What a node answers in round 2: who it is and, for a summable method, the public ledger rows of
#: its shares. Its evaluation stays on the node (a local report file), nothing exact is sent.
ROUND2_REPLY = "acknowledgement (entity, ledger rows; evaluation stays on the node)"
#: What a site answers the run's request: its policy decision (public: accepted, or the rule refusing).
POLICY_REQUEST = "request (public run configuration) for each site's policy decision"
POLICY_REPLY = "site policy decision (accepted, or refused naming the rule)"
#: To each site that accepted a run another site refused: the run ended before any share was asked for.
WITHDRAW_REQUEST = "the run ended at the sites' decisions (public run configuration): give back the charge"
#: To each site still in a run that failed after the decisions: a site that drew nothing gives its charge back.
WITHDRAW_AFTER_FAILURE = ("the run failed before it finished (public run configuration): give back the charge if "
                          "nothing was drawn")
#: How long a failed run waits for the sites' withdrawals (a site that does not answer keeps its charge and
#: can give it back by itself, ``site withdraw``): a node that made the run fail need not hold it up again.
WITHDRAW_TIMEOUT_S = 10.0
WITHDRAW_REPLY = "site withdrawal (withdrawn: charge given back, nothing drawn; or kept)"
#: The fields of a site's decision (its reply's ``meta`` record), each needed to read it.
DECISION_FIELDS = ("entity", "decision", "rule", "message")


class DeploymentRunError(DeploymentError):
    """The run cannot finish; the message says which node and what happened (``ledger_rows = 0``: it
    stopped before any site drew noise, as :class:`~dpfed_core.errors.DeploymentError` carries it)."""


#: What a site's operator can do about a reply the server cannot use: this dpfed's site never sends one, so
#: the node runs another version, was modified, or runs a plug-in method whose release has another shape.
BAD_REPLY_REMEDY = ("its operator should run the coordinator's dpfed version and the run's plug-ins "
                    "(DPFED_PLUGINS) unmodified, or fix the plug-in method's release")


def bad_reply(site: str, what: str, problem: str) -> DeploymentRunError:
    """The error of a site's reply the server cannot use: the site, the message, what is wrong (shapes,
    finiteness and the identity the site gave: nothing it did not choose to send) and what can be done."""
    return DeploymentRunError(f"{what} from {site}: {problem}; {BAD_REPLY_REMEDY}; run stopped, nothing written")


def reply_array(site: str, what: str, record, key: str) -> np.ndarray:
    """Array ``key`` of a reply's array record, numeric and finite (any shape)."""
    if key not in record.keys():
        raise bad_reply(site, what, f"the reply has no {key!r}")
    try:
        a = np.asarray(record[key].numpy())
    except Exception:  # noqa: BLE001 - whatever the bytes are, they are no array
        raise bad_reply(site, what, f"its {key!r} is not an array") from None
    if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
        raise bad_reply(site, what, f"its {key!r} holds {a.dtype} values, not real numbers")
    if not np.all(np.isfinite(a)):
        raise bad_reply(site, what, f"its {key!r} has entries that are not finite (NaN or ±∞)")
    return a


def check_prototypes(site: str, content, n_columns: int | None, counts: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """One site's round-1 release as the server fits it (:func:`~dpfed_core.federation.protocol.check_release`
    on the wire): prototypes k × ``n_columns`` (None: the run states no catalogue size), finite; with
    ``counts``, one finite cluster size per prototype. A negative size is a noisy count's legitimate value
    (the fit clips it at 0, as in process), so it is accepted. Returns ``(prototypes, counts or None)``."""
    what = "round-1 prototypes"
    if "release" not in content.keys():
        raise bad_reply(site, what, "the reply holds no release")
    release = content["release"]
    P = reply_array(site, what, release, "prototypes")
    if P.ndim != 2 or (n_columns is not None and P.shape[1] != n_columns):
        want = f"k × {n_columns}" if n_columns is not None else "k × (catalogue size)"
        raise bad_reply(site, what, f"prototypes of shape {tuple(P.shape)}, expected {want} (one row per "
                                    "prototype, one column per declared item)")
    if not counts:
        return P, None
    c = reply_array(site, "round-1 cluster sizes", release, "counts")
    if c.shape != (P.shape[0],):
        raise bad_reply(site, "round-1 cluster sizes", f"{c.size} cluster sizes of shape {tuple(c.shape)} for "
                                                      f"{P.shape[0]} prototypes, expected one per prototype")
    return P, c


def check_ledger(site: str, what: str, meta, entity: str) -> list[dict]:
    """The ledger rows a site's reply carries (the result's and the run ledger's): JSON of a list of rows
    (:class:`~dpfed_core.privacy.ledger.LedgerRow` fields), each of the site's own entity, with
    non-negative ε and δ."""
    from dpfed_core.privacy.ledger import LedgerRow

    if "ledger" not in meta.keys() or "note" not in meta.keys():
        raise bad_reply(site, what, "the reply has no ledger rows or no release note")
    try:
        rows = loads(str(meta["ledger"]))
    except ValueError:
        raise bad_reply(site, what, "its ledger rows are not JSON") from None
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise bad_reply(site, what, "its ledger rows are not a list of rows")
    for row in rows:
        try:
            parsed = LedgerRow.from_record(row)
        except (KeyError, TypeError, ValueError):
            raise bad_reply(site, what, "a ledger row lacks a field (entity, stage, mechanism, epsilon, delta) or "
                                        "has one that is not a number") from None
        if parsed.entity != entity:
            raise bad_reply(site, what, f"a ledger row is charged to entity {parsed.entity!r}, not its own")
        if not (parsed.epsilon >= 0 and parsed.delta >= 0):
            raise bad_reply(site, what, f"a ledger row spends ε = {parsed.epsilon}, δ = {parsed.delta}; both must "
                                        "be non-negative numbers")
    return rows


def check_coalition(site: str, what: str, meta) -> float:
    """The ε a site states against the server with every other entity (the result's trust record): a
    non-negative number, ∞ included."""
    try:
        value = loads(str(meta["coalition_epsilon"])) if "coalition_epsilon" in meta.keys() else None
    except ValueError:
        value = None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise bad_reply(site, what, "its coalition ε is not a non-negative number")
    return float(value)


def check_masked(site: str, what: str, reply: Message, length: int | None, modulus: int) -> np.ndarray:
    """A site's masked vector of a secure sum (SecAgg+'s weight entry, then the share, every entry
    masked): the share's length (``length``: the method's public shape; None when it states none),
    finite entries, and integers in [0, ``modulus``) — SecAgg+ adds the vectors modulo ``modulus``, so
    an entry outside would change the sum without a word (or fail in Flower's arithmetic). Public
    facts of a masked vector, nothing of the share. Returns the share's masked part."""
    from flwr.common import bytes_to_ndarray
    from flwr.common.secure_aggregation.secaggplus_constants import RECORD_KEY_CONFIGS, Key

    try:
        parts = [np.asarray(bytes_to_ndarray(b))
                 for b in reply.content.config_records[RECORD_KEY_CONFIGS][Key.MASKED_PARAMETERS]]
    except Exception:  # noqa: BLE001 - a reply without a masked vector, or bytes that are no array
        raise bad_reply(site, what, "the reply holds no masked vector") from None
    if len(parts) != 2 or parts[0].shape != (1,):
        raise bad_reply(site, what, f"the masked vector has {len(parts)} parts, expected the protocol's weight "
                                    "entry and the share")
    share = parts[1]
    if share.ndim != 1 or (length is not None and share.shape[0] != length):
        raise bad_reply(site, what, f"a share of shape {tuple(share.shape)}, expected "
                                    f"({length if length is not None else 'n'},) (the method's public shape)")
    if not all(np.issubdtype(p.dtype, np.number) and np.all(np.isfinite(p)) for p in parts):
        raise bad_reply(site, what, "the masked vector has entries that are not finite numbers")
    if not all(np.issubdtype(p.dtype, np.integer) and (p.size == 0 or (p.min() >= 0 and p.max() < modulus))
               for p in parts):
        raise bad_reply(site, what, f"the masked vector has entries that are not integers in [0, {modulus}) "
                                    "(SecAgg+'s modulus range, which its masking reduces every entry to)")
    return share


def check_share_lengths(what: str, lengths: dict[str, int]) -> None:
    """The sites' shares of one secure sum have one length (when the method states none, the check of
    each against it cannot say which is wrong): the sites off the most common length are named, every
    site with its length when no length is the most common."""
    from collections import Counter

    counts = Counter(lengths.values()).most_common()
    if len(counts) < 2:
        return
    if counts[0][1] > counts[1][1]:
        odd = sorted(site for site, n in lengths.items() if n != counts[0][0])
        raise bad_reply(", ".join(odd), what, f"a share of {', '.join(str(lengths[s]) for s in odd)} entries, while "
                                              f"the other sites' have {counts[0][0]}")
    raise bad_reply(", ".join(sorted(lengths)), what, "shares of different lengths ("
                    + ", ".join(f"{site}: {lengths[site]}" for site in sorted(lengths)) + ")")


#: Flower's error codes of a reply that says the node is gone (not that it failed): the message or
#: its reply expired, the node stopped heartbeating, or the reply's objects never arrived.
LOST_NODE_ERRORS = frozenset({ErrorCode.MESSAGE_UNAVAILABLE, ErrorCode.REPLY_MESSAGE_UNAVAILABLE,
                              ErrorCode.NODE_UNAVAILABLE})


#: Where the round timeout is set, for a message that a node's silence ended the run: the CLI's flag,
#: the dashboard's control (the same run-config key ``round-timeout`` for ``flwr run``).
ROUND_TIMEOUT_CONTROLS = "--round-timeout, or Round timeout on the Federate page"


#: How long a reply's objects are still waited for once its step's deadline is near or past: a live
#: node whose reply message came in time may still be uploading its content (capped by the round
#: timeout). A node killed mid-upload then holds its step at most this long past the deadline.
REPLY_OBJECTS_GRACE = 30.0

#: The deadline (``time.monotonic()``) of the step the transport is waiting on; None between steps.
_step_deadline: list[float | None] = [None]


def reply_objects_bound(max_time: float) -> float:
    """How long the pull of one reply's objects may take now: ``max_time`` (the round timeout), and
    during a step no later than its deadline plus :data:`REPLY_OBJECTS_GRACE` (at most ``max_time``)."""
    end = _step_deadline[0]
    if end is None:
        return max_time
    return min(max_time, max(end - time.monotonic(), 0.0) + min(REPLY_OBJECTS_GRACE, max_time))


def bound_reply_pulls(max_time: float) -> None:
    """Pull a reply's objects for at most ``max_time`` seconds in this process (the ServerApp's), and
    within a step no later than its deadline plus a grace (:func:`reply_objects_bound`).

    Why: a node pushes a reply in two steps, the message and then its objects (the content). A node
    killed between the two leaves a reply whose objects never arrive, and Flower 1.42's
    ``HttpGrid.pull_messages`` retries them for up to 2 h (``pull_objects``' default ``max_time``),
    blocking every other reply of the step — a run that loses a site at that moment hung until its
    launcher's timeout. Bounded, the pull gives up and Flower's own code answers with an error reply
    (``MESSAGE_UNAVAILABLE``: "the sender may not have completed the upload"), which the transport
    counts as a node that did not answer. Bounded by the round timeout alone, every such node would hold
    its step one more round timeout; bounded by the step's deadline, the step ends within the grace
    of its deadline however many nodes died mid-upload."""
    import flwr.superlink.grid.http_grid as http_grid
    from flwr.supercore.inflatable.inflatable_utils import pull_objects

    from dpfed_core.deployment import flower_internals as fi

    if not fi.usable("grid-pull-messages"):
        return

    def bounded_pull_objects(*args, **kwargs):
        bound = reply_objects_bound(max_time)
        kwargs["max_time"] = min(float(kwargs.get("max_time") or bound), bound)
        return pull_objects(*args, **kwargs)

    http_grid.pull_objects = bounded_pull_objects


class _Transport:
    """How the coordinator talks to the sites: push and pull through the grid, the message log with
    Flower's serialised sizes, the compliance dump, the progress file, the node ↔ entity names."""

    def __init__(self, grid: Grid, context: Context) -> None:
        rc = context.run_config
        self.grid = grid
        self.progress_path = Path(str(rc["progress"]))
        self.round_timeout = float(rc["round-timeout"])
        self.dump_dir = Path(str(rc["dump-dir"])) if str(rc.get("dump-dir", "")) else None
        self.messages: list[dict] = []
        self.entity_of_node: dict[int, str] = {}
        self.index_of_node: dict[int, int] = {}  # each accepting site's index, as its decision gave it
        self._dumped = 0
        # Doorbells (local deployment only): ours on the SuperLink's port number, the nodes' on theirs.
        bells = [int(p) for p in str(rc.get("doorbells", "")).split(",") if p.strip()]
        self.bell = Doorbell.open(bells[0]) if bells else None
        self.node_bells = bells[1:]
        bound_reply_pulls(self.round_timeout)

    # ------------------------------------------------------------------ bookkeeping
    def progress(self, event: str, **info) -> None:
        with open(self.progress_path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, "time": time.time(), **info}) + "\n")

    def log(self, msg: Message, round_: int, content: str, outgoing: bool, node: int, shape=None) -> None:
        """One message in the log. ``shape``: that of the array it carries; None (the default, until a
        step fills it in) for a message that carries no array — a decision, an acknowledgement,
        SecAgg+'s keys — which the report says as such, never as a scalar."""
        self.messages.append({"round": round_, "sender": "server" if outgoing else node,
                              "receiver": node if outgoing else "server", "content": content,
                              "shape": None if shape is None else list(shape), "bytes": message_bytes(msg),
                              "records": sorted(msg.content.keys()) if msg.has_content() else []})

    def dump(self, msg: Message, label: str) -> None:
        """Compliance copy of what the server received, one ``.npz`` + one ``.json`` per reply.

        ``.npz``: every array (incl. SecAgg+'s masked vectors, which travel as serialised arrays
        inside a config record). ``.json``: every record of the reply, every key with its value
        (numbers and strings as received; a byte string as its length, and whether it decoded to
        one of the arrays), plus the error reason of an error reply — so a reader can account for
        every field the server was given."""
        if self.dump_dir is None:
            return
        from flwr.common import bytes_to_ndarray

        arrays: dict[str, np.ndarray] = {}
        fields: dict[str, dict] = {}
        content = msg.content if msg.has_content() else RecordDict()
        for rname, rec in content.array_records.items():
            for aname, arr in rec.items():
                arrays[f"{rname}.{aname}"] = arr.numpy()
                fields.setdefault(rname, {})[aname] = {"array": f"{rname}.{aname}"}
        for kind, records in (("config", content.config_records), ("metric", content.metric_records)):
            for rname, rec in records.items():
                for key, val in rec.items():
                    fields.setdefault(rname, {})[key] = _describe(val, f"{rname}.{key}", arrays, bytes_to_ndarray)
                fields.setdefault(rname, {})["__kind__"] = kind
        self._dumped += 1
        self.dump_dir.mkdir(parents=True, exist_ok=True)
        stem = self.dump_dir / f"{self._dumped:03d}_{label}_{msg.metadata.src_node_id}"
        np.savez(f"{stem}.npz", **arrays)
        info = {"label": label, "src_node_id": msg.metadata.src_node_id, "records": fields,
                "error": msg.error.reason if msg.has_error() else None}
        Path(f"{stem}.json").write_text(json.dumps(info, default=str), encoding="utf-8")

    def name(self, node: int) -> str:
        return self.entity_of_node.get(node, f"node {node}")

    def check_replies(self, sent: list[Message], replies: list[Message], what: str, tolerate: int = 0) -> list[int]:
        """Raise on an error reply, or on more than ``tolerate`` nodes that did not answer; returns the
        nodes that did not answer (at most ``tolerate``)."""
        got = {r.metadata.src_node_id for r in replies}
        missing = [m.metadata.dst_node_id for m in sent if m.metadata.dst_node_id not in got]
        if len(missing) > tolerate:
            raise DeploymentRunError(
                f"{what}: no reply within {self.round_timeout:g} s from "
                f"{', '.join(self.name(n) for n in missing)} (node stopped or unreachable, or slower than the "
                f"wait: {ROUND_TIMEOUT_CONTROLS} lengthens it); run stopped")
        for r in replies:
            node = r.metadata.src_node_id
            if r.has_error():
                raise DeploymentRunError(f"{what}: {self.name(node)} failed: {r.error.reason}")
            if "error" in r.content.keys():
                error = r.content["error"]
                reason = str(error["message"]) if "message" in error.keys() else "it failed and gave no reason"
                raise DeploymentRunError(f"{what}: {self.name(node)}: {reason}")
        return missing

    def send_and_receive(self, messages: list[Message], timeout: float | None) -> list[Message]:
        """Push ``messages`` and pull their replies until all are in or ``timeout`` passes.

        Why not ``grid.send_and_receive``: Flower 1.42's sleeps a fixed 3 s between two pulls, so
        every round trip costs ≥ 3 s whatever the payload. This pulls with a short poll that backs
        off from 5 ms to :data:`POLL_MAX` (a pull is one cheap request to the SuperLink)."""
        pending = set(self.grid.push_messages(messages))
        ring(self.node_bells)  # local deployment: the nodes pull now, not at their next idle poll
        end = time.monotonic() + (timeout if timeout is not None else 0.0)
        _step_deadline[0] = end if timeout is not None else None  # bounds a reply's object pull too
        try:
            return self._collect(pending, end, timeout)
        finally:
            _step_deadline[0] = None

    def _collect(self, pending: set, end: float, timeout: float | None) -> list[Message]:
        replies: list[Message] = []
        pause = 0.005

        def pull() -> int:
            got = list(self.grid.pull_messages(pending))
            # a reply that only says its node is gone is no reply: the node is missing, not failed
            replies.extend(m for m in got if not (m.has_error() and m.error.code in LOST_NODE_ERRORS))
            pending.difference_update(m.metadata.reply_to_message_id for m in got)
            return len(got)

        while pending:
            began = time.monotonic()
            got = pull()
            if not pending:
                break
            if timeout is not None and time.monotonic() >= end:
                if began < end:
                    # This pull outlasted the step's deadline — it may have waited on a reply whose
                    # objects never came (a node killed mid-upload holds it for reply_objects_bound).
                    # Replies the live nodes stored meanwhile came in time: one more pull takes them,
                    # or the step would count nodes that answered as lost.
                    pull()
                break
            if self.bell is not None:
                # Every node rings after it pushes a reply: the pull follows the ring, and the timed
                # wait is only the fallback for a lost datagram (no fast ramp of pulls).
                self.bell.wait(POLL_RUNG_MAX)
                continue
            if got:
                pause = 0.005
            time.sleep(pause)
            pause = min(pause * 1.5, POLL_MAX)
        return replies

    def exchange(self, messages: list[Message], round_: int, label: str, reply_label: str,
                 tolerate: int = 0) -> tuple[list[Message], list[int]]:
        """Send ``messages``, collect the replies; ``(replies, nodes that did not answer)`` — at most
        ``tolerate`` of those, more end the run."""
        for m in messages:
            self.log(m, round_, label, True, m.metadata.dst_node_id)
        replies = self.send_and_receive(messages, self.round_timeout)
        for r in replies:
            self.log(r, round_, reply_label, False, r.metadata.src_node_id)
            self.dump(r, f"round{round_}")
        missing = self.check_replies(messages, replies, f"round {round_}", tolerate)
        return replies, missing

    # ------------------------------------------------------------------ steps

def _dropout_safe_secaggplus():
    """Flower's :class:`~flwr.server.workflow.SecAggPlusWorkflow`, with the nodes lost before they
    dealt their key shares taken out of the protocol.

    Why: Flower 1.42 keeps every node that answered *setup* in ``sampled_node_ids`` and in its
    neighbours' sets. A node that dies between setup and *share keys* dealt no share and masked with
    nobody (a survivor masks only with the nodes whose shares it received), yet the unmask stage lists
    it as dead: each survivor is asked for a share it never received (``KeyError`` on every node) and
    the sum fails although the run is within ``max_dropouts``. After share keys, the nodes that dealt
    shares are the protocol's participants; the server rebuilds a later dropout's pairwise masks with
    those participants only (a mask with a node that dealt nothing was never added)."""
    from flwr.server.workflow import SecAggPlusWorkflow

    from dpfed_core.deployment import flower_internals as fi

    if not (fi.usable("secaggplus-share-keys") and fi.usable("secaggplus-unmask")):
        return SecAggPlusWorkflow  # another Flower: its own workflow (said on stderr)

    class DropoutSafeSecAggPlus(SecAggPlusWorkflow):
        def share_keys_stage(self, grid, context, state) -> bool:
            ok = super().share_keys_stage(grid, context, state)
            dealt = set(state.active_node_ids)
            state.sampled_node_ids = dealt
            state.nid_to_neighbours = {n: set(nb) & dealt for n, nb in state.nid_to_neighbours.items() if n in dealt}
            return ok  # Flower's threshold check above already counted the dealt neighbours only

    return DropoutSafeSecAggPlus


class _SecureSum:
    """The secure sums of a run: Flower's SecAggPlusWorkflow driven from this main, every message it
    sends logged by the transport, the unmasked sum put back on the public grid, dropouts within the
    run's max_dropouts tolerated (the dropped sites leave the run)."""

    def __init__(self, run: "_Run") -> None:
        self.run = run

    def __call__(self, nodes: list[int], method, stage: str | None,
                 length: int | None = None) -> tuple[np.ndarray, dict]:
        """One secure sum of every live node's share of ``stage`` (SecAgg+), carrying any pending
        public result with its share instructions. ``length``: every share's length by the method's
        public shapes (None: it states none; the shares must then agree). Returns ``(sum on the grid,
        record)``."""
        run = self.run
        transport = run.transport
        from flwr.server import ServerConfig
        from flwr.server.client_manager import SimpleClientManager
        from flwr.server.compat.grid_client_proxy import GridClientProxy
        from flwr.server.compat.legacy_context import LegacyContext
        from flwr.server.strategy import FedAvg
        from flwr.server.workflow.constant import MAIN_CONFIGS_RECORD, MAIN_PARAMS_RECORD, Key

        from dpfed_core.deployment import shamir

        shamir.install()  # same reconstruction, the Lagrange basis computed once per round (module doc)
        workflow_class = _dropout_safe_secaggplus()  # Flower's, surviving a site lost at any step
        H = run.n_entities
        nodes = [n for n in nodes if n not in run.dropped]  # a dropped site takes no further part
        survivors = H - int(method.max_dropouts)
        target, modulus, clip = secagg_ranges(H)
        instructions = {"config": run.config_json, "n-entities": H,
                        "stage": stage or method.stages[0]}
        carried, carried_shape = "", None
        if run.pending_public is not None:
            # the previous stage's public result rides with this sum's share instructions
            after, arrays = run.pending_public
            run.pending_public = None
            instructions.update({PUBLIC_AFTER_FIELD: after, PUBLIC_FIELD: pack_arrays(arrays)})
            what = ", ".join(f"{k} {list(np.shape(v))}" for k, v in arrays.items())
            carried = f" + public result of the {after} sum ({what or 'nothing'})"
            if arrays:  # as flush_public logs it: one array's shape, several arrays' sizes
                carried_shape = (list(np.shape(next(iter(arrays.values())))) if len(arrays) == 1
                                 else [int(np.size(v)) for v in arrays.values()])

        class _SumOnly(FedAvg):
            """Hands the unmasked sum through unchanged (FedAvg would re-average it)."""
            n_active = 0
            active: set = set()

            def aggregate_fit(self, server_round, results, failures):
                _SumOnly.n_active = len(results)
                _SumOnly.active = {proxy.node_id for proxy, _res in results}
                return (results[0][1].parameters if results else None), {}

        strategy = _SumOnly(fraction_fit=1.0, min_fit_clients=len(nodes), min_available_clients=len(nodes),
                            on_fit_config_fn=lambda _r: dict(instructions))
        legacy = LegacyContext(run.context, ServerConfig(num_rounds=1), strategy, SimpleClientManager())
        for n in nodes:
            legacy.client_manager.register(GridClientProxy(n, run.grid, run.context.run_id))
        legacy.state.array_records[MAIN_PARAMS_RECORD] = ArrayRecord()
        legacy.state.config_records[MAIN_CONFIGS_RECORD] = ConfigRecord({Key.CURRENT_ROUND: 1})
        # Key shares by a public rule (wire.secagg_shares: all nodes for a few, O(log n) neighbours for
        # many); threshold = k − d (H − d on the full graph): the secure sum survives d dropouts, and
        # fewer colluding neighbours cannot rebuild a live node's mask. A float num_shares is Flower's
        # fraction of the nodes, which it rounds back to k (odd).
        k = secagg_shares(len(nodes), int(method.max_dropouts))
        threshold = secagg_threshold(len(nodes), int(method.max_dropouts), H)
        workflow = workflow_class(num_shares=1.0 if k >= len(nodes) else k / len(nodes),
                                  reconstruction_threshold=threshold, max_weight=1.0,
                                  clipping_range=clip, quantization_range=target, modulus_range=modulus,
                                  timeout=transport.round_timeout)
        step = {"i": 0}
        failures: dict[str, str] = {}
        silent: list[str] = []
        masked: list[dict] = []  # the log's entries of the masked vectors, shaped once the sum is known

        class _LoggingGrid:
            """The grid as SecAggPlusWorkflow sees it, logging every message of each stage."""

            def __getattr__(self, item):
                return getattr(run.grid, item)

            def send_and_receive(self, messages, *, timeout=None):
                label = SECAGG_STAGES[min(step["i"], len(SECAGG_STAGES) - 1)]
                if stage is not None:
                    label += f" [{stage}]"
                step["i"] += 1
                messages = list(messages)
                # the fit instructions (collect masked vectors) carry the pending public result
                fit = step["i"] == SECAGG_FIT_STEP
                down = label + (carried if fit else "")
                for m in messages:
                    transport.log(m, 1, down, True, m.metadata.dst_node_id, carried_shape if fit else None)
                replies = transport.send_and_receive(messages, timeout)
                lengths: dict[str, int] = {}
                for r in replies:
                    transport.log(r, 1, label + " (reply)", False, r.metadata.src_node_id)
                    if fit and not r.has_error():
                        masked.append(transport.messages[-1])
                        # checked where it arrives: SecAgg+ would add shares of other lengths in NumPy's
                        # words, unmask a NaN into a sum every site is sent, or reduce an entry out of
                        # its range into another sum
                        site = transport.name(r.metadata.src_node_id)
                        lengths[site] = check_masked(site, f"masked share ({label})", r, length, modulus).shape[0]
                check_share_lengths(f"masked share ({label})", lengths)
                # the compliance copy is made of the checked replies: a refused masked vector is named in
                # the run's error, never kept as one the server summed
                for r in replies:
                    transport.dump(r, f"secagg{step['i']}" + (f"_{stage}" if stage else ""))
                    if r.has_error():  # SecAgg+ drops a failed node silently; keep its reason
                        failures[transport.name(r.metadata.src_node_id)] = r.error.reason
                answered = {r.metadata.src_node_id for r in replies}
                quiet = [transport.name(m.metadata.dst_node_id) for m in messages
                         if m.metadata.dst_node_id not in answered]
                if quiet:  # SecAgg+ drops a silent node silently too; keep where it went quiet
                    silent.append(f"{', '.join(quiet)} at {label}")
                transport.progress("secagg_stage", stage=label, replies=len(replies), sent=len(messages))
                return replies

        transport.progress("round1_sent", nodes=len(nodes), secure_aggregation=True, stage=stage or method.stages[0])
        workflow(_LoggingGrid(), legacy)
        if _SumOnly.n_active < survivors or _SumOnly.n_active == 0:
            # beyond max_dropouts: SecAgg+ unmasks nothing (fewer key shares than its threshold), and
            # the noise shares were sized for at least H − d contributors
            why = [f"{k}: {v.strip().splitlines()[-1] if v.strip() else v}" for k, v in failures.items()]
            if silent:
                # a node that died and one that was only slow look alike from here: say both remedies
                why.append(f"no answer within the round timeout ({transport.round_timeout:g} s; "
                           f"{ROUND_TIMEOUT_CONTROLS} lengthens it) from {'; '.join(silent)}")
            why = "; ".join(why)
            raise DeploymentRunError(
                f"secure aggregation{f' ({stage})' if stage else ''} ended with {_SumOnly.n_active} of {H} "
                f"entities, fewer than the {survivors} the run needs (max_dropouts = {int(method.max_dropouts)}); "
                f"{why or 'nodes dropped out or failed (see the SuperNode logs)'}; nothing was unmasked; "
                "run stopped, nothing written")
        lost = [n for n in nodes if n not in _SumOnly.active]
        if lost:
            # within max_dropouts: the survivors' sum carries enough noise (each share was sized for
            # H − d contributors); the dropped sites take no further part and get no model
            run.lose(lost, f"secure sum{f' ({stage})' if stage else ''}", stage=stage or method.stages[0],
                     contributors=_SumOnly.n_active)
        mean = legacy.state.array_records[MAIN_PARAMS_RECORD].to_numpy_ndarrays()[0]
        # SecAggPlusWorkflow returns the mean of the contributors' unmasked shares (weight 1 each); × their
        # number and back onto the grid gives the exact integer sum (every share is on the grid).
        total = to_grid(mean * _SumOnly.n_active)
        for m in masked:
            # each masked vector is as long as the sum (a public length: the site's log records it too);
            # SecAgg+'s own weight entry beside it is the protocol's, not the site's share
            m["shape"] = list(total.shape)
        info = {"protocol": "SecAgg+ (flwr.server.workflow.SecAggPlusWorkflow + flwr.client.mod.secaggplus_mod)",
                "num_shares": k, "reconstruction_threshold": threshold, "max_dropouts": int(method.max_dropouts),
                "clipping_range": clip, "quantization_range": target, "modulus_range": modulus,
                "grid": GRID, "contributors": _SumOnly.n_active,
                "server_saw": "masked vectors and their unmasked sum only"}
        return total, info

    @staticmethod
    def share_length(method, group: tuple[str, ...], n_items: int | None, public: dict) -> int | None:
        """Every site's share length of one secure sum by the method's public shapes (the stages' lengths
        added up); None when the catalogue's size or a stage's length is not stated."""
        if n_items is None:
            return None
        lengths = [method.share_length(stage, n_items, inputs)
                   for stage, inputs in fused_inputs(method, group, n_items, public)]
        return None if any(n is None for n in lengths) else int(sum(lengths))

    @staticmethod
    def fused_lengths(method, group: tuple[str, ...], n_items: int | None, public: dict, size: int) -> list[int]:
        """The share length of each stage of one secure sum (public: message shapes); they must add
        up to the sum's length."""
        if len(group) == 1:
            return [int(size)]
        lengths = [int(method.share_length(stage, n_items, inputs))
                   for stage, inputs in fused_inputs(method, group, n_items, public)]
        if sum(lengths) != size:
            raise DeploymentRunError(f"the secure sum of the stages {' + '.join(group)} has {size} entries, not the "
                                     f"{' + '.join(map(str, lengths))} their shapes give; run stopped, nothing written")
        return lengths

    @staticmethod
    def check_ahead(method, stage: str, n_items: int | None, public: dict) -> None:
        """A fused stage's shares were made with the inputs known ahead; the previous stage's
        ``combine`` must have produced the same (else the method's ``public_ahead`` is wrong)."""
        for key, value in (method.public_ahead(stage, n_items) or {}).items():
            if key not in public or not np.array_equal(np.asarray(public[key]), np.asarray(value)):
                raise DeploymentRunError(f"{method.name}: the {stage} shares used a public {key!r} fixed ahead that "
                                         "the server's result of the previous stage does not match; run stopped")


class _Run:
    """One run on the server, round by round: the sites' decisions, round 1 (prototypes, or a summable
    method's secure sums through :class:`_SecureSum`), the server's fit, round 2. Messages go through
    :class:`_Transport`."""

    def __init__(self, grid: Grid, context: Context) -> None:
        rc = context.run_config
        self.grid = grid
        self.context = context
        self.transport = _Transport(grid, context)
        self.secure_sum = _SecureSum(self)
        self.config_json = str(rc["config"])
        self.config = config_from_json(self.config_json)
        self.secure_catalogue = catalogue_from_json(self.config_json) == "secure"
        self.catalogue: dict | None = None
        # (stage, arrays): a public result waiting to ride with the next secure sum (broadcast_public)
        self.pending_public: tuple[str, dict] | None = None
        self.n_entities = int(rc["n-entities"])
        self.out = Path(str(rc["out"]))
        self.connect_timeout = float(rc["connect-timeout"])
        self.timings: dict[str, float] = {}
        self.decisions: list[dict] = []
        # nodes lost within the run's max_dropouts (a secure sum survives them, and a site lost after
        # its share was summed only misses its own model): left out from then on
        self.dropped: dict[int, str] = {}
        self.dropped_at: dict[str, str] = {}  # entity → the step it was lost in
        #: what the sites answered when a run that failed after their decisions told them it ended
        self.withdrawal_note = ""
        self.withdrawals: dict = {}

    # ------------------------------------------------------------------ steps
    def wait_for_nodes(self) -> list[int]:
        self.transport.progress("waiting_for_nodes", expected=self.n_entities)
        end = time.monotonic() + self.connect_timeout
        while True:
            nodes = sorted(self.grid.get_node_ids())
            if len(nodes) >= self.n_entities:
                self.transport.progress("nodes_connected", nodes=len(nodes))
                return nodes
            if time.monotonic() > end:
                raise DeploymentRunError(f"only {len(nodes)} of {self.n_entities} SuperNodes connected within "
                                         f"{self.connect_timeout:g} s")
            time.sleep(0.2)

    def site_decisions(self, nodes: list[int]) -> list[dict]:
        """Ask every site to accept the run's request (``query.policy``) and wait for every answer
        before any share is asked for: a run that any site refuses ends here, with nothing drawn at
        any site. Returns each site's decision (entity, decision, rule, message) in node order."""
        msgs = [Message(RecordDict({"config": self.instructions()}), dst_node_id=n, message_type="query.policy")
                for n in nodes]
        self.transport.progress("policy_sent", nodes=len(nodes))
        for m in msgs:
            self.transport.log(m, 0, POLICY_REQUEST, True, m.metadata.dst_node_id)
        replies = self.transport.send_and_receive(msgs, self.transport.round_timeout)
        for r in replies:
            self.transport.log(r, 0, POLICY_REPLY, False, r.metadata.src_node_id)
            self.transport.dump(r, "policy")
        try:
            self.transport.check_replies(msgs, replies, "site policy decisions")
        except DeploymentRunError as exc:
            # A site that did not decide (silent, or its node failed) is no acceptance: the run ends
            # before any share, as at a refusal, and the sites that accepted are told so
            raise self.stop_before_any_share(str(exc), replies) from None
        unread = [r for r in replies if "meta" not in r.content.keys()
                  or any(k not in r.content["meta"].keys() for k in DECISION_FIELDS)
                  or str(r.content["meta"]["decision"]) not in ("accepted", "refused")]
        if unread:
            # a decision the server cannot read is no acceptance: the run ends as at a silent site
            names = sorted(str(r.content["meta"]["entity"]) if "meta" in r.content.keys()
                           and "entity" in r.content["meta"].keys() else self.transport.name(r.metadata.src_node_id)
                           for r in unread)
            why = bad_reply(", ".join(names), "site policy decision",
                            "the reply is no decision (entity, decision accepted or refused, rule, message)")
            raise self.stop_before_any_share(str(why), replies)
        in_order = sorted(replies, key=lambda r: nodes.index(r.metadata.src_node_id))
        misplaced = self.misplaced(in_order)
        if misplaced:
            raise self.stop_before_any_share("site policy decisions: " + misplaced
                                             + " (give every SuperNode its own shard)", replies)
        decisions, accepted = [], []
        for r in in_order:
            meta = r.content["meta"]
            d = {k: str(meta[k]) for k in DECISION_FIELDS}
            if d["decision"] == "accepted":
                self.transport.entity_of_node[r.metadata.src_node_id] = d["entity"]
                if "index" in meta.keys():
                    self.transport.index_of_node[r.metadata.src_node_id] = meta["index"]
                accepted.append(r.metadata.src_node_id)
            decisions.append(d)
        self.decisions = decisions
        self.transport.progress("site_decisions", decisions=decisions)
        refused = [d for d in decisions if d["decision"] != "accepted"]
        if refused:
            rules = sorted({d["rule"] for d in refused})
            raise self.stop_before_any_share(
                f"site policy: {len(refused)} of {len(decisions)} site(s) refused the run — "
                + refusal_lines(refused)
                + f". Rule(s): {', '.join(rules)}. Run stopped before any share was drawn", replies)
        return decisions

    def misplaced(self, replies: list[Message]) -> str:
        """What is wrong with the places the accepting ``replies`` take in the run (``""`` when nothing is):
        one entity accepted by several nodes (each would be charged, asked for shares and fitted as that
        entity), an entity index that is not an integer in 0…H−1, or one index under two entity names (an
        index is the entity's row of V and its share's position). Each would otherwise be found only after
        every site had released."""
        nodes_of: dict[str, list[int]] = {}
        names_at: dict[int, set[str]] = {}
        outside = []
        for r in replies:
            meta = r.content["meta"]
            if str(meta["decision"]) != "accepted":
                continue
            entity = str(meta["entity"])
            nodes_of.setdefault(entity, []).append(r.metadata.src_node_id)
            if "index" not in meta.keys():
                continue
            idx = meta["index"]
            if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)) or not 0 <= idx < self.n_entities:
                outside.append(f"node {r.metadata.src_node_id} accepted as entity {entity!r} at index {idx!r}, "
                               f"not one of 0…{self.n_entities - 1}")
                continue
            names_at.setdefault(int(idx), set()).add(entity)
        wrong = [f"nodes {', '.join(map(str, ns))} accepted as the same entity {entity!r}"
                 for entity, ns in sorted(nodes_of.items()) if len(ns) > 1]
        if wrong:  # an entity accepted twice is named alone: where its nodes would sit is then moot
            return "; ".join(wrong)
        wrong = outside + [f"entities {', '.join(map(repr, sorted(names)))} accepted at the same index {idx}"
                           for idx, names in sorted(names_at.items()) if len(names) > 1]
        return "; ".join(wrong)

    def stop_before_any_share(self, why: str, replies: list[Message]) -> DeploymentRunError:
        """The error of a run that ends at the sites' decisions (``why``: a refusal, a silent or failed site,
        a decision the server cannot read, two sites as one entity): no site drew anything, so every site
        whose reply accepted is told to withdraw and gives its charge back (``ledger_rows = 0``) — else
        each would keep a charge for releases it never made."""
        accepted = [r.metadata.src_node_id for r in replies if decision_of(r) == "accepted"]
        return DeploymentRunError(f"{why}; nothing was released by any site{self.withdraw(accepted)}", ledger_rows=0)

    def withdraw(self, nodes: list[int], why: str = WITHDRAW_REQUEST, timeout: float | None = None) -> str:
        """Tell each site in ``nodes`` that the run ended (by default: another site refused it, before any
        share was asked for); each gives its charge back if its own record says it drew nothing. Returns
        the sentence stating what the sites answered (a site that does not answer keeps its charge)."""
        if not nodes:
            return ""
        msgs = [Message(RecordDict({"config": self.instructions()}), dst_node_id=n, message_type="query.withdraw")
                for n in nodes]
        for m in msgs:
            self.transport.log(m, 0, why, True, m.metadata.dst_node_id)
        try:
            replies = self.transport.send_and_receive(
                msgs, self.transport.round_timeout if timeout is None else timeout)
        except Exception:  # noqa: BLE001 - the run is already refused; a site that did not answer keeps its charge
            replies = []
        outcome: dict[str, list[str]] = {"withdrawn": [], "kept": []}
        answers = []
        for r in replies:
            self.transport.log(r, 0, WITHDRAW_REPLY, False, r.metadata.src_node_id)
            if not r.has_error() and "meta" in r.content.keys() and {"entity", "decision"} <= set(r.content["meta"].keys()):
                answers.append(r.content["meta"])  # a reply that is no answer counts as none: the site keeps its charge
        def entity_order(meta) -> int:  # entity order, not arrival order
            index = meta.get("index", -1)
            return int(index) if isinstance(index, (int, np.integer)) else -1

        for meta in sorted(answers, key=entity_order):
            outcome["withdrawn" if str(meta["decision"]) == "withdrawn" else "kept"].append(str(meta["entity"]))
        silent = len(nodes) - len(outcome["withdrawn"]) - len(outcome["kept"])
        self.withdrawals = {**outcome, "no_answer": silent}
        self.transport.progress("site_withdrawals", **outcome, no_answer=silent)
        parts = []
        if outcome["withdrawn"]:
            parts.append(f"{len(outcome['withdrawn'])} of the {len(nodes)} site(s) that accepted gave their charge "
                         "back")
        if outcome["kept"]:
            parts.append(f"{', '.join(outcome['kept'])} kept {'its' if len(outcome['kept']) == 1 else 'their'} "
                         "charge")
        if silent:
            parts.append(f"{silent} did not answer and keep their charge")
        return "; " + "; ".join(parts) if parts else ""

    def exchange(self, msgs: list[Message], round_: int, label: str, reply_label: str, step: str) -> list[Message]:
        """:meth:`_Transport.exchange` for a step after the secure sums (a public broadcast, round 2):
        a site that does not answer is lost within the run's max_dropouts (the released sums are
        already complete: only its own model is missing), beyond them the run stops."""
        left = int(self.config.max_dropouts) - len(self.dropped) if self.config.method in SUMMABLE_METHODS else 0
        replies, missing = self.transport.exchange(msgs, round_, label, reply_label, tolerate=max(left, 0))
        if missing:
            self.lose(missing, step, stage=step, contributors=None)
        return replies

    def lose(self, nodes: list[int], step: str, **event) -> None:
        """Record ``nodes`` as lost at ``step`` (within the run's max_dropouts): they take no further
        part and get no model. ``event``: the fields of the ``dropout`` progress event."""
        names = [self.transport.name(n) for n in nodes]
        for n, name in zip(nodes, names):
            self.dropped[n] = name
            self.dropped_at[name] = step
        self.transport.progress("dropout", entities=names, **event)

    def instructions(self) -> ConfigRecord:
        return ConfigRecord({"config": self.config_json, "n-entities": self.n_entities})

    def site_identity(self, r: Message, what: str) -> tuple[int, str]:
        """``(index, entity)`` a reply's meta gives, checked against what the site's decision gave: a
        site answering as another entity would be fitted, ordered and charged as that one."""
        node = r.metadata.src_node_id
        site = self.transport.name(node)
        if "meta" not in r.content.keys():
            raise bad_reply(site, what, "the reply names no entity (no meta record)")
        meta = r.content["meta"]
        if "entity" not in meta.keys() or "index" not in meta.keys():
            raise bad_reply(site, what, "the reply's meta record lacks its entity or index")
        idx, name = meta["index"], str(meta["entity"])
        if isinstance(idx, bool) or not isinstance(idx, (int, np.integer)):
            raise bad_reply(site, what, f"the entity index {idx!r} is not an integer")
        decided = self.transport.entity_of_node.get(node)
        decided_index = self.transport.index_of_node.get(node, idx)
        if (decided is not None and name != decided) or int(idx) != int(decided_index):
            raise bad_reply(site, what, f"the reply names entity {name!r} (index {int(idx)}), but the site's "
                                        f"decision named {decided!r} (index {int(decided_index)})")
        return int(idx), name

    def identify(self, replies: list[Message], what: str = "round 2") -> list[Message]:
        """Map nodes to entities from their replies; refuse duplicates and gaps."""
        by_index: dict[int, Message] = {}
        for r in replies:
            idx, name = self.site_identity(r, what)
            if idx in by_index:
                raise DeploymentRunError(f"two SuperNodes serve entity {name!r} (index {idx}); "
                                         "give every node its own shard")
            by_index[idx] = r
            self.transport.entity_of_node[r.metadata.src_node_id] = name
        # every entity once, but those lost earlier in the run (self.dropped)
        if any(not 0 <= h < self.n_entities for h in by_index) or len(by_index) + len(self.dropped) != self.n_entities:
            raise DeploymentRunError(f"the nodes serve entities {sorted(by_index)}, expected 0…{self.n_entities - 1}"
                                     + (f" but the dropped {sorted(self.dropped.values())}" if self.dropped else ""))
        return [by_index[h] for h in sorted(by_index)]

    def round1_prototypes(self, nodes: list[int]):
        msgs = [Message(RecordDict({"config": self.instructions()}), dst_node_id=n, message_type="query.round1")
                for n in nodes]
        self.transport.progress("round1_sent", nodes=len(nodes))
        before = len(self.transport.messages)
        replies = self.identify(self.transport.exchange(msgs, 1, "round-1 instruction (public run configuration)",
                                                        "prototypes (+ ledger rows)")[0], "round-1 prototypes")
        # checked where they arrive (the in-process protocol's check_release): else another width or a
        # NaN fails in the fit in SciPy's words, or a wrong count is fitted as another prototype's weight
        n_columns = catalogue_size_from_json(self.config_json)
        weighted = self.config.server_weighting == "counts"
        P, counts = [], ([] if weighted else None)
        for r in replies:
            site = self.transport.name(r.metadata.src_node_id)
            p, c = check_prototypes(site, r.content, n_columns, weighted)
            if n_columns is None and P and p.shape[1] != P[0].shape[1]:
                raise bad_reply(site, "round-1 prototypes", f"prototypes of {p.shape[1]} columns while "
                                f"{self.transport.name(replies[0].metadata.src_node_id)} sent {P[0].shape[1]}; "
                                "every site sends one column per item of the run's catalogue")
            check_ledger(site, "round-1 prototypes", r.content["meta"], site)
            P.append(p)
            if weighted:
                counts.append(c)
        shape_of = {r.metadata.src_node_id: list(p.shape) for r, p in zip(replies, P)}
        for m in self.transport.messages[before:]:
            if m["receiver"] == "server":
                m["shape"] = shape_of.get(m["sender"], [])
        meta = [r.content["meta"] for r in replies]
        for r in replies:
            self.transport.progress("round1_done", entity=self.transport.entity_of_node[r.metadata.src_node_id])
        return P, counts, meta

    def make_method(self):
        """The run's summable method on the server: on the rest of the budget after a federation-wide
        catalogue (the in-process split, :func:`~dpfed_core.evaluation.catalogue_run.secure_catalogue_budget`)."""
        return summable_method(method_config(self.config, self.secure_catalogue), n_entities=self.n_entities)

    def round1_catalogue(self, nodes: list[int], method) -> np.ndarray:
        """The federation-wide DP catalogue: a SecAgg+ sum of the nodes' catalogue shares, the
        threshold (public inputs only), and the released keys broadcast (public: a DP output).
        Returns the keys."""
        from dpfed_core.evaluation.catalogue_run import secure_catalogue_budget, secure_catalogue_divisor
        from dpfed_core.privacy import catalogue as cat

        t0 = time.perf_counter()
        before = len(self.transport.messages)
        total, info = self.secure_sum(nodes, method, "catalogue", cat.SECURE_CATALOGUE_BUCKETS)
        rho, _dlt, _cfg = secure_catalogue_budget(self.config)
        keys, _sigma, sigma_sum, threshold = cat.secure_catalogue_keys(
            total, rho, info["contributors"], divisor=secure_catalogue_divisor(self.n_entities, self.config))
        self.broadcast_public(nodes, "catalogue", {"keys": keys})
        self.timings["round1_catalogue"] = time.perf_counter() - t0
        self.catalogue = {"keys": keys.tolist(), "n_buckets": cat.SECURE_CATALOGUE_BUCKETS, "threshold": threshold,
                          "sigma_sum": sigma_sum, "stage": {"stage": "catalogue", "length": int(total.size),
                                                            "bytes": int(sum(m["bytes"] for m in self.transport.messages[before:])),
                                                            "seconds": time.perf_counter() - t0}}
        return keys

    def round1_summable(self, nodes: list[int]) -> tuple[dict, dict]:
        """Every stage of a summable method: a SecAgg+ secure sum, the server's ``combine``, and
        (before the next stage) the broadcast of the public quantities the next shares read.
        Returns the method's final ``public`` dict (with ``V``) and the secure-aggregation record."""
        method = self.make_method()
        H = self.n_entities
        stages = tuple(method.stages)
        per_stage = []
        if self.secure_catalogue:
            keys = self.round1_catalogue(nodes, method)
            per_stage.append(self.catalogue["stage"])
            if keys.size == 0:
                # nothing passed: no method round (as in process); round 2 tells every node so
                return {"V": np.zeros((0, max(int(self.config.rank), 1)))}, {"stages": per_stage}
        # The server's stream, spawned like the in-process runner's (entities 0…H−1, then the server).
        rng = method_generator(self.config.seed, private=True, simulation=self.config.simulation).spawn(H + 1)[-1]
        public: dict = {"n_entities": H}
        info: dict = {}
        # Stages whose inputs public facts fix share one secure sum (fused_stages): the catalogue's
        # size is the released keys' count after a federation-wide catalogue, else the declared size.
        n_items = int(keys.size) if self.secure_catalogue else catalogue_size_from_json(self.config_json)
        groups = fused_stages(method, n_items) if n_items is not None else [(s,) for s in stages]
        for g, group in enumerate(groups):
            t0 = time.perf_counter()
            before = len(self.transport.messages)
            label = SUM_OF_STAGES.join(group)
            total, info = self.secure_sum(nodes, method, label if len(stages) > 1 else None,
                                          _SecureSum.share_length(method, group, n_items, public))
            lengths = _SecureSum.fused_lengths(method, group, n_items, public, total.size)
            parts = np.split(total, np.cumsum(lengths)[:-1])
            for stage, part in zip(group, parts):
                if stage != group[0]:
                    _SecureSum.check_ahead(method, stage, n_items, public)
                public = combine_stage(method, stage, part, public, rng, info["contributors"])
            self.timings[f"round1_{label}"] = time.perf_counter() - t0
            if g + 1 < len(groups):
                self.broadcast_public(nodes, group[-1], public_broadcast(method, public))
            per_stage.append({"stage": label, "length": int(total.size),
                              **({"parts": [[s_, int(n)] for s_, n in zip(group, lengths)]} if len(group) > 1 else {}),
                              "bytes": int(sum(m["bytes"] for m in self.transport.messages[before:])),
                              "seconds": time.perf_counter() - t0})
        info = {**info, "stages": per_stage, "notes": server_notes(method, public)}
        info.pop("stage", None)
        for key in ("kept_directions", "noise_edge"):
            if key in public:
                info[key] = public[key]
        return public, info

    def broadcast_public(self, nodes: list[int], stage: str, arrays: dict[str, np.ndarray]) -> None:
        """The public result of ``stage`` that the next step reads (a method's ``public_keys``, or the
        catalogue's released keys): post-processing of the secure sum, nothing per entity.

        It travels with the next secure sum's instructions (the SecAgg+ stage whose fit instructions
        start every node's share, :class:`_SecureSum`): one message round fewer per stage (on
        30 nodes ≈ 4 s of a minute). Anything still pending when round 2 starts goes as a plain
        message to every node (:meth:`flush_public`)."""
        self.pending_public = (stage, {k: np.ascontiguousarray(v) for k, v in arrays.items()})

    def flush_public(self, nodes: list[int]) -> None:
        """Send a pending public result on its own (no secure sum follows it)."""
        if self.pending_public is None:
            return
        stage, arrays = self.pending_public
        self.pending_public = None
        what = ", ".join(f"{k} {list(np.shape(v))}" for k, v in arrays.items())
        msgs = [Message(RecordDict({"public": ArrayRecord({k: Array(v) for k, v in arrays.items()}),
                                    "config": ConfigRecord({"after-stage": stage})}),
                        dst_node_id=n, message_type="query.public") for n in nodes]
        before = len(self.transport.messages)
        self.exchange(msgs, 1, f"public result of the {stage} sum ({what or 'nothing'})",
                      "acknowledgement (public result stored)", f"public result of the {stage} sum")
        for m in self.transport.messages[before:]:
            if m["sender"] == "server":
                m["shape"] = [int(np.size(v)) for v in arrays.values()]
        self.transport.progress("public_broadcast", stage=stage, keys=sorted(arrays))

    def round2(self, nodes_in_order: list[int], V: np.ndarray) -> list[Message]:
        self.flush_public(nodes_in_order)  # e.g. an empty catalogue: no secure sum carried its keys
        rec = RecordDict({"model": ArrayRecord({"V": Array(np.ascontiguousarray(V))}), "config": self.instructions()})
        msgs = [Message(rec, dst_node_id=n, message_type="query.round2") for n in nodes_in_order]
        self.transport.progress("round2_sent", nodes=len(msgs), shape=list(V.shape))
        before = len(self.transport.messages)
        replies = self.exchange(msgs, 2, "item factors V", ROUND2_REPLY, "round 2")
        for m in self.transport.messages[before:]:
            if m["content"] == "item factors V":
                m["shape"] = list(V.shape)
        if self.config.method in SUMMABLE_METHODS:
            replies = self.identify(replies, "round-2 acknowledgement")
            for r in replies:
                site = self.transport.name(r.metadata.src_node_id)
                check_ledger(site, "round-2 acknowledgement", r.content["meta"], site)
                check_coalition(site, "round-2 acknowledgement", r.content["meta"])
        else:
            for r in replies:
                self.site_identity(r, "round-2 acknowledgement")
            order = {n: i for i, n in enumerate(nodes_in_order)}
            replies = sorted(replies, key=lambda r: order[r.metadata.src_node_id])
        for r in replies:
            self.transport.progress("round2_done", entity=self.transport.entity_of_node[r.metadata.src_node_id])
        return replies

    def run(self) -> None:
        t_start = time.perf_counter()
        nodes = self.wait_for_nodes()
        H = self.n_entities
        if len(nodes) > H:
            raise DeploymentRunError(f"{len(nodes)} SuperNodes are connected but the run declares {H} entities")
        summable = self.config.method in SUMMABLE_METHODS
        t0 = time.perf_counter()
        self.site_decisions(nodes)
        self.timings["site_decisions"] = time.perf_counter() - t0
        try:
            self.rounds(nodes, summable, t_start)
        except Exception as exc:
            # every site accepted and was charged; the run will not finish: each still in it is told, and a
            # site whose own record says it drew nothing gives its charge back (one that drew keeps it)
            try:
                self.withdrawal_note = self.withdraw([n for n in nodes if n not in self.dropped],
                                                     WITHDRAW_AFTER_FAILURE,
                                                     min(self.transport.round_timeout, WITHDRAW_TIMEOUT_S))
            except Exception:  # noqa: BLE001 - the run's own failure is what is reported; the sites keep their charge
                self.withdrawal_note = "; the sites could not be told (each keeps its charge: `site withdraw`)"
            if (isinstance(exc, DeploymentRunError) and not self.dropped
                    and len(self.withdrawals.get("withdrawn", ())) == len(nodes)):
                # every site's own store says it drew nothing: nothing was released, as at a refusal —
                # the coordinator's odometer gives its reservation back too
                exc.ledger_rows = 0
            raise

    def rounds(self, nodes: list[int], summable: bool, t_start: float) -> None:
        """Round 1, the server's step and round 2 of a run every site accepted; writes the result."""
        H = self.n_entities
        secure = None
        t0 = time.perf_counter()
        if summable:
            public, secure = self.round1_summable(nodes)
            self.timings["round1_secure_sum"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            V = public["V"]
            order = [n for n in nodes if n not in self.dropped]
            meta1 = []
        else:
            P, counts, meta1 = self.round1_prototypes(nodes)
            self.timings["round1_prototypes"] = time.perf_counter() - t0
            private = prototype_method_is_private(self.config)
            t0 = time.perf_counter()
            self.transport.progress("server_start", n_prototypes=int(sum(len(p) for p in P)))
            # The server's stream, spawned like the in-process protocol's (one per entity, then the server).
            rng = method_generator(self.config.seed, private=private,
                                   simulation=self.config.simulation).spawn(H + 1)[-1]
            Pm = np.vstack(P)
            weights = np.concatenate([np.maximum(c, 0.0) for c in counts]) if counts is not None else None
            P_fit = sp.csr_matrix(Pm) if self.config.mode == "observed" else Pm
            _W, V, _hist = fit_nmf(P_fit, self.config.rank, self.config.lam, self.config.mode,
                                   max_iter=self.config.max_iter, rng=rng, weights=weights)
            order = [n for h in range(H) for n, e in self.transport.entity_of_node.items()
                     if e == str(meta1[h]["entity"])]
        self.timings["server_fit"] = time.perf_counter() - t0
        self.transport.progress("server_done", shape=list(V.shape), keys=bool(self.secure_catalogue))
        t0 = time.perf_counter()
        replies2 = self.round2(order, V)
        self.timings["round2_local_fit"] = time.perf_counter() - t0
        metas = meta1 if not summable else [r.content["meta"] for r in replies2]
        entities = []
        for h, r in enumerate(replies2):
            m2 = r.content["meta"]
            m1 = metas[h]
            entities.append({"entity": str(m2["entity"]), "index": int(m2["index"]),
                             "ledger": loads(str(m1["ledger"])), "note": str(m1["note"]),
                             **({"coalition_epsilon": loads(str(m1["coalition_epsilon"]))} if summable else {})})
        for m in self.transport.messages:
            for key in ("sender", "receiver"):
                if isinstance(m[key], int):
                    m[key] = self.transport.name(m[key])
        self.timings["server_total"] = time.perf_counter() - t_start
        result = {"entities": entities, "messages": self.transport.messages, "timings": self.timings,
                  "secure_aggregation": secure, "n_entities": H, "site_decisions": self.decisions,
                  "dropped": sorted(self.dropped.values()), "dropped_at": self.dropped_at,
                  # the released catalogue keys (public: a DP output) and the threshold's public inputs
                  "catalogue": ({k: v for k, v in self.catalogue.items() if k != "stage"}
                                if self.catalogue is not None else None)}
        self.out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.out.parent, suffix=".npz.tmp")
        os.close(fd)
        with open(tmp, "wb") as f:
            np.savez(f, V=V, result=np.asarray(dumps(result)))
        os.replace(tmp, self.out)
        self.transport.progress("done", seconds=self.timings["server_total"])


def decision_of(reply: Message) -> str | None:
    """The decision word of a site's reply to the policy request; None for a failed node's reply or one
    whose meta record (or its ``decision`` field) is missing."""
    if reply.has_error() or "meta" not in reply.content.keys() or "decision" not in reply.content["meta"].keys():
        return None
    return str(reply.content["meta"]["decision"])


def refusal_lines(refused: list[dict]) -> str:
    """The sites' refusals, one clause per distinct (rule, message) naming every site that gave it, in
    the sites' order: six sites refusing alike read once, not six times."""
    groups: dict[tuple[str, str], list[str]] = {}
    for d in refused:
        # a site's refusal states its rule first; the clause names it already
        msg = d["message"].removeprefix(f"refused by site policy rule {d['rule']!r}: ")
        groups.setdefault((d["rule"], msg), []).append(d["entity"])
    return "; ".join(f"{', '.join(ents)} (rule {rule}): {msg}" for (rule, msg), ents in groups.items())


def _describe(val, name: str, arrays: dict, bytes_to_ndarray) -> object:
    """A config-record value as :meth:`_Transport.dump` records it (byte strings that are serialised
    arrays go to ``arrays`` under ``name.i``; other byte strings are recorded by length only)."""
    def one(v, i):
        if isinstance(v, bytes):
            try:
                arrays[f"{name}.{i}"] = bytes_to_ndarray(v)
                return {"array": f"{name}.{i}"}
            except Exception:  # noqa: BLE001 — public keys and ciphertexts are not arrays
                return {"opaque_bytes": len(v)}
        return v
    if isinstance(val, list):
        return [one(v, i) for i, v in enumerate(val)]
    return one(val, 0)


@app.main()
def main(grid: Grid, context: Context) -> None:
    run = _Run(grid, context)
    try:
        run.run()
    except DpfedError as exc:
        rows = getattr(exc, "ledger_rows", None)
        run.transport.progress("error", message=f"{exc}{run.withdrawal_note}",
                               **({} if rows is None else {"ledger_rows": int(rows)}))
    except Exception as exc:  # noqa: BLE001 — reported to the launcher, which shows it as one line
        run.transport.progress("error", message=f"server: {type(exc).__name__}: {exc}{run.withdrawal_note}")
        raise
    except KeyboardInterrupt:
        # Flower's heartbeat thread raises SIGINT in this process when the SuperLink no longer
        # acknowledges the run's task (it missed 2 × 30 s of heartbeats, or the run was stopped):
        # say so, or the launcher would wait its whole timeout for a run that has ended
        run.transport.progress("error", message="server: the ServerApp was interrupted — the SuperLink ended the "
                                                "run's task (heartbeat not acknowledged, or the run was stopped)")
        raise
    finally:
        if run.transport.bell is not None:
            run.transport.bell.close()
