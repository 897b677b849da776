// RUN: ir-opt %s -p 'convert-layout{interface="nhwc->nchw"}' | filecheck %s

// A TensorFlow model asked for NCHW inputs and outputs: the new transposes at the boundary
// cancel the importer's, and no transpose is left.
func.func @tf_block(%x: tensor<1x8x8x3xf32>) -> tensor<1x8x8x4xf32> {
  %w = nn.constant dense<0.5> : tensor<4x3x1x1xf32>
  %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x3xf32>) -> tensor<1x3x8x8xf32>
  %c = nn.convolution %a, %w : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %b = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x8x8x4xf32>
  %r = nn.relu %b : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  func.return %r : tensor<1x8x8x4xf32>
}
// CHECK:      func.func @tf_block(%{{.*}}: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NOT:  nn.permute
// CHECK:      nn.convolution
// CHECK-NOT:  nn.permute
// CHECK:      nn.relu
// CHECK-NOT:  nn.permute
// CHECK:      func.return
