"""The ε planner: it answers "how many users per entity make the federation beat
local at this ε" from synthetic federations built from public parameters — never from the rows."""
from __future__ import annotations

import inspect

from dpfed_core.config import RunConfig
from dpfed_core.evaluation import planner


def test_the_planner_reads_no_private_rows_and_compares_with_local(monkeypatch):
    # it cannot be given a dataset: only the federation's public shape and the analyst's assumption
    params = set(inspect.signature(planner.users_needed).parameters)
    assert not params & {"dataset", "ds", "X"}
    seen = []
    real = planner.run_method

    def spy(ds, cfg, *a, **k):
        seen.append((ds, cfg))
        return real(ds, cfg, *a, **k)

    monkeypatch.setattr(planner, "run_method", spy)
    out = planner.users_needed(RunConfig(method="dp-popularity", epsilon=1.0, rank=3, max_iter=20),
                               n_entities=3, n_items=30, value_max=5.0, users_grid=(20, 60), seeds=(0, 1))
    assert {cfg.method for _, cfg in seen} == {"dp-popularity", "local"}
    assert all(ds.generated and ds.name.startswith("planner") for ds, _ in seen)
    assert all(cfg.simulation for _, cfg in seen)  # generated data: a simulation releases nothing
    assert [p["users"] for p in out["points"]] == [20.0, 60.0]
    assert out["mode"] == "zero" and out["assumptions"]["interactions per user"] == 20.0
    assert set(out["estimate"]) == {"users", "how", "direction"}
