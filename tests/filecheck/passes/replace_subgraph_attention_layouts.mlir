// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// timm EfficientViT-M: channel-first values, y = v @ softmax(q^T k * c + bias)^T: the op
// between a Permute of the values and one of its result.
func.func @values_transposed(%q: tensor<2x8x6xf32>, %k: tensor<2x8x6xf32>, %v: tensor<2x8x6xf32>, %bias: tensor<6x6xf32>) -> tensor<2x8x6xf32> {
  %c = nn.constant dense<0.3> : tensor<f32>
  %qt = nn.permute %q {order = array<i64: 0, 2, 1>} : (tensor<2x8x6xf32>) -> tensor<2x6x8xf32>
  %s = nn.matmul %qt, %k : (tensor<2x6x8xf32>, tensor<2x8x6xf32>) -> tensor<2x6x6xf32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<2x6x6xf32>, tensor<f32>) -> tensor<2x6x6xf32>
  %a = nn.eltwise %m, %bias {operation = "sum"} : (tensor<2x6x6xf32>, tensor<6x6xf32>) -> tensor<2x6x6xf32>
  %p = nn.softmax %a {axis = -1 : i64} : (tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %pt = nn.permute %p {order = array<i64: 0, 2, 1>} : (tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %y = nn.matmul %v, %pt {name = "attn"} : (tensor<2x8x6xf32>, tensor<2x6x6xf32>) -> tensor<2x8x6xf32>
  func.return %y : tensor<2x8x6xf32>
}
// CHECK-LABEL: func.func @values_transposed
// CHECK-NEXT:    %qt = nn.permute %q
// CHECK-NEXT:    %[[V:[a-z_0-9]+]] = nn.permute %v {order = array<i64: 0, 2, 1>, name = "attn/value"}
// CHECK-NEXT:    %[[K:[a-z_0-9]+]] = nn.permute %k {order = array<i64: 0, 2, 1>, name = "attn/key"}
// CHECK-NEXT:    %[[O:[a-z_0-9]+]] = nn.scaled_dot_product_attention %qt, %[[K]], %[[V]], %bias {scale = 3.000000e-01 : f32, name = "attn/attention"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.permute %[[O]] {order = array<i64: 0, 2, 1>, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// timm BoTNet: k^T reshaped from channel-first keys, relative logits computed from q by a
// product with constant weights: that product is the mask, the other one the scores.
func.func @relative_logits(%q: tensor<2x6x8xf32>, %keys: tensor<1x16x6xf32>, %v: tensor<2x6x8xf32>) -> tensor<2x6x8xf32> {
  %c = nn.constant dense<0.353553385> : tensor<f32>
  %w = nn.constant dense<0.5> : tensor<8x6xf32>
  %kt = nn.reshape %keys {shape = array<i64: 2, 8, 6>} : (tensor<1x16x6xf32>) -> tensor<2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<2x6x8xf32>, tensor<2x8x6xf32>) -> tensor<2x6x6xf32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<2x6x6xf32>, tensor<f32>) -> tensor<2x6x6xf32>
  %rel = nn.matmul %q, %w : (tensor<2x6x8xf32>, tensor<8x6xf32>) -> tensor<2x6x6xf32>
  %a = nn.eltwise %m, %rel {operation = "sum"} : (tensor<2x6x6xf32>, tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %p = nn.softmax %a {axis = -1 : i64} : (tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<2x6x6xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  func.return %y : tensor<2x6x8xf32>
}
// CHECK-LABEL: func.func @relative_logits
// CHECK:         %kt = nn.reshape %keys
// CHECK:         %rel = nn.matmul %q, %w
// CHECK-NEXT:    %[[K:[a-z_0-9]+]] = nn.permute %kt {order = array<i64: 0, 2, 1>, name = "attn/key"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %[[K]], %v, %rel {name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// A Permute of the probabilities that is not the swap of their last two axes: nothing changes.
func.func @other_permute(%q: tensor<2x6x6x8xf32>, %k: tensor<2x6x6x8xf32>, %w: tensor<2x6x8x6xf32>) -> tensor<2x6x8x6xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<2x6x6x8xf32>) -> tensor<2x6x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<2x6x6x8xf32>, tensor<2x6x8x6xf32>) -> tensor<2x6x6x6xf32>
  %p = nn.softmax %s {axis = -1 : i64} : (tensor<2x6x6x6xf32>) -> tensor<2x6x6x6xf32>
  %pt = nn.permute %p {order = array<i64: 0, 2, 3, 1>} : (tensor<2x6x6x6xf32>) -> tensor<2x6x6x6xf32>
  %y = nn.matmul %w, %pt {name = "attn"} : (tensor<2x6x8x6xf32>, tensor<2x6x6x6xf32>) -> tensor<2x6x8x6xf32>
  func.return %y : tensor<2x6x8x6xf32>
}
// CHECK-LABEL: func.func @other_permute
// CHECK-NOT:     nn.scaled_dot_product_attention
// CHECK:         nn.matmul %w, %pt {name = "attn"}

// -----

