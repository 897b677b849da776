// RUN: ir-opt %s --split-input-file -p fuse-grouped-conv | filecheck %s

// Split -> two equal convolutions -> Concat in order is one convolution with group 2.
func.func @grouped(%x: tensor<1x4x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %p:2 = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>) -> (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>)
  %wa = nn.constant dense<1.0> : tensor<1x2x3x3xf32>
  %wb = nn.constant dense<2.0> : tensor<1x2x3x3xf32>
  %ba = nn.constant dense<0.5> : tensor<1xf32>
  %bb = nn.constant dense<-0.5> : tensor<1xf32>
  %a = nn.convolution %p#0, %wa, %ba {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, name = "a"} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  %b = nn.convolution %p#1, %wb, %bb {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, name = "b"} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x1x3x3xf32>
  %y = nn.concat %a, %b {axis = 1 : i64, name = "cat"} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @grouped
// CHECK-NEXT:    %[[W:.*]] = nn.constant @"cat/weights" : tensor<2x2x3x3xf32>
// CHECK-NEXT:    %[[B:.*]] = nn.constant dense<[5.000000e-01, -5.000000e-01]> : tensor<2xf32>
// CHECK-NEXT:    %[[Y:.*]] = nn.convolution %x, %[[W]], %[[B]] {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, name = "cat", group = 2 : i64}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Different strides: not one grouped convolution.
func.func @different(%x: tensor<1x4x5x5xf32>) -> tensor<1x2x1x1xf32> {
  %p:2 = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>) -> (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>)
  %w = nn.constant dense<1.0> : tensor<1x2x3x3xf32>
  %a = nn.convolution %p#0, %w {strides = array<i64: 2, 2>} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x2x2xf32>
  %b = nn.convolution %p#1, %w {strides = array<i64: 3, 3>} : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x1x1xf32>
  %pa = nn.pooling %a {method = "max", global_pool = true} : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  %y = nn.concat %pa, %b {axis = 1 : i64} : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>) -> tensor<1x2x1x1xf32>
  func.return %y : tensor<1x2x1x1xf32>
}
// CHECK-LABEL: func.func @different
// CHECK:         nn.split
// CHECK:         nn.concat

// -----

// Concat in another order than the split: kept.
func.func @swapped(%x: tensor<1x4x5x5xf32>) -> tensor<1x2x3x3xf32> {
  %p:2 = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>) -> (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>)
  %w = nn.constant dense<1.0> : tensor<1x2x3x3xf32>
  %a = nn.convolution %p#0, %w : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  %b = nn.convolution %p#1, %w : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  %y = nn.concat %b, %a {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}
// CHECK-LABEL: func.func @swapped
// CHECK:         nn.split
// CHECK:         nn.concat %b, %a

// -----

// A part of the split with another user: kept.
func.func @shared(%x: tensor<1x4x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>) {
  %p:2 = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>) -> (tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>)
  %w = nn.constant dense<1.0> : tensor<1x2x3x3xf32>
  %a = nn.convolution %p#0, %w : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  %b = nn.convolution %p#1, %w : (tensor<1x2x5x5xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x3x3xf32>
  %y = nn.concat %a, %b {axis = 1 : i64} : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %y, %p#1 : tensor<1x2x3x3xf32>, tensor<1x2x5x5xf32>
}
// CHECK-LABEL: func.func @shared
// CHECK:         nn.split
// CHECK:         nn.concat %a, %b
