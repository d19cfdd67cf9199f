"""The private Flower (and pycryptodome) internals a local deployment replaces, each checked at
start-up against the pinned version it was written for, with Flower's stock code as the fallback.

Flower is a dependency, not a fork: :mod:`.node_runtime` and :mod:`.shamir` speed a local deployment
up by replacing a few private functions (the SuperNode's fixed sleeps and its push/pull, the SuperExec
loop's executor and clock, SecAgg+'s Shamir reconstruction, the GF(2¹²⁸) multiplication of one
operator's processes, the node's reported run time), and the secure sum's workflow is subclassed to
survive a site lost between SecAgg+'s setup and share-keys steps. Private names change without
notice (Flower shipped four breaking minor releases in a year), so before replacing one,
:func:`usable` checks that the installed package is the pinned version **and** that the replaced
code is the code it was written against (a SHA-256 of its source). If not, it prints one line naming
the internal, the version found, what differs and what the stock code means (``Internal.stock``: at
Flower's own speed, or a secure sum that fails when a site is lost at that step), and the caller
keeps the stock code.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import sys
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

#: The versions the fingerprints below were taken from (requirements-deploy.txt pins them).
PINNED = {"flwr": "1.42.0", "pycryptodome": "3.24.1"}


@dataclass(frozen=True)
class Internal:
    package: str       # distribution whose version is pinned
    module: str
    attribute: str     # "name" or "Class.name"
    fingerprint: str   # first 16 hex digits of the SHA-256 of its source at the pinned version
    why: str           # what dpfed replaces and what the stock path costs
    stock: str = "the run is the same, only slower"  # what running Flower's own code instead means


INTERNALS = {
    "supernode-sleeps": Internal(
        "flwr", "flwr.supernode.start_client_internal", "start_client_internal", "9e89a6eb68fbec68",
        "the SuperNode's fixed 3 s idle sleep and 0.5 s reply check (its module's `time`)"),
    "supernode-pull": Internal(
        "flwr", "flwr.supernode.start_client_internal", "_pull_and_store_message", "eaf5d0e36dc34e4c",
        "waking the node's executor when a message is stored"),
    "supernode-push": Internal(
        "flwr", "flwr.supernode.start_client_internal", "_push_messages", "00bb86faffdec114",
        "ringing the ServerApp's doorbell after a reply"),
    "superexec-loop": Internal(
        "flwr", "flwr.supercore.superexec.run_superexec", "run_superexec", "91e7a33c5b898f33",
        "the executor loop's executor (tasks forked from a warm process) and its poll clock"),
    "superexec-launch": Internal(
        "flwr", "flwr.supercore.superexec.executor.subprocess_executor", "SubprocessExecutor.launch",
        "83abf3dbe02281fd", "the executor interface the forking executor implements"),
    "node-timing": Internal(
        "flwr", "flwr.supernode.nodestate.in_memory_nodestate", "InMemoryNodeState.get_message_processing_duration",
        "", "the ClientApp run time a node reports to the SuperLink (reported as 0)"),
    "shamir-combine": Internal(
        "flwr", "flwr.common.secure_aggregation.crypto.shamir", "_shamir_combine", "7d9e13c5a2186329",
        "SecAgg+'s Shamir reconstruction with the Lagrange basis computed once per round"),
    # the secure sum's handling of a node lost between setup and share keys (server_app
    # ._dropout_safe_secaggplus), written against both stages it relies on
    "secaggplus-share-keys": Internal(
        "flwr", "flwr.server.workflow.secure_aggregation.secaggplus_workflow", "SecAggPlusWorkflow.share_keys_stage",
        "a22dfd6309540039", "taking a site lost before it dealt its SecAgg+ key shares out of the protocol",
        "a site lost at that step makes the secure sum fail (Flower's workflow asks for shares never dealt)"),
    "secaggplus-unmask": Internal(
        "flwr", "flwr.server.workflow.secure_aggregation.secaggplus_workflow", "SecAggPlusWorkflow.unmask_stage",
        "c4639d18768446e9", "the unmask stage that rebuilds only the lost sites' masks the survivors added",
        "a site lost at that step makes the secure sum fail (Flower's workflow asks for shares never dealt)"),
    # the ServerApp's pull of a reply's objects (server_app.bound_reply_pulls)
    "grid-pull-messages": Internal(
        "flwr", "flwr.superlink.grid.http_grid", "HttpGrid.pull_messages", "67a5266a5a2ed515",
        "a reply whose objects never arrive (its node died mid-upload) becomes an error reply after the round timeout",
        "the ServerApp waits for them up to Flower's 2 h pull limit"),
    "gf128-mul": Internal(
        "pycryptodome", "Crypto.Protocol.SecretSharing", "_Element.__mul__", "ffff1fa24e2cb09b",
        "GF(2¹²⁸) multiplication without timing hardening, in one operator's processes only"),
}

#: Our replacements, by internal: a check after the replacement is in place finds ours, not Flower's.
_REPLACED: dict[str, object] = {}
_WARNED: set[str] = set()


def _resolve(item: Internal):
    obj = importlib.import_module(item.module)
    for part in item.attribute.split("."):
        obj = getattr(obj, part)
    return obj


def _fingerprint(obj) -> str:
    return hashlib.sha256(inspect.getsource(obj).encode("utf-8")).hexdigest()[:16]


def check(name: str) -> str | None:
    """None when internal ``name`` is the code it was written against; else what differs."""
    item = INTERNALS[name]
    try:
        found = version(item.package)
    except PackageNotFoundError:
        return f"{item.package} is not installed"
    if found != PINNED[item.package]:
        return f"{item.package} {found} is installed, dpfed's replacement was written for {PINNED[item.package]}"
    try:
        obj = _resolve(item)
    except (ImportError, AttributeError) as exc:
        return f"{item.module}.{item.attribute} is gone ({exc})"
    if name in _REPLACED and obj is _REPLACED[name]:
        return None  # ours is in place already (a fork of a process that replaced it)
    if item.fingerprint:
        try:
            got = _fingerprint(obj)
        except (OSError, TypeError) as exc:
            return f"the source of {item.module}.{item.attribute} cannot be read ({exc})"
        if got != item.fingerprint:
            return f"{item.module}.{item.attribute} changed (source fingerprint {got}, expected {item.fingerprint})"
    return None


def usable(name: str) -> bool:
    """Whether dpfed may replace internal ``name``; when not, one line on stderr says which, why, and
    that the stock code path runs instead."""
    why = check(name)
    if why is None:
        return True
    if name not in _WARNED:
        _WARNED.add(name)
        item = INTERNALS[name]
        print(f"dpfed: not replacing Flower internal {name!r} ({item.why}): {why}; using the stock code path "
              f"({item.stock}; pin the versions of requirements-deploy.txt to restore it)",
              file=sys.stderr, flush=True)
    return False


def replaced(name: str, obj) -> None:
    """Record ``obj`` as dpfed's replacement of internal ``name`` (see :func:`check`)."""
    _REPLACED[name] = obj


def report() -> dict[str, str]:
    """Each internal and its state: ``ok`` or what differs (for documents and diagnostics)."""
    return {name: (check(name) or "ok") for name in INTERNALS}
