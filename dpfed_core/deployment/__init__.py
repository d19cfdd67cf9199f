"""Real deployment on Flower: every entity its own Flower SuperNode, the server a
ServerApp, summable releases through Flower's SecAgg+.

* :mod:`.shards` — per-entity shard files (each node loads only its own).
* :mod:`.client_app` / :mod:`.server_app` — the Flower app (``app/pyproject.toml`` is its FAB).
* :mod:`.launcher` — a local deployment on 127.0.0.1 (one SuperLink, one SuperNode per entity).
* :mod:`.wire` — bytes on the wire, metadata encoding.

``flwr`` is imported only by the app modules and inside the launcher's functions, so importing this
package costs nothing when Flower is not installed.
"""
from dpfed_core.deployment.launcher import DeploymentError, LocalFederation, flower_available
from dpfed_core.deployment.shards import load_shard, write_shards

__all__ = ["DeploymentError", "LocalFederation", "flower_available", "load_shard", "write_shards"]
