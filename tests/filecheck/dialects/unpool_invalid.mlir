// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @indices_no_kernel(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xi64> {
  %i = nn.max_pool_indices %x {strides = array<i64: 2, 2>, name = "pool"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xi64>
  func.return %i : tensor<1x2x2x2xi64>
}
// CHECK: nn.max_pool_indices 'pool': kernel is required

// -----
func.func @indices_axis(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xi64> {
  %i = nn.max_pool_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xi64>
  func.return %i : tensor<1x2x2x2xi64>
}
// CHECK: nn.max_pool_indices: axis must be 0, 1 or 2 (the first axis the flat index runs over), got 3

// -----
func.func @indices_big_pads(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xi64> {
  %i = nn.max_pool_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads_begin = array<i64: 2, 2>, pads_end = array<i64: 0, 0>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xi64>
  func.return %i : tensor<1x2x3x3xi64>
}
// CHECK: nn.max_pool_indices: pads must be smaller than kernel [2, 2], got pads_begin [2, 2] and pads_end [0, 0]

// -----
func.func @unpool_float_indices(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
  %y = nn.max_unpool %x, %i {spatial = array<i64: 4, 4>, name = "up"} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
// CHECK: nn.max_unpool 'up': indices must be i32 or i64, got f32

// -----
func.func @unpool_shapes(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x3xi64>) -> tensor<1x2x4x4xf32> {
  %y = nn.max_unpool %x, %i {spatial = array<i64: 4, 4>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x3xi64>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
// CHECK: nn.max_unpool: input vs indices: shapes [1, 2, 2, 2] and [1, 2, 2, 3] differ

// -----
func.func @unpool_spatial_rank(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32> {
  %y = nn.max_unpool %x, %i {spatial = array<i64: 16>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
// CHECK: nn.max_unpool: spatial needs 2 values (one per spatial axis), got 1

// -----
func.func @unpool_result(%x: tensor<1x2x2x2xf32>, %i: tensor<1x2x2x2xi64>) -> tensor<1x2x5x4xf32> {
  %y = nn.max_unpool %x, %i {spatial = array<i64: 4, 4>} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xi64>) -> tensor<1x2x5x4xf32>
  func.return %y : tensor<1x2x5x4xf32>
}
// CHECK: nn.max_unpool: result #0 has type tensor<1x2x5x4xf32> but the operands imply tensor<1x2x4x4xf32>
