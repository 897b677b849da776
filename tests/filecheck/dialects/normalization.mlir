// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @softmax(%x: tensor<?x10xf32>) -> tensor<?x10xf32> {
  %y = nn.softmax %x {name = "prob"} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  %z = nn.softmax %y {axis = -1 : i64, log = true} : (tensor<?x10xf32>) -> tensor<?x10xf32>
  func.return %z : tensor<?x10xf32>
}
// CHECK:      %y = nn.softmax %x {name = "prob"} : (tensor<?x10xf32>) -> tensor<?x10xf32>
// CHECK-NEXT: %z = nn.softmax %y {axis = -1 : i64, log = true} : (tensor<?x10xf32>) -> tensor<?x10xf32>

// -----
func.func @lrn(%x: tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32> {
  %y = nn.lrn %x {alpha = 2.500000e-01 : f32, beta = 5.000000e-01 : f32, size = 5 : i64, name = "norm1"} : (tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
  %z = nn.lrn %y {size = 3 : i64, bias = 2.000000e+00 : f32, region = "same"} : (tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
  func.return %z : tensor<?x16x?x?xf32>
}
// CHECK:      %y = nn.lrn %x {alpha = 2.500000e-01 : f32, beta = 5.000000e-01 : f32, size = 5 : i64, name = "norm1"} : (tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>
// CHECK-NEXT: %z = nn.lrn %y {size = 3 : i64, bias = 2.000000e+00 : f32, region = "same"} : (tensor<?x16x?x?xf32>) -> tensor<?x16x?x?xf32>

// -----
func.func @mvn(%x: tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32> {
  %y = nn.mvn %x {axes = array<i64: 2, -1>} : (tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
  %z = nn.mvn %y {axes = array<i64: 1, 2, 3>, normalize_variance = false, eps = 1.000000e-05 : f32, eps_mode = "outside_sqrt"} : (tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
  func.return %z : tensor<?x3x8x8xf32>
}
// CHECK:      %y = nn.mvn %x {axes = array<i64: 2, -1>} : (tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
// CHECK-NEXT: %z = nn.mvn %y {axes = array<i64: 1, 2, 3>, normalize_variance = false, eps = 1.000000e-05 : f32, eps_mode = "outside_sqrt"} : (tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>

// -----
func.func @normalize(%x: tensor<?x512x38x38xf32>, %s: tensor<512xf32>, %t: tensor<1xf32>) -> tensor<?x512x38x38xf32> {
  %y = nn.normalize %x, %s {eps = 1.000000e-06 : f32, name = "conv4_3_norm"} : (tensor<?x512x38x38xf32>, tensor<512xf32>) -> tensor<?x512x38x38xf32>
  %z = nn.normalize %y, %t {across_spatial = true, channel_shared = true} : (tensor<?x512x38x38xf32>, tensor<1xf32>) -> tensor<?x512x38x38xf32>
  %w = nn.normalize %z : (tensor<?x512x38x38xf32>) -> tensor<?x512x38x38xf32>
  func.return %w : tensor<?x512x38x38xf32>
}
// CHECK:      %y = nn.normalize %x, %s {eps = 1.000000e-06 : f32, name = "conv4_3_norm"} : (tensor<?x512x38x38xf32>, tensor<512xf32>) -> tensor<?x512x38x38xf32>
// CHECK-NEXT: %z = nn.normalize %y, %t {across_spatial = true, channel_shared = true} : (tensor<?x512x38x38xf32>, tensor<1xf32>) -> tensor<?x512x38x38xf32>
// CHECK-NEXT: %w = nn.normalize %z : (tensor<?x512x38x38xf32>) -> tensor<?x512x38x38xf32>

// -----
func.func @grn(%x: tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32> {
  %y = nn.grn %x {bias = 5.000000e-01 : f32} : (tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  %z = nn.grn %y : (tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  func.return %z : tensor<?x8x4x4xf32>
}
// CHECK:      %y = nn.grn %x {bias = 5.000000e-01 : f32} : (tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
// CHECK-NEXT: %z = nn.grn %y : (tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