// MViT v2 without a class token: the relative terms added on the [B, H, qh, qw, kh, kw] view
// and written over all the scores by a ScatterND of every coordinate: the scores plus a mask.
func.func @mvit_scatter(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x8xf32>, %rel_h: tensor<1x1x2x2x2x1xf32>, %rel_w: tensor<1x1x2x2x1x2xf32>) -> tensor<1x1x4x8xf32> {
  %idx = nn.constant dense<[[[[[0, 0, 0, 0], [0, 0, 0, 1], [0, 0, 0, 2], [0, 0, 0, 3]], [[0, 0, 1, 0], [0, 0, 1, 1], [0, 0, 1, 2], [0, 0, 1, 3]], [[0, 0, 2, 0], [0, 0, 2, 1], [0, 0, 2, 2], [0, 0, 2, 3]], [[0, 0, 3, 0], [0, 0, 3, 1], [0, 0, 3, 2], [0, 0, 3, 3]]]]]> : tensor<1x1x4x4x4xi64>
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x1x4x8xf32>) -> tensor<1x1x8x4xf32>
  %s = nn.matmul %q, %kt : (tensor<1x1x4x8xf32>, tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32>
  %g = nn.reshape %s {shape = array<i64: 1, 1, 2, 2, 2, 2>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2x2x2xf32>
  %a = nn.eltwise %g, %rel_h {operation = "sum"} : (tensor<1x1x2x2x2x2xf32>, tensor<1x1x2x2x2x1xf32>) -> tensor<1x1x2x2x2x2xf32>
  %b = nn.eltwise %a, %rel_w {operation = "sum"} : (tensor<1x1x2x2x2x2xf32>, tensor<1x1x2x2x1x2xf32>) -> tensor<1x1x2x2x2x2xf32>
  %u = nn.reshape %b {shape = array<i64: 1, 1, 4, 4>} : (tensor<1x1x2x2x2x2xf32>) -> tensor<1x1x4x4xf32>
  %x = nn.scatter_nd %s, %idx, %u : (tensor<1x1x4x4xf32>, tensor<1x1x4x4x4xi64>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %p = nn.softmax %x {axis = -1 : i64} : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x1x4x4xf32>, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  func.return %y : tensor<1x1x4x8xf32>
}
// CHECK-LABEL: func.func @mvit_scatter
// CHECK-NOT:     nn.scatter_nd
// CHECK:         %[[T:[a-z_0-9]+]] = nn.eltwise %rel_h, %rel_w {operation = "sum", name = "scatter_nd/term0_sum"}
// CHECK-NEXT:    %[[M:[a-z_0-9]+]] = nn.reshape %[[T]] {shape = array<i64: 1, 1, 4, 4>, name = "scatter_nd/term0_view"}
// CHECK-NEXT:    nn.scaled_dot_product_attention %q, %k, %v, %[[M]] {scale = 1.000000e+00 : f32, name = "attn"}
// CHECK-NOT:     nn.softmax
// CHECK-NOT:     nn.scatter_nd

// -----

// dynamo's nested slice_scatters after canonicalize: the outer scatter reads the inner one's
// result through one composed Permute, split back into the inner's closing Permute (into the
// data's frame) and the outer's opening one.
func.func @split_scatter_permute(%d: tensor<1x1x4x3xf32>, %e: tensor<3x1x3x1xf32>, %u: tensor<2x1x3x1xf32>) -> tensor<1x1x4x3xf32> {
  %rows = nn.constant dense<[[1], [2], [3]]> : tensor<3x1xi64>
  %cols = nn.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %inner = nn.scatter_nd %e, %cols, %u : (tensor<3x1x3x1xf32>, tensor<2x1xi64>, tensor<2x1x3x1xf32>) -> tensor<3x1x3x1xf32>
  %p = nn.permute %d {order = array<i64: 2, 1, 0, 3>} : (tensor<1x1x4x3xf32>) -> tensor<4x1x1x3xf32>
  %c = nn.permute %inner {order = array<i64: 2, 1, 3, 0>, name = "merged"} : (tensor<3x1x3x1xf32>) -> tensor<3x1x1x3xf32>
  %outer = nn.scatter_nd %p, %rows, %c : (tensor<4x1x1x3xf32>, tensor<3x1xi64>, tensor<3x1x1x3xf32>) -> tensor<4x1x1x3xf32>
  %x = nn.permute %outer {order = array<i64: 2, 1, 0, 3>} : (tensor<4x1x1x3xf32>) -> tensor<1x1x4x3xf32>
  func.return %x : tensor<1x1x4x3xf32>
}
// CHECK-LABEL: func.func @split_scatter_permute
// CHECK:         %[[F:[a-z_0-9]+]] = nn.permute %inner {order = array<i64: 3, 1, 2, 0>, name = "merged/frame"}
// CHECK-NEXT:    %[[C:[a-z_0-9]+]] = nn.permute %[[F]] {order = array<i64: 2, 1, 0, 3>, name = "merged"}
// CHECK-NEXT:    nn.scatter_nd %p, %rows, %[[C]]
