// The @name constants need a weights file holding them with the declared types; it is made here.
// RUN: python -c "import numpy as np; from irforge.weights import WeightStore; s = WeightStore(); \
// RUN:   s.add(np.zeros((4, 3, 3, 3), np.float32), 'conv1.weight'); s.add(np.ones(32, np.float32), '0.bias'); \
// RUN:   s.add(np.zeros((17, 2), np.float16), 'onnx::MatMul_7'); s.add(np.arange(20).reshape(4, 5), 'ids'); \
// RUN:   s.add(np.zeros((5, 5), bool), 'mask'); s.save('%t.weights')"
// RUN: ir-opt %s --split-input-file --weights %t.weights | ir-opt --split-input-file --weights %t.weights | filecheck %s
// RUN: not ir-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=NO-WEIGHTS

// Inline values: dense lists, splats, every element type the weight store knows, rank 0.
func.func @inline() -> (tensor<2xi64>, tensor<2x3xf32>, tensor<3xi1>, tensor<2xf16>, tensor<f32>, tensor<4xi32>, tensor<2x2xi8>, tensor<2xui8>, tensor<2xf64>, tensor<0x3xf32>) {
  %shape = nn.constant dense<[1, 2048]> : tensor<2xi64>
  %ones = nn.constant dense<1.0> : tensor<2x3xf32> {name = "ones"}
  %mask = nn.constant dense<[true, false, true]> : tensor<3xi1>
  %half = nn.constant dense<[1.5, -6.5e-05]> : tensor<2xf16>
  %scalar = nn.constant dense<0.1> : tensor<f32>
  %i32 = nn.constant dense<[-2147483648, 0, 7, 2147483647]> : tensor<4xi32>
  %i8 = nn.constant dense<[[-128, 0], [1, 127]]> : tensor<2x2xi8>
  %u8 = nn.constant dense<[0, 255]> : tensor<2xui8>
  %f64 = nn.constant dense<[0.1, -1.0e+300]> : tensor<2xf64>
  %empty = nn.constant dense<> : tensor<0x3xf32>
  func.return %shape, %ones, %mask, %half, %scalar, %i32, %i8, %u8, %f64, %empty : tensor<2xi64>, tensor<2x3xf32>, tensor<3xi1>, tensor<2xf16>, tensor<f32>, tensor<4xi32>, tensor<2x2xi8>, tensor<2xui8>, tensor<2xf64>, tensor<0x3xf32>
}
// CHECK:      %shape = nn.constant dense<[1, 2048]> : tensor<2xi64>
// CHECK-NEXT: %ones = nn.constant dense<1.000000e+00> : tensor<2x3xf32> {name = "ones"}
// CHECK-NEXT: %mask = nn.constant dense<[true, false, true]> : tensor<3xi1>
// CHECK-NEXT: %half = nn.constant dense<[1.500000e+00, -6.502870e-05]> : tensor<2xf16>
// CHECK-NEXT: %scalar = nn.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT: %i32 = nn.constant dense<[-2147483648, 0, 7, 2147483647]> : tensor<4xi32>
// CHECK-NEXT: %i8 = nn.constant dense<{{\[\[}}-128, 0], [1, 127]]> : tensor<2x2xi8>
// CHECK-NEXT: %u8 = nn.constant dense<[0, 255]> : tensor<2xui8>
// CHECK-NEXT: %f64 = nn.constant dense<[1.000000e-01, -1.000000e+300]> : tensor<2xf64>
// CHECK-NEXT: %empty = nn.constant dense<> : tensor<0x3xf32>

// -----
// Infinities and NaN go through the text as the raw data, bit for bit.
func.func @non_finite() -> (tensor<3xf32>, tensor<2xf16>) {
  %f = nn.constant dense<"0x0000807F000080FF0000C07F"> : tensor<3xf32>
  %h = nn.constant dense<"0x00FC003C"> : tensor<2xf16> {name = "h"}
  func.return %f, %h : tensor<3xf32>, tensor<2xf16>
}
// CHECK:      %f = nn.constant dense<"0x0000807F000080FF0000C07F"> : tensor<3xf32>
// CHECK-NEXT: %h = nn.constant dense<"0x00FC003C"> : tensor<2xf16> {name = "h"}

// -----
// Weight-store references: names with dots, and names that need quotes.
func.func @weights() -> (tensor<4x3x3x3xf32>, tensor<32xf32>, tensor<17x2xf16>, tensor<4x5xi64>, tensor<5x5xi1>) {
  %w = nn.constant @conv1.weight {name = "conv1/w"} : tensor<4x3x3x3xf32>
  %b = nn.constant @"0.bias" : tensor<32xf32>
  %m = nn.constant @"onnx::MatMul_7" : tensor<17x2xf16>
  %i = nn.constant @ids : tensor<4x5xi64>
  %k = nn.constant @mask : tensor<5x5xi1>
  func.return %w, %b, %m, %i, %k : tensor<4x3x3x3xf32>, tensor<32xf32>, tensor<17x2xf16>, tensor<4x5xi64>, tensor<5x5xi1>
}
// CHECK:      %w = nn.constant @conv1.weight {name = "conv1/w"} : tensor<4x3x3x3xf32>
// CHECK-NEXT: %b = nn.constant @"0.bias" : tensor<32xf32>
// CHECK-NEXT: %m = nn.constant @"onnx::MatMul_7" : tensor<17x2xf16>
// CHECK-NEXT: %i = nn.constant @ids : tensor<4x5xi64>
// CHECK-NEXT: %k = nn.constant @mask : tensor<5x5xi1>

// NO-WEIGHTS: the IR refers to weights (@name) but no weights file was given
