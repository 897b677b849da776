// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @fully_connected(%x: tensor<?x8xf32>, %w: tensor<4x8xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = nn.fully_connected %x, %w, %b {name = "fc1"} : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
// CHECK:      %y = nn.fully_connected %x, %w, %b {name = "fc1"} : (tensor<?x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<?x4xf32>

// -----
func.func @fully_connected_no_bias(%x: tensor<2x?x8xf32>, %w: tensor<3x8xf32>) -> tensor<2x?x3xf32> {
  %y = nn.fully_connected %x, %w : (tensor<2x?x8xf32>, tensor<3x8xf32>) -> tensor<2x?x3xf32>
  func.return %y : tensor<2x?x3xf32>
}
// CHECK: nn.fully_connected %x, %w : (tensor<2x?x8xf32>, tensor<3x8xf32>) -> tensor<2x?x3xf32>

// -----
func.func @matmul(%a: tensor<?x1x4x3xf32>, %b: tensor<5x6x4xf32>) -> tensor<?x5x3x6xf32> {
  %y = nn.matmul %a, %b {transpose_a = true, transpose_b = true, name = "mm1"} : (tensor<?x1x4x3xf32>, tensor<5x6x4xf32>) -> tensor<?x5x3x6xf32>
  func.return %y : tensor<?x5x3x6xf32>
}
// CHECK: nn.matmul %a, %b {transpose_a = true, transpose_b = true, name = "mm1"} : (tensor<?x1x4x3xf32>, tensor<5x6x4xf32>) -> tensor<?x5x3x6xf32>

// -----
func.func @matvec(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
  %y = nn.matmul %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
// CHECK: nn.matmul %a, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?xf32>

// -----
func.func @scale_shift(%x: tensor<?x3x8x8xf32>, %s: tensor<8xf32>, %t: tensor<8xf32>) -> tensor<?x3x8x8xf32> {
  %y = nn.scale_shift %x, %s, %t {axis = -1 : i64} : (tensor<?x3x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x3x8x8xf32>
  func.return %y : tensor<?x3x8x8xf32>
}
// CHECK: nn.scale_shift %x, %s, %t {axis = -1 : i64} : (tensor<?x3x8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x3x8x8xf32>

// -----
func.func @batch_norm(%x: tensor<?x3x5x5xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<?x3x5x5xf32> {
  %y = nn.batch_norm %x, %g, %b, %m, %v {epsilon = 1.000000e-03 : f32, name = "bn1"} : (tensor<?x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x5x5xf32>
  func.return %y : tensor<?x3x5x5xf32>
}
// CHECK: nn.batch_norm %x, %g, %b, %m, %v {epsilon = 1.000000e-03 : f32, name = "bn1"} : (tensor<?x3x5x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<?x3x5x5xf32>

// -----
func.func @power(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %y = nn.power %x {power = 2.000000e+00 : f32, scale = -1.500000e+00 : f32, shift = 2.500000e-01 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  %z = nn.power %y : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %z : tensor<?x3xf32>
}
// CHECK:      %y = nn.power %x {power = 2.000000e+00 : f32, scale = -1.500000e+00 : f32, shift = 2.500000e-01 : f32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK-NEXT: %z = nn.power %y : (tensor<?x3xf32>) -> tensor<?x3xf32>
