// RUN: python -c "import numpy as np; from irforge.weights import WeightStore; s = WeightStore(); \
// RUN:   s.add(np.linspace(-1, 1, 32, dtype=np.float16).reshape(2, 16), 'w'); s.save('%t.in.weights')"
// RUN: ir-opt %s --weights %t.in.weights -p widen-f16 -o %t.mlir && filecheck %s < %t.mlir
// RUN: ir-run %t.mlir --seed 0 | filecheck %s --check-prefix OUT

// f16 input converted to f32 where the body starts, constants (stored and inline) widened,
// the Convert to f16 in the middle converts to f32, the computed output narrowed back to
// f16 before the return; a Convert to f16 that only feeds the return stays as written.
func.func @main(%x: tensor<3x16xf16>, %z: tensor<4xf32>) -> (tensor<3x2xf16>, tensor<4xf16>) {
  %w = nn.constant @w : tensor<2x16xf16>
  %b = nn.constant dense<[0.5, 0.25]> : tensor<2xf16>
  %y = nn.fully_connected %x, %w, %b : (tensor<3x16xf16>, tensor<2x16xf16>, tensor<2xf16>) -> tensor<3x2xf16>
  %h = nn.convert %y {destination_type = f16} : (tensor<3x2xf16>) -> tensor<3x2xf16>
  %r = nn.relu %h : (tensor<3x2xf16>) -> tensor<3x2xf16>
  %n = nn.convert %z {destination_type = f16} : (tensor<4xf32>) -> tensor<4xf16>
  func.return %r, %n : tensor<3x2xf16>, tensor<4xf16>
}
// CHECK:      func.func @main(%x: tensor<3x16xf16>, %z: tensor<4xf32>) -> (tensor<3x2xf16>, tensor<4xf16>) {
// CHECK-NEXT:   %[[X:.*]] = nn.convert %x {destination_type = f32, name = "x/to_f32"} : (tensor<3x16xf16>) -> tensor<3x16xf32>
// CHECK-NEXT:   %[[W:.*]] = nn.constant @"w/f32" : tensor<2x16xf32>
// CHECK-NEXT:   %[[B:.*]] = nn.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-NEXT:   %y = nn.fully_connected %[[X]], %[[W]], %[[B]] : (tensor<3x16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:   %h = nn.convert %y {destination_type = f32} : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:   %r = nn.relu %h : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:   %n = nn.convert %z {destination_type = f16} : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:   %[[R:.*]] = nn.convert %r {destination_type = f16, name = "output0/to_f16"} : (tensor<3x2xf32>) -> tensor<3x2xf16>
// CHECK-NEXT:   func.return %[[R]], %n : tensor<3x2xf16>, tensor<4xf16>
// OUT: output0: shape=[3, 2] dtype=float16
// OUT: output1: shape=[4] dtype=float16
