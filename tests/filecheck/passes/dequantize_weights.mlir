// RUN: ir-opt %s -p dequantize-weights | filecheck %s
// RUN: ir-opt %s -p dequantize-weights,canonicalize | filecheck %s --check-prefix FOLDED

// A 4-bit weight's decompression Convert becomes the f32 constant of the same values (the
// `bits` mark goes with the integers); canonicalize then folds the zero point and scale into
// one weight constant. A Convert of a run-time u8 value is not a weight: it stays.
func.func @main(%x: tensor<3x8xf32>, %a: tensor<4xui8>) -> (tensor<3x2xf32>, tensor<4xf32>) {
  %q = nn.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x8xui8> {bits = 4 : i64}
  %f = nn.convert %q {destination_type = f32} : (tensor<2x8xui8>) -> tensor<2x8xf32>
  %z = nn.constant dense<8.0> : tensor<f32>
  %c = nn.eltwise %f, %z {operation = "sub"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %s = nn.constant dense<0.5> : tensor<f32>
  %w = nn.eltwise %c, %s {operation = "mul"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = nn.fully_connected %x, %w : (tensor<3x8xf32>, tensor<2x8xf32>) -> tensor<3x2xf32>
  %r = nn.convert %a {destination_type = f32} : (tensor<4xui8>) -> tensor<4xf32>
  func.return %y, %r : tensor<3x2xf32>, tensor<4xf32>
}
// CHECK:      %q = nn.constant dense<[[0, 1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 13, 14, 15]]> : tensor<2x8xui8> {bits = 4 : i64}
// CHECK-NEXT: %{{.*}} = nn.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, {{.*}} : tensor<2x8xf32>
// CHECK-NOT:  nn.convert %{{.*}} : (tensor<2x8xui8>)
// CHECK:      nn.fully_connected
// CHECK:      %r = nn.convert %a {destination_type = f32} : (tensor<4xui8>) -> tensor<4xf32>
// FOLDED:      %[[W:.*]] = nn.constant dense<{{\[\[}}-4.000000e+00, -3.500000e+00, {{.*}} : tensor<2x8xf32>
// FOLDED-NEXT: %y = nn.fully_connected %x, %[[W]] : (tensor<3x8xf32>, tensor<2x8xf32>) -> tensor<3x2xf32>
// FOLDED-NEXT: %r = nn.convert %a
