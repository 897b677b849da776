// RUN: ir-opt %s --split-input-file -p flatten-concats | filecheck %s

// A Concat read only by a Concat on the same axis merges into it; one on another axis, or
// read elsewhere too, stays.
func.func @nested(%a: tensor<1x2x4xf32>, %b: tensor<1x3x4xf32>, %c: tensor<1x1x4xf32>) -> (tensor<1x8x4xf32>, tensor<1x2x8xf32>, tensor<1x3x8xf32>, tensor<1x4x4xf32>) {
  %i = nn.concat %b, %c {axis = 1 : i64} : (tensor<1x3x4xf32>, tensor<1x1x4xf32>) -> tensor<1x4x4xf32>
  %y = nn.concat %a, %i, %a {axis = -2 : i64, name = "y"} : (tensor<1x2x4xf32>, tensor<1x4x4xf32>, tensor<1x2x4xf32>) -> tensor<1x8x4xf32>
  %j = nn.concat %a, %a {axis = 1 : i64} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x4x4xf32>
  %w = nn.concat %a, %a {axis = 2 : i64} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x8xf32>
  %z = nn.concat %b, %b {axis = 2 : i64} : (tensor<1x3x4xf32>, tensor<1x3x4xf32>) -> tensor<1x3x8xf32>
  func.return %y, %w, %z, %j : tensor<1x8x4xf32>, tensor<1x2x8xf32>, tensor<1x3x8xf32>, tensor<1x4x4xf32>
}
// CHECK-LABEL: func.func @nested
// CHECK-NEXT:    %y = nn.concat %a, %b, %c, %a {axis = -2 : i64, name = "y"}
