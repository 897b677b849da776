// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @max(%x: tensor<1x8x9x9xf32>) -> tensor<1x8x4x4xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, name = "pool1"} : (tensor<1x8x9x9xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
// CHECK:      %y = nn.pooling %x {method = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, name = "pool1"} : (tensor<1x8x9x9xf32>) -> tensor<1x8x4x4xf32>

// -----
func.func @avg_ceil(%x: tensor<?x3x10x9xf32>) -> tensor<?x3x5x5xf32> {
  %y = nn.pooling %x {method = "avg", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads_begin = array<i64: 0, 1>, pads_end = array<i64: 0, 1>, exclude_pad = false, rounding_type = "ceil"} : (tensor<?x3x10x9xf32>) -> tensor<?x3x5x5xf32>
  func.return %y : tensor<?x3x5x5xf32>
}
// CHECK: nn.pooling %x {method = "avg", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads_begin = array<i64: 0, 1>, pads_end = array<i64: 0, 1>, exclude_pad = false, rounding_type = "ceil"} : (tensor<?x3x10x9xf32>) -> tensor<?x3x5x5xf32>

// -----
func.func @same_1d(%x: tensor<2x4x17xf32>) -> tensor<2x4x6xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 4>, strides = array<i64: 3>, auto_pad = "same_upper"} : (tensor<2x4x17xf32>) -> tensor<2x4x6xf32>
  func.return %y : tensor<2x4x6xf32>
}
// CHECK: nn.pooling %x {method = "max", kernel = array<i64: 4>, strides = array<i64: 3>, auto_pad = "same_upper"} : (tensor<2x4x17xf32>) -> tensor<2x4x6xf32>

// -----
func.func @global(%x: tensor<?x16x?x?x?xf32>) -> tensor<?x16x1x1x1xf32> {
  %y = nn.pooling %x {method = "avg", global_pool = true} : (tensor<?x16x?x?x?xf32>) -> tensor<?x16x1x1x1xf32>
  func.return %y : tensor<?x16x1x1x1xf32>
}
// CHECK: nn.pooling %x {method = "avg", global_pool = true} : (tensor<?x16x?x?x?xf32>) -> tensor<?x16x1x1x1xf32>
