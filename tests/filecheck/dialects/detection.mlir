// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @prior_box(%f: tensor<1x8x3x4xf32>, %img: tensor<1x3x30x40xf32>) -> tensor<1x2x192xf32> {
  %p = nn.prior_box %f, %img {min_size = array<f32: 4.0>, max_size = array<f32: 9.0>, aspect_ratio = array<f32: 2.0>, flip = true, clip = true, variance = array<f32: 0.1, 0.1, 0.2, 0.2>, name = "mbox_priorbox"} : (tensor<1x8x3x4xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x192xf32>
  func.return %p : tensor<1x2x192xf32>
}
// CHECK:      %p = nn.prior_box %f, %img {min_size = array<f32: 4.000000e+00>, max_size = array<f32: 9.000000e+00>, aspect_ratio = array<f32: 2.000000e+00>, flip = true, clip = true, variance = array<f32: 1.000000e-01, 1.000000e-01, 2.000000e-01, 2.000000e-01>, name = "mbox_priorbox"} : (tensor<1x8x3x4xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x192xf32>

// -----
func.func @prior_box_clustered(%f: tensor<?x8x?x?xf32>, %img: tensor<1x3x30x40xf32>) -> tensor<1x2x?xf32> {
  %p = nn.prior_box_clustered %f, %img {width = array<f32: 5.0, 12.0>, height = array<f32: 9.0, 4.0>, step_w = 16.0 : f32, step_h = 16.0 : f32} : (tensor<?x8x?x?xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x?xf32>
  func.return %p : tensor<1x2x?xf32>
}
// CHECK:      %p = nn.prior_box_clustered %f, %img {width = array<f32: 5.000000e+00, 1.200000e+01>, height = array<f32: 9.000000e+00, 4.000000e+00>, step_w = 1.600000e+01 : f32, step_h = 1.600000e+01 : f32} : (tensor<?x8x?x?xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x?xf32>

// -----
func.func @detection_output(%loc: tensor<2x40xf32>, %conf: tensor<2x30xf32>, %pri: tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32> {
  %d = nn.detection_output %loc, %conf, %pri {num_classes = 3 : i64, nms_threshold = 4.500000e-01 : f32, keep_top_k = 10 : i64, top_k = 20 : i64, code_type = "caffe.PriorBoxParameter.CENTER_SIZE", confidence_threshold = 0.01 : f32, name = "detection_out"} : (tensor<2x40xf32>, tensor<2x30xf32>, tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32>
  func.return %d : tensor<1x1x20x7xf32>
}
// CHECK:      %d = nn.detection_output %loc, %conf, %pri {num_classes = 3 : i64, nms_threshold = 4.500000e-01 : f32, keep_top_k = 10 : i64, top_k = 20 : i64, code_type = "caffe.PriorBoxParameter.CENTER_SIZE", confidence_threshold = 1.000000e-02 : f32, name = "detection_out"} : (tensor<2x40xf32>, tensor<2x30xf32>, tensor<1x2x40xf32>) -> tensor<1x1x20x7xf32>

// -----
func.func @detection_output_clipped(%loc: tensor<1x40xf32>, %conf: tensor<1x30xf32>, %pri: tensor<1x2x40xf32>) -> tensor<1x1x30x7xf32> {
  %d = nn.detection_output %loc, %conf, %pri {num_classes = 3 : i64, nms_threshold = 5.000000e-01 : f32, code_type = "caffe.PriorBoxParameter.CENTER_SIZE", clip_before_nms = true, name = "detection"} : (tensor<1x40xf32>, tensor<1x30xf32>, tensor<1x2x40xf32>) -> tensor<1x1x30x7xf32>
  func.return %d : tensor<1x1x30x7xf32>
}
// CHECK:      %d = nn.detection_output %loc, %conf, %pri {num_classes = 3 : i64, nms_threshold = 5.000000e-01 : f32, code_type = "caffe.PriorBoxParameter.CENTER_SIZE", clip_before_nms = true, name = "detection"} : (tensor<1x40xf32>, tensor<1x30xf32>, tensor<1x2x40xf32>) -> tensor<1x1x30x7xf32>
