// RUN: ir-opt %s --split-input-file -p infer-shapes | filecheck %s

// Unknown result sizes become known from the operands; the signature follows.
func.func @chain(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32> {
  %c = nn.convolution %x, %w {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  %r = nn.relu %c : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  func.return %r : tensor<?x?x?x?xf32>
}
// CHECK-LABEL: func.func @chain(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %c = nn.convolution %x, %w {strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    %r = nn.relu %c : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    func.return %r : tensor<1x4x3x3xf32>

// -----

// A dynamic batch stays dynamic; other sizes are inferred.
func.func @dynamic(%x: tensor<?x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32> {
  %c = nn.convolution %x, %w : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  func.return %c : tensor<?x?x?x?xf32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK:         -> tensor<?x4x6x6xf32>

// -----

// Already precise types are left as they are.
func.func @unchanged(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %r = nn.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}
// CHECK-LABEL: func.func @unchanged(%x: tensor<2x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:    %r = nn.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
