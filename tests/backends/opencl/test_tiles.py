"""The GEMM printer for other devices' limits: every vector width it emits, small work-group
and local-memory limits (the kernels still run on the test device, pocl)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.opencl import compile_model
from irforge.backends.opencl.codegen.gemm import choose_tiles
from irforge.backends.opencl.device import DeviceInfo
from irforge.backends.reference import run
from irforge.dialects.nn import Convolution, FullyConnected, MatMul
from tests.backends.opencl.support import case, grid_model
from tests.helpers import rand

CASES = [
    case(Convolution, [rand(2, 5, 9, 7)], [rand(11, 5, 3, 3, seed=1), rand(11, seed=2)], pads_begin=[1, 0], pads_end=[0, 1]),
    case(Convolution, [rand(1, 6, 5, 5)], [rand(10, 3, 1, 1, seed=1)], group=2),
    case(FullyConnected, [rand(3, 21)], [rand(17, 21, seed=1), rand(17, seed=2)]),
    case(MatMul, [rand(2, 9, 13), rand(2, 13, 6, seed=1)], transpose_a=False),
]


@pytest.mark.parametrize(
    "info",
    [
        DeviceInfo("gpu-like", True, 1024, 49152, 4),
        DeviceInfo("scalar", True, 256, 32768, 1),
        DeviceInfo("narrow", True, 64, 4096, 2),
    ],
    ids=lambda i: i.name,
)
def test_gemm_tiles_for_other_devices(info: DeviceInfo):
    model, feeds, labels = grid_model(CASES)
    got = compile_model(model, tuning=info)(feeds)
    for name, want in run(model, feeds).items():
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-5, err_msg=labels[name])


def test_tiles_respect_device_limits():
    small = DeviceInfo("small", True, 64, 4096, 8)
    t = choose_tiles(small, 1000, 1000)
    assert t.lx * t.ly <= 64
    assert 4 * t.tk * (t.tm + t.tn) <= 4096 // 2
    assert t.rn % t.vw == 0 and t.vw == 8
    tiny = choose_tiles(DeviceInfo("big", True, 1024, 65536, 4), 1, 10)
    assert (tiny.rm, tiny.ly) == (1, 1) and tiny.tn >= 10 and tiny.lx * tiny.rn // 2 < 10
