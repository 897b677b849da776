// RUN: ir-opt %s --split-input-file -p channels-first-mlp | filecheck %s

// ConvNeXt's block MLP between a transpose to NHWC and one back: two 1x1 convolutions on NCHW.
func.func @mlp(%x: tensor<1x2x28x28xf32>) -> tensor<1x2x28x28xf32> {
  %t = nn.permute %x {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x28x28xf32>) -> tensor<1x28x28x2xf32>
  %w1 = nn.constant dense<1.0> : tensor<3x2xf32>
  %b1 = nn.constant dense<0.5> : tensor<3xf32>
  %a = nn.fully_connected %t, %w1, %b1 {name = "fc1"} : (tensor<1x28x28x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x28x28x3xf32>
  %g = nn.activation %a {kind = "gelu", name = "gelu"} : (tensor<1x28x28x3xf32>) -> tensor<1x28x28x3xf32>
  %w2 = nn.constant dense<2.0> : tensor<3x2xf32>
  %b = nn.matmul %g, %w2 {name = "fc2"} : (tensor<1x28x28x3xf32>, tensor<3x2xf32>) -> tensor<1x28x28x2xf32>
  %y = nn.permute %b {order = array<i64: 0, 3, 1, 2>} : (tensor<1x28x28x2xf32>) -> tensor<1x2x28x28xf32>
  func.return %y : tensor<1x2x28x28xf32>
}
// CHECK-LABEL: func.func @mlp
// CHECK-NOT:     nn.permute
// CHECK:         %[[W1:.*]] = nn.constant dense<1.000000e+00> : tensor<3x2x1x1xf32>
// CHECK-NEXT:    %[[A:.*]] = nn.convolution %x, %[[W1]], %b1 {strides = array<i64: 1, 1>, pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>, dilations = array<i64: 1, 1>, name = "fc1"} {{.*}} -> tensor<1x3x28x28xf32>
// CHECK-NEXT:    %[[G:.*]] = nn.activation %[[A]] {kind = "gelu"{{.*}} -> tensor<1x3x28x28xf32>
// CHECK-NEXT:    %[[W2:.*]] = nn.constant dense<2.000000e+00> : tensor<2x3x1x1xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.convolution %[[G]], %[[W2]] {{.*}}name = "fc2"} {{.*}} -> tensor<1x2x28x28xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     nn.permute

// -----

// A plane of 14x14 positions stays channels-last (`MIN_POSITIONS`).
func.func @small(%x: tensor<1x2x14x14xf32>) -> tensor<1x2x14x14xf32> {
  %t = nn.permute %x {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x14x14xf32>) -> tensor<1x14x14x2xf32>
  %w1 = nn.constant dense<1.0> : tensor<2x2xf32>
  %a = nn.fully_connected %t, %w1 : (tensor<1x14x14x2xf32>, tensor<2x2xf32>) -> tensor<1x14x14x2xf32>
  %y = nn.permute %a {order = array<i64: 0, 3, 1, 2>} : (tensor<1x14x14x2xf32>) -> tensor<1x2x14x14xf32>
  func.return %y : tensor<1x2x14x14xf32>
}
// CHECK-LABEL: func.func @small
// CHECK-NEXT:    nn.permute
// CHECK:         nn.fully_connected
// CHECK-NEXT:    nn.permute

// -----

// The rewrite erases the weights it orphaned, and only those: an unused constant the chain
// never read stays (it is not this pass's to remove).
func.func @unrelated(%x: tensor<1x2x28x28xf32>) -> tensor<1x2x28x28xf32> {
  %keep = nn.constant dense<7.0> : tensor<5xf32>
  %t = nn.permute %x {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x28x28xf32>) -> tensor<1x28x28x2xf32>
  %w1 = nn.constant dense<1.0> : tensor<2x2xf32>
  %a = nn.fully_connected %t, %w1 : (tensor<1x28x28x2xf32>, tensor<2x2xf32>) -> tensor<1x28x28x2xf32>
  %y = nn.permute %a {order = array<i64: 0, 3, 1, 2>} : (tensor<1x28x28x2xf32>) -> tensor<1x2x28x28xf32>
  func.return %y : tensor<1x2x28x28xf32>
}
// CHECK-LABEL: func.func @unrelated
// CHECK-NEXT:    %keep = nn.constant dense<7.000000e+00> : tensor<5xf32>
// CHECK-NOT:     tensor<2x2xf32>
// CHECK:         nn.constant dense<1.000000e+00> : tensor<2x2x1x1xf32>
// CHECK-NEXT:    nn.convolution
// CHECK-NOT:     tensor<2x2xf32>
// CHECK:         func.return
