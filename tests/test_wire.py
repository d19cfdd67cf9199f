"""What crosses the wire of a deployment besides the shares: the run's public JSON (infinities and NaN
as JSON can carry them), the catalogue fields every node reads from it, and the packed public arrays."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpfed_core.config import RunConfig
from dpfed_core.deployment.wire import (CATALOGUE_FIELD, CATALOGUE_SIZE_FIELD, catalogue_from_json,
                                        catalogue_size_from_json, config_from_json, dumps, loads, pack_arrays,
                                        run_json, unpack_arrays)


def test_infinities_travel_as_signed_strings_and_nan_as_null_at_any_depth():
    obj = {"a": math.inf, "b": -math.inf, "c": math.nan, "d": [math.inf, {"e": -math.inf}, (1.5, math.nan)]}
    text = dumps(obj)
    assert json.loads(text) == {"a": "inf", "b": "-inf", "c": None, "d": ["inf", {"e": "-inf"}, [1.5, None]]}
    assert "NaN" not in text and "Infinity" not in text  # strict JSON: any reader takes it
    back = loads(text)
    assert back["a"] == math.inf and back["b"] == -math.inf and back["c"] is None
    assert back["d"][0] == math.inf and back["d"][1]["e"] == -math.inf and back["d"][2] == [1.5, None]


def test_the_run_json_states_how_the_catalogue_is_fixed_and_a_declared_catalogues_size_only():
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure")
    declared = run_json(cfg, "declared", 40)
    assert json.loads(declared)[CATALOGUE_FIELD] == "declared" and catalogue_size_from_json(declared) == 40
    secure = run_json(cfg, "secure", 40)  # the data's size is not public when the catalogue is selected
    assert CATALOGUE_SIZE_FIELD not in json.loads(secure) and catalogue_size_from_json(secure) is None
    assert catalogue_from_json(secure) == "secure"
    assert catalogue_from_json(dumps(cfg.to_dict())) == "declared"  # a JSON that does not say
    with pytest.raises(ValueError, match="item catalogue"):
        run_json(cfg, "selected", 40)


def test_the_run_config_read_back_is_the_one_sent():
    cfg = RunConfig(method="dp-popularity", epsilon=0.5, delta=1e-7, aggregation="secure", max_dropouts=1)
    assert config_from_json(run_json(cfg, "declared", 40)) == cfg
    free = RunConfig(method="kmeans", epsilon=math.inf)
    assert config_from_json(run_json(free, "declared", 40)).epsilon == math.inf


def test_packed_public_arrays_come_back_as_sent_and_an_object_array_is_refused():
    arrays = {"items": np.array([3, 1, 4]), "V": np.arange(6.0).reshape(2, 3).T}
    back = unpack_arrays(pack_arrays(arrays))
    assert sorted(back) == ["V", "items"]
    for k, v in arrays.items():
        np.testing.assert_array_equal(back[k], v)
    with pytest.raises(ValueError):  # nothing executable travels
        unpack_arrays(pack_arrays({"x": np.array([{"a": 1}], dtype=object)}))
