# SPDX-License-Identifier: BSD-3-Clause
"""Lifetimes both ways, freed in every order. Run under AddressSanitizer by
tools/dev test (build-asan's libloom, libasan preloaded): a use after free
or a double free in any order fails the run, not only this test."""
import gc
import itertools
import weakref

import numpy as np
import pytest

import loom
from conftest import torch_or_skip


def fresh_output(n=1000):
    """An op's output (loom memory), its inputs gone when the call returns."""
    x = np.arange(n, dtype=np.float32)
    return loom.ops.core.add(loom.from_dlpack(x), loom.from_dlpack(x))


def test_output_outlives_the_call_and_its_inputs():
    t = fresh_output()
    gc.collect()
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(1000, dtype=np.float32) * 2)


def test_imported_numpy_memory_lives_while_loom_holds_it():
    a = np.arange(100, dtype=np.float64)
    alive = weakref.ref(a)
    t = loom.from_dlpack(a)
    del a
    gc.collect()
    assert alive() is not None             # loom's tensor holds NumPy's through the deleter
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(100, dtype=np.float64))
    del t
    gc.collect()
    assert alive() is None                 # loom_tensor_free ran NumPy's deleter


@pytest.mark.parametrize("order", list(itertools.permutations(["loom", "np_dlpack", "np_asarray"])))
def test_loom_output_and_numpy_consumers_free_in_any_order(order):
    t = fresh_output()
    alive = weakref.ref(t)
    held = {"loom": t, "np_dlpack": np.from_dlpack(t), "np_asarray": np.asarray(t)}
    del t
    want = np.arange(1000, dtype=np.float32) * 2
    for i, name in enumerate(order):
        del held[name]
        gc.collect()
        for other in held.values():        # the rest still read the memory
            np.testing.assert_array_equal(np.from_dlpack(other) if isinstance(other, loom.Tensor) else other, want)
        other = None
        assert (alive() is None) == (i == len(order) - 1)
    assert loom._dlpack.live_exports() == 0


@pytest.mark.parametrize("order", list(itertools.permutations(["loom", "torch1", "torch2", "np"])))
def test_loom_output_and_torch_consumers_free_in_any_order(order):
    torch = torch_or_skip()
    t = fresh_output()
    alive = weakref.ref(t)
    held = {"loom": t, "torch1": torch.from_dlpack(t), "torch2": torch.from_dlpack(t), "np": np.from_dlpack(t)}
    del t
    for i, name in enumerate(order):
        del held[name]
        gc.collect()
        for other in held.values():
            assert float(np.asarray(other if not isinstance(other, torch.Tensor) else other.numpy())[10]) == 20.0
        other = None
        assert (alive() is None) == (i == len(order) - 1)
    assert loom._dlpack.live_exports() == 0


def test_torch_memory_imported_into_loom():
    torch = torch_or_skip()
    x = torch.arange(10, dtype=torch.float32)
    t = loom.from_dlpack(x)
    del x
    gc.collect()
    assert torch.from_dlpack(t)[9].item() == 9.0
    y = torch.from_dlpack(t)
    del t
    gc.collect()
    assert y[9].item() == 9.0


def test_op_results_in_torch_free_with_torch():
    torch = torch_or_skip()
    b = torch.rand(50, 4) * 10
    b[:, 2:] += b[:, :2]
    for _ in range(3):
        y = loom.ops.vision.box_iou(b, b)
        z = y[1:3]                          # a view keeps loom's memory alive too
        del y
        gc.collect()
        assert z.shape == (2, 50) and float(z[0, 1]) == pytest.approx(float(z[0, 1]))


def test_untaken_capsule_is_released():
    t = fresh_output()
    alive = weakref.ref(t)
    capsule = t.__dlpack__(max_version=(1, 0))
    del t, capsule                          # nobody took it
    assert loom._dlpack.live_exports() == 0
    gc.collect()
    assert alive() is None


