# SPDX-License-Identifier: BSD-3-Clause
"""loom.Object: a TBE lookup equal to fbgemm_gpu's goldens, methods as
attributes, deterministic frees."""
import numpy as np
import pytest

import loom
from conftest import data


def tbe(**attrs):
    return loom.Object("fbgemm.tbe", weights=data("fbgemm", "tbe", "tables_fp32_pooled.safetensors"),
                       weights_tys="fp32,fp32,fp32", feature_table_map=[0, 1, 0, 2], **attrs)


def case(name):
    return [np.load(data("fbgemm", "tbe", f"{name}_{part}.npy")) for part in ("indices", "offsets", "out")]


def test_tbe_lookup_equals_fbgemm():
    indices, offsets, want = case("fp32_sum_nw")
    with tbe(pooling_mode="sum") as obj:
        got = obj(indices, offsets)                         # the method named like the class
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(obj.tbe(indices, offsets), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(loom.ops.fbgemm.tbe(indices, offsets, object=obj), want, rtol=1e-5, atol=1e-6)


def test_tbe_mean_by_call_attribute():
    indices, offsets, want = case("fp32_mean_nw")
    with tbe() as obj:
        np.testing.assert_allclose(obj(indices, offsets, pooling_mode="mean"), want, rtol=1e-5, atol=1e-6)


def test_methods_are_attributes():
    with tbe() as obj:
        assert set(obj.methods) == {"tbe", "tbe_prefetch", "tbe_cache_stats", "tbe_backward", "tbe_save", "tbe_state"}
        assert "tbe_cache_stats" in dir(obj)
        assert obj.tbe_cache_stats.__doc__.startswith("i64 [8] cache counters")
        with pytest.raises(AttributeError, match="did you mean 'tbe_prefetch'"):
            obj.tbe_prefetc


def test_close_frees_deterministically():
    indices, offsets, _ = case("fp32_sum_nw")
    obj = tbe()
    assert "1 live objects" in loom.doctor() or " live objects" in loom.doctor()
    obj.close()
    assert obj.closed
    obj.close()                                             # twice is fine
    with pytest.raises(ValueError, match="closed"):
        obj(indices, offsets)
    with pytest.raises(TypeError, match="method of fbgemm.tbe.*not str"):
        loom.ops.fbgemm.tbe(indices, offsets, object="tbe")
    with tbe() as obj2:
        pass
    assert obj2.closed
    assert "0 live objects" in [l for l in loom.doctor().splitlines() if "pack fbgemm" in l and "live objects" in l][0]


def test_object_errors():
    with pytest.raises(FileNotFoundError, match="nonexistent"):
        loom.Object("fbgemm.tbe", weights="/nonexistent/tables.safetensors")
    with pytest.raises(loom.NotFoundError, match="did you mean 'fbgemm.tbe'"):
        loom.Object("fbgemm.tbf")
    with pytest.raises(TypeError, match="did you mean 'pooling_mode'"):
        tbe(poolingmode="sum")
    with pytest.raises(ValueError, match="pooling_mode"):
        tbe(pooling_mode="max")


def test_object_method_results_follow_the_input_kind():
    indices, offsets, want = case("fp32_sum_nw")
    with tbe() as obj:
        t = obj(loom.from_dlpack(indices), loom.from_dlpack(offsets))
        assert isinstance(t, loom.Tensor)
        np.testing.assert_allclose(np.from_dlpack(t), want, rtol=1e-5, atol=1e-6)


def test_object_from_arrays_equals_numpy():
    """Weights given as arrays (ABI 1.3) instead of a file: core.linear."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((5, 8), dtype=np.float32)
    b = rng.standard_normal(5, dtype=np.float32)
    x = rng.standard_normal((3, 8), dtype=np.float32)
    with loom.Object("core.linear", weights={"weight": w, "bias": b}) as lin:
        y = np.from_dlpack(lin(x))
    # K = 8 products: float32 rounding stays below 1e-5 for these O(1) values
    np.testing.assert_allclose(y, x @ w.T + b, rtol=0, atol=1e-5)
    with pytest.raises(loom.InvalidArgumentError, match="no tensor 'weight'"):
        loom.Object("core.linear", weights={"bias": b})


def test_attributes_as_a_mapping():
    indices, offsets, want = case("fp32_sum_nw")
    with loom.Object("fbgemm.tbe", data("fbgemm", "tbe", "tables_fp32_pooled.safetensors"),
                     attrs={"weights_tys": "fp32,fp32,fp32", "feature_table_map": [0, 1, 0, 2]},
                     pooling_mode="sum") as obj:
        np.testing.assert_allclose(obj(indices, offsets), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="'pooling_mode' given both in attrs and as a keyword"):
        tbe(attrs={"pooling_mode": "sum"}, pooling_mode="mean")
    with pytest.raises(TypeError, match="attrs must be a mapping"):
        tbe(attrs=["pooling_mode"])


def test_weight_entry_is_an_attribute_not_the_file():
    # vision models name their multi-weight entry with the attribute `weights`;
    # the constructor's weights= is the file, and an entry name there is refused
    # with the way to say it
    with pytest.raises(FileNotFoundError, match=r"attrs=\{'weights': 'IMAGENET1K_V1'\}"):
        loom.Object("vision.resnet18", "IMAGENET1K_V1")
    # the entry through attrs reaches the class, which names its entries for one it lacks
    tiny = data("vision", "models", "tiny_resnet_basic", "model.safetensors")
    with pytest.raises(loom.Error, match="no weight entry 'IMAGENET1K_V9': its entries are IMAGENET1K_V1"):
        loom.Object("vision.resnet18", tiny, attrs={"weights": "IMAGENET1K_V9"})
