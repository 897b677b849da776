// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @operation(%x: tensor<2x3x4xf32>) -> tensor<1x1x1xf32> {
  %y = nn.reduce %x {operation = "avg", name = "r1"} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  func.return %y : tensor<1x1x1xf32>
}
// CHECK: nn.reduce 'r1': operation must be one of l1, l2, log_sum, log_sum_exp, max, mean, min, prod, sum, sum_square, got 'avg'

// -----
func.func @axis_range(%x: tensor<2x3x4xf32>) -> tensor<2x3x1xf32> {
  %y = nn.reduce %x {operation = "sum", axes = array<i64: 3>} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  func.return %y : tensor<2x3x1xf32>
}
// CHECK: nn.reduce: axes 3 is out of range for rank 3

// -----
func.func @axis_twice(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %y = nn.reduce %x {operation = "sum", axes = array<i64: 1, -2>} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  func.return %y : tensor<2x1x4xf32>
}
// CHECK: nn.reduce: axes names axis 1 more than once, got [1, -2]

// -----
func.func @reduce_result(%x: tensor<2x3x4xf32>) -> tensor<2x3x1xf32> {
  %y = nn.reduce %x {operation = "max", axes = array<i64: 2>, keep_dims = false} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  func.return %y : tensor<2x3x1xf32>
}
// CHECK: nn.reduce: result #0 has type tensor<2x3x1xf32> but the operands imply tensor<2x3xf32>

// -----
func.func @argmax_axis(%x: tensor<2x3xf32>) -> tensor<2x1xi64> {
  %y = nn.argmax %x {axis = -3 : i64, name = "a1"} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  func.return %y : tensor<2x1xi64>
}
// CHECK: nn.argmax 'a1': axis -3 is out of range for rank 2

// -----
func.func @argmax_mode(%x: tensor<2x3xf32>) -> tensor<1x3xi64> {
  %y = nn.argmax %x {mode = "median"} : (tensor<2x3xf32>) -> tensor<1x3xi64>
  func.return %y : tensor<1x3xi64>
}
// CHECK: nn.argmax: mode must be one of max, min, got 'median'

// -----
func.func @argmax_empty(%x: tensor<0x3xf32>) -> tensor<1x3xi64> {
  %y = nn.argmax %x : (tensor<0x3xf32>) -> tensor<1x3xi64>
  func.return %y : tensor<1x3xi64>
}
// CHECK: nn.argmax: axis 0 has no elements to choose from

// -----
func.func @argmax_type(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  %y = nn.argmax %x : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return %y : tensor<1x3xf32>
}
// CHECK: nn.argmax: result #0 has type tensor<1x3xf32> but the operands imply tensor<1x3xi64>
