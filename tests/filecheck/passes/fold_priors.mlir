// RUN: ir-opt %s --split-input-file -p canonicalize | filecheck %s

// Static feature-map and image shapes: the priors are a constant, the inputs stay unread.
func.func @static(%f: tensor<1x8x1x2xf32>, %img: tensor<1x3x10x20xf32>) -> tensor<1x2x8xf32> {
  %p = nn.prior_box %f, %img {min_size = array<f32: 4.0>, variance = array<f32: 0.1>} : (tensor<1x8x1x2xf32>, tensor<1x3x10x20xf32>) -> tensor<1x2x8xf32>
  func.return %p : tensor<1x2x8xf32>
}
// CHECK-LABEL: func.func @static
// CHECK-NOT:   nn.prior_box
// centre (5, 5) of the 10x10-pixel cell, min_size 4: x 3..7 of 20, y 3..7 of 10; then variances
// CHECK:       nn.constant dense<{{\[\[\[}}1.500000e-01, 3.000000e-01, 3.500000e-01, 7.000000e-01, 6.500000e-01, 3.000000e-01, 8.500000e-01, 7.000000e-01], {{\[}}1.000000e-01,

// -----
// A dynamic feature map: nothing to fold.
func.func @dynamic(%f: tensor<?x8x?x?xf32>, %img: tensor<1x3x30x40xf32>) -> tensor<1x2x?xf32> {
  %p = nn.prior_box_clustered %f, %img {width = array<f32: 5.0>, height = array<f32: 9.0>} : (tensor<?x8x?x?xf32>, tensor<1x3x30x40xf32>) -> tensor<1x2x?xf32>
  func.return %p : tensor<1x2x?xf32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK:       nn.prior_box_clustered
