// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @fc_input_rank(%x: tensor<f32>, %w: tensor<4x3xf32>) -> tensor<4xf32> {
  %y = nn.fully_connected %x, %w {name = "fc1"} : (tensor<f32>, tensor<4x3xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: nn.fully_connected 'fc1': input must have rank >= 1, got 0

// -----
func.func @fc_weights_rank(%x: tensor<2x3xf32>, %w: tensor<4x3x1xf32>) -> tensor<2x4xf32> {
  %y = nn.fully_connected %x, %w : (tensor<2x3xf32>, tensor<4x3x1xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
// CHECK: nn.fully_connected: weights must have rank 2 ([out, in]), got 3

// -----
func.func @fc_features(%x: tensor<2x3xf32>, %w: tensor<4x5xf32>) -> tensor<2x4xf32> {
  %y = nn.fully_connected %x, %w : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
// CHECK: nn.fully_connected: input has 3 features but weights expect 5

// -----
func.func @fc_bias(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  %y = nn.fully_connected %x, %w, %b : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
// CHECK: nn.fully_connected: bias must have shape [4], got [3]

// -----
func.func @fc_result(%x: tensor<?x3xf32>, %w: tensor<4x3xf32>) -> tensor<?x3xf32> {
  %y = nn.fully_connected %x, %w : (tensor<?x3xf32>, tensor<4x3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
// CHECK: nn.fully_connected: result #0 has type tensor<?x3xf32> but the operands imply tensor<?x4xf32>

// -----
func.func @matmul_rank_a(%x: tensor<f32>, %w: tensor<4xf32>) -> tensor<f32> {
  %y = nn.matmul %x, %w {name = "mm1"} : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  func.return %y : tensor<f32>
}
// CHECK: nn.matmul 'mm1': a must have rank >= 1, got 0

// -----
func.func @matmul_rank_b(%x: tensor<4xf32>, %w: tensor<f32>) -> tensor<f32> {
  %y = nn.matmul %x, %w : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  func.return %y : tensor<f32>
}
// CHECK: nn.matmul: b must have rank >= 1, got 0

// -----
func.func @matmul_inner(%x: tensor<3x4xf32>, %w: tensor<4x5xf32>) -> tensor<3x4xf32> {
  %y = nn.matmul %x, %w {transpose_b = true} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}
// CHECK: nn.matmul: a has 4 columns but b has 5 rows (after transpose_a=False, transpose_b=True)

// -----
func.func @matmul_batch(%x: tensor<2x3x4xf32>, %w: tensor<3x4x5xf32>) -> tensor<2x3x5xf32> {
  %y = nn.matmul %x, %w : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  func.return %y : tensor<2x3x5xf32>
}
// CHECK: nn.matmul: shapes [2] and [3] cannot be broadcast

// -----
func.func @matmul_result(%x: tensor<3x4xf32>, %w: tensor<4xf32>) -> tensor<3x1xf32> {
  %y = nn.matmul %x, %w : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}
// CHECK: nn.matmul: result #0 has type tensor<3x1xf32> but the operands imply tensor<3xf32>

// -----
func.func @scale_shift_axis(%x: tensor<2x3x4xf32>, %w: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %y = nn.scale_shift %x, %w, %b {axis = 3 : i64, name = "ss1"} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.scale_shift 'ss1': axis 3 is out of range for rank 3

// -----
func.func @scale_shift_scale(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %y = nn.scale_shift %x, %w, %b : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.scale_shift: scale must have shape [3], got [4]

// -----
func.func @scale_shift_shift(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>, %b: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %y = nn.scale_shift %x, %w, %b {axis = -1 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.scale_shift: shift must have shape [4], got [3]

// -----
func.func @batch_norm_epsilon(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %y = nn.batch_norm %x, %g, %b, %m, %v {epsilon = 0.000000e+00 : f32, name = "bn1"} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.batch_norm 'bn1': epsilon must be > 0, got 0

// -----
func.func @batch_norm_rank(%x: tensor<3xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<3xf32> {
  %y = nn.batch_norm %x, %g, %b, %m, %v : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
// CHECK: nn.batch_norm: input must have rank >= 2 (N, C, ...), got 1

// -----
func.func @batch_norm_gamma(%x: tensor<2x3x4xf32>, %g: tensor<4xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %y = nn.batch_norm %x, %g, %b, %m, %v : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.batch_norm: gamma must have shape [3], got [4]

// -----
func.func @batch_norm_beta(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3x1xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %y = nn.batch_norm %x, %g, %b, %m, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3x1xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.batch_norm: beta must have shape [3], got [3, 1]

// -----
func.func @batch_norm_mean(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<2xf32>, %v: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %y = nn.batch_norm %x, %g, %b, %m, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.batch_norm: mean must have shape [3], got [2]

// -----
func.func @batch_norm_variance(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<1xf32>) -> tensor<2x3x4xf32> {
  %y = nn.batch_norm %x, %g, %b, %m, %v : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: nn.batch_norm: variance must have shape [3], got [1]

// -----
func.func @power_result(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %y = nn.power %x {power = 2.000000e+00 : f32, name = "pw1"} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}
// CHECK: nn.power 'pw1': result #0 has type tensor<3x2xf32> but the operands imply tensor<2x3xf32>
