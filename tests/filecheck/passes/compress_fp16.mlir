// RUN: python -c "import numpy as np; from irforge.weights import WeightStore; s = WeightStore(); \
// RUN:   s.add(np.linspace(-1, 1, 32, dtype=np.float32).reshape(2, 16), 'w'); \
// RUN:   s.add(np.full(32, 1e6, np.float32), 'huge'); s.add(np.arange(32, dtype=np.int64), 'ids'); \
// RUN:   s.save('%t.in.weights')"
// RUN: ir-opt %s --weights %t.in.weights -p compress-fp16 -o %t.mlir && filecheck %s < %t.mlir
// RUN: ir-run %t.mlir --seed 0 | filecheck %s --check-prefix OUT

// The stored f32 matrix becomes f16 plus a convert; values beyond f16 range, integers and
// inline constants stay as they are.
func.func @main(%x: tensor<3x16xf32>) -> (tensor<3x2xf32>, tensor<32xf32>, tensor<32xi64>) {
  %w = nn.constant @w : tensor<2x16xf32>
  %b = nn.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %y = nn.fully_connected %x, %w, %b : (tensor<3x16xf32>, tensor<2x16xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %h = nn.constant @huge : tensor<32xf32>
  %i = nn.constant @ids : tensor<32xi64>
  func.return %y, %h, %i : tensor<3x2xf32>, tensor<32xf32>, tensor<32xi64>
}
// CHECK:      %[[H:.*]] = nn.constant @"w/f16" : tensor<2x16xf16>
// CHECK-NEXT: %[[W:.*]] = nn.convert %[[H]] {destination_type = f32, name = "w/to_f32"} : (tensor<2x16xf16>) -> tensor<2x16xf32>
// CHECK-NEXT: %b = nn.constant dense<[5.000000e-01, 2.500000e-01]> : tensor<2xf32>
// CHECK-NEXT: %y = nn.fully_connected %x, %[[W]], %b
// CHECK-NEXT: %h = nn.constant @huge : tensor<32xf32>
// CHECK-NEXT: %i = nn.constant @ids : tensor<32xi64>
// OUT: output0: shape=[3, 2] dtype=float32
