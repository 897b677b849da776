"""nn.concat, nn.split, nn.reshape, nn.flatten, nn.permute, nn.squeeze, nn.unsqueeze,
nn.slice, nn.tile, nn.pad and nn.gather: shape inference (dynamic dims included), verifier
and numerics against onnxruntime (or numpy where ONNX has no counterpart)."""

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import (
    Concat,
    Flatten,
    Gather,
    Pad,
    Permute,
    Reshape,
    Slice,
    Split,
    Squeeze,
    Tile,
    Unsqueeze,
)
from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from tests.helpers import onnx_run, rand, run_op

INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)
DTYPES = [np.float32, np.float16, np.int32, np.int64, np.bool_]


def data(shape, dtype=np.float32, seed=0):
    """Random test data of `dtype` (floats in [-1, 1), ints in [-50, 50), bools)."""
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, shape).astype(dtype)
    return rand(*shape, seed=seed).astype(dtype)


def i64(values):
    return np.array(values, np.int64)


def infer(cls, inputs, num_results=1, **props):
    """Inferred result shapes of `cls` on inputs given as shapes or (shape, dtype) pairs."""
    b = ModelBuilder()
    args = [
        b.input(f"x{i}", *(spec if isinstance(spec[0], tuple) else (spec,)))
        for i, spec in enumerate(inputs)
    ]
    op = b.add(cls, args, num_results=num_results, **props)
    return [tuple(r.type.get_shape()) for r in op.results]


def assert_same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


# -- Concat ------------------------------------------------------------------------------
CONCAT_CASES = [
    ([(5,), (3,)], 0),
    ([(2, 3), (2, 5)], 1),
    ([(1, 2, 3), (4, 2, 3), (2, 2, 3)], 0),
    ([(2, 3, 4), (2, 3, 1)], -1),
    ([(2, 7, 3, 3)], 1),
    ([(1, 2, 1, 2, 3), (1, 2, 3, 2, 3), (1, 2, 2, 2, 3)], -3),
]


