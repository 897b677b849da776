"""Fuzz findings of session 7 (irforge/testing/fuzz_session6_ops.py's seeds of session 6's ops,
mutated: `bench/fuzz_campaign.py --focus session6`, `bench/fuzz_numbers.py --only session6`):
internal errors and numbers that differed from onnxruntime's; each is now a one-line coded error
or onnxruntime's numbers."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx
from irforge.testing import fuzz_session6_ops as s6

MS = "com.microsoft"


def _seed(name: str) -> onnx.ModelProto:
    return onnx.load_from_string(s6.SEEDS[name]())


def _set(model: onnx.ModelProto, op: str, **attrs: object) -> onnx.ModelProto:
    node = next(n for n in model.graph.node if n.op_type == op)
    for name, value in attrs.items():
        for attr in [a for a in node.attribute if a.name == name]:
            node.attribute.remove(attr)
        node.attribute.append(helper.make_attribute(name, value))
    return model


def _constant(model: onnx.ModelProto, name: str, array: np.ndarray, **more: np.ndarray) -> onnx.ModelProto:
    """Initializer `name` replaced; `more`: model inputs turned into initializers."""
    init = next(t for t in model.graph.initializer if t.name == name)
    init.CopyFrom(numpy_helper.from_array(array, name))
    for other, value in more.items():
        model.graph.initializer.append(numpy_helper.from_array(value, other))
        model.graph.input.remove(next(i for i in model.graph.input if i.name == other))
    return model


def _seed_array(seed: str, name: str) -> np.ndarray:
    return numpy_helper.to_array(next(t for t in _seed(seed).graph.initializer if t.name == name))


def _identity_without_input(model: onnx.ModelProto) -> onnx.ModelProto:
    scan = next(n for n in model.graph.node if n.op_type == "Scan")
    body = scan.attribute[0].g
    del next(n for n in body.node if n.op_type == "Identity").input[:]
    return model


def _without_input(model: onnx.ModelProto, op: str, index: int) -> onnx.ModelProto:
    del next(n for n in model.graph.node if n.op_type == op).input[index]
    return model


def _retyped_input(model: onnx.ModelProto, name: str, elem: int, shape: list[int]) -> onnx.ModelProto:
    next(i for i in model.graph.input if i.name == name).CopyFrom(helper.make_tensor_value_info(name, elem, shape))
    return model


@pytest.mark.parametrize(
    ("model", "words"),
    [
        # 0/1 attributes given 2: onnxruntime reads `== 1` (not interleaved / not causal), irforge read `!= 0`
        (_set(_seed("rot23.onnx"), "RotaryEmbedding", interleaved=2), "interleaved=2 must be 0 or 1"),
        (_set(_seed("mhacross.onnx"), "MultiHeadAttention", unidirectional=2), "unidirectional=2 must be 0 or 1"),
        (_set(_seed("swishcp.onnx"), "CumProd", exclusive=7), "exclusive=7 must be 0 or 1"),
        # GatherBlockQuantized quantize_axis=-3 of a 2-D table was read as -3 % 2 = 1
        (_set(_seed("gbq.onnx"), "GatherBlockQuantized", quantize_axis=-3), "quantize_axis=-3"),
        # GroupQueryAttention seqlens_k of type bool: np.arange(..., dtype=bool) (TypeError)
        (_constant(_seed("gqapacked.onnx"), "seqlens", np.array([True])), "seqlens_k has element type bool"),
        # MultiHeadAttention attention_bias of shape [1]: written, but OpenVINO refused the IR
        (_constant(_seed("mhacross.onnx"), "ab", np.array([np.inf], np.float32)), "attention_bias of shape [1]"),
        # an Identity without inputs in a Scan body: node.input[0] (IndexError)
        (_identity_without_input(_seed("legacyresize.onnx")), "input #0 is required"),
        # MaxUnpool (an expansion into standard ops) without its indices: node.input[1] (IndexError)
        (_without_input(_seed("legacyresize.onnx"), "MaxUnpool", 0), "input #1 is required"),
        # GroupQueryAttention local_window_size 2**40: OverflowError in an int32 constant; onnxruntime
        # reads it as 32 bits (0: y = 0), as it does local_window_size=0
        (_set(_seed("gqapacked.onnx"), "GroupQueryAttention", local_window_size=2**40), "local_window_size=1099511627776 must be"),
        (_set(_seed("gqapacked.onnx"), "GroupQueryAttention", local_window_size=0), "local_window_size=0 must be"),
        # a Loop condition of 0 values: known[0] (IndexError)
        (_constant(_seed("seqloop.onnx"), "yes", np.zeros(0, np.uint8)), "the loop condition has 0 values"),
        # CenterCropPad's shape as a float NaN: int(nan) (ValueError)
        (_constant(_seed("select.onnx"), "crop", np.array(np.nan, np.float32)), "shape of element type float32"),
        # SplitToSequence's split as a float infinity: int(inf) (OverflowError)
        (_constant(_seed("seqs.onnx"), "three", np.array([np.inf], np.float32)), "split must be an integer tensor"),
        # AffineGrid's size as floats holding NaN: int(nan) (ValueError)
        (_constant(_seed("affgrid.onnx"), "size", np.full((2, 2), np.nan, np.float32)), "size of element type float32"),
        # a Scan-8 scan input of rank 1 (rank 0 per batch element): shape[axis] (IndexError)
        (_retyped_input(_seed("legacyscan.onnx"), "x", T.INT64, [3]), "Scan-8 states need a batch axis"),
        # com.microsoft RotaryEmbedding's position_ids as bool: np.arange(..., dtype=bool) (TypeError)
        (_constant(_retyped_input(_seed("rotms.onnx"), "pos", T.INT64, [1]), "cos", _seed_array("rotms.onnx", "cos"), pos=np.array([True])),
         "position_ids has element type bool"),
        # Swish of int32: written, but OpenVINO refused the IR (Swish needs a float input)
        (_retyped_input(_seed("swishcp.onnx"), "x", T.INT32, [3, 4]), "Swish of a i32 input"),
    ],
    ids=["rotary-interleaved-2", "mha-unidirectional-2", "cumprod-exclusive-7", "gbq-quantize-axis-minus-3", "gqa-bool-seqlens",
         "mha-attention-bias-1d", "identity-without-input", "maxunpool-one-input", "gqa-window-2-40", "gqa-window-0", "loop-empty-condition", "centercroppad-nan-shape", "split-to-sequence-inf", "affinegrid-nan-size", "scan8-rank-1-input",
         "rotary-bool-positions", "swish-int32"],
)
def test_finding_is_a_coded_error(model: onnx.ModelProto, words: str) -> None:
    with pytest.raises(IrforgeError, match=words.replace("[", r"\[").replace("]", r"\]")) as info:
        import_onnx(model)
    assert info.value.code in ("E041", "E135", "E184", "E186")  # E041 generic; Scan, AffineGrid, GatherBlockQuantized forms
    assert "\n" not in str(info.value)


def test_scan8_batch_times_steps_is_bounded() -> None:
    """Scan-8 unrolls one scan per batch element: a batch of 64 x 100 steps (6,400 bodies) is
    refused instead of unrolled for minutes."""
    model = _seed("legacyscan.onnx")
    model.graph.input[1].CopyFrom(helper.make_tensor_value_info("x", T.FLOAT, [64, 100, 3]))
    model.graph.input[0].CopyFrom(helper.make_tensor_value_info("init", T.FLOAT, [64, 3]))
    with pytest.raises(IrforgeError, match="Scan-8 of batch 64 x 100 steps") as info:
        import_onnx(model)
    assert info.value.code == "E135"


def test_mha_unidirectional_with_a_fully_padded_query_matches_onnxruntime() -> None:
    """onnxruntime masks later keys with the type's lowest value, stronger than the padding's
    mask_filter_value: a query whose visible keys are all padded still ignores later keys
    (irforge added -10000 to both and averaged over every key)."""
    model = _seed("mha.onnx")
    rng = np.random.default_rng(0)
    feeds = {"q": rng.standard_normal((2, 3, 16)).astype(np.float32), "k": rng.standard_normal((2, 3, 16)).astype(np.float32),
             "v": rng.standard_normal((2, 3, 16)).astype(np.float32), "mask": np.array([[0, 0, 0, 3, 2], [0, 2, 1, 2, 1]], np.int32),
             "pk": rng.standard_normal((2, 2, 2, 8)).astype(np.float32), "pv": rng.standard_normal((2, 2, 2, 8)).astype(np.float32)}
    # what onnxruntime gives (checked against it): batch 0's first query sees keys 0..2, all padded
    q, k, v = (feeds[n] + numpy_helper.to_array(model.graph.initializer[0])[i * 16:(i + 1) * 16] for i, n in enumerate("qkv"))
    heads = [a.reshape(2, 3, 2, 8).transpose(0, 2, 1, 3) for a in (q, k, v)]
    keys, values = np.concatenate([feeds["pk"], heads[1]], 2), np.concatenate([feeds["pv"], heads[2]], 2)
    scores = heads[0] @ keys.transpose(0, 1, 3, 2) / np.sqrt(8)
    scores += np.where(feeds["mask"] > 0, 0, -10000.0)[:, None, None, :]
    scores[..., np.arange(5)[None, :] > np.arange(3)[:, None] + 2] = -np.inf
    p = np.exp(scores - scores.max(-1, keepdims=True))
    want = ((p / p.sum(-1, keepdims=True)) @ values).transpose(0, 2, 1, 3).reshape(2, 3, 16)
    np.testing.assert_allclose(run(import_onnx(model), feeds)["y"], want, rtol=1e-3, atol=1e-3)


def test_gqa_decoding_keeps_a_non_finite_key_in_its_row() -> None:
    """GroupQueryAttention wrote the new keys into the cache with a 0/1 matrix times K: an
    infinite key (found with an infinite sin_cache, now E121; here an infinite input key) gave
    NaN in every row of present_key; onnxruntime copies the row (inf there, the past rows as
    they were)."""
    model = _set(_seed("gqa.onnx"), "GroupQueryAttention", do_rotary=0)
    rng = np.random.default_rng(1)
    key = rng.standard_normal((1, 3, 32)).astype(np.float32)
    key[0, 1, 5] = -np.inf
    feeds = {"q": rng.standard_normal((1, 3, 64)).astype(np.float32), "k": key,
             "v": rng.standard_normal((1, 3, 32)).astype(np.float32), "pk": rng.standard_normal((1, 2, 2, 16)).astype(np.float32),
             "pv": rng.standard_normal((1, 2, 2, 16)).astype(np.float32), "seqlens": np.array([4], np.int32)}
    present = run(import_onnx(model), feeds)["pres_k"]
    np.testing.assert_array_equal(present[:, :, :2], feeds["pk"])  # the past rows, untouched
    assert not np.isnan(present[:, :, 2:]).any() and np.isinf(present[:, :, 2:]).sum() == 1  # the key's row as it is


def test_gqa_window_wider_than_the_cache_is_no_window() -> None:
    """local_window_size=2**20 was written as an int32 constant wider than the cache; a window
    wider than the cache hides nothing (as onnxruntime)."""
    wide = _set(_seed("gqapacked.onnx"), "GroupQueryAttention", local_window_size=2**20)
    plain = _set(_seed("gqapacked.onnx"), "GroupQueryAttention", local_window_size=-1)
    rng = np.random.default_rng(2)
    feeds = {"qkv": rng.standard_normal((1, 1, 32)).astype(np.float32), "pk": rng.standard_normal((1, 1, 4, 8)).astype(np.float32),
             "pv": rng.standard_normal((1, 1, 4, 8)).astype(np.float32)}
    np.testing.assert_array_equal(run(import_onnx(wide), feeds)["y"], run(import_onnx(plain), feeds)["y"])


def test_a_loop_body_op_type_not_utf8_is_e115(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A Loop body node whose op type is not UTF-8 (protobuf hands back bytes) reached
    ', '.join (TypeError); the loader now checks nested graphs' names too."""
    from irforge.frontends.onnx.loader import load_model_proto

    data = s6.SEEDS["seqloop.onnx"]()
    assert data.count(b"SequenceInsert") == 1
    path = tmp_path / "m.onnx"
    path.write_bytes(data.replace(b"SequenceInsert", b"SequenceInser\xff"))
    with pytest.raises(IrforgeError, match="not UTF-8") as info:
        load_model_proto(path)
    assert info.value.code == "E115"


