// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @self_attention(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v {name = "attn"} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  func.return %y : tensor<1x4x8x16xf32>
}
// CHECK: %y = nn.scaled_dot_product_attention %q, %k, %v {name = "attn"} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>

// -----
// Cross attention with an additive mask and a scale, batch axes broadcast (dynamic ones too).
func.func @masked(%q: tensor<?x1x6x8xf32>, %k: tensor<3x9x8xf32>, %v: tensor<3x9x5xf32>, %m: tensor<6x9xf32>) -> tensor<?x3x6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v, %m {scale = 0.125 : f32} : (tensor<?x1x6x8xf32>, tensor<3x9x8xf32>, tensor<3x9x5xf32>, tensor<6x9xf32>) -> tensor<?x3x6x5xf32>
  func.return %y : tensor<?x3x6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention %q, %k, %v, %m {scale = 1.250000e-01 : f32} : (tensor<?x1x6x8xf32>, tensor<3x9x8xf32>, tensor<3x9x5xf32>, tensor<6x9xf32>) -> tensor<?x3x6x5xf32>

// -----
// A boolean mask, and the scale as a run-time operand after it.
func.func @boolean_mask(%q: tensor<2x6x8xf32>, %k: tensor<2x9x8xf32>, %v: tensor<2x9x5xf32>, %m: tensor<2x6x9xi1>, %s: tensor<f32>) -> tensor<2x6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v, %m, %s : (tensor<2x6x8xf32>, tensor<2x9x8xf32>, tensor<2x9x5xf32>, tensor<2x6x9xi1>, tensor<f32>) -> tensor<2x6x5xf32>
  func.return %y : tensor<2x6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention %q, %k, %v, %m, %s : (tensor<2x6x8xf32>, tensor<2x9x8xf32>, tensor<2x9x5xf32>, tensor<2x6x9xi1>, tensor<f32>) -> tensor<2x6x5xf32>

// -----
func.func @causal(%q: tensor<1x2x7x4xf16>) -> tensor<1x2x7x4xf16> {
  %y = nn.scaled_dot_product_attention %q, %q, %q {causal = true} : (tensor<1x2x7x4xf16>, tensor<1x2x7x4xf16>, tensor<1x2x7x4xf16>) -> tensor<1x2x7x4xf16>
  func.return %y : tensor<1x2x7x4xf16>
}
// CHECK: nn.scaled_dot_product_attention %q, %q, %q {causal = true} : (tensor<1x2x7x4xf16>, tensor<1x2x7x4xf16>, tensor<1x2x7x4xf16>) -> tensor<1x2x7x4xf16>