@pytest.mark.parametrize("shapes, axis", CONCAT_CASES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_matches_onnxruntime(shapes, axis, dtype):
    xs = [data(s, dtype, seed=i) for i, s in enumerate(shapes)]
    (got,) = run_op(Concat, xs, axis=axis)
    (want,) = onnx_run("Concat", xs, axis=axis)
    assert_same(got, want)


def test_concat_defaults_to_axis_1():
    x, y = rand(2, 3, 4), rand(2, 5, 4, seed=1)
    (got,) = run_op(Concat, [x, y])
    assert_same(got, np.concatenate([x, y], axis=1))


def test_concat_infers_dynamic_dims():
    assert infer(Concat, [(DYN, 3), (2, 4)], axis=1) == [(2, 7)]
    assert infer(Concat, [(DYN, 3), (DYN, DYN)], axis=-1) == [(DYN, DYN)]
    assert infer(Concat, [(2, 3), (DYN, 3)], axis=0) == [(DYN, 3)]


# -- Split -------------------------------------------------------------------------------
SPLIT_CASES = [
    ((7,), 0, [3, 4]),
    ((4, 6), 1, [1, 2, 3]),
    ((5, 3, 2), -3, [2, 3]),
    ((2, 9, 3, 3), 1, [9]),
    ((2, 3, 4, 5, 6), -1, [1, 1, 4]),
]


@pytest.mark.parametrize("x_shape, axis, lengths", SPLIT_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_split_matches_onnxruntime(x_shape, axis, lengths, dtype):
    x = data(x_shape, dtype)
    got = run_op(Split, [x], num_results=len(lengths), axis=axis, split_lengths=lengths)
    want = onnx_run("Split", [x], [i64(lengths)], num_outputs=len(lengths), axis=axis)
    for g, w in zip(got, want):
        assert_same(g, w)


def test_split_allows_empty_parts():
    x = data((2, 5), np.int32)
    got = run_op(Split, [x], num_results=3, axis=1, split_lengths=[0, 5, 0])
    assert [g.shape for g in got] == [(2, 0), (2, 5), (2, 0)]
    assert_same(got[1], x)


def test_split_infers_dynamic_dims():
    assert infer(Split, [(DYN, 6)], num_results=2, axis=1, split_lengths=[2, 4]) == [(DYN, 2), (DYN, 4)]
    assert infer(Split, [(3, DYN)], num_results=2, axis=-1, split_lengths=[5, 1]) == [(3, 5), (3, 1)]


# -- Reshape -----------------------------------------------------------------------------
RESHAPE_CASES = [
    ((2, 3, 4), [0, -1], True),
    ((2, 3, 4), [4, -1], True),
    ((2, 3, 4), [-1], True),
    ((2, 3, 4), [2, 0, 2, 2], True),
    ((2, 3, 4), [0, 0, 0], True),
    ((2, 3, 4), [3, 1, 8], False),
    ((24,), [1, 2, 1, 12, 1], True),
    ((1, 2, 3, 4, 5), [6, -1], True),
    ((5, 1, 7), [-1, 5, 1], False),
    ((0, 3), [3, 0], False),
]


@pytest.mark.parametrize("x_shape, shape, special_zero", RESHAPE_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_reshape_matches_onnxruntime(x_shape, shape, special_zero, dtype):
    x = data(x_shape, dtype)
    (got,) = run_op(Reshape, [x], shape=shape, special_zero=special_zero)
    (want,) = onnx_run("Reshape", [x], [i64(shape)], opset=14, allowzero=int(not special_zero))
    assert_same(got, want)


def test_reshape_special_zero_defaults_to_true():
    (got,) = run_op(Reshape, [rand(2, 3, 4)], shape=[0, 12])
    assert got.shape == (2, 12)


def test_reshape_infers_dynamic_dims():
    assert infer(Reshape, [(DYN, 3, 4)], shape=[0, -1]) == [(DYN, 12)]
    assert infer(Reshape, [(DYN, 3, 4)], shape=[-1, 4]) == [(DYN, 4)]
    assert infer(Reshape, [(2, DYN, 4)], shape=[8, -1]) == [(8, DYN)]
    assert infer(Reshape, [(DYN, 6)], shape=[0, 2, 3]) == [(DYN, 2, 3)]
    assert infer(Reshape, [(DYN, 6)], shape=[2, 0, -1]) == [(2, 6, DYN)]


# -- Flatten -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x_shape, axis",
    [((7,), 0), ((7,), 1), ((2, 3, 4, 5), 0), ((2, 3, 4, 5), 2), ((2, 3, 4, 5), -1), ((2, 3, 4, 5), 4),
     ((2, 3, 4, 5), -4), ((1, 2, 3, 2, 1), None)],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.float16, np.int64])
def test_flatten_matches_onnxruntime(x_shape, axis, dtype):
    x = data(x_shape, dtype)
    (got,) = run_op(Flatten, [x], axis=axis)
    (want,) = onnx_run("Flatten", [x], axis=1 if axis is None else axis)
    assert_same(got, want)


def test_flatten_infers_dynamic_dims():
    assert infer(Flatten, [(DYN, 3, 4)]) == [(DYN, 12)]
    assert infer(Flatten, [(2, DYN, 4)], axis=2) == [(DYN, 4)]
    assert infer(Flatten, [(2, 3, DYN)], axis=-3) == [(1, DYN)]


# -- Permute -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x_shape, order",
    [((5,), [0]), ((3, 4), [1, 0]), ((2, 3, 4), [2, 0, 1]), ((2, 3, 4, 5), [0, 2, 3, 1]),
     ((1, 2, 3, 4, 5), [4, 1, 3, 0, 2])],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_permute_matches_onnxruntime(x_shape, order, dtype):
    x = data(x_shape, dtype)
    (got,) = run_op(Permute, [x], order=order)
    (want,) = onnx_run("Transpose", [x], perm=order)
    assert_same(got, want)


def test_permute_infers_dynamic_dims():
    assert infer(Permute, [(DYN, 3, DYN, 5)], order=[0, 2, 3, 1]) == [(DYN, DYN, 5, 3)]


# -- Squeeze / Unsqueeze -------------------------------------------------------------------
@pytest.mark.parametrize(
    "x_shape, axes",
    [((1, 3, 1, 5), [0]), ((1, 3, 1, 5), [-2, 0]), ((1, 3, 1, 5), None), ((1,), [0]),
     ((2, 1, 1, 1, 3), [1, 3])],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.float32, np.bool_])
