// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @levels(%x: tensor<4xf32>, %b: tensor<f32>) -> tensor<4xf32> {
  %y = nn.fake_quantize %x, %b, %b, %b, %b {levels = 1 : i64} : (tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: nn.fake_quantize: levels must be >= 2, got 1

// -----
func.func @bounds(%x: tensor<4xf32>, %b: tensor<3xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %y = nn.fake_quantize %x, %b, %s, %s, %s {levels = 256 : i64} : (tensor<4xf32>, tensor<3xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: nn.fake_quantize: shapes [4] and [3] cannot be broadcast
