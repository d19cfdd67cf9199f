"""The SuperLink's Control API: the requests ``flwr supernode register``, ``flwr run`` and ``flwr stop``
send, without starting the Flower CLI (≈ 1–2 s of interpreter start and imports per call).

Two ways to send them, the same requests over the same TLS:

* :class:`ControlClient`, in the calling process. Flower's control client and FAB builder are
  imported when it is made (≈ 0.45 CPU-s on this project's 2-core machine): what a process that
  talks to a SuperLink on another host uses (``bench/bench_hosts.py``, the tests' coordinator double).
* :func:`run_control`, in a fork of a local deployment's warm interpreter
  (:mod:`.node_runtime`), where Flower is loaded already: ``deploy-local``'s launcher asks its
  zygote for one fork per request (:class:`~dpfed_core.deployment.launcher.LocalFederation`), so the
  launcher itself never imports Flower. The fork writes its answer to a file the launcher names.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from dpfed_core.errors import DeploymentError

#: The Flower modules a request needs: warmed by the zygote (:func:`warm`) so its forks import nothing.
FLOWER_MODULES = ("flwr.supercore.control", "flwr.supercore.interceptors", "flwr.cli.build",
                  "flwr.common.serde", "flwr.proto.control_pb2", "flwr.supercore.fab")


class ControlClient:
    """The Control API of the SuperLink at ``127.0.0.1:port`` (``ca``: its CA certificate; None:
    insecure), from this process."""

    def __init__(self, port: int, ca: Path | None) -> None:
        from flwr.supercore.control import ControlHttpClient
        from flwr.supercore.interceptors import RuntimeVersionHttpInterceptor

        self.client = ControlHttpClient.from_server_address(
            server_address=f"127.0.0.1:{port}", insecure=ca is None,
            root_certificates=None if ca is None else Path(ca).read_bytes(),
            interceptors=[RuntimeVersionHttpInterceptor(component_name="flwr CLI")])
        self._fab = None

    def register(self, public_keys: list[Path]) -> None:
        """Register each SuperNode public key (node authentication: the SuperLink accepts only these)."""
        from flwr.proto.control_pb2 import RegisterNodeRequest  # pylint: disable=E0611

        from dpfed_core.deployment.security import load_public_key

        for path in public_keys:
            path = Path(path)
            res = self.client.RegisterNode(request=RegisterNodeRequest(public_key=load_public_key(path),
                                                                       name=path.stem))
            if not res.node_id:
                raise DeploymentError(f"the SuperLink refused the SuperNode key {path} (node authentication)")

    def start_run(self, app_dir: Path, overrides: dict) -> int:
        """Submit the app in ``app_dir`` with ``overrides`` (its run config); returns the run id."""
        import hashlib

        from flwr.cli.build import build_fab_from_disk
        from flwr.common.serde import fab_to_proto, user_config_to_proto
        from flwr.proto.control_pb2 import StartRunRequest  # pylint: disable=E0611
        from flwr.supercore.fab import Fab

        if self._fab is None:
            data = build_fab_from_disk(Path(app_dir))
            self._fab = Fab(hashlib.sha256(data).hexdigest(), data, {})
        try:
            res = self.client.StartRun(StartRunRequest(fab=fab_to_proto(self._fab),
                                                       override_config=user_config_to_proto(overrides),
                                                       federation=""))
        except Exception as exc:  # noqa: BLE001 — any transport or server error, as one line
            raise DeploymentError(f"the SuperLink did not accept the ServerApp: {exc}") from None
        if not res.HasField("run_id"):
            raise DeploymentError("the SuperLink did not start the ServerApp (no run id)")
        return int(res.run_id)

    def stop_run(self, run_id: int) -> None:
        """Ask the SuperLink to stop run ``run_id`` (best effort: it may be over already)."""
        from flwr.proto.control_pb2 import StopRunRequest  # pylint: disable=E0611

        try:
            self.client.StopRun(StopRunRequest(run_id=int(run_id)))
        except Exception:  # noqa: BLE001 — the run ended or the SuperLink is gone: nothing to stop
            pass

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 — closing a dead connection
            pass


def warm() -> None:
    """Import what :func:`run_control` needs (in the zygote, before it forks)."""
    import importlib

    for name in FLOWER_MODULES:
        importlib.import_module(name)


def control_request(port: int, ca: Path | None, action: str, **args) -> str:
    """The request :func:`run_control` reads: ``action`` is ``register`` (``keys``: public key
    paths), ``start`` (``app_dir``, ``overrides``) or ``stop`` (``run_id``)."""
    if action not in ("register", "start", "stop"):
        raise ValueError(f"unknown Control API action {action!r}")
    return json.dumps({"port": int(port), "ca": None if ca is None else str(ca), "action": action,
                       **{k: (str(v) if isinstance(v, Path) else v) for k, v in args.items()}})


def run_control(argv: list[str]) -> None:
    """``argv`` = [request JSON (:func:`control_request`), answer path]: send the request and write
    ``{"run_id": …}`` (start), ``{}`` (register, stop) or ``{"error": message}`` to the answer path —
    whole or not at all (a temporary file renamed). Exits 1 on an error."""
    req, answer = json.loads(argv[0]), Path(argv[1])
    client = None
    try:
        client = ControlClient(req["port"], Path(req["ca"]) if req["ca"] else None)
        if req["action"] == "register":
            client.register([Path(p) for p in req["keys"]])
            out: dict = {}
        elif req["action"] == "start":
            out = {"run_id": client.start_run(Path(req["app_dir"]), dict(req["overrides"]))}
        else:
            client.stop_run(int(req["run_id"]))
            out = {}
        code = 0
    except Exception as exc:  # noqa: BLE001 — the launcher raises it as one line
        out, code = {"error": " ".join(str(exc).split()) or type(exc).__name__}, 1  # one line
    finally:
        if client is not None:
            client.close()
    tmp = answer.with_name(answer.name + ".tmp")
    tmp.write_text(json.dumps(out), encoding="utf-8")
    os.replace(tmp, answer)
    if code:
        raise SystemExit(code)
