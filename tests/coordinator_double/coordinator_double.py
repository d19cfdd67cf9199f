"""A malicious coordinator (test double): it asks every site to accept a request, then asks for the
releases whatever the sites answered (or asks without a request at all), and writes down everything
it received — to show that a refusing site gives it nothing but the refusal."""
from __future__ import annotations

import json
from pathlib import Path

from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.serverapp import Grid, ServerApp

from dpfed_core.deployment.server_app import DeploymentRunError, _Run
from dpfed_core.federation.summable import SUMMABLE_METHODS

app = ServerApp()


def _received(replies) -> list[dict]:
    out = []
    for r in replies:
        arrays = {} if not r.has_content() else {f"{k}.{a}": list(v[a].shape) for k, v in r.content.array_records.items()
                                                 for a in v.keys()}
        error = r.error.reason if r.has_error() else (
            str(r.content["error"]["message"]) if r.has_content() and "error" in r.content.keys() else "")
        out.append({"node": r.metadata.src_node_id, "arrays": arrays, "error": error,
                    "records": sorted(r.content.keys()) if r.has_content() else []})
    return out


@app.main()
def main(grid: Grid, context: Context) -> None:
    run = _Run(grid, context)
    attack = str(context.run_config["attack"])
    out: dict = {"attack": attack, "decisions": [], "refusal": "", "after": [], "secure_sum": ""}
    try:
        nodes = run.wait_for_nodes()
        if attack != "skip":
            try:
                run.site_decisions(nodes)
            except DeploymentRunError as exc:
                out["refusal"] = str(exc)
            out["decisions"] = run.decisions
        if attack == "weak-secagg":
            # after an honest request: a secure sum tolerating one more dropout than the request said
            # (SecAgg+'s threshold one lower: fewer colluders rebuild a live node's mask)
            honest = run.make_method

            def weaker():
                method = honest()
                method.max_dropouts = int(method.max_dropouts) + 1
                return method

            run.make_method = weaker
        # whatever the sites said: ask for the releases
        if run.config.method in SUMMABLE_METHODS:
            try:
                run.round1_summable(nodes)
                out["secure_sum"] = "completed"
            except Exception as exc:  # noqa: BLE001 — the double records why it got nothing
                out["secure_sum"] = f"{type(exc).__name__}: {exc}"
        else:
            msgs = [Message(RecordDict({"config": run.instructions()}), dst_node_id=n, message_type="query.round1")
                    for n in nodes]
            out["after"] = _received(run.transport.send_and_receive(msgs, run.transport.round_timeout))
        out["dumped"] = run.transport._dumped
    finally:
        Path(str(context.run_config["out"])).write_text(json.dumps(out), encoding="utf-8")
        run.transport.progress("done", seconds=0.0)
        if run.transport.bell is not None:
            run.transport.bell.close()