def test_squeeze_matches_onnxruntime(x_shape, axes, dtype):
    x = data(x_shape, dtype)
    (got,) = run_op(Squeeze, [x], axes=axes)
    (want,) = onnx_run("Squeeze", [x], [] if axes is None else [i64(axes)], opset=13)
    assert_same(got, want)


def test_squeeze_infers_dynamic_dims():
    assert infer(Squeeze, [(DYN, 1, 4)]) == [(DYN, 4)]
    assert infer(Squeeze, [(DYN, 1, 4)], axes=[0, 1]) == [(4,)]
    assert infer(Squeeze, [(1, DYN)], axes=[]) == [(DYN,)]


@pytest.mark.parametrize(
    "x_shape, axes",
    [((), [0]), ((3,), [0, 2]), ((3, 4), [-1]), ((2, 3, 4), [1, -1]), ((2, 3, 4), [4, 0]),
     ((2, 3, 4, 5), [2])],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.float16, np.int64])
def test_unsqueeze_matches_onnxruntime(x_shape, axes, dtype):
    x = np.asarray(data(x_shape, dtype))
    (got,) = run_op(Unsqueeze, [x], axes=axes)
    (want,) = onnx_run("Unsqueeze", [x], [i64(axes)], opset=13)
    assert_same(got, want)


def test_unsqueeze_infers_dynamic_dims():
    assert infer(Unsqueeze, [(DYN, 3)], axes=[0, -1]) == [(1, DYN, 3, 1)]


# -- Slice -------------------------------------------------------------------------------
SLICE_CASES = [
    ((10,), [2], [7], None, None),
    ((10,), [-3], [INT64_MAX], None, None),
    ((10,), [-1], [INT64_MIN], None, [-1]),
    ((10,), [20], [-20], None, [-3]),
    ((10,), [-20], [20], None, [3]),
    ((10,), [5], [2], None, None),
    ((4, 6), [1, 1], [3, -1], None, None),
    ((4, 6), [0], [INT64_MAX], [1], [2]),
    ((2, 3, 8, 9), [1, 2], [7, 8], [2, 3], None),  # a Crop of the spatial dims
    ((2, 3, 8, 9), [5, -1], [1, 0], [-1, 2], [-2, -1]),
    ((1, 2, 3, 4, 5), [1, 4], [INT64_MAX, 0], [-1, 0], [2, 1]),
]


