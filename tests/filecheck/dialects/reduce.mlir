// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @mean(%x: tensor<?x3x8x8xf32>) -> tensor<?x3x1x1xf32> {
  %y = nn.reduce %x {operation = "mean", axes = array<i64: 2, -1>, name = "gap"} : (tensor<?x3x8x8xf32>) -> tensor<?x3x1x1xf32>
  func.return %y : tensor<?x3x1x1xf32>
}
// CHECK:      %y = nn.reduce %x {operation = "mean", axes = array<i64: 2, -1>, name = "gap"} : (tensor<?x3x8x8xf32>) -> tensor<?x3x1x1xf32>

// -----
func.func @all(%x: tensor<2x3x4xf32>) -> tensor<f32> {
  %y = nn.reduce %x {operation = "log_sum_exp", keep_dims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  func.return %y : tensor<f32>
}
// CHECK: nn.reduce %x {operation = "log_sum_exp", keep_dims = false} : (tensor<2x3x4xf32>) -> tensor<f32>

// -----
func.func @argmin(%x: tensor<?x10x?xf32>) -> tensor<?x?xi64> {
  %y = nn.argmax %x {axis = 1 : i64, keep_dims = false, select_last_index = true, mode = "min"} : (tensor<?x10x?xf32>) -> tensor<?x?xi64>
  func.return %y : tensor<?x?xi64>
}
// CHECK: nn.argmax %x {axis = 1 : i64, keep_dims = false, select_last_index = true, mode = "min"} : (tensor<?x10x?xf32>) -> tensor<?x?xi64>

// -----
func.func @argmax_defaults(%x: tensor<4x5xf32>) -> tensor<1x5xi64> {
  %y = nn.argmax %x : (tensor<4x5xf32>) -> tensor<1x5xi64>
  func.return %y : tensor<1x5xi64>
}
// CHECK: nn.argmax %x : (tensor<4x5xf32>) -> tensor<1x5xi64>
