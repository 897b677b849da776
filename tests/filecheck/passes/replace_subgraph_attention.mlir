// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// PyTorch's manual attention: MatMul(q, Transpose(k)) -> Mul 1/sqrt(E) -> Softmax(-1) -> MatMul(v).
// The scale is the default 1/sqrt(8): left implicit.
func.func @transposed_key(%q: tensor<1x4x8x8xf32>, %k: tensor<1x4x8x8xf32>, %v: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %s = nn.matmul %q, %kt : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = nn.constant dense<0.353553385> : tensor<f32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<1x4x8x8xf32>, tensor<f32>) -> tensor<1x4x8x8xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
// CHECK-LABEL: func.func @transposed_key
// CHECK-NEXT:    %y = nn.scaled_dot_product_attention %q, %k, %v {name = "attn"} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %y

// -----

// transpose_b, a Div by 2 (a scale of 1/2, not the default 1/sqrt(16)), an additive mask on
// the left of the Add; cross attention with v's own width.
func.func @transpose_b_div_mask(%q: tensor<2x6x16xf32>, %k: tensor<2x9x16xf32>, %v: tensor<2x9x5xf32>, %mask: tensor<6x9xf32>) -> tensor<2x6x5xf32> {
  %s = nn.matmul %q, %k {transpose_b = true} : (tensor<2x6x16xf32>, tensor<2x9x16xf32>) -> tensor<2x6x9xf32>
  %c = nn.constant dense<2.0> : tensor<1xf32>
  %d = nn.eltwise %s, %c {operation = "div"} : (tensor<2x6x9xf32>, tensor<1xf32>) -> tensor<2x6x9xf32>
  %a = nn.eltwise %mask, %d {operation = "sum"} : (tensor<6x9xf32>, tensor<2x6x9xf32>) -> tensor<2x6x9xf32>
  %p = nn.softmax %a {axis = 2 : i64} : (tensor<2x6x9xf32>) -> tensor<2x6x9xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<2x6x9xf32>, tensor<2x9x5xf32>) -> tensor<2x6x5xf32>
  func.return %y : tensor<2x6x5xf32>
}
// CHECK-LABEL: func.func @transpose_b_div_mask
// CHECK-NEXT:    %y = nn.scaled_dot_product_attention %q, %k, %v, %mask {scale = 5.000000e-01 : f32, name = "attn"}
// CHECK-NEXT:    func.return %y

// -----

// The exporters' head split: k's Reshape -> Transpose(0, 2, 3, 1) (canonicalize composed the
// head transpose and the key transpose). The new op takes k as Transpose(0, 2, 1, 3).
func.func @composed_transpose(%q: tensor<1x4x8x8xf32>, %k: tensor<1x8x4x8xf32>, %v: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 2, 3, 1>, name = "kt"} : (tensor<1x8x4x8xf32>) -> tensor<1x4x8x8xf32>
  %s = nn.matmul %q, %kt : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = nn.constant dense<0.5> : tensor<f32>
  %m = nn.eltwise %c, %s {operation = "mul"} : (tensor<f32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p = nn.softmax %m {axis = 3 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
// CHECK-LABEL: func.func @composed_transpose
// CHECK-NEXT:    %[[K:.*]] = nn.permute %k {order = array<i64: 0, 2, 1, 3>, name = "attn/key"}
// CHECK-NEXT:    %[[Y:.*]] = nn.scaled_dot_product_attention %q, %[[K]], %v {scale = 5.000000e-01 : f32, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// The key's Transpose has another user: it stays, and k is restored from its input.
func.func @shared_transpose(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) {
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x8xf32>) -> tensor<1x2x8x4xf32>
  %s = nn.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.constant dense<0.353553385> : tensor<f32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y, %kt : tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>
}
// CHECK-LABEL: func.func @shared_transpose
// CHECK-NEXT:    %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>}
// CHECK-NEXT:    %y = nn.scaled_dot_product_attention %q, %k, %v {name = "attn"}
// CHECK-NEXT:    func.return %y, %kt

// -----

// Softmax over the wrong axis (the queries, not the keys): not attention, nothing changes.
func.func @wrong_softmax_axis(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = nn.matmul %q, %k {transpose_b = true} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.constant dense<0.353553385> : tensor<f32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %m {axis = 2 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}
// CHECK-LABEL: func.func @wrong_softmax_axis
// CHECK-NOT:     nn.scaled_dot_product_attention
// CHECK:         nn.softmax %m {axis = 2 : i64}

// -----

// A per-key scale (not one value): nothing changes.
func.func @non_scalar_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = nn.matmul %q, %k {transpose_b = true} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}
// CHECK-LABEL: func.func @non_scalar_scale
// CHECK-NOT:     nn.scaled_dot_product_attention
// CHECK:         nn.matmul %p, %v {name = "attn"}

// -----

// The attention weights are an output too (an inner value with an outside user): they
// would have to be computed anyway, so nothing changes.
func.func @weights_used_outside(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %s = nn.matmul %q, %k {transpose_b = true} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.constant dense<0.353553385> : tensor<f32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}
// CHECK-LABEL: func.func @weights_used_outside
// CHECK-NOT:     nn.scaled_dot_product_attention
// CHECK:         nn.matmul %p, %v {name = "attn"}

// -----

// k^T given as it is (no Transpose, no transpose_b): timm's CoAtNet / BoTNet / EfficientViT-M
// exports write it (a slice or a reshape of a channel-first qkv): k is its transpose.
func.func @untransposed_key(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x4xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %s = nn.matmul %q, %kt : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.constant dense<0.353553385> : tensor<f32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}
// CHECK-LABEL: func.func @untransposed_key
// CHECK-NEXT:    %[[K:[a-z_0-9]+]] = nn.permute %kt {order = array<i64: 0, 1, 3, 2>, name = "attn/key"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %[[K]], %v {name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Rank 2 (no batch axis): the opset's layer needs rank >= 3, nothing changes.
func.func @rank_two(%q: tensor<4x8xf32>, %k: tensor<4x8xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = nn.matmul %q, %k {transpose_b = true} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  %c = nn.constant dense<0.353553385> : tensor<f32>
  %m = nn.eltwise %s, %c {operation = "mul"} : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<4x4xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
// CHECK-LABEL: func.func @rank_two
// CHECK-NOT:     nn.scaled_dot_product_attention
// CHECK:         nn.matmul %p, %v {name = "attn"}
