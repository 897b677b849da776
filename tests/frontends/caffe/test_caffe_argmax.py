"""Caffe's ArgMax with top_k, out_max_val and axis, against numpy written from Caffe's
argmax_layer.cpp (std::partial_sort of (value, index) pairs with std::greater: of equal values
the larger index first); on the reference interpreter, and for the TopK form on the CPU backend
and OpenVINO running the written IR."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.caffe import import_caffe
from tests.backends.cpu.conftest import cache_dir, run_cpu  # noqa: F401  (cache_dir: the fixture)
from tests.backends.ir_xml_support import run_openvino
from tests.frontends.caffe.caffe_files import write_caffe


def caffe_argmax(x: np.ndarray, top_k: int = 1, out_max_val: bool = False, axis: int | None = None) -> np.ndarray:
    """Caffe's ArgMaxLayer Reshape and Forward_cpu."""
    shape = list(x.shape)
    if axis is not None:
        axis %= x.ndim
        dim, axis_dist = shape[axis], int(np.prod(shape[axis:])) // shape[axis]
        out_shape = [*shape[:axis], top_k, *shape[axis + 1 :]]
    else:
        dim, axis_dist = int(np.prod(shape[1:])), 1
        out_shape = [shape[0], 2 if out_max_val else 1, top_k, *[1] * (max(x.ndim, 3) - 3)]
    flat, top = x.ravel(), np.zeros(int(np.prod(out_shape)), np.float32)
    for i in range(x.size // dim):
        pairs = sorted(((flat[(i // axis_dist * dim + j) * axis_dist + i % axis_dist], j) for j in range(dim)), reverse=True)
        for j in range(top_k):
            at = (i // axis_dist * top_k + j) * axis_dist + i % axis_dist
            if out_max_val and axis is not None:
                top[at] = pairs[j][0]
            elif out_max_val:
                top[2 * i * top_k + j], top[2 * i * top_k + top_k + j] = pairs[j][1], pairs[j][0]
            else:
                top[at] = pairs[j][1]
    return top.reshape(out_shape)


def x_with_ties() -> np.ndarray:
    x = np.random.default_rng(0).standard_normal((2, 5, 3, 4)).astype(np.float32)
    x[0, 1, 0, 0] = x[0, 3, 0, 0]  # a tie along C
    x[1, :, 1, 1] = x[1, 2, 1, 1]  # a whole column equal
    x[1, 0, 0, :2] = x[1, 0, 0, 3]  # a tie along W
    return x


PARAMS = {
    "": {},
    "top_k: 3": {"top_k": 3},
    "out_max_val: true": {"out_max_val": True},
    "top_k: 4 out_max_val: true": {"top_k": 4, "out_max_val": True},
    "axis: 1": {"axis": 1},
    "axis: 1 top_k: 2": {"axis": 1, "top_k": 2},
    "axis: 1 top_k: 3 out_max_val: true": {"axis": 1, "top_k": 3, "out_max_val": True},
    "axis: -1 top_k: 2": {"axis": -1, "top_k": 2},
}


def argmax_model(tmp_path: Path, params: str):  # type: ignore[no-untyped-def]
    text = f'input: "x"\ninput_shape {{ dim: 2 dim: 5 dim: 3 dim: 4 }}\nlayer {{ name: "a" type: "ArgMax" bottom: "x" top: "y" argmax_param {{ {params} }} }}\n'
    model_path, _ = write_caffe(tmp_path, "net", text, {})
    return import_caffe(model_path)


@pytest.mark.parametrize("params", list(PARAMS))
def test_argmax_matches_caffe(tmp_path: Path, params: str) -> None:
    x = x_with_ties()
    got = run(argmax_model(tmp_path, params), {"x": x})["y"]
    want = caffe_argmax(x, **PARAMS[params])
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("params", ["top_k: 4 out_max_val: true", "axis: 1 top_k: 2"])
def test_argmax_top_k_on_cpu_and_openvino(tmp_path: Path, cache_dir, params: str) -> None:  # type: ignore[no-untyped-def]
    x = x_with_ties()
    model = argmax_model(tmp_path, params)
    want = caffe_argmax(x, **PARAMS[params])
    np.testing.assert_array_equal(run_cpu(model, {"x": x}, cache_dir)["y"], want)
    xml, _ = write_ir_xml(model, tmp_path / "net.xml")
    np.testing.assert_array_equal(run_openvino(xml, {"x": x})["y"], want)


def test_top_k_beyond_the_values_is_refused(tmp_path: Path) -> None:
    from irforge.errors import IrforgeError

    with pytest.raises(IrforgeError, match=r"top_k 6 must be in \[1, 5\]"):
        argmax_model(tmp_path, "axis: 1 top_k: 6")
