// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// HF BLOOM: alibi added to [B*H, L, S] scores scaled by a constant, viewed as [B, H, L, S]
// for the mask and the softmax, viewed back for the product with v: q, k, v and the alibi
// reshaped to [B, H, ...], one op with the summed mask, its result reshaped back.
func.func @bloom(%q: tensor<4x6x8xf32>, %k: tensor<4x6x8xf32>, %v: tensor<4x6x8xf32>, %alibi: tensor<4x1x6xf32>, %mask: tensor<2x1x6x6xf32>) -> tensor<4x6x8xf32> {
  %c = nn.constant dense<0.5> : tensor<f32>
  %kt = nn.permute %k {order = array<i64: 0, 2, 1>} : (tensor<4x6x8xf32>) -> tensor<4x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<4x6x8xf32>, tensor<4x8x6xf32>) -> tensor<4x6x6xf32>
  %ss = nn.eltwise %s, %c {operation = "mul"} : (tensor<4x6x6xf32>, tensor<f32>) -> tensor<4x6x6xf32>
  %b = nn.eltwise %ss, %alibi {operation = "sum"} : (tensor<4x6x6xf32>, tensor<4x1x6xf32>) -> tensor<4x6x6xf32>
  %s4 = nn.reshape %b {shape = array<i64: 2, 2, 6, -1>} : (tensor<4x6x6xf32>) -> tensor<2x2x6x6xf32>
  %m = nn.eltwise %s4, %mask {operation = "sum"} : (tensor<2x2x6x6xf32>, tensor<2x1x6x6xf32>) -> tensor<2x2x6x6xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  %p3 = nn.reshape %p {shape = array<i64: 4, 6, -1>} : (tensor<2x2x6x6xf32>) -> tensor<4x6x6xf32>
  %y = nn.matmul %p3, %v {name = "attn"} : (tensor<4x6x6xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  func.return %y : tensor<4x6x8xf32>
}
// CHECK-LABEL: func.func @bloom
// CHECK-NEXT:    %[[Q:[a-z_0-9]+]] = nn.reshape %q {shape = array<i64: 2, 2, 6, 8>, name = "attn/query_heads"}
// CHECK-NEXT:    %[[K:[a-z_0-9]+]] = nn.reshape %k {shape = array<i64: 2, 2, 6, 8>, name = "attn/key_heads"}
// CHECK-NEXT:    %[[V:[a-z_0-9]+]] = nn.reshape %v {shape = array<i64: 2, 2, 6, 8>, name = "attn/value_heads"}
// CHECK-NEXT:    %[[B:[a-z_0-9]+]] = nn.reshape %alibi {shape = array<i64: 2, 2, 1, 6>, name = "attn/bias_heads"}
// CHECK-NEXT:    %[[M:[a-z_0-9]+]] = nn.eltwise %[[B]], %mask {operation = "sum", name = "attn/mask1"}
// CHECK-NEXT:    %[[A:[a-z_0-9]+]] = nn.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 5.000000e-01 : f32, name = "attn/attention"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.reshape %[[A]] {shape = array<i64: 4, 6, 8>, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// HF DeBERTa-v2: k^T / scale, the disentangled terms added, the mask applied with
// Where(drop, float32 min, s) after the split: the Where becomes the additive mask
// Where(drop, min, 0), summed with the terms.
func.func @deberta(%q: tensor<4x6x8xf32>, %k: tensor<4x6x8xf32>, %v: tensor<4x6x8xf32>, %rel: tensor<4x6x6xf32>, %drop: tensor<2x1x6x6xi1>) -> tensor<4x6x8xf32> {
  %c = nn.constant dense<4.0> : tensor<1x1x1xf32>
  %fmin = nn.constant dense<-3.40282347e+38> : tensor<f32>
  %kt = nn.permute %k {order = array<i64: 0, 2, 1>} : (tensor<4x6x8xf32>) -> tensor<4x8x6xf32>
  %ks = nn.eltwise %kt, %c {operation = "div"} : (tensor<4x8x6xf32>, tensor<1x1x1xf32>) -> tensor<4x8x6xf32>
  %s = nn.matmul %q, %ks : (tensor<4x6x8xf32>, tensor<4x8x6xf32>) -> tensor<4x6x6xf32>
  %b = nn.eltwise %s, %rel {operation = "sum"} : (tensor<4x6x6xf32>, tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %s4 = nn.reshape %b {shape = array<i64: -1, 2, 6, 6>} : (tensor<4x6x6xf32>) -> tensor<2x2x6x6xf32>
  %m = nn.select %drop, %fmin, %s4 : (tensor<2x1x6x6xi1>, tensor<f32>, tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  %p = nn.softmax %m {axis = -1 : i64} : (tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  %p3 = nn.reshape %p {shape = array<i64: -1, 6, 6>} : (tensor<2x2x6x6xf32>) -> tensor<4x6x6xf32>
  %y = nn.matmul %p3, %v {name = "attn"} : (tensor<4x6x6xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  func.return %y : tensor<4x6x8xf32>
}
// CHECK-LABEL: func.func @deberta
// CHECK:         %[[R:[a-z_0-9]+]] = nn.reshape %rel {shape = array<i64: 2, 2, 6, 6>, name = "attn/bias_heads"}
// CHECK:         %[[W:[a-z_0-9]+]] = nn.select %drop, %{{.*}}, %{{.*}} {name = "attn/where"}
// CHECK-NEXT:    %[[M:[a-z_0-9]+]] = nn.eltwise %[[R]], %[[W]] {operation = "sum", name = "attn/mask1"}
// CHECK-NEXT:    %[[A:[a-z_0-9]+]] = nn.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] {scale = 2.500000e-01 : f32, name = "attn/attention"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.reshape %[[A]] {shape = array<i64: 4, 6, 8>, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]
