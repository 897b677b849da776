// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @scales(%x: tensor<?x3x10x10xf32>) -> tensor<?x3x7x25xf32> {
  %y = nn.resample %x {mode = "linear", scales = array<f32: 1.0, 1.0, 0.7, 2.5>, coordinate_transformation_mode = "align_corners", name = "up1"} : (tensor<?x3x10x10xf32>) -> tensor<?x3x7x25xf32>
  func.return %y : tensor<?x3x7x25xf32>
}
// CHECK:      %y = nn.resample %x {mode = "linear", scales = array<f32: 1.000000e+00, 1.000000e+00, 7.000000e-01, 2.500000e+00>, coordinate_transformation_mode = "align_corners", name = "up1"} : (tensor<?x3x10x10xf32>) -> tensor<?x3x7x25xf32>

// -----
func.func @sizes(%x: tensor<?x3x?x?xf32>) -> tensor<1x3x20x30xf32> {
  %y = nn.resample %x {sizes = array<i64: 1, 3, 20, 30>, nearest_mode = "floor", coordinate_transformation_mode = "asymmetric"} : (tensor<?x3x?x?xf32>) -> tensor<1x3x20x30xf32>
  func.return %y : tensor<1x3x20x30xf32>
}
// CHECK: nn.resample %x {sizes = array<i64: 1, 3, 20, 30>, nearest_mode = "floor", coordinate_transformation_mode = "asymmetric"} : (tensor<?x3x?x?xf32>) -> tensor<1x3x20x30xf32>

// -----
func.func @cubic(%x: tensor<4x6xf32>) -> tensor<8x3xf32> {
  %y = nn.resample %x {mode = "cubic", scales = array<f32: 2.0, 0.5>, cubic_coeff_a = -5.000000e-01 : f32} : (tensor<4x6xf32>) -> tensor<8x3xf32>
  func.return %y : tensor<8x3xf32>
}
// CHECK: nn.resample %x {mode = "cubic", scales = array<f32: 2.000000e+00, 5.000000e-01>, cubic_coeff_a = -5.000000e-01 : f32} : (tensor<4x6xf32>) -> tensor<8x3xf32>

// -----
func.func @resample_to_run_time_sizes(%x: tensor<1x2x5x7xf32>, %s: tensor<2xi64>) -> tensor<1x2x?x?xf32> {
  %y = nn.resample_to %x, %s {axes = array<i64: 2, 3>, mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x2x5x7xf32>, tensor<2xi64>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}
// CHECK: nn.resample_to %x, %s {axes = array<i64: 2, 3>, mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x2x5x7xf32>, tensor<2xi64>) -> tensor<1x2x?x?xf32>

// -----
func.func @resample_by_run_time_scales(%x: tensor<1x2x5x7xf32>, %s: tensor<2xf32>) -> tensor<1x2x?x?xf32> {
  %y = nn.resample_by %x, %s {axes = array<i64: 2, 3>, mode = "cubic", coordinate_transformation_mode = "asymmetric"} : (tensor<1x2x5x7xf32>, tensor<2xf32>) -> tensor<1x2x?x?xf32>
  func.return %y : tensor<1x2x?x?xf32>
}
// CHECK: nn.resample_by %x, %s {axes = array<i64: 2, 3>, mode = "cubic", coordinate_transformation_mode = "asymmetric"} : (tensor<1x2x5x7xf32>, tensor<2xf32>) -> tensor<1x2x?x?xf32>

// -----
func.func @resample_by_volumetric(%x: tensor<1x2x3x5x7xf32>, %s: tensor<3xf32>) -> tensor<1x2x?x?x?xf32> {
  %y = nn.resample_by %x, %s {axes = array<i64: 2, 3, 4>, mode = "linear"} : (tensor<1x2x3x5x7xf32>, tensor<3xf32>) -> tensor<1x2x?x?x?xf32>
  func.return %y : tensor<1x2x?x?x?xf32>
}
// CHECK: nn.resample_by %x, %s {axes = array<i64: 2, 3, 4>, mode = "linear"} : (tensor<1x2x3x5x7xf32>, tensor<3xf32>) -> tensor<1x2x?x?x?xf32>
