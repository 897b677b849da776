// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// torch.onnx's scaled_dot_product_attention: sqrt(scale) on q and on k^T (0.5 * 0.5 = 0.25,
// not the default 1/sqrt(8)), an additive mask, the dynamo exporter's IsNaN guard: one op,
// the guard kept on its output.
func.func @scale_on_q_and_k_guarded(%q: tensor<1x4x6x8xf32>, %k: tensor<1x4x6x8xf32>, %v: tensor<1x4x6x8xf32>, %mask: tensor<1x1x6x6xf32>) -> tensor<1x4x6x8xf32> {
  %c = nn.constant dense<0.5> : tensor<f32>
  %qs = nn.eltwise %q, %c {operation = "mul"} : (tensor<1x4x6x8xf32>, tensor<f32>) -> tensor<1x4x6x8xf32>
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x4x6x8xf32>) -> tensor<1x4x8x6xf32>
  %ks = nn.eltwise %kt, %c {operation = "mul"} : (tensor<1x4x8x6xf32>, tensor<f32>) -> tensor<1x4x8x6xf32>
  %s = nn.matmul %qs, %ks : (tensor<1x4x6x8xf32>, tensor<1x4x8x6xf32>) -> tensor<1x4x6x6xf32>
  %a = nn.eltwise %s, %mask {operation = "sum"} : (tensor<1x4x6x6xf32>, tensor<1x1x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = nn.softmax %a {axis = -1 : i64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %n = nn.is_nan %p : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xi1>
  %z = nn.constant dense<0.0> : tensor<f32>
  %g = nn.select %n, %z, %p : (tensor<1x4x6x6xi1>, tensor<f32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = nn.matmul %g, %v {name = "attn"} : (tensor<1x4x6x6xf32>, tensor<1x4x6x8xf32>) -> tensor<1x4x6x8xf32>
  func.return %y : tensor<1x4x6x8xf32>
}
// CHECK-LABEL: func.func @scale_on_q_and_k_guarded
// CHECK-NEXT:    %[[A:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %k, %v, %mask {scale = 2.500000e-01 : f32, name = "attn/attention"}
// CHECK-NEXT:    %[[Z:[a-z_0-9]+]] = nn.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[N:[a-z_0-9]+]] = nn.is_nan %[[A]]
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.select %[[N]], %[[Z]], %[[A]] {name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]

// -----

// GPT-2: Where(causal, scores / sqrt(E), float32 min): the default scale, the Where as the
// additive mask Where(causal, 0, min).
func.func @gpt2_where_mask(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>, %keep: tensor<1x1x4x4xi1>) -> tensor<1x2x4x16xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x16xf32>) -> tensor<1x2x16x4xf32>
  %s = nn.matmul %q, %kt : (tensor<1x2x4x16xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.constant dense<4.0> : tensor<f32>
  %d = nn.eltwise %s, %c {operation = "div"} : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %min = nn.constant dense<-3.40282347E+38> : tensor<f32>
  %w = nn.select %keep, %d, %min : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %w {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  func.return %y : tensor<1x2x4x16xf32>
}
// CHECK-LABEL: func.func @gpt2_where_mask
// CHECK-NEXT:    %[[ZERO:[a-z_0-9]+]] = nn.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[MIN:[a-z_0-9]+]] = nn.constant dense<-3.40282347e+38> : tensor<f32>
// CHECK-NEXT:    %[[M:[a-z_0-9]+]] = nn.select %keep, %[[ZERO]], %[[MIN]] {name = "attn/mask"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %k, %v, %[[M]] {fill = -3.40282347e+38 : f32, name = "attn/attention"}
// a run-time condition may mask a whole row: the source gives the mean of v there whatever
// the scores (fused, scores that overflow the fill would not): those rows are taken from v
// CHECK-NEXT:    %[[TOP:[a-z_0-9]+]] = nn.reduce %[[M]] {operation = "max", axes = array<i64: -1>, name = "attn/row_top"}
// CHECK-NEXT:    %[[Z:[a-z_0-9]+]] = nn.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ROWS:[a-z_0-9]+]] = nn.eltwise %[[TOP]], %[[Z]] {operation = "less", name = "attn/masked_rows"}
// CHECK-NEXT:    %[[MEAN:[a-z_0-9]+]] = nn.reduce %v {operation = "mean", axes = array<i64: -2>, name = "attn/value_mean"}
// CHECK-NEXT:    %[[U:[a-z_0-9]+]] = nn.select %[[ROWS]], %[[MEAN]], %[[Y]] {name = "attn/uniform_rows"}
// CHECK-NEXT:    func.return %[[U]]

// -----

// A Where whose fill is not a mask value (-5) is not attention's mask: nothing fuses.
func.func @where_not_a_mask(%q: tensor<1x2x4x16xf32>, %k: tensor<1x2x4x16xf32>, %v: tensor<1x2x4x16xf32>, %keep: tensor<1x1x4x4xi1>) -> tensor<1x2x4x16xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x2x4x16xf32>) -> tensor<1x2x16x4xf32>
  %s = nn.matmul %q, %kt : (tensor<1x2x4x16xf32>, tensor<1x2x16x4xf32>) -> tensor<1x2x4x4xf32>
  %fill = nn.constant dense<-5.0> : tensor<f32>
  %w = nn.select %keep, %s, %fill : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %p = nn.softmax %w {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x4x4xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  func.return %y : tensor<1x2x4x16xf32>
}
// CHECK-LABEL: func.func @where_not_a_mask
// CHECK-NOT:     nn.scaled_dot_product_attention
// CHECK:         nn.softmax

// -----

// Funnel: unscaled content scores plus a position term, minus INF * (1 - mask): one op, the
// additive mask (bias - m), scale 1.
func.func @funnel_sub_mask(%q: tensor<1x2x6x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %pos: tensor<1x2x6x6xf32>, %m: tensor<1x1x1x6xf32>) -> tensor<1x2x6x8xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<1x2x6x8xf32>) -> tensor<1x2x8x6xf32>
  %s = nn.matmul %q, %kt : (tensor<1x2x6x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x6x6xf32>
  %a = nn.eltwise %s, %pos {operation = "sum"} : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %b = nn.eltwise %a, %m {operation = "sub"} : (tensor<1x2x6x6xf32>, tensor<1x1x1x6xf32>) -> tensor<1x2x6x6xf32>
  %p = nn.softmax %b {axis = -1 : i64} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x6x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x6x8xf32>
  func.return %y : tensor<1x2x6x8xf32>
}
// CHECK-LABEL: func.func @funnel_sub_mask
// CHECK-NEXT:    %[[M:[a-z_0-9]+]] = nn.eltwise %pos, %m {operation = "sub", name = "attn/mask_sub"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %k, %v, %[[M]] {scale = 1.000000e+00 : f32, name = "attn"}
// CHECK-NEXT:    func.return %[[Y]]