@pytest.mark.parametrize("x_shape, begins, ends, axes, steps", SLICE_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_slice_matches_onnxruntime(x_shape, begins, ends, axes, steps, dtype):
    x = data(x_shape, dtype)
    (got,) = run_op(Slice, [x], begins=begins, ends=ends, axes=axes, steps=steps)
    consts = [i64(begins), i64(ends)]
    if axes is not None or steps is not None:
        consts.append(i64(axes if axes is not None else range(len(begins))))
    if steps is not None:
        consts.append(i64(steps))
    (want,) = onnx_run("Slice", [x], consts, opset=13)
    assert_same(got, want)


def test_slice_infers_dynamic_dims():
    assert infer(Slice, [(DYN, 8)], begins=[1], ends=[-1], axes=[1]) == [(DYN, 6)]
    assert infer(Slice, [(DYN, 8)], begins=[1, 0], ends=[3, 8], steps=[1, 3]) == [(DYN, 3)]


# -- Tile --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x_shape, repeats",
    [((3,), [4]), ((2, 3), [1, 1]), ((2, 3), [3, 2]), ((2, 1, 3), [1, 5, 0]),
     ((1, 2, 1, 2, 1), [2, 1, 3, 1, 2])],
)  # fmt: skip
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_tile_matches_onnxruntime(x_shape, repeats, dtype):
    x = data(x_shape, dtype)
    (got,) = run_op(Tile, [x], repeats=repeats)
    (want,) = onnx_run("Tile", [x], [i64(repeats)])
    assert_same(got, want)


def test_tile_infers_dynamic_dims():
    assert infer(Tile, [(DYN, 3)], repeats=[2, 2]) == [(DYN, 6)]
    assert infer(Tile, [(DYN, 3)], repeats=[0, 1]) == [(0, 3)]


# -- Pad ---------------------------------------------------------------------------------
PAD_CASES = [
    ((5,), [2], [1]),
    ((3, 4), [0, 1], [2, 3]),
    ((2, 3, 4), [1, 0, 2], [0, 2, 1]),
    ((1, 2, 3, 4, 5), [0, 1, 2, 0, 1], [0, 0, 1, 3, 4]),
]


@pytest.mark.parametrize("x_shape, begin, end", PAD_CASES)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pad_matches_onnxruntime(x_shape, begin, end, mode, dtype):
    x = data(x_shape, dtype)
    (got,) = run_op(Pad, [x], pads_begin=begin, pads_end=end, mode=mode, value=2.0)
    consts = [i64(begin + end)] + ([np.array(2, dtype)] if mode == "constant" else [])
    (want,) = onnx_run("Pad", [x], consts, mode=mode)
    assert_same(got, want)


@pytest.mark.parametrize("x_shape, begin, end", PAD_CASES)
def test_pad_symmetric_matches_numpy(x_shape, begin, end):
    x = rand(*x_shape)
    (got,) = run_op(Pad, [x], pads_begin=begin, pads_end=end, mode="symmetric")
    assert_same(got, np.pad(x, list(zip(begin, end)), mode="symmetric"))


def test_pad_defaults_to_zeros_and_casts_the_value():
    x = data((2, 2), np.bool_)
    (got,) = run_op(Pad, [x], pads_begin=[1, 0], pads_end=[0, 1])
    assert_same(got, np.pad(x, [(1, 0), (0, 1)]))
    (got,) = run_op(Pad, [x], pads_begin=[1, 0], pads_end=[0, 1], value=1.0)
    assert_same(got, np.pad(x, [(1, 0), (0, 1)], constant_values=True))


def test_pad_infers_dynamic_dims():
    assert infer(Pad, [(DYN, 3)], pads_begin=[1, 1], pads_end=[2, 0], mode="reflect") == [(DYN, 4)]


# -- Gather ------------------------------------------------------------------------------
GATHER_CASES = [
    ((5,), [3, 0, -1], 0),
    ((4, 3), [[0, 2], [-1, 1]], 0),
    ((4, 3), [2, -3], 1),
    ((2, 3, 4), 1, -1),
    ((2, 3, 4), [[[1]], [[0]]], -2),
    ((1, 2, 3, 4, 5), [4, 0, 2], 4),
]


@pytest.mark.parametrize("x_shape, indices, axis", GATHER_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.bool_])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather_matches_onnxruntime(x_shape, indices, axis, dtype, index_dtype):
    x, idx = data(x_shape, dtype), np.array(indices, index_dtype)
    (got,) = run_op(Gather, [x], [idx], axis=axis)
    (want,) = onnx_run("Gather", [x], [idx], axis=axis)
    assert_same(got, want)


