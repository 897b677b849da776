// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @gathers(%x: tensor<3x4x5xf32>, %i: tensor<3x2x5xi64>, %j: tensor<3x2xi32>) -> (tensor<3x2x5xf32>, tensor<3x5xf32>) {
  %a = nn.gather_elements %x, %i {axis = 1 : i64, name = "ge"} : (tensor<3x4x5xf32>, tensor<3x2x5xi64>) -> tensor<3x2x5xf32>
  %b = nn.gather_nd %x, %j {batch_dims = 0 : i64} : (tensor<3x4x5xf32>, tensor<3x2xi32>) -> tensor<3x5xf32>
  func.return %a, %b : tensor<3x2x5xf32>, tensor<3x5xf32>
}
// CHECK:      nn.gather_elements %x, %i {axis = 1 : i64, name = "ge"} : (tensor<3x4x5xf32>, tensor<3x2x5xi64>) -> tensor<3x2x5xf32>
// CHECK-NEXT: nn.gather_nd %x, %j : (tensor<3x4x5xf32>, tensor<3x2xi32>) -> tensor<3x5xf32>

// -----
func.func @scatters(%x: tensor<3x4x5xf32>, %i: tensor<2x2xi64>, %u: tensor<2x5xf32>, %e: tensor<3x1x5xi64>, %v: tensor<3x1x5xf32>) -> (tensor<3x4x5xf32>, tensor<3x4x5xf32>) {
  %a = nn.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<3x4x5xf32>, tensor<2x2xi64>, tensor<2x5xf32>) -> tensor<3x4x5xf32>
  %b = nn.scatter_elements %x, %e, %v {axis = 1 : i64, reduction = "none"} : (tensor<3x4x5xf32>, tensor<3x1x5xi64>, tensor<3x1x5xf32>) -> tensor<3x4x5xf32>
  func.return %a, %b : tensor<3x4x5xf32>, tensor<3x4x5xf32>
}
// CHECK:      nn.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<3x4x5xf32>, tensor<2x2xi64>, tensor<2x5xf32>) -> tensor<3x4x5xf32>
// CHECK-NEXT: nn.scatter_elements %x, %e, %v {axis = 1 : i64} : (tensor<3x4x5xf32>, tensor<3x1x5xi64>, tensor<3x1x5xf32>) -> tensor<3x4x5xf32>

// -----
func.func @data_dependent(%x: tensor<3x4xf32>, %s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>) -> (tensor<2x?xi64>, tensor<?xi64>, tensor<3x2xf32>, tensor<3x2xi64>) {
  %n = nn.non_zero %x : (tensor<3x4xf32>) -> tensor<2x?xi64>
  %r = nn.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %v, %i = nn.top_k %x {k = 2 : i64, mode = "min", sort = "index"} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  func.return %n, %r, %v, %i : tensor<2x?xi64>, tensor<?xi64>, tensor<3x2xf32>, tensor<3x2xi64>
}
// CHECK:      nn.non_zero %x : (tensor<3x4xf32>) -> tensor<2x?xi64>
// CHECK-NEXT: nn.range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
// CHECK-NEXT: nn.top_k %x {k = 2 : i64, mode = "min", sort = "index"} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)

// -----
func.func @top_k_run_time_k(%x: tensor<3x4xf32>, %k: tensor<i64>) -> (tensor<3x?xf32>, tensor<3x?xi64>) {
  %v, %i = nn.top_k %x, %k : (tensor<3x4xf32>, tensor<i64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)
  func.return %v, %i : tensor<3x?xf32>, tensor<3x?xi64>
}
// CHECK: nn.top_k %x, %k : (tensor<3x4xf32>, tensor<i64>) -> (tensor<3x?xf32>, tensor<3x?xi64>)

// -----
func.func @others(%x: tensor<3x4xf32>, %i: tensor<3xi64>, %on: tensor<f32>, %off: tensor<f32>) -> (tensor<3x4xf32>, tensor<3x4xi1>, tensor<3x4xi1>, tensor<3x6xf32>) {
  %c = nn.cum_sum %x {axis = 1 : i64, exclusive = true, reverse = false} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %n = nn.is_nan %x : (tensor<3x4xf32>) -> tensor<3x4xi1>
  %f = nn.is_inf %x {detect_negative = false} : (tensor<3x4xf32>) -> tensor<3x4xi1>
  %h = nn.one_hot %i, %on, %off {depth = 6 : i64} : (tensor<3xi64>, tensor<f32>, tensor<f32>) -> tensor<3x6xf32>
  func.return %c, %n, %f, %h : tensor<3x4xf32>, tensor<3x4xi1>, tensor<3x4xi1>, tensor<3x6xf32>
}
// CHECK:      nn.cum_sum %x {axis = 1 : i64, exclusive = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: nn.is_nan %x : (tensor<3x4xf32>) -> tensor<3x4xi1>
// CHECK-NEXT: nn.is_inf %x {detect_negative = false} : (tensor<3x4xf32>) -> tensor<3x4xi1>
// CHECK-NEXT: nn.one_hot %i, %on, %off {depth = 6 : i64} : (tensor<3xi64>, tensor<f32>, tensor<f32>) -> tensor<3x6xf32>

