// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @bad_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.convolution %x, %w {name = "conv2"} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
// CHECK: nn.convolution 'conv2': input has 3 channels but weights expect 2 x group 1

// -----
func.func @bad_result(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32> {
  %y = nn.convolution %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
// CHECK: nn.convolution: result #0 has type tensor<1x4x8x8xf32> but the operands imply tensor<1x4x6x6xf32>

// -----
func.func @bad_auto_pad(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.convolution %x, %w {auto_pad = "full"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
// CHECK: nn.convolution: auto_pad must be one of explicit, same_lower, same_upper, valid, got 'full'
