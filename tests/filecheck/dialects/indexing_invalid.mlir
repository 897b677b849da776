// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @gather_elements_dims(%x: tensor<3x4x5xf32>, %i: tensor<3x2x4xi64>) -> tensor<3x2x4xf32> {
  %a = nn.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x2x4xi64>) -> tensor<3x2x4xf32>
  func.return %a : tensor<3x2x4xf32>
}
// CHECK: nn.gather_elements: dims other than axis 1: shapes [3, 5] and [3, 4] differ

// -----
func.func @scatter_nd_updates(%x: tensor<3x4x5xf32>, %i: tensor<2x2xi64>, %u: tensor<2x4xf32>) -> tensor<3x4x5xf32> {
  %a = nn.scatter_nd %x, %i, %u : (tensor<3x4x5xf32>, tensor<2x2xi64>, tensor<2x4xf32>) -> tensor<3x4x5xf32>
  func.return %a : tensor<3x4x5xf32>
}
// CHECK: nn.scatter_nd: updates vs indices[:-1] + data[m:]: shapes [2, 4] and [2, 5] differ

// -----
func.func @scatter_reduction(%x: tensor<3xf32>, %i: tensor<3xi64>, %u: tensor<3xf32>) -> tensor<3xf32> {
  %a = nn.scatter_elements %x, %i, %u {reduction = "mean"} : (tensor<3xf32>, tensor<3xi64>, tensor<3xf32>) -> tensor<3xf32>
  func.return %a : tensor<3xf32>
}
// CHECK: nn.scatter_elements: reduction must be one of add, max, min, mul, none, got 'mean'

// -----
func.func @top_k_too_many(%x: tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>) {
  %v, %i = nn.top_k %x {k = 5 : i64} : (tensor<3x4xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  func.return %v, %i : tensor<3x5xf32>, tensor<3x5xi64>
}
// CHECK: nn.top_k: k 5 must be in [0, 4] (the size of axis 1)

// -----
func.func @top_k_k_value_not_scalar(%x: tensor<3x4xf32>, %k: tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  %v, %i = nn.top_k %x, %k : (tensor<3x4xf32>, tensor<1xi64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  func.return %v, %i : tensor<3x?xf32>, tensor<3x?xi64>
}
// CHECK: nn.top_k: k_value must be an i32 or i64 scalar, got tensor<1xi64>

// -----
func.func @gather_float_indices(%x: tensor<3xf32>, %i: tensor<3xf32>) -> tensor<3xf32> {
  %a = nn.gather_elements %x, %i : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %a : tensor<3xf32>
}
// CHECK: nn.gather_elements: indices must be i32 or i64, got f32

// -----
func.func @range_not_scalar(%s: tensor<2xi64>, %l: tensor<i64>, %d: tensor<i64>) -> tensor<?xi64> {
  %r = nn.range %s, %l, %d : (tensor<2xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  func.return %r : tensor<?xi64>
}
// CHECK: nn.range: start, limit and delta must be scalars

// -----
func.func @roi_align_rois(%x: tensor<2x3x8x8xf32>, %r: tensor<5x5xf32>, %b: tensor<5xi64>) -> tensor<5x3x2x2xf32> {
  %a = nn.roi_align %x, %r, %b {pooled_h = 2 : i64, pooled_w = 2 : i64} : (tensor<2x3x8x8xf32>, tensor<5x5xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
  func.return %a : tensor<5x3x2x2xf32>
}
// CHECK: nn.roi_align: rois must be [R, 4] (x1, y1, x2, y2), got shape [5, 5]

// -----
func.func @roi_align_mode(%x: tensor<2x3x8x8xf32>, %r: tensor<5x4xf32>, %b: tensor<5xi64>) -> tensor<5x3x2x2xf32> {
  %a = nn.roi_align %x, %r, %b {pooled_h = 2 : i64, pooled_w = 2 : i64, mode = "min"} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
  func.return %a : tensor<5x3x2x2xf32>
}
// CHECK: nn.roi_align: mode must be one of avg, max, got 'min'

// -----
func.func @broadcast_to_unknown_rank(%x: tensor<3xf32>, %s: tensor<?xi64>) -> tensor<?xf32> {
  %b = nn.broadcast_to %x, %s : (tensor<3xf32>, tensor<?xi64>) -> tensor<?xf32>
  func.return %b : tensor<?xf32>
}
// CHECK: nn.broadcast_to: target_shape must be a 1-D i32 or i64 tensor of known length, got tensor<?xi64>

// -----
func.func @reshape_to_float_shape(%x: tensor<6xf32>, %s: tensor<2xf32>) -> tensor<?x?xf32> {
  %r = nn.reshape_to %x, %s : (tensor<6xf32>, tensor<2xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
// CHECK: nn.reshape_to: target_shape must be a 1-D i32 or i64 tensor of known length, got tensor<2xf32>

// -----
func.func @slice_to_bounds_per_axis(%x: tensor<8x3xf32>, %b: tensor<2xi64>) -> tensor<?x3xf32> {
  %r = nn.slice_to %x, %b, %b {axes = array<i64: 0>} : (tensor<8x3xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}
// CHECK: nn.slice_to: begins must be a 1-D i32 or i64 tensor of 1 values (one per axis), got tensor<2xi64>

// -----
func.func @slice_to_zero_step(%x: tensor<8x3xf32>, %b: tensor<1xi64>) -> tensor<?x3xf32> {
  %r = nn.slice_to %x, %b, %b {axes = array<i64: 0>, steps = array<i64: 0>} : (tensor<8x3xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}
// CHECK: nn.slice_to: steps must not be 0, got [0]

// -----
func.func @pad_by_pads_per_dim(%x: tensor<8x3xf32>, %p: tensor<2xi64>) -> tensor<?x?xf32> {
  %r = nn.pad_by %x, %p : (tensor<8x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
// CHECK: nn.pad_by: pads must be a 1-D i32 or i64 tensor of 4 values (a begin and an end per dim), got tensor<2xi64>
