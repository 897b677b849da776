// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @neither(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.resample %x {name = "up2"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.resample 'up2': needs exactly one of scales and sizes

// -----
func.func @scales_count(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.resample %x {scales = array<f32: 2.0, 2.0>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.resample: scales needs 4 values (one per axis), got 2

// -----
func.func @scales_value(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.resample %x {scales = array<f32: 1.0, 1.0, -2.0, 2.0>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.resample: scales values must be > 0, got [1, 1, -2, 2]

// -----
func.func @sizes_value(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.resample %x {sizes = array<i64: 1, 3, 0, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.resample: sizes values must be >= 1, got [1, 3, 0, 8]

// -----
func.func @empty(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x0x4xf32> {
  %y = nn.resample %x {scales = array<f32: 1.0, 1.0, 0.2, 1.0>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x0x4xf32>
  func.return %y : tensor<1x3x0x4xf32>
}
// CHECK: nn.resample: output size [1, 3, 0, 4] is empty

// -----
func.func @mode(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.resample %x {mode = "area", sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.resample: mode must be one of cubic, linear, nearest, got 'area'

// -----
func.func @coordinates(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.resample %x {coordinate_transformation_mode = "tf_crop_and_resize", sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.resample: coordinate_transformation_mode must be one of align_corners, asymmetric, half_pixel, pytorch_half_pixel, tf_half_pixel_for_nn, got 'tf_crop_and_resize'

// -----
func.func @nearest(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %y = nn.resample %x {nearest_mode = "round", sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  func.return %y : tensor<1x3x8x8xf32>
}
// CHECK: nn.resample: nearest_mode must be one of ceil, floor, round_prefer_ceil, round_prefer_floor, got 'round'

// -----
func.func @bad_result(%x: tensor<1x3x10x10xf32>) -> tensor<1x3x6x10xf32> {
  %y = nn.resample %x {scales = array<f32: 1.0, 1.0, 0.7, 1.0>} : (tensor<1x3x10x10xf32>) -> tensor<1x3x6x10xf32>
  func.return %y : tensor<1x3x6x10xf32>
}
// CHECK: nn.resample: result #0 has type tensor<1x3x6x10xf32> but the operands imply tensor<1x3x7x10xf32>

// -----
func.func @resample_to_sizes_per_axis(%x: tensor<1x2x5x7xf32>, %s: tensor<4xi64>) -> tensor<1x2x?x?xf32> {
  %y = nn.resample_to %x, %s {axes = array<i64: 2, 3>} : (tensor<1x2x5x7xf32>, tensor<4xi64>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}
// CHECK: nn.resample_to: sizes must be a 1-D i32 or i64 tensor of 2 values (one per axis), got tensor<4xi64>

// -----
func.func @resample_by_integer_scales(%x: tensor<1x2x5x7xf32>, %s: tensor<2xi64>) -> tensor<1x2x?x?xf32> {
  %y = nn.resample_by %x, %s {axes = array<i64: 2, 3>} : (tensor<1x2x5x7xf32>, tensor<2xi64>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}
// CHECK: nn.resample_by: scales must be a 1-D f32 tensor of 2 values (one per axis), got tensor<2xi64>
