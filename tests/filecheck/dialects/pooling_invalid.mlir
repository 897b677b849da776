// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @no_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "max", name = "pool2"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling 'pool2': kernel is required unless global_pool is set

// -----
func.func @kernel_count(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling: kernel needs 2 values (one per spatial axis), got 1

// -----
func.func @kernel_value(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 2, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling: kernel values must be >= 1, got [2, 0]

// -----
func.func @method(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "sum", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling: method must be one of avg, max, got 'sum'

// -----
func.func @rounding(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, rounding_type = "round"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling: rounding_type must be one of ceil, floor, got 'round'

// -----
func.func @avg_dilations(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "avg", kernel = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling: result #0 has type tensor<1x3x4x4xf32> but the operands imply tensor<1x3x6x6xf32>

// -----
func.func @big_pads(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x5x4xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads_begin = array<i64: 2, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x5x4xf32>
  func.return %y : tensor<1x3x5x4xf32>
}
// CHECK: nn.pooling: pads must be smaller than kernel [2, 2], got pads_begin [2, 0] and pads_end [0, 0]

// -----
func.func @global_kernel(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32> {
  %y = nn.pooling %x {method = "avg", global_pool = true, kernel = array<i64: 8, 8>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32>
  func.return %y : tensor<1x3x1x1xf32>
}
// CHECK: nn.pooling: global_pool takes no kernel

// -----
func.func @strides_value(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 2, 2>, strides = array<i64: 0, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling: strides values must be >= 1, got [0, 2]

// -----
func.func @rank(%x: tensor<3x8xf32>) -> tensor<3x1xf32> {
  %y = nn.pooling %x {method = "max", global_pool = true} : (tensor<3x8xf32>) -> tensor<3x1xf32>
  func.return %y : tensor<3x1xf32>
}
// CHECK: nn.pooling: input must have rank >= 3 (N, C, spatial...), got 2

// -----
func.func @empty(%x: tensor<1x3x2x8xf32>) -> tensor<1x3x0x6xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 3, 3>} : (tensor<1x3x2x8xf32>) -> tensor<1x3x0x6xf32>
  func.return %y : tensor<1x3x0x6xf32>
}
// CHECK: nn.pooling: output spatial size [0, 6] is empty

// -----
func.func @bad_result(%x: tensor<1x3x10x10xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.pooling %x {method = "max", kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, rounding_type = "ceil"} : (tensor<1x3x10x10xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.pooling: result #0 has type tensor<1x3x4x4xf32> but the operands imply tensor<1x3x5x5xf32>
