// RUN: ir-opt %s --split-input-file -p merge-pad | filecheck %s

// A zero Pad of H and W merges into the convolution's pads (auto_pad resolved first).
func.func @conv(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %p = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 0, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x7x7xf32>
  %y = nn.convolution %p, %w {strides = array<i64: 2, 2>, auto_pad = "valid", name = "conv"} : (tensor<1x2x7x7xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %y : tensor<1x3x3x3xf32>
}
// CHECK-LABEL: func.func @conv
// CHECK-NEXT:    %y = nn.convolution %x, %w {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 0, 0>, name = "conv"}
// CHECK-NEXT:    func.return %y

// -----

// Max pooling over a ReLU merges a zero Pad; over anything else it must not (0 could win).
func.func @max_pool(%x: tensor<1x2x6x6xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %r = nn.relu %x : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.pad %r {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x8x8xf32>
  %y = nn.pooling %p {method = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, name = "pool"} : (tensor<1x2x8x8xf32>) -> tensor<1x2x3x3xf32>
  %q = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x8x8xf32>
  %z = nn.pooling %q {method = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, name = "pool2"} : (tensor<1x2x8x8xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %z : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @max_pool
// CHECK:         %y = nn.pooling %r {method = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, name = "pool"}
// CHECK:         %q = nn.pad %x
// CHECK-NEXT:    %z = nn.pooling %q

// -----

// Average pooling counts the padded zeros: exclude_pad becomes false.
func.func @avg_pool(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %p = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x8x8xf32>
  %y = nn.pooling %p {method = "avg", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, name = "pool"} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @avg_pool
// CHECK-NEXT:    %y = nn.pooling %x {method = "avg", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, exclude_pad = false, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, name = "pool"}

// -----

// A Pad of the channels, or with a value other than 0, stays.
func.func @not_spatial(%x: tensor<1x2x6x6xf32>, %w: tensor<3x3x3x3xf32>) -> (tensor<1x3x4x4xf32>, tensor<1x3x6x6xf32>) {
  %p = nn.pad %x {pads_begin = array<i64: 0, 1, 0, 0>, pads_end = array<i64: 0, 0, 0, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x3x6x6xf32>
  %y = nn.convolution %p, %w {auto_pad = "valid"} : (tensor<1x3x6x6xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x4x4xf32>
  %q = nn.pad %p {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 1, 1>, value = 1.0 : f32} : (tensor<1x3x6x6xf32>) -> tensor<1x3x8x8xf32>
  %z = nn.convolution %q, %w {auto_pad = "valid"} : (tensor<1x3x8x8xf32>, tensor<3x3x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return %y, %z : tensor<1x3x4x4xf32>, tensor<1x3x6x6xf32>
}
// CHECK-LABEL: func.func @not_spatial
// CHECK-NEXT:    %p = nn.pad %x
// CHECK-NEXT:    %y = nn.convolution %p, %w
// CHECK-NEXT:    %q = nn.pad %p
// CHECK-NEXT:    %z = nn.convolution %q, %w

// -----

// The NHWC input's Pad before the transpose to NCHW moves after it, then merges.
func.func @pad_then_permute(%x: tensor<1x6x6x2xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32> {
  %p = nn.pad %x {pads_begin = array<i64: 0, 1, 1, 0>, pads_end = array<i64: 0, 1, 1, 0>} : (tensor<1x6x6x2xf32>) -> tensor<1x8x8x2xf32>
  %t = nn.permute %p {order = array<i64: 0, 3, 1, 2>} : (tensor<1x8x8x2xf32>) -> tensor<1x2x8x8xf32>
  %y = nn.convolution %t, %w {auto_pad = "valid", name = "conv"} : (tensor<1x2x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return %y : tensor<1x3x6x6xf32>
}
// CHECK-LABEL: func.func @pad_then_permute
// CHECK-NEXT:    %t = nn.permute %x {order = array<i64: 0, 3, 1, 2>}
// CHECK-NEXT:    %y = nn.convolution %t, %w {pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, name = "conv"}
// CHECK-NEXT:    func.return %y
