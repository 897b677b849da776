// RUN: ir-opt %s --split-input-file -p fuse-linear-ops | filecheck %s

// BatchNormalization after a convolution folds into its weights and a new bias:
// scale = gamma / sqrt(var + eps) = [2, 2], shift = beta - mean * scale = [0, -1].
func.func @conv_bn(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %c = nn.convolution %x, %w {name = "conv"} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %g = nn.constant dense<[4.0, 6.0]> : tensor<2xf32>
  %b = nn.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = nn.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = nn.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %y = nn.batch_norm %c, %g, %b, %m, %v {epsilon = 1.0 : f32, name = "bn"} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @conv_bn
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<2x1x1x1xf32>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[0.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.convolution %x, %{{.*}}, %{{.*}} {name = "conv"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// With nothing to fuse into, BatchNormalization becomes one ScaleShift.
func.func @bn_alone(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %g = nn.constant dense<[4.0, 6.0]> : tensor<2xf32>
  %b = nn.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = nn.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = nn.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %y = nn.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0 : f32, name = "bn"} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %r = nn.relu %y : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @bn_alone
// CHECK-NEXT:    %{{.*}} = nn.constant dense<2.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[0.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.scale_shift %x, %{{.*}}, %{{.*}} {name = "bn"}
// CHECK-NEXT:    %r = nn.relu %[[S]]

// -----

// A chain of mul and add by constants (sub and div too) merges into one ScaleShift:
// ((x * 2 - 1) / 0.5 + 3) = x * 4 + 1.
func.func @chain(%x: tensor<1x2x3xf32>) -> tensor<1x2x3xf32> {
  %two = nn.constant dense<2.0> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<1x1x1xf32>
  %half = nn.constant dense<0.5> : tensor<1xf32>
  %three = nn.constant dense<3.0> : tensor<f32>
  %a = nn.eltwise %x, %two {operation = "mul"} : (tensor<1x2x3xf32>, tensor<f32>) -> tensor<1x2x3xf32>
  %b = nn.eltwise %a, %one {operation = "sub"} : (tensor<1x2x3xf32>, tensor<1x1x1xf32>) -> tensor<1x2x3xf32>
  %c = nn.eltwise %b, %half {operation = "div"} : (tensor<1x2x3xf32>, tensor<1xf32>) -> tensor<1x2x3xf32>
  %d = nn.eltwise %three, %c {operation = "sum", name = "last"} : (tensor<f32>, tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
  func.return %d : tensor<1x2x3xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %{{.*}} = nn.constant dense<4.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    %[[S:.*]] = nn.scale_shift %x, %{{.*}}, %{{.*}} {name = "last"}
// CHECK-NEXT:    func.return %[[S]]

// -----

// A single mul by a constant that varies along two axes stays one eltwise.
func.func @not_per_channel(%x: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
  %s = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y = nn.eltwise %x, %s {operation = "mul"} : (tensor<1x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2xf32>
  func.return %y : tensor<1x2x2xf32>
}
// CHECK-LABEL: func.func @not_per_channel
// CHECK-NEXT:    %s = nn.constant
// CHECK-NEXT:    %y = nn.eltwise %x, %s {operation = "mul"}
// CHECK-NEXT:    func.return %y

// -----

// Forward: a mul fuses into the next convolution's input channels (padding or not), but an
// add does not fuse forward into a convolution that reads padding.
func.func @forward_padded(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %t = nn.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %s = nn.constant dense<[[[10.0]], [[100.0]]]> : tensor<2x1x1xf32>
  %a = nn.eltwise %x, %t {operation = "sum", name = "mean"} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %m = nn.eltwise %a, %s {operation = "mul"} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %w = nn.constant dense<[[[[1.0]], [[1.0]]]]> : tensor<1x2x1x1xf32>
  %c = nn.convolution %m, %w {pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  func.return %c : tensor<1x1x3x3xf32>
}
// CHECK-LABEL: func.func @forward_padded
// CHECK:         %[[A:.*]] = nn.eltwise %x, %{{.*}} {operation = "sum", name = "mean"}
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[\[\[}}1.000000e+01]], {{\[\[}}1.000000e+02]]]]> : tensor<1x2x1x1xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.convolution %[[A]], %{{[^,]*}} {
// CHECK-NEXT:    func.return %[[C]]

// -----

// Without padding the add fuses forward too: bias = sum of weights * shift = 1*1 + 1*2.
func.func @forward_unpadded(%x: tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %t = nn.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %a = nn.eltwise %x, %t {operation = "sum"} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %w = nn.constant dense<[[[[1.0]], [[1.0]]]]> : tensor<1x2x1x1xf32>
  %c = nn.convolution %a, %w {auto_pad = "same_upper"} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  func.return %c : tensor<1x1x3x3xf32>
}
// CHECK-LABEL: func.func @forward_unpadded
// CHECK:         %{{.*}} = nn.constant dense<3.000000e+00> : tensor<1xf32>
// CHECK-NEXT:    %[[C:.*]] = nn.convolution %x, %{{.*}}, %{{.*}} {auto_pad = "same_upper"}
// CHECK-NEXT:    func.return %[[C]]

// -----

// A convolution with a second user keeps its weights: the BN becomes a ScaleShift.
func.func @shared_conv(%x: tensor<1x1x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %w = nn.constant dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>
  %c = nn.convolution %x, %w : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x2x2xf32>
  %g = nn.constant dense<[4.0, 6.0]> : tensor<2xf32>
  %b = nn.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %m = nn.constant dense<[0.5, 1.0]> : tensor<2xf32>
  %v = nn.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %y = nn.batch_norm %c, %g, %b, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %r = nn.relu %c : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y, %r : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
// CHECK-LABEL: func.func @shared_conv
// CHECK:         %c = nn.convolution %x, %w :
// CHECK:         %[[S:.*]] = nn.scale_shift %c
// CHECK-NEXT:    %r = nn.relu %c
// CHECK-NEXT:    func.return %[[S]], %r

// -----

// Depthwise convolution: each output channel scales its own filter.
func.func @depthwise(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = nn.constant dense<1.0> : tensor<2x1x1x1xf32>
  %c = nn.convolution %x, %w {group = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %s = nn.constant dense<[[[5.0]], [[7.0]]]> : tensor<2x1x1xf32>
  %y = nn.eltwise %c, %s {operation = "mul"} : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @depthwise
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[\[\[}}5.000000e+00]]], {{\[\[\[}}7.000000e+00]]]]>
// CHECK-NEXT:    %[[C:.*]] = nn.convolution %x, %{{[^,]*}} {group = 2 : i64}
// CHECK-NEXT:    func.return %[[C]]

// -----

// MatMul with constant weights and a following add becomes a FullyConnected with a bias.
func.func @matmul_add(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = nn.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %y = nn.matmul %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %b = nn.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %z = nn.eltwise %y, %b {operation = "sum", name = "bias"} : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %z : tensor<3x2xf32>
}
// CHECK-LABEL: func.func @matmul_add
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]>
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[5.000000e-01, 2.500000e-01]>
// CHECK-NEXT:    %[[F:.*]] = nn.fully_connected %x
// CHECK-NEXT:    func.return %[[F]]

// -----

// Deconvolution: a mul after it fuses backward; an add before it never fuses forward.
func.func @deconv(%x: tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf32> {
  %t = nn.constant dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>
  %a = nn.eltwise %x, %t {operation = "sum", name = "shift"} : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %w = nn.constant dense<1.0> : tensor<2x1x2x2xf32>
  %d = nn.deconvolution %a, %w {strides = array<i64: 2, 2>, group = 2 : i64} : (tensor<1x2x2x2xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.constant dense<[[[3.0]], [[4.0]]]> : tensor<2x1x1xf32>
  %y = nn.eltwise %d, %s {operation = "mul"} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @deconv
// CHECK:         %[[A:.*]] = nn.eltwise %x, %{{.*}} {operation = "sum", name = "shift"}
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[\[\[}}3.000000e+00, 3.000000e+00], [3.000000e+00, 3.000000e+00]]], {{\[\[\[}}4.000000e+00, 4.000000e+00], [4.000000e+00, 4.000000e+00]]]]>
// CHECK-NEXT:    %[[D:.*]] = nn.deconvolution %[[A]]
// CHECK-NEXT:    func.return %[[D]]

// -----

// A constant channel permutation before an ungrouped convolution permutes its weights.
func.func @permutation(%x: tensor<1x3x2x2xf32>) -> tensor<1x1x2x2xf32> {
  %i = nn.constant dense<[2, 1, 0]> : tensor<3xi64>
  %p = nn.gather %x, %i {axis = 1 : i64} : (tensor<1x3x2x2xf32>, tensor<3xi64>) -> tensor<1x3x2x2xf32>
  %w = nn.constant dense<[[[[1.0]], [[2.0]], [[3.0]]]]> : tensor<1x3x1x1xf32>
  %c = nn.convolution %p, %w : (tensor<1x3x2x2xf32>, tensor<1x3x1x1xf32>) -> tensor<1x1x2x2xf32>
  func.return %c : tensor<1x1x2x2xf32>
}
// CHECK-LABEL: func.func @permutation
// CHECK-NEXT:    %{{.*}} = nn.constant dense<{{\[\[\[\[}}3.000000e+00]], {{\[\[}}2.000000e+00]], {{\[\[}}1.000000e+00]]]]>
// CHECK-NEXT:    %[[C:.*]] = nn.convolution %x
// CHECK-NEXT:    func.return %[[C]]

// -----

// A dequantization (integer convert -> sub zero point -> mul scale) stays sub -> mul:
// q - z is exact, so (q - z) * s rounds once, as onnxruntime's DequantizeLinear; the
// merged q * s + (-z * s) gave 32768 for 0 at s = 6.9e10. A float input's sub -> mul merges.
func.func @dequantize_exact(%q: tensor<1x4xui8>, %x: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %f = nn.convert %q {destination_type = f32, name = "dq/convert"} : (tensor<1x4xui8>) -> tensor<1x4xf32>
  %z = nn.constant dense<100.0> : tensor<f32>
  %d = nn.eltwise %f, %z {operation = "sub", name = "dq/sub"} : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %s = nn.constant dense<3.0> : tensor<f32>
  %y = nn.eltwise %d, %s {operation = "mul", name = "dq"} : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %d2 = nn.eltwise %x, %z {operation = "sub", name = "f/sub"} : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %y2 = nn.eltwise %d2, %s {operation = "mul", name = "f"} : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  func.return %y, %y2 : tensor<1x4xf32>, tensor<1x4xf32>
}
// CHECK-LABEL: func.func @dequantize_exact
// CHECK:         nn.convert %q
// CHECK:         = nn.eltwise %f, %z {operation = "sub", name = "dq/sub"}
// CHECK:         = nn.eltwise %d, %s {operation = "mul", name = "dq"}
// CHECK:         = nn.scale_shift %x
// CHECK:         func.return %y,
