// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// HF CodeGen: the mask added before the scale, (s + mask) / c: one op with scale 1/c and the
// mask divided by c (s / c + mask / c).
func.func @codegen(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %mask: tensor<1x1x6x6xf32>) -> tensor<1x2x6x8xf32> {
  %c = nn.constant dense<2.0> : tensor<f32>
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x2x6x8xf32>) -> tensor<1x2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<1x2x6x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x6x6xf32>
  %a = nn.eltwise %s, %mask {operation = "sum"} : (tensor<1x2x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x2x6x6xf32>
  %d = nn.eltwise %a, %c {operation = "div"} : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %p = nn.softmax %d {axis = -1 : i64} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  func.return %y : tensor<1x2x6x8xf32>
}
// CHECK-LABEL: func.func @codegen
// CHECK-NEXT:    %[[F:[a-z_0-9]+]] = nn.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[M:[a-z_0-9]+]] = nn.eltwise %mask, %[[F]] {operation = "mul", name = "attn/mask0_scaled"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %k, %v, %[[M]] {scale = 5.000000e-01 : f32, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// HF SqueezeBERT: keys from a 1x1 convolution, [B, C, S] split into heads, are already
// [B, H, E, S] (no transpose to match): k is their transpose.
func.func @squeezebert(%q: tensor<1x2x6x8xf32>, %keys: tensor<1x16x6xf32>, %v: tensor<1x2x6x8xf32>, %mask: tensor<1x1x1x6xf32>) -> tensor<1x2x6x8xf32> {
  %c = nn.constant dense<4.0> : tensor<f32>
  %kt = nn.reshape %keys {shape = array<i64: 1, 2, 8, 6>} : (tensor<1x16x6xf32>) -> tensor<1x2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<1x2x6x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x6x6xf32>
  %d = nn.eltwise %s, %c {operation = "div"} : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %a = nn.eltwise %d, %mask {operation = "sum"} : (tensor<1x2x6x6xf32>, tensor<1x1x1x6xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.softmax %a {axis = -1 : i64} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  func.return %y : tensor<1x2x6x8xf32>
}
// CHECK-LABEL: func.func @squeezebert
// CHECK-NEXT:    %kt = nn.reshape %keys
// CHECK-NEXT:    %[[K:[a-z_0-9]+]] = nn.permute %kt {order = array<i64: 0, 1, 3, 2>, name = "attn/key"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %[[K]], %v, %mask {scale = 2.500000e-01 : f32, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// HF XGLM: [B*H, L, S] scores viewed as [B, H, L, S] for the mask and the clamp to float32's
// min, viewed back for the softmax: the op in the 4-D view, the clamp on the mask.
func.func @xglm(%q: tensor<2x6x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %mask: tensor<1x1x6x6xf32>) -> tensor<2x6x8xf32> {
  %min = nn.constant dense<-3.40282347e+38> : tensor<f32>
  %kt = nn.permute %k {order = array<i64: 0, 2, 1>} : (tensor<2x6x8xf32>) -> tensor<2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<2x6x8xf32>, tensor<2x8x6xf32>) -> tensor<2x6x6xf32>
  %s4 = nn.reshape %s {shape = array<i64: 1, 2, 6, 6>} : (tensor<2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %a = nn.eltwise %s4, %mask {operation = "sum"} : (tensor<1x2x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x2x6x6xf32>
  %m = nn.eltwise %a, %min {operation = "max"} : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %s3 = nn.reshape %m {shape = array<i64: 2, 6, 6>} : (tensor<1x2x6x6xf32>) -> tensor<2x6x6xf32>
  %p = nn.softmax %s3 {axis = -1 : i64} : (tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<2x6x6xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  func.return %y : tensor<2x6x8xf32>
}
// CHECK-LABEL: func.func @xglm
// CHECK-DAG:     %[[Q:[a-z_0-9]+]] = nn.reshape %q {shape = array<i64: 1, 2, 6, 8>, name = "attn/query_view"}
// CHECK-DAG:     %[[K:[a-z_0-9]+]] = nn.reshape %k {shape = array<i64: 1, 2, 6, 8>, name = "attn/key_view"}
// CHECK-DAG:     %[[V:[a-z_0-9]+]] = nn.reshape %v {shape = array<i64: 1, 2, 6, 8>, name = "attn/value_view"}
// CHECK:         %[[C:[a-z_0-9]+]] = nn.eltwise %mask, %{{.*}} {operation = "max", name = "attn/clamp"}
// CHECK-NEXT:    %[[A:[a-z_0-9]+]] = nn.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]], %[[C]] {scale = 1.000000e+00 : f32, name = "attn/attention"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.reshape %[[A]] {shape = array<i64: 2, 6, 8>, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Not attention's softmax: an op of the chain read elsewhere stays (nothing fused).
func.func @shared(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %mask: tensor<1x1x6x6xf32>) -> (tensor<1x2x6x8xf32>, tensor<1x2x6x6xf32>) {
  %c = nn.constant dense<2.0> : tensor<f32>
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x2x6x8xf32>) -> tensor<1x2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<1x2x6x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x6x6xf32>
  %a = nn.eltwise %s, %mask {operation = "sum"} : (tensor<1x2x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x2x6x6xf32>
  %d = nn.eltwise %a, %c {operation = "div"} : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %p = nn.softmax %d {axis = -1 : i64} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  func.return %y, %a : tensor<1x2x6x8xf32>, tensor<1x2x6x6xf32>
}
// CHECK-LABEL: func.func @shared
// CHECK-NOT:     nn.scaled_dot_product_attention
// CHECK:         nn.softmax

// -----

// HF SEW-D / DeBERTa: k^T / c, the Where mask, XSoftmax's second Where zeroing the masked
// probabilities, the heads folded back into the batch: the scale joins the op's, the Where
// becomes the additive mask, the second Where a zeroing of rows with no key kept.
func.func @xsoftmax(%q: tensor<2x6x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %drop: tensor<1x1x6x6xi1>) -> tensor<2x6x8xf32> {
  %c = nn.constant dense<4.0> : tensor<1x1x1xf32>
  %fmin = nn.constant dense<-3.40282347e+38> : tensor<f32>
  %zero = nn.constant dense<0.0> : tensor<f32>
  %kt = nn.permute %k {order = array<i64: 0, 2, 1>} : (tensor<2x6x8xf32>) -> tensor<2x8x6xf32>
  %ks = nn.eltwise %kt, %c {operation = "div"} : (tensor<2x8x6xf32>, tensor<1x1x1xf32>) -> tensor<2x8x6xf32>
  %s = nn.matmul %q, %ks : (tensor<2x6x8xf32>, tensor<2x8x6xf32>) -> tensor<2x6x6xf32>
  %s4 = nn.reshape %s {shape = array<i64: 1, 2, 6, 6>} : (tensor<2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %m = nn.select %drop, %fmin, %s4 : (tensor<1x1x6x6xi1>, tensor<f32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %z = nn.select %drop, %zero, %p : (tensor<1x1x6x6xi1>, tensor<f32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %p3 = nn.reshape %z {shape = array<i64: 2, 6, 6>} : (tensor<1x2x6x6xf32>) -> tensor<2x6x6xf32>
  %y = nn.matmul %p3, %v {name = "attn"} : (tensor<2x6x6xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  func.return %y : tensor<2x6x8xf32>
}
// CHECK-LABEL: func.func @xsoftmax
// CHECK:         %[[W:[a-z_0-9]+]] = nn.select %drop, %{{.*}}, %{{.*}} {name = "attn/mask0_where"}
// CHECK-NEXT:    %[[A:[a-z_0-9]+]] = nn.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}}, %[[W]] {scale = 2.500000e-01 : f32, fill = -3.40282347e+38 : f32, name = "attn/attention"}
// CHECK:         %[[K:[a-z_0-9]+]] = nn.select %drop, %{{.*}}, %{{.*}} {name = "attn/kept"}
// CHECK-NEXT:    %[[R:[a-z_0-9]+]] = nn.reduce %[[K]] {operation = "max", axes = array<i64: -1>, name = "attn/any_kept"}
// CHECK-NEXT:    %[[Z:[a-z_0-9]+]] = nn.eltwise %[[A]], %[[R]] {operation = "mul", name = "attn/masked_rows"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.reshape %[[Z]] {shape = array<i64: 2, 6, 8>, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// HF ViTDet / SAM: decomposed relative positions added on a [B*H, qh, qw, kh, kw] view of
// the [B*H, L, S] scores: each term broadcast to the grid and read back as [B*H, L, S].
func.func @vitdet(%q: tensor<2x6x8xf32>, %k: tensor<2x6x8xf32>, %v: tensor<2x6x8xf32>, %rh: tensor<2x2x3x2x1xf32>, %rw: tensor<2x2x3x1x3xf32>) -> tensor<2x6x8xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 2, 1>} : (tensor<2x6x8xf32>) -> tensor<2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<2x6x8xf32>, tensor<2x8x6xf32>) -> tensor<2x6x6xf32>
  %g = nn.reshape %s {shape = array<i64: 2, 2, 3, 2, 3>} : (tensor<2x6x6xf32>) -> tensor<2x2x3x2x3xf32>
  %a = nn.eltwise %g, %rh {operation = "sum"} : (tensor<2x2x3x2x3xf32>, tensor<2x2x3x2x1xf32>) -> tensor<2x2x3x2x3xf32>
  %b = nn.eltwise %a, %rw {operation = "sum"} : (tensor<2x2x3x2x3xf32>, tensor<2x2x3x1x3xf32>) -> tensor<2x2x3x2x3xf32>
  %r = nn.reshape %b {shape = array<i64: 2, 6, 6>} : (tensor<2x2x3x2x3xf32>) -> tensor<2x6x6xf32>
  %p = nn.softmax %r {axis = -1 : i64} : (tensor<2x6x6xf32>) -> tensor<2x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<2x6x6xf32>, tensor<2x6x8xf32>) -> tensor<2x6x8xf32>
  func.return %y : tensor<2x6x8xf32>
}
// CHECK-LABEL: func.func @vitdet
// CHECK:         %[[W:[a-z_0-9]+]] = nn.eltwise %rw, %{{.*}} {operation = "sum", name = "attn/mask0_grid"}
// CHECK-NEXT:    %[[WV:[a-z_0-9]+]] = nn.reshape %[[W]] {shape = array<i64: 2, 6, 6>, name = "attn/mask0_view"}
// CHECK:         %[[H:[a-z_0-9]+]] = nn.eltwise %rh, %{{.*}} {operation = "sum", name = "attn/mask1_grid"}
// CHECK-NEXT:    %[[HV:[a-z_0-9]+]] = nn.reshape %[[H]] {shape = array<i64: 2, 6, 6>, name = "attn/mask1_view"}
// CHECK-NEXT:    %[[M:[a-z_0-9]+]] = nn.eltwise %[[WV]], %[[HV]] {operation = "sum", name = "attn/mask1_sum"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %k, %v, %[[M]] {scale = 1.000000e+00 : f32, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]
