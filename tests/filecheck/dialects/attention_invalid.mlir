// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @rank(%q: tensor<6x8xf32>, %k: tensor<9x8xf32>, %v: tensor<9x5xf32>) -> tensor<6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v {name = "attn"} : (tensor<6x8xf32>, tensor<9x8xf32>, tensor<9x5xf32>) -> tensor<6x5xf32>
  func.return %y : tensor<6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention 'attn': query must have rank >= 3 ([N, ..., rows, columns]), got 2

// -----
func.func @features(%q: tensor<1x6x8xf32>, %k: tensor<1x9x7xf32>, %v: tensor<1x9x5xf32>) -> tensor<1x6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v : (tensor<1x6x8xf32>, tensor<1x9x7xf32>, tensor<1x9x5xf32>) -> tensor<1x6x5xf32>
  func.return %y : tensor<1x6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention: query has 8 features per row but key has 7 ([1, 6, 8] vs [1, 9, 7])

// -----
func.func @rows(%q: tensor<1x6x8xf32>, %k: tensor<1x9x8xf32>, %v: tensor<1x4x5xf32>) -> tensor<1x6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v : (tensor<1x6x8xf32>, tensor<1x9x8xf32>, tensor<1x4x5xf32>) -> tensor<1x6x5xf32>
  func.return %y : tensor<1x6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention: key has 9 rows but value has 4 ([1, 9, 8] vs [1, 4, 5])

// -----
func.func @mask_type(%q: tensor<1x6x8xf32>, %k: tensor<1x9x8xf32>, %v: tensor<1x9x5xf32>, %m: tensor<6x9xi32>) -> tensor<1x6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v, %m : (tensor<1x6x8xf32>, tensor<1x9x8xf32>, tensor<1x9x5xf32>, tensor<6x9xi32>) -> tensor<1x6x5xf32>
  func.return %y : tensor<1x6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention: mask must be i1 or f32, got i32

// -----
func.func @two_scales(%q: tensor<1x6x8xf32>, %k: tensor<1x9x8xf32>, %v: tensor<1x9x5xf32>, %m: tensor<f32>, %s: tensor<f32>) -> tensor<1x6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v, %m, %s {scale = 0.5 : f32} : (tensor<1x6x8xf32>, tensor<1x9x8xf32>, tensor<1x9x5xf32>, tensor<f32>, tensor<f32>) -> tensor<1x6x5xf32>
  func.return %y : tensor<1x6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention: scale is given both as a property and as an operand

// -----
func.func @scale_shape(%q: tensor<1x6x8xf32>, %k: tensor<1x9x8xf32>, %v: tensor<1x9x5xf32>, %m: tensor<f32>, %s: tensor<2xf32>) -> tensor<1x6x5xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v, %m, %s : (tensor<1x6x8xf32>, tensor<1x9x8xf32>, tensor<1x9x5xf32>, tensor<f32>, tensor<2xf32>) -> tensor<1x6x5xf32>
  func.return %y : tensor<1x6x5xf32>
}
// CHECK: nn.scaled_dot_product_attention: scale operand must be one f32 value (rank 0 or [1]), got tensor<2xf32>

// -----
func.func @result_shape(%q: tensor<1x6x8xf32>, %k: tensor<1x9x8xf32>, %v: tensor<1x9x5xf32>) -> tensor<1x6x8xf32> {
  %y = nn.scaled_dot_product_attention %q, %k, %v : (tensor<1x6x8xf32>, tensor<1x9x8xf32>, tensor<1x9x5xf32>) -> tensor<1x6x8xf32>
  func.return %y : tensor<1x6x8xf32>
}
// CHECK: nn.scaled_dot_product_attention: result #0 has type tensor<1x6x8xf32> but the operands imply tensor<1x6x5xf32>
