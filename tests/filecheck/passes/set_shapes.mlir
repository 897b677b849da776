// RUN: ir-opt %s -p 'set-shapes{shapes="x[2,3,16,16]"}' | filecheck %s

// New batch and spatial sizes flow through the convolution; a reshape with -1 adapts.
func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x192xf32> {
  %w = nn.constant dense<1.0> : tensor<3x3x1x1xf32>
  %c = nn.convolution %x, %w : (tensor<1x3x8x8xf32>, tensor<3x3x1x1xf32>) -> tensor<1x3x8x8xf32>
  %r = nn.reshape %c {shape = array<i64: 0, -1>, name = "flat"} : (tensor<1x3x8x8xf32>) -> tensor<1x192xf32>
  func.return %r : tensor<1x192xf32>
}
// CHECK-LABEL: func.func @main(%x: tensor<2x3x16x16xf32>) -> tensor<2x768xf32>
// CHECK-NEXT:    %w = nn.constant
// CHECK-NEXT:    %c = nn.convolution %x, %w : (tensor<2x3x16x16xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x16x16xf32>
// CHECK-NEXT:    %r = nn.reshape %c {{.*}} -> tensor<2x768xf32>
