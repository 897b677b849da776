// RUN: ir-opt %s --split-input-file -p convert-layout | filecheck %s

// An NHWC LayerNorm (MVN over the channels) between two convolutions: the transposes meet
// and cancel once the MVN normalises axis 1 of the NCHW tensor.
func.func @mvn_between_convolutions(%x: tensor<1x2x5x5xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x5x5xf32> {
  %c = nn.convolution %x, %w : (tensor<1x2x5x5xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x5x5xf32>
  %t = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x5x5xf32>) -> tensor<1x5x5x2xf32>
  %n = nn.mvn %t {axes = array<i64: -1>, eps = 1.0e-06 : f32, name = "ln"} : (tensor<1x5x5x2xf32>) -> tensor<1x5x5x2xf32>
  %b = nn.permute %n {order = array<i64: 0, 3, 1, 2>} : (tensor<1x5x5x2xf32>) -> tensor<1x2x5x5xf32>
  %d = nn.convolution %b, %w {name = "d"} : (tensor<1x2x5x5xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x5x5xf32>
  func.return %d : tensor<1x2x5x5xf32>
}
// CHECK-LABEL: func.func @mvn_between_convolutions
// CHECK-NEXT:    %c = nn.convolution %x, %w
// CHECK-NEXT:    %[[N:.*]] = nn.mvn %c {axes = array<i64: 1>, eps = 1.000000e-06 : f32, name = "ln"}
// CHECK-NEXT:    %d = nn.convolution %[[N]], %w {name = "d"}
// CHECK-NEXT:    func.return %d
