"""The weight store: file round trip, atomic saves, corruption errors, memory behaviour."""

import tracemalloc

import numpy as np
import pytest

from irforge.builder import ModelBuilder
from irforge.errors import IrforgeError
from irforge.model import load_model, save_model
from irforge.weights import WeightStore
from irforge.weights.store import ALIGNMENT


def test_round_trip_keeps_dtype_shape_and_bytes(tmp_path):
    store = WeightStore()
    arrays = {
        "w.f32": np.arange(24, dtype=np.float32).reshape(2, 3, 4),
        "w.f16": np.linspace(-1, 1, 7).astype(np.float16),
        "idx": np.array([3, -1], dtype=np.int64),
        "mask": np.array([True, False, True]),
        "scalar": np.array(2.5, dtype=np.float32),
    }
    names = {k: store.add(v, k) for k, v in arrays.items()}
    store.save(tmp_path / "m.weights")
    loaded = WeightStore.open(tmp_path / "m.weights")
    for key, array in arrays.items():
        got = loaded[names[key]]
        assert got.dtype == array.dtype and got.shape == array.shape
        np.testing.assert_array_equal(got, array)
        assert not got.flags.writeable


def test_blobs_are_aligned_like_an_openvino_bin(tmp_path):
    store = WeightStore()
    for n in (3, 17, 100):
        store.add(np.ones(n, np.float32), "w")
    store.save(tmp_path / "a.weights")
    loaded = WeightStore.open(tmp_path / "a.weights")
    for name in loaded:
        assert loaded[name].ctypes.data % ALIGNMENT == 0


def test_add_makes_fresh_names_and_freezes_arrays():
    store = WeightStore()
    a = np.zeros(4, np.float32)
    assert store.add(a, "w") == "w"
    assert store.add(a, "w") == "w_1"
    with pytest.raises(ValueError):
        store["w"][0] = 1.0


def test_save_selected_entries_only(tmp_path):
    store = WeightStore()
    keep = store.add(np.ones(4, np.float32), "keep")
    store.add(np.ones(4, np.float32), "drop")
    store.save(tmp_path / "s.weights", [keep])
    assert list(WeightStore.open(tmp_path / "s.weights")) == [keep]


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "bad magic"),
        (b"NOTMAGIC" + b"\0" * 8, "bad magic"),
        (b"IRFWGT01" + (1000).to_bytes(8, "little"), "truncated"),
        (b"IRFWGT01" + (3).to_bytes(8, "little") + b"{x}", "corrupt index"),
    ],
)
def test_corrupt_files_give_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.weights"
    path.write_bytes(content)
    with pytest.raises(IrforgeError, match=message) as info:
        WeightStore.open(path)
    assert "\n" not in str(info.value)


def test_truncated_blob_is_detected(tmp_path):
    store = WeightStore()
    store.add(np.ones(1000, np.float32), "w")
    path = tmp_path / "t.weights"
    store.save(path)
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(IrforgeError, match="truncated or corrupt"):
        WeightStore.open(path)


def test_missing_file():
    with pytest.raises(IrforgeError, match="not found"):
        WeightStore.open("/nonexistent/x.weights")


def test_failed_save_leaves_previous_file_untouched(tmp_path):
    path = tmp_path / "m.weights"
    good = WeightStore()
    good.add(np.ones(4, np.float32), "w")
    good.save(path)
    before = path.read_bytes()
    bad = WeightStore()
    bad.add(np.ones(4, np.float32), "w")
    with pytest.raises(IrforgeError):
        bad.save(path, ["missing"])
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.weights"]


def test_25m_parameter_constant_costs_bytes_not_python_objects(tmp_path):
    """A 100 MB constant through build -> save -> load -> read allocates no per-element objects."""
    n = 25_000_000
    weights = np.ones(n, dtype=np.float32)
    tracemalloc.start()
    try:
        b = ModelBuilder()
        x = b.input("x", [1], np.float32)
        b.output(b.constant(weights, "big"), "w")
        b.output(x, "x_out")
        model = b.finish()
        save_model(model, tmp_path / "big.mlir")
        loaded = load_model(tmp_path / "big.mlir")
        total = float(loaded.store["big"].sum(dtype=np.float64))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == n
    # per-element Python floats would cost > 24 bytes each (600 MB); allow 5% of the 100 MB
    assert peak < 0.05 * weights.nbytes, f"peak traced memory {peak / 1e6:.1f} MB"
    assert (tmp_path / "big.weights").stat().st_size >= weights.nbytes
