"""Exit 0 means an IR OpenVINO can read: ops whose operands OpenVINO requires to share one
element type refuse mixed ones in the verifier."""

import pytest

from irforge.errors import IrforgeError
from irforge.model import parse_module

CASES = {
    "f16 input into an f32 convolution": (
        "%w = nn.constant dense<1.0> : tensor<2x3x1x1xf32>\n"
        "%y = nn.convolution %x, %w : (tensor<1x3x4x4xf16>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf16>",
        "tensor<1x3x4x4xf16>", "tensor<1x2x4x4xf16>"),
    "f32 x i32 matmul": (
        "%w = nn.constant dense<1> : tensor<3x2xi32>\n"
        "%y = nn.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xi32>) -> tensor<4x2xf32>",
        "tensor<4x3xf32>", "tensor<4x2xf32>"),
    "f16 bias of an f32 fully connected": (
        "%w = nn.constant dense<1.0> : tensor<2x3xf32>\n%b = nn.constant dense<1.0> : tensor<2xf16>\n"
        "%y = nn.fully_connected %x, %w, %b : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf16>) -> tensor<4x2xf32>",
        "tensor<4x3xf32>", "tensor<4x2xf32>"),
    "f16 scale of an f32 scale_shift": (
        "%s = nn.constant dense<1.0> : tensor<3xf16>\n%b = nn.constant dense<1.0> : tensor<3xf32>\n"
        "%y = nn.scale_shift %x, %s, %b : (tensor<4x3xf32>, tensor<3xf16>, tensor<3xf32>) -> tensor<4x3xf32>",
        "tensor<4x3xf32>", "tensor<4x3xf32>"),
}


def module(body: str, arg: str, result: str) -> str:
    return (f'func.func @main(%x: {arg} {{nn.name = "x"}}) -> {result} {{\n{body}\n'
            f"func.return %y : {result}\n}}\n")


@pytest.mark.parametrize("case", list(CASES))
def test_mixed_element_types_are_refused(case):
    with pytest.raises(IrforgeError, match="one element type"):
        parse_module(module(*CASES[case]))


def test_one_element_type_is_accepted():
    body = CASES["f32 x i32 matmul"][0].replace("dense<1>", "dense<1.0>").replace("xi32", "xf32")
    parse_module(module(body, "tensor<4x3xf32>", "tensor<4x2xf32>"))
