"""The NDArray list reader: every NDArray version MXNet wrote (v1, v2, v3, the legacy form
before them), element types, prefixes, views of the mapping; and a fuzz of malformed files
(truncations, wrong magics, huge ndims, shapes larger than the file, names that are not
UTF-8, random byte flips), each of which must be one IrforgeError, never another exception."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from irforge.errors import IrforgeError
from irforge.frontends.mxnet.importer import Weights
from irforge.frontends.mxnet.loader import as_float32, load_ndarray_list, parse_ndarray_list
from irforge.testing.mxnet_models import ndarray_bytes, ndarray_list_bytes, write_params

ARRAYS = {
    "arg:conv0_weight": np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2),
    "aux:bn0_moving_var": np.linspace(0.5, 2, 5).astype(np.float32),
    "arg:half": np.array([[1.5, -2.0], [0.25, 8.0]], np.float16),
    "arg:index": np.array([3, -1, 7], np.int64),
    "arg:bytes": np.array([1, 2, 255], np.uint8),
}


@pytest.mark.parametrize("version", ["v1", "v2", "v3", "legacy"])
def test_every_ndarray_version_reads_back_as_views(tmp_path: Path, version: str) -> None:
    loaded = load_ndarray_list(write_params(tmp_path / "m-0000.params", ARRAYS, version))
    assert list(loaded.arrays) == list(ARRAYS)
    for name, want in ARRAYS.items():
        got = loaded.arrays[name]
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_array_equal(got, want)
        assert not got.flags.owndata and not got.flags.writeable  # a view of the read-only mapping


def test_empty_arrays_scalars_and_bfloat16() -> None:
    empty_v2 = ndarray_bytes(np.zeros((), np.float32), "v2")
    assert len(empty_v2) == 4 + 4 + 4  # magic, storage type, ndim 0: the record ends
    scalar_v3 = ndarray_bytes(np.array(2.5, np.float32), "v3")
    bits = (np.array([1.0, -3.5, 0.15625], np.float32).view(np.uint32) >> 16).astype(np.uint16)
    bf16 = ndarray_bytes(bits, "v2", type_flag=12)
    names = [b"empty", b"scalar", b"bf16"]
    data = struct.pack("<QQQ", 0x112, 0, 3) + empty_v2 + scalar_v3 + bf16 + struct.pack("<Q", 3)
    data += b"".join(struct.pack("<Q", len(n)) + n for n in names)
    arrays, raw16 = parse_ndarray_list(data, "test")
    assert arrays["empty"].size == 0
    assert arrays["scalar"].shape == () and float(arrays["scalar"]) == 2.5
    assert raw16 == {"bf16"}
    np.testing.assert_array_equal(as_float32(arrays["bf16"], True), [1.0, -3.5, 0.15625])


def test_prefixes_are_stripped_and_gluon_names_kept() -> None:
    weights = Weights.from_named({"arg:w": np.zeros(1), "aux:m": np.ones(1), "plain": np.zeros(2)})
    assert sorted(weights.arrays) == ["m", "plain", "w"]
    with pytest.raises(IrforgeError, match="twice") as e:
        Weights.from_named({"arg:w": np.zeros(1), "aux:w": np.ones(1)})
    assert e.value.code == "E407"


def valid_file() -> bytes:
    return ndarray_list_bytes({"arg:w": np.ones((2, 3), np.float32), "aux:v": np.arange(4, dtype=np.float64)})


def assert_clean(data: bytes) -> IrforgeError:
    with pytest.raises(IrforgeError) as e:
        parse_ndarray_list(data, "'fuzz.params'")
    assert e.value.code in ("E401", "E402"), e.value
    assert "\n" not in str(e.value)
    return e.value


def test_every_truncation_is_a_clean_error() -> None:
    data = valid_file()
    for length in range(len(data)):
        assert_clean(data[:length])


def header(count: int = 1) -> bytes:
    return struct.pack("<QQQ", 0x112, 0, count)


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x13\x01" + bytes(6) + bytes(16), "list magic"),
        (header() + struct.pack("<I", 0xDEADBEEF), "unknown NDArray magic 0xdeadbeef"),
        (header() + struct.pack("<Iii", 0xF993FAC9, 0, 2**31 - 1), "ndim 2147483647"),
        (header() + struct.pack("<Iii", 0xF993FAC9, 0, -7), "ndim -7"),
        (header() + struct.pack("<Iii", 0xF993FAC9, 0, 2) + struct.pack("<qq", 2**40, 2**40) + struct.pack("<iii", 1, 0, 0), "larger than the file"),
        (header() + struct.pack("<Iii", 0xF993FAC9, 0, 1) + struct.pack("<q", -4), "negative dimension"),
        (header() + struct.pack("<Iii", 0xF993FAC9, 0, 1) + struct.pack("<q", 1) + struct.pack("<iii", 1, 0, 99), "unknown type flag 99"),
        (header(2**60), "claims"),
        (header(1) + ndarray_bytes(np.ones(1, np.float32)) + struct.pack("<QQ", 1, 2) + b"\xff\xfe", "not UTF-8"),
        (header(1) + ndarray_bytes(np.ones(1, np.float32)) + struct.pack("<Q", 0), "no names"),
        (header(1) + ndarray_bytes(np.ones(1, np.float32)) + struct.pack("<QQ", 1, 1) + b"a" + b"junk", "bytes follow"),
        (header(1) + ndarray_bytes(np.ones(1, np.float32)) + struct.pack("<QQ", 1, 2**62), "left"),
    ],
    ids=["list-magic", "array-magic", "huge-ndim", "negative-ndim", "overflowing-shape", "negative-dim", "type-flag",
         "huge-count", "bad-utf8", "unnamed", "trailing", "huge-name"],  # fmt: skip
)
def test_malformed_files_are_named(data: bytes, message: str) -> None:
    assert message in str(assert_clean(data))


def test_sparse_arrays_are_refused() -> None:
    data = header() + struct.pack("<Ii", 0xF993FAC9, 1) + bytes(64)
    assert assert_clean(data).code == "E402"


def test_random_corruptions_load_or_fail_cleanly() -> None:
    data = bytearray(valid_file())
    rng = np.random.default_rng(0)
    for _ in range(400):
        mutated = bytearray(data)
        for position in rng.integers(0, len(data), rng.integers(1, 4)):
            mutated[position] = int(rng.integers(0, 256))
        try:
            parse_ndarray_list(bytes(mutated), "'fuzz.params'")
        except IrforgeError as e:
            assert e.code in ("E401", "E402")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(IrforgeError, match="do not exist") as e:
        load_ndarray_list(tmp_path / "none.params")
    assert e.value.code == "E400"
    (tmp_path / "empty.params").write_bytes(b"")
    with pytest.raises(IrforgeError, match="list magic"):
        load_ndarray_list(tmp_path / "empty.params")
