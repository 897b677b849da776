// RUN: ir-opt %s --split-input-file -p cse | filecheck %s

// Same op, properties and operands: one layer (the layer name does not count); a different
// property keeps its own; equal constants merge, so the ops reading them do too.
func.func @cse(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %a = nn.relu %x {name = "relu_a"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = nn.relu %x {name = "relu_b"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = nn.relu %x {negative_slope = 0.1 : f32, name = "leaky"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = nn.eltwise %a, %b {operation = "sum"} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %k1 = nn.constant dense<2.0> : tensor<f32>
  %k2 = nn.constant dense<2.0> : tensor<f32>
  %m1 = nn.eltwise %s, %k1 {operation = "mul"} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %m2 = nn.eltwise %s, %k2 {operation = "mul"} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %y = nn.eltwise %m1, %c {operation = "sum"} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %y, %m2, %c : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
// CHECK-LABEL: func.func @cse
// CHECK-NEXT:    %a = nn.relu %x {name = "relu_a"}
// CHECK-NEXT:    %c = nn.relu %x {negative_slope = 1.000000e-01 : f32, name = "leaky"}
// CHECK-NEXT:    %s = nn.eltwise %a, %a {operation = "sum"}
// CHECK-NEXT:    %k1 = nn.constant dense<2.000000e+00>
// CHECK-NEXT:    %m1 = nn.eltwise %s, %k1 {operation = "mul"}
// CHECK-NEXT:    %y = nn.eltwise %m1, %c {operation = "sum"}
// CHECK-NEXT:    func.return %y, %m1, %c
