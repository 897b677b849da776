"""Data movement (Concat, Split, Slice, Pad, Tile, Permute, Gather, nearest Resample) on the
CPU vs the reference interpreter, over f32, f16, i32, i64 and bool tensors."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.dialects.nn import Concat, Gather, Pad, Permute, Resample, Slice, Split, Tile
from tests.backends.cpu.conftest import check_op, run_cpu
from tests.helpers import one_op_model, rand

DTYPES = [np.float32, np.float16, np.int32, np.int64, np.bool_]


def data(*shape: int, dtype=np.float32, seed: int = 0) -> np.ndarray:  # type: ignore[no-untyped-def]
    values = rand(*shape, seed=seed, low=-50, high=50)
    return (values > 0) if dtype == np.bool_ else values.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,axis", [([(2, 3, 4), (2, 5, 4)], 1), ([(3, 7), (3, 1), (3, 33)], -1), ([(1, 2), (4, 2)], 0)])
def test_concat(shapes, axis, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Concat, [data(*s, dtype=dtype, seed=i) for i, s in enumerate(shapes)], [], cache_dir, axis=axis)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,lengths", [((2, 9, 5), 1, [2, 3, 4]), ((4, 37), 1, [17, 20]), ((6, 2), 0, [1, 5])])
def test_split(shape, axis, lengths, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    x = data(*shape, dtype=dtype)
    model = one_op_model(Split, [x], [], num_results=len(lengths), axis=axis, split_lengths=lengths)
    want, got = run(model, {"x0": x}), run_cpu(model, {"x0": x}, cache_dir)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


SLICES = [
    dict(begins=[1], ends=[3], axes=[1]),
    dict(begins=[0, 2], ends=[2, 100], axes=[0, 2]),
    dict(begins=[-1, 5], ends=[-1000, 0], axes=[1, 2], steps=[-1, -2]),
    dict(begins=[1, 0, 1], ends=[2, 4, 9], steps=[1, 3, 2]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
@pytest.mark.parametrize("props", SLICES)
def test_slice(props, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Slice, [data(3, 5, 9, dtype=dtype)], [], cache_dir, **props)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.bool_])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize("begin,end", [([0, 1, 2, 2], [0, 2, 1, 3]), ([1, 0, 0, 0], [0, 0, 3, 0])])
def test_pad(mode, begin, end, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Pad, [data(2, 3, 5, 6, dtype=dtype)], [], cache_dir, pads_begin=begin, pads_end=end, mode=mode, value=1.5)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("shape,repeats", [((2, 3), [2, 3]), ((1, 4, 5), [3, 1, 2]), ((2, 1, 7), [1, 5, 1])])
def test_tile(shape, repeats, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Tile, [data(*shape, dtype=dtype)], [], cache_dir, repeats=repeats)


@pytest.mark.parametrize("dtype", [np.int32, np.float16, np.bool_])
def test_permute_other_types(dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Permute, [data(2, 3, 4, 5, dtype=dtype)], [], cache_dir, order=[0, 3, 1, 2])


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("shape,indices,props", [
    ((5, 4), [[0, 4], [-1, 2]], {}),
    ((2, 6, 3), [5, 0, -6, 2], dict(axis=1)),
    ((2, 5, 3), [[1, 4], [0, 0]], dict(axis=1, batch_dims=1)),
    ((3, 40), [7], dict(axis=-1)),
])
def test_gather(shape, indices, props, dtype, index_dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    index = np.array(indices, index_dtype)
    check_op(Gather, [data(*shape, dtype=dtype), index], [], cache_dir, **props)
    check_op(Gather, [data(*shape, dtype=dtype)], [index], cache_dir, **props)


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
@pytest.mark.parametrize("props", [
    dict(scales=[1.0, 1.0, 2.0, 2.0]),
    dict(sizes=[1, 2, 7, 3], coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    dict(scales=[1.0, 1.0, 1.7, 0.6], coordinate_transformation_mode="align_corners", nearest_mode="round_prefer_ceil"),
])
def test_resample_nearest(props, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Resample, [data(1, 2, 5, 6, dtype=dtype)], [], cache_dir, mode="nearest", **props)