def test_mxnet_integer_beyond_64_bits_is_e411(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An MXNet Convolution pad of 10**20 reached an i64 attribute (ValueError in xdsl)."""
    import irforge
    from irforge.testing.fuzz_formats import mxnet_seed

    seed = mxnet_seed()
    assert b'"kernel": "(3, 3)"' in seed["m-symbol.json"]
    (tmp_path / "m-symbol.json").write_bytes(seed["m-symbol.json"].replace(b'"kernel": "(3, 3)"', b'"kernel": "(99999999999999999999, 3)"'))
    (tmp_path / "m-0000.params").write_bytes(seed["m-0000.params"])
    with pytest.raises(IrforgeError, match="is not a tuple of integers") as info:
        irforge.convert_model(str(tmp_path / "m-0000.params"))
    assert info.value.code == "E411"


def test_gqa_total_sequence_length_infinite_is_e041() -> None:
    """total_sequence_length as a float infinity: int(inf) (OverflowError)."""
    model = _constant(_seed("gqapacked.onnx"), "total", np.array([np.inf], np.float32))
    with pytest.raises(IrforgeError, match="total_sequence_length must be one integer") as info:
        import_onnx(model)
    assert info.value.code == "E041"


def test_scan8_scalar_scan_input_is_e135() -> None:
    """A Scan-8 scan input turned into a scalar constant: shape[0] (IndexError)."""
    model = _seed("legacyscan.onnx")
    model.graph.initializer.append(numpy_helper.from_array(np.array(-1, np.int32), "x"))
    model.graph.input.remove(next(i for i in model.graph.input if i.name == "x"))
    with pytest.raises(IrforgeError, match="Scan-8 states need a batch axis") as info:
        import_onnx(model)
    assert info.value.code == "E135"


def test_kaldi_nnet2_huge_splice_context_is_e508(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A corrupt nnet2 <Context> of 2**31 frames (+1 of the second splice): gathering the context frames ran for minutes
    (np.arange of billions of indices; the fuzz campaign's hang)."""
    import irforge
    from irforge.testing import kaldi_models as km

    layers, priors = km.nnet2_model()
    splice = next(layer for layer in layers if layer.kind == "<SpliceComponent>")
    splice.fields[1] = ("<Context>", km.Ints((-(2**31 - 1), 0, 2)))
    (tmp_path / "m.mdl").write_bytes(km.write_nnet2(layers, priors, binary=False))
    with pytest.raises(IrforgeError, match="a context of 2147483648 \\+ 3 frames") as info:
        irforge.convert_model(str(tmp_path / "m.mdl"), input_shape=[13, 6])
    assert info.value.code == "E508"