def gather_batched(x, idx, axis, batch_dims):
    """out[b, p, i, s] = x[b, p, idx[b, i], s] by looping over the batch dims."""
    if batch_dims == 0:
        return np.take(x, np.where(idx < 0, idx + x.shape[axis], idx), axis=axis)
    return np.stack([gather_batched(xb, ib, axis - 1, batch_dims - 1) for xb, ib in zip(x, idx)])


@pytest.mark.parametrize(
    "x_shape, idx_shape, axis, batch_dims",
    [((2, 5), (2, 3), 1, 1), ((2, 3, 5, 4), (2, 3, 2), 2, 2), ((2, 3, 5, 4), (2, 6), 3, 1),
     ((2, 3, 5, 4), (2, 3), -1, -1), ((3, 4, 2), (3,), 1, 1)],
)  # fmt: skip
def test_gather_with_batch_dims_matches_numpy(x_shape, idx_shape, axis, batch_dims):
    x = rand(*x_shape)
    size = x_shape[axis]
    idx = np.random.default_rng(3).integers(-size, size, idx_shape)
    (got,) = run_op(Gather, [x], [idx], axis=axis, batch_dims=batch_dims)
    batch_dims = batch_dims + len(idx_shape) if batch_dims < 0 else batch_dims
    want = gather_batched(x, idx, axis % len(x_shape), batch_dims)
    assert_same(got, want)


def test_gather_rejects_out_of_range_indices_at_run_time():
    with pytest.raises(IrforgeError, match=r"indices must be in \[-4, 3\]"):
        run_op(Gather, [rand(4, 2)], [i64([0, -5])])


def test_gather_infers_dynamic_dims():
    idx = ((DYN, 3), np.int64)
    assert infer(Gather, [(DYN, 8, 4), idx], axis=1) == [(DYN, DYN, 3, 4)]
    assert infer(Gather, [(DYN, 8, 4), ((2, 3), np.int32)], axis=1, batch_dims=1) == [(2, 3, 4)]


