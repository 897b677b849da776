// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @prior_box_no_sizes(%f: tensor<1x8x3x4xf32>, %img: tensor<1x3x30x40xf32>) -> tensor<1x2x48xf32> {
  %p = nn.prior_box %f, %img {min_size = array<f32>, name = "pb"} : (tensor<1x8x3x4xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x48xf32>
  func.return %p : tensor<1x2x48xf32>
}
// CHECK: nn.prior_box 'pb': min_size must not be empty

// -----
func.func @prior_box_result(%f: tensor<1x8x3x4xf32>, %img: tensor<1x3x30x40xf32>) -> tensor<1x2x40xf32> {
  %p = nn.prior_box %f, %img {min_size = array<f32: 4.0>} : (tensor<1x8x3x4xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x40xf32>
  func.return %p : tensor<1x2x40xf32>
}
// CHECK: nn.prior_box: result #0 has type tensor<1x2x40xf32> but the operands imply tensor<1x2x48xf32>

// -----
func.func @clustered_sizes(%f: tensor<1x8x3x4xf32>, %img: tensor<1x3x30x40xf32>) -> tensor<1x2x96xf32> {
  %p = nn.prior_box_clustered %f, %img {width = array<f32: 5.0, 12.0>, height = array<f32: 9.0>} : (tensor<1x8x3x4xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x96xf32>
  func.return %p : tensor<1x2x96xf32>
}
// CHECK: nn.prior_box_clustered: width and height need the same, non-zero number of values, got 2 and 1

// -----
func.func @detection_conf(%loc: tensor<2x40xf32>, %conf: tensor<2x20xf32>, %pri: tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32> {
  %d = nn.detection_output %loc, %conf, %pri {num_classes = 3 : i64, nms_threshold = 0.45 : f32, keep_top_k = 10 : i64, name = "det"} : (tensor<2x40xf32>, tensor<2x20xf32>, tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32>
  func.return %d : tensor<1x1x20x7xf32>
}
// CHECK: nn.detection_output 'det': confidence must hold 3 values per prior (30 per image), got shape [2, 20]

// -----
func.func @detection_code(%loc: tensor<2x40xf32>, %conf: tensor<2x30xf32>, %pri: tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32> {
  %d = nn.detection_output %loc, %conf, %pri {num_classes = 3 : i64, nms_threshold = 0.45 : f32, keep_top_k = 10 : i64, code_type = "CENTER"} : (tensor<2x40xf32>, tensor<2x30xf32>, tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32>
  func.return %d : tensor<1x1x20x7xf32>
}
// CHECK: nn.detection_output: code_type must be one of caffe.PriorBoxParameter.CENTER_SIZE, caffe.PriorBoxParameter.CORNER, caffe.PriorBoxParameter.CORNER_SIZE, got 'CENTER'

// -----
func.func @detection_nms(%loc: tensor<2x40xf32>, %conf: tensor<2x30xf32>, %pri: tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32> {
  %d = nn.detection_output %loc, %conf, %pri {num_classes = 3 : i64, nms_threshold = 1.5 : f32, keep_top_k = 10 : i64} : (tensor<2x40xf32>, tensor<2x30xf32>, tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32>
  func.return %d : tensor<1x1x20x7xf32>
}
// CHECK: nn.detection_output: nms_threshold must be in [0, 1], got 1.5