def test_a_held_capsule_is_not_released_before_it_is_taken():
    t = fresh_output(8)
    capsule = t.__dlpack__(max_version=(1, 0))
    del t
    loom._dlpack._sweep()                   # another export's sweep runs meanwhile
    assert loom._dlpack.live_exports() == 1
    class Holder:                           # hands the capsule held all along to loom
        def __init__(self, capsule):
            self.capsule = capsule

        def __dlpack__(self, **kwargs):
            return self.capsule

        def __dlpack_device__(self):
            return (1, 0)
    holder = Holder(capsule)
    del capsule
    view = loom.from_dlpack(holder)
    del holder
    np.testing.assert_array_equal(np.from_dlpack(view), np.arange(8, dtype=np.float32) * 2)
    del view
    gc.collect()
    assert loom._dlpack.live_exports() == 0


def test_freed_input_tensor_is_refused():
    t = fresh_output(4)
    t.__del__()                             # as at interpreter shutdown: the tensor is gone
    with pytest.raises(ValueError, match="freed"):
        loom.ops.core.add(t, t)
    with pytest.raises(BufferError):
        t.__dlpack__()


def test_a_bad_input_frees_the_ones_imported_before_it():
    a = np.arange(4, dtype=np.float32)
    alive = weakref.ref(a)
    with pytest.raises(TypeError, match="input 'other'"):
        loom.ops.core.add(a, "not a tensor")
    del a
    gc.collect()
    assert alive() is None                  # 'input' was imported, then freed with the failure


def _popped_chunks(n_chunks):
    """Chunks of a lavfi testsrc, popped as the reader's own memory (ABI 1.6:
    the op adopts the reader's chunk blocks), the reader closed after."""
    try:
        r = loom.Object("audio.stream_reader", src="testsrc=size=32x24:rate=10:duration=1", format="lavfi")
    except loom.Error as e:
        pytest.skip(f"audio.stream_reader is not available here: {e}")
    r.stream_reader_add_basic_video_stream(frames_per_chunk=2, buffer_chunk_size=-1)
    r.stream_reader_process_all_packets()
    chunks = [r.stream_reader_pop_chunk()[0] for _ in range(n_chunks)]
    r.close()
    return chunks


def _consumers_free_in_any_order(order, make_views):
    chunks = _popped_chunks(3)
    want = [np.array(np.from_dlpack(c), copy=True) for c in chunks]
    assert all(w.shape == (2, 3, 24, 32) for w in want)
    assert not np.array_equal(want[0], want[1])
    for k, c in enumerate(chunks):
        held = {"loom": c, **make_views(c)}
        chunks[k] = c = None
        for name in order:
            del held[name]
            gc.collect()
            for other in held.values():    # the rest still read the block the reader lent
                got = np.from_dlpack(other) if isinstance(other, loom.Tensor) else np.asarray(other)
                np.testing.assert_array_equal(got, want[k])
            other = got = None
    assert loom._dlpack.live_exports() == 0


@pytest.mark.parametrize("order", list(itertools.permutations(["loom", "np_dlpack", "np_asarray"])))
def test_adopted_outputs_outlive_their_reader_in_numpy(order):
    _consumers_free_in_any_order(order, lambda c: {"np_dlpack": np.from_dlpack(c), "np_asarray": np.asarray(c)})


@pytest.mark.parametrize("order", list(itertools.permutations(["loom", "np", "torch"])))
def test_adopted_outputs_outlive_their_reader_in_torch(order):
    torch = torch_or_skip()
    _consumers_free_in_any_order(order, lambda c: {"np": np.from_dlpack(c), "torch": torch.from_dlpack(c)})


def test_a_decoded_stream_is_the_readers_buffer():
    try:
        t, _ = loom.ops.audio.stream_decode(src="sine=frequency=1000:sample_rate=8000:duration=0.5", format="lavfi")
    except loom.Error as e:
        pytest.skip(f"audio.stream_decode is not available here: {e}")
    a = np.from_dlpack(t)
    want = np.array(a, copy=True)
    del t
    gc.collect()
    assert a.shape == (4000, 1) and a.dtype == np.float32
    assert 0.1 < float(np.abs(want).max()) <= 0.125 + 1e-6     # lavfi's sine: amplitude 1/8
    np.testing.assert_array_equal(a, want)                     # the reader's buffer, alive through NumPy's view
    del a
    gc.collect()
    assert loom._dlpack.live_exports() == 0