# -- verifier ----------------------------------------------------------------------------
REJECTS = [
    (Concat, [(2, 3), (3, 3)], {"axis": 1}, r"input shapes \[2, 3\], \[3, 3\] differ outside axis 1"),
    (Concat, [(2, 3), (2, 3, 1)], {}, "input #1 has rank 3, expected 2"),
    (Concat, [(2, 3)], {"axis": 2}, "axis 2 is out of range for rank 2"),
    (Split, [(4, 6)], {"axis": 1, "split_lengths": [2, 3]}, r"split_lengths \[2, 3\] sum to 5, but axis 1 has"),
    (Split, [(4, 6)], {"axis": 1, "split_lengths": [7, -1]}, "split_lengths must be >= 0"),
    (Split, [(4, 6)], {"axis": -3, "split_lengths": [4]}, "axis -3 is out of range for rank 2"),
    (Reshape, [(2, 3)], {"shape": [4, -1]}, r"shape \[4, -1\] cannot hold the elements of input \[2, 3\]"),
    (Reshape, [(2, 3)], {"shape": [5]}, r"shape \[5\] cannot hold the elements of input \[2, 3\]"),
    (Reshape, [(2, 3)], {"shape": [-1, -1]}, r"shape values must be >= -1 with at most one -1, got \[-1, -1\]"),
    (Reshape, [(2, 3)], {"shape": [-2, 3]}, "shape values must be >= -1"),
    (Reshape, [(6,)], {"shape": [3, 0]}, r"shape \[3, 0\] copies a dim \(0\) beyond the input rank 1"),
    (Reshape, [(6,)], {"shape": [0, -1], "special_zero": False}, "shape cannot hold both -1 and a size 0"),
    (Flatten, [(2, 3)], {"axis": 3}, r"axis 3 is out of range \[-2, 2\] for rank 2"),
    (Permute, [(2, 3, 4)], {"order": [0, 2, 2]}, r"order must be a permutation of 0..2, got \[0, 2, 2\]"),
    (Permute, [(2, 3, 4)], {"order": [1, 0]}, "order must be a permutation of 0..2"),
    (Squeeze, [(1, 3)], {"axes": [1]}, "axes names dim 1 of size 3, which is not 1"),
    (Squeeze, [(1, 1)], {"axes": [0, -2]}, "axes names axis 0 more than once"),
    (Unsqueeze, [(2, 3)], {"axes": [3]}, "axes 3 is out of range for rank 3"),
    (Unsqueeze, [(2, 3)], {"axes": []}, "axes must not be empty"),
    (Slice, [(4, 5)], {"begins": [0, 1], "ends": [2]}, "ends needs 2 values"),
    (Slice, [(4, 5)], {"begins": [0], "ends": [2], "steps": [0]}, "steps must not be 0"),
    (Slice, [(4, 5)], {"begins": [0], "ends": [2], "axes": [2]}, "axes 2 is out of range for rank 2"),
    (Slice, [(4,)], {"begins": [0, 0], "ends": [2, 2]}, "begins has 2 values, more than the input rank 1"),
    (Tile, [(2, 3)], {"repeats": [2]}, r"repeats needs 2 values \(one per dim\), got 1"),
    (Tile, [(2, 3)], {"repeats": [2, -1]}, "repeats must be >= 0"),
    (Pad, [(2, 3)], {"pads_begin": [0, 1], "pads_end": [0]}, "pads_end needs 2 values"),
    (Pad, [(2, 3)], {"pads_begin": [0, -1], "pads_end": [0, 0]}, "pads_begin values must be >= 0"),
    (Pad, [(2, 3)], {"pads_begin": [0, 3], "pads_end": [0, 0], "mode": "reflect"},
     "reflect padding of 3 does not fit dim 1 of size 3"),
    (Pad, [(2, 3)], {"pads_begin": [3, 0], "pads_end": [0, 0], "mode": "symmetric"},
     "symmetric padding of 3 does not fit dim 0 of size 2"),
    (Pad, [(0, 3)], {"pads_begin": [1, 0], "pads_end": [0, 0], "mode": "edge"},
     "edge padding of 1 does not fit dim 0 of size 0"),
    (Pad, [(2, 3)], {"pads_begin": [0, 0], "pads_end": [0, 0], "mode": "wrap"},
     "mode must be one of constant, edge, reflect, symmetric, got 'wrap'"),
    (Gather, [(4, 3), ((2,), np.float32)], {}, "indices must be i32 or i64, got f32"),
    (Gather, [(4, 3), ((2,), np.int64)], {"axis": 2}, "axis 2 is out of range for rank 2"),
    (Gather, [(4, 3), ((2,), np.int64)], {"axis": 1, "batch_dims": 2}, r"batch_dims 2 must be in \[0, 1\]"),
    (Gather, [(4, 3), ((2, 2), np.int64)], {"axis": 1, "batch_dims": 1},
     r"the first 1 dims of data \[4, 3\] and indices \[2, 2\] differ"),
]  # fmt: skip


@pytest.mark.parametrize("cls, inputs, props, message", REJECTS)
def test_shape_ops_reject(cls, inputs, props, message):
    num_results = len(props.get("split_lengths", [0]))
    with pytest.raises(VerifyException, match=f"{cls.name} 'op1': {message}"):
        infer(cls, inputs, num_results=num_results, name="op1", **props)


def test_concat_rejects_mixed_element_types():
    with pytest.raises(VerifyException, match="input #1 has element type i32, expected f32"):
        infer(Concat, [(2, 3), ((2, 3), np.int32)])


def test_concat_rejects_no_inputs():
    with pytest.raises(VerifyException, match="nn.concat: needs at least one input"):
        infer(Concat, [])
