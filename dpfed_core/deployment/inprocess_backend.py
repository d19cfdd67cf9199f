"""An in-process Backend for Flower's Simulation Engine: the ClientApps run on the engine's own threads.

Flower 1.42's Simulation Engine (the VCE: ``flwr.server.superlink.fleet.vce.vce_api.run_api``) takes
its Backend from ``backend_fn`` and runs ``backend.num_workers`` worker threads; each pulls one
Flower message for one simulated SuperNode, calls ``backend.process_message(message, context)``
and stores the reply and the node's updated Context. Ray (``RayBackend``) is its only built-in
backend: it starts a Ray cluster (20–30 s here) and sends every message to an actor process.

:class:`InProcessBackend` does what ``RayBackend`` + ``ClientAppActor.run`` do — load the ClientApp
through ``app_fn``, call it with the message and the node's Context, wrap a failure in
``ClientAppException`` — in the engine's worker thread. Everything else is Flower's own code: the
ServerApp thread, the in-memory LinkState and Grid, the VCE's queues and workers, SecAgg+ and its
``secaggplus_mod``. Like Ray's process boundary, it hands the ClientApp *copies* of the message and
the Context — serialised to Flower's protobuf and back (``flwr.common.serde``, the form in which a
deployed SuperNode hands them to its ClientApp process) — and returns copies of the reply and the
updated Context the same way, so a ClientApp never shares an object with the LinkState or with
another node.

Why threads are enough: a ClientApp call here is NumPy work (which releases the GIL) or short Python;
``num_workers`` (the CPU count by default) bounds how many run at once, as Ray's actor pool does.

Flower builds the backend inside ``start_vce`` as ``RayBackend(backend_config)``, imported from
``flwr.server.superlink.fleet.vce.backend.raybackend`` at that moment; :func:`use_in_flower` puts a
module of that name whose ``RayBackend`` is this class in ``sys.modules`` first (so Ray is never
imported), and :attr:`InProcessBackend.built` lets the caller check that Flower did build it.
"""
from __future__ import annotations

import os
import sys
import types
from typing import Callable

from flwr.app import Context, Message
from flwr.clientapp import ClientApp
from flwr.clientapp.client_app import ClientAppException, LoadClientAppError
from flwr.common.serde import context_from_proto, context_to_proto, message_from_proto, message_to_proto
from flwr.server.superlink.fleet.vce.backend import Backend, BackendConfig

#: The module Flower 1.42's ``start_vce`` imports its backend class from.
RAY_BACKEND_MODULE = "flwr.server.superlink.fleet.vce.backend.raybackend"


class InProcessBackend(Backend):
    """Flower Simulation Engine backend running each ClientApp call in the calling (worker) thread.

    ``backend_config["init_args"]["num_cpus"]``: how many messages run at once (default: the CPU
    count), Ray's ``num_cpus`` with one CPU per client."""

    #: How many instances Flower built in this process (the caller checks it is not 0).
    built = 0

    def __init__(self, backend_config: BackendConfig) -> None:
        super().__init__(backend_config)
        init_args = backend_config.get("init_args", {}) or {}
        n = init_args.get("num_cpus") or os.cpu_count() or 1
        self._workers = max(1, int(n))
        self.app_fn: Callable[[], ClientApp] | None = None
        InProcessBackend.built += 1

    def build(self, app_fn: Callable[[], ClientApp]) -> None:
        """Nothing to start: remember how to load the ClientApp (Flower's ``app_fn``)."""
        self.app_fn = app_fn

    @property
    def num_workers(self) -> int:
        """Messages processed at once (the VCE starts this many worker threads)."""
        return self._workers

    def is_worker_idle(self) -> bool:
        """Always: each VCE worker thread is its own executor (Flower's VCE does not call this)."""
        return True

    def terminate(self) -> None:
        """Nothing to stop: no process or cluster was started."""

    def process_message(self, message: Message, context: Context) -> tuple[Message, Context]:
        """Run the ClientApp on a copy of ``message`` and ``context``; return copies of the reply
        and the updated Context (as ``ClientAppActor.run`` does across Ray's process boundary).

        The copies go through Flower's protobuf form: Flower's records hold memoryviews, which
        :mod:`pickle` refuses, and the protobuf form is what crosses a real SuperNode's boundary."""
        if self.app_fn is None:
            raise ValueError("Unspecified function to load a `ClientApp`. "
                             "Call the backend's `build()` method before processing messages.")
        message, context = _copy(message, context)
        try:
            app = self.app_fn()
            out = app(message=message, context=context)
        except LoadClientAppError:
            raise
        except Exception as ex:  # noqa: BLE001 — Flower's contract: any ClientApp failure is a ClientAppException
            raise ClientAppException(str(ex)) from ex
        return _copy(out, context)


def _copy(message: Message, context: Context) -> tuple[Message, Context]:
    """Independent copies of ``message`` and ``context`` through Flower's protobuf serialisation."""
    return (message_from_proto(message_to_proto(message)), context_from_proto(context_to_proto(context)))


def use_in_flower() -> None:
    """Make Flower's Simulation Engine build :class:`InProcessBackend` where it builds ``RayBackend``.

    Must run before anything imports Flower's Ray backend module in this process (it imports Ray);
    a :class:`RuntimeError` says so if it already has."""
    present = sys.modules.get(RAY_BACKEND_MODULE)
    if present is not None and getattr(present, "RayBackend", None) is not InProcessBackend:
        raise RuntimeError("Flower's Ray backend is already imported in this process; the in-process "
                           "backend must be installed before the Simulation Engine starts")
    shim = types.ModuleType(RAY_BACKEND_MODULE, "In-process stand-in for Flower's Ray backend (dpfed).")
    shim.RayBackend = InProcessBackend  # the name start_vce's backend_fn imports
    sys.modules[RAY_BACKEND_MODULE] = shim
