// RUN: ir-opt %s -p 'preprocess{mean="data[1,2,3]" scale="[4,8,16]" reverse-input-channels=true}' | filecheck %s
// RUN: ir-opt %s -p 'preprocess{scale="data[4,8,16]" reverse-input-channels=true},fuse-linear-ops' | filecheck %s --check-prefix FUSED
// RUN: ir-opt %s -p 'preprocess{mean="data[1,2,3]"},fuse-linear-ops' | filecheck %s --check-prefix PADDED
// RUN: not ir-opt %s -p 'preprocess{mean="other[1,2,3]"}' 2>&1 | filecheck %s --check-prefix NAME
// RUN: not ir-opt %s -p 'preprocess{mean="data[1,2]"}' 2>&1 | filecheck %s --check-prefix COUNT

func.func @main(%x: tensor<1x3x4x4xf32> {nn.name = "data"}) -> tensor<1x2x4x4xf32> {
  %w = nn.constant dense<[[[[1.0]], [[2.0]], [[3.0]]], [[[4.0]], [[5.0]], [[6.0]]]]> : tensor<2x3x1x1xf32>
  %c = nn.convolution %x, %w {pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, name = "conv"} : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.pooling %c {method = "max", kernel = array<i64: 3, 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %p : tensor<1x2x4x4xf32>
}
// The channel reversal, then mean, then scale (values in the model's channel order), all before the first op.
// CHECK:      func.func @main(%x: tensor<1x3x4x4xf32> {nn.name = "data"})
// CHECK-NEXT:   %{{.*}} = nn.constant dense<[2, 1, 0]> : tensor<3xi64>
// CHECK-NEXT:   %[[R:.*]] = nn.gather %x, %{{.*}} {axis = 1 : i64, name = "data/reverse_channels"}
// CHECK-NEXT:   %{{.*}} = nn.constant dense<{{\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]], {{\[\[}}3.000000e+00]]]> : tensor<3x1x1xf32>
// CHECK-NEXT:   %[[M:.*]] = nn.eltwise %[[R]], %{{.*}} {operation = "sub", name = "data/mean"}
// CHECK-NEXT:   %{{.*}} = nn.constant dense<{{\[\[\[}}4.000000e+00]], {{\[\[}}8.000000e+00]], {{\[\[}}1.600000e+01]]]> : tensor<3x1x1xf32>
// CHECK-NEXT:   %[[S:.*]] = nn.eltwise %[[M]], %{{.*}} {operation = "div", name = "data/scale"}
// CHECK-NEXT:   %w = nn.constant
// CHECK-NEXT:   %c = nn.convolution %[[S]], %w

// Scale and reversal fold into the convolution: no extra op is left; w'[o, k] = w[o, 2 - k] / scale[2 - k].
// FUSED:      func.func @main
// FUSED-NEXT:   %{{.*}} = nn.constant dense<{{\[\[\[\[}}1.875000e-01]], {{\[\[}}2.500000e-01]], {{\[\[}}2.500000e-01]]], {{\[\[\[}}3.750000e-01]], {{\[\[}}6.250000e-01]], {{\[\[}}1.000000e+00]]]]> : tensor<2x3x1x1xf32>
// FUSED-NEXT:   %{{.*}} = nn.convolution %x
// FUSED-NEXT:   nn.pooling

// A mean cannot fold into a convolution that reads padding: it stays, as one op.
// PADDED:      func.func @main
// PADDED-NEXT:   nn.constant
// PADDED-NEXT:   %[[M:.*]] = nn.eltwise %x, %{{.*}} {operation = "sub", name = "data/mean"}
// PADDED-NEXT:   %w = nn.constant
// PADDED-NEXT:   %c = nn.convolution %[[M]], %w

// NAME: irforge: error[{{E[0-9]+}}]: mean names input 'other', which the model does not have; its inputs are: data
// COUNT: irforge: error[{{E[0-9]+}}]: mean for input 'data' has 2 values but the input has 3 channels; give one value per channel
