// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @bad_channels(%x: tensor<1x3x4x4xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %y = nn.deconvolution %x, %w {name = "up2"} : (tensor<1x3x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}
// CHECK: nn.deconvolution 'up2': input has 3 channels but weights expect 4

// -----
func.func @bad_group(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %y = nn.deconvolution %x, %w {group = 2 : i64} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
// CHECK: nn.deconvolution: 3 input channels are not divisible by group 2

// -----
func.func @bad_zero_group(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %y = nn.deconvolution %x, %w {group = 0 : i64} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}
// CHECK: nn.deconvolution: group must be >= 1, got 0

// -----
func.func @bad_weights_rank(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x2x6x6xf32> {
  %y = nn.deconvolution %x, %w : (tensor<1x3x4x4xf32>, tensor<3x2x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}
// CHECK: nn.deconvolution: weights must have rank 4, got 3

// -----
func.func @bad_bias(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x2x6x6xf32> {
  %y = nn.deconvolution %x, %w, %b : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}
// CHECK: nn.deconvolution: bias must have shape [2], got [3]

// -----
func.func @bad_output_padding_count(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %y = nn.deconvolution %x, %w {output_padding = array<i64: 1>} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}
// CHECK: nn.deconvolution: output_padding needs 2 values (one per spatial axis), got 1

// -----
func.func @bad_output_padding_value(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x10x10xf32> {
  %y = nn.deconvolution %x, %w {strides = array<i64: 2, 2>, output_padding = array<i64: 2, 1>} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x10x10xf32>
  func.return %y : tensor<1x2x10x10xf32>
}
// CHECK: nn.deconvolution: output_padding values must be smaller than stride or dilation, got [2, 1]

// -----
func.func @bad_negative_output_padding(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  %y = nn.deconvolution %x, %w {output_padding = array<i64: -1, 0>} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}
// CHECK: nn.deconvolution: output_padding values must be >= 0, got [-1, 0]

// -----
func.func @empty(%x: tensor<1x3x2x2xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x2x1x1xf32> {
  %y = nn.deconvolution %x, %w {pads_begin = array<i64: 2, 2>, pads_end = array<i64: 2, 2>} : (tensor<1x3x2x2xf32>, tensor<3x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  func.return %y : tensor<1x2x1x1xf32>
}
// CHECK: nn.deconvolution: output spatial size [-1, -1] is empty

// -----
func.func @bad_result(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x4x4xf32> {
  %y = nn.deconvolution %x, %w : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
// CHECK: nn.deconvolution: result #0 has type tensor<1x2x4x4xf32> but the operands imply tensor<1x2x6x6xf32>