// -----
func.func @boxes(%x: tensor<2x3x8x8xf32>, %r: tensor<5x4xf32>, %b: tensor<5xi64>, %bx: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>) -> (tensor<5x3x2x2xf32>, tensor<?x3xi64>) {
  %a = nn.roi_align %x, %r, %b {pooled_h = 2 : i64, pooled_w = 2 : i64, spatial_scale = 2.500000e-01 : f32, aligned_mode = "asymmetric"} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
  %n = nn.non_max_suppression %bx, %s {max_output_boxes_per_class = 3 : i64, iou_threshold = 5.000000e-01 : f32} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
  %m = nn.roi_align %x, %r, %b {pooled_h = 2 : i64, pooled_w = 2 : i64, mode = "max"} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
  func.return %a, %n : tensor<5x3x2x2xf32>, tensor<?x3xi64>
}
// CHECK:      nn.roi_align %x, %r, %b {pooled_h = 2 : i64, pooled_w = 2 : i64, spatial_scale = 2.500000e-01 : f32, aligned_mode = "asymmetric"} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>
// CHECK-NEXT: nn.non_max_suppression %bx, %s {max_output_boxes_per_class = 3 : i64, iou_threshold = 5.000000e-01 : f32} : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
// CHECK-NEXT: nn.roi_align %x, %r, %b {pooled_h = 2 : i64, pooled_w = 2 : i64, mode = "max"} : (tensor<2x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64>) -> tensor<5x3x2x2xf32>

// -----
func.func @run_time_shapes(%x: tensor<2x?xi64>, %v: tensor<f32>) -> tensor<?x?xf32> {
  %s = nn.shape_of %x : (tensor<2x?xi64>) -> tensor<2xi64>
  %b = nn.broadcast_to %v, %s : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %b : tensor<?x?xf32>
}
// CHECK:      nn.shape_of %x : (tensor<2x?xi64>) -> tensor<2xi64>
// CHECK-NEXT: nn.broadcast_to %v, %s : (tensor<f32>, tensor<2xi64>) -> tensor<?x?xf32>

// -----
func.func @reshape_to_run_time_shape(%x: tensor<2x?xf32>, %s: tensor<3xi64>) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>) {
  %r = nn.reshape_to %x, %s : (tensor<2x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %z = nn.reshape_to %x, %s {special_zero = false} : (tensor<2x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  func.return %r, %z : tensor<?x?x?xf32>, tensor<?x?x?xf32>
}
// CHECK:      nn.reshape_to %x, %s : (tensor<2x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
// CHECK-NEXT: nn.reshape_to %x, %s {special_zero = false} : (tensor<2x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>

// -----
func.func @slice_to_run_time_bounds(%x: tensor<8x3xf32>, %b: tensor<1xi64>, %e: tensor<1xi64>, %b2: tensor<2xi32>, %e2: tensor<2xi32>) -> (tensor<?x3xf32>, tensor<?x?xf32>) {
  %r = nn.slice_to %x, %b, %e {axes = array<i64: 0>} : (tensor<8x3xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
  %s = nn.slice_to %x, %b2, %e2 {axes = array<i64: -1, 0>, steps = array<i64: 1, -2>} : (tensor<8x3xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>
  func.return %r, %s : tensor<?x3xf32>, tensor<?x?xf32>
}
// CHECK:      nn.slice_to %x, %b, %e {axes = array<i64: 0>} : (tensor<8x3xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x3xf32>
// CHECK-NEXT: nn.slice_to %x, %b2, %e2 {axes = array<i64: -1, 0>, steps = array<i64: 1, -2>} : (tensor<8x3xf32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>

// -----
func.func @pad_by_run_time_pads(%x: tensor<8x3xf32>, %p: tensor<4xi64>, %q: tensor<4xi32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %r = nn.pad_by %x, %p {value = 5.000000e-01 : f32} : (tensor<8x3xf32>, tensor<4xi64>) -> tensor<?x?xf32>
  %s = nn.pad_by %x, %q {mode = "reflect"} : (tensor<8x3xf32>, tensor<4xi32>) -> tensor<?x?xf32>
  func.return %r, %s : tensor<?x?xf32>, tensor<?x?xf32>
}
// CHECK:      nn.pad_by %x, %p {value = 5.000000e-01 : f32} : (tensor<8x3xf32>, tensor<4xi64>) -> tensor<?x?xf32>
// CHECK-NEXT: nn.pad_by %x, %q {mode = "reflect"} : (tensor<8x3xf32>, tensor<4xi32>) -> tensor<?x?xf32>
