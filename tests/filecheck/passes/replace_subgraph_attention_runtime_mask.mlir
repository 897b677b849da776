// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// torchaudio Emformer through dynamo: heads in the batch, the padding mask [N, 1, 1, ?] (a
// Range to max(lengths)) applied in [N, H, L, S]; the Where's result is static, so ? is 1 or
// S: one attention, its result static (the fill float32's min: it absorbs the scores, so a row
// padded throughout is the same either way; torchaudio's own -1e8 is left unfused, see STATUS).
func.func @emformer(%q: tensor<4x6x8xf32>, %kt: tensor<4x8x6xf32>, %v: tensor<4x6x8xf32>, %pad: tensor<2x1x1x?xi1>) -> tensor<4x6x8xf32> {
  %fill = nn.constant dense<-3.40282347e+38> : tensor<f32>
  %s = nn.matmul %q, %kt : (tensor<4x6x8xf32>, tensor<4x8x6xf32>) -> tensor<4x6x6xf32>
  %r = nn.reshape %s {shape = array<i64: 2, 2, 6, -1>} : (tensor<4x6x6xf32>) -> tensor<2x2x6x6xf32>
  %w = nn.select %pad, %fill, %r : (tensor<2x1x1x?xi1>, tensor<f32>, tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  %b = nn.reshape %w {shape = array<i64: 4, 6, -1>} : (tensor<2x2x6x6xf32>) -> tensor<4x6x6xf32>
  %p = nn.softmax %b {axis = -1 : i64} : (tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<4x6x6xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  func.return %y : tensor<4x6x8xf32>
}
// CHECK-LABEL: func.func @emformer
// CHECK:         %[[W:[a-z_0-9]+]] = nn.select %pad, %{{.*}}, %{{.*}} {name = "attn/mask0_where"} : (tensor<2x1x1x?xi1>, tensor<f32>, tensor<f32>) -> tensor<2x1x1x?xf32>
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %{{.*}}, %{{.*}}, %{{.*}}, %[[W]] {scale = 1.000000e+00 : f32, fill = -3.40282347e+38 : f32, name = "attn/attention"} : (tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x2x6x8xf32>, tensor<2x1x1x?xf32>) -> tensor<2x2x6x8xf32>
// CHECK-NEXT:    %[[TOP:[a-z_0-9]+]] = nn.reduce %[[W]] {operation = "max", axes = array<i64: -1>, name = "attn/row_top"}
// CHECK:         %[[U:[a-z_0-9]+]] = nn.select %{{.*}}, %{{.*}}, %[[Y]] {name = "attn/uniform_rows"}
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[U]] {shape = array<i64: 4, 6, 8>, name = "attn"}

// -----

// Keys up to a run-time length S (a KV cache), heads in the batch: k and v are viewed as
// [N, H, -1, E] (the one inferred size), the result stays static.
func.func @cached(%q: tensor<4x6x8xf32>, %k: tensor<4x?x8xf32>, %v: tensor<4x?x8xf32>, %bias: tensor<2x1x6x?xf32>) -> tensor<4x6x8xf32> {
  %kt = nn.permute %k {order = array<i64: 0, 2, 1>} : (tensor<4x?x8xf32>) -> tensor<4x8x?xf32>
  %s = nn.matmul %q, %kt : (tensor<4x6x8xf32>, tensor<4x8x?xf32>) -> tensor<4x6x?xf32>
  %r = nn.reshape %s {shape = array<i64: 2, 2, 6, -1>} : (tensor<4x6x?xf32>) -> tensor<2x2x6x?xf32>
  %a = nn.eltwise %r, %bias {operation = "sum"} : (tensor<2x2x6x?xf32>, tensor<2x1x6x?xf32>) -> tensor<2x2x6x?xf32>
  %b = nn.reshape %a {shape = array<i64: 4, 6, -1>} : (tensor<2x2x6x?xf32>) -> tensor<4x6x?xf32>
  %p = nn.softmax %b {axis = -1 : i64} : (tensor<4x6x?xf32>) -> tensor<4x6x?xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<4x6x?xf32>, tensor<4x?x8xf32>) -> tensor<4x6x8xf32>
  func.return %y : tensor<4x6x8xf32>
}
// CHECK-LABEL: func.func @cached
// CHECK:         %[[K:[a-z_0-9]+]] = nn.reshape %k {shape = array<i64: 2, 2, -1, 8>, name = "attn/key_view"} : (tensor<4x?x8xf32>) -> tensor<2x2x?x8xf32>
// CHECK-NEXT:    %[[V:[a-z_0-9]+]] = nn.reshape %v {shape = array<i64: 2, 2, -1, 8>, name = "attn/value_view"} : (tensor<4x?x8xf32>) -> tensor<2x2x?x8xf32>
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %{{.*}}, %[[K]], %[[V]], %bias {scale = 1.000000e+00 : f32, name = "attn/attention"} : (tensor<2x2x6x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x1x6x?xf32>) -> tensor<2x2x6x8xf32>

// -----

// A run-time number of queries and no view needed: one attention of the product's type
// (`one_view`); the bias, added after the scale, is not scaled.
func.func @runtime_queries(%q: tensor<1x2x?x8xf32>, %kt: tensor<1x2x8x6xf32>, %v: tensor<1x2x6x8xf32>, %bias: tensor<1x1x?x6xf32>) -> tensor<1x2x?x8xf32> {
  %c = nn.constant dense<2.0> : tensor<f32>
  %s = nn.matmul %q, %kt : (tensor<1x2x?x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x?x6xf32>
  %d = nn.eltwise %s, %c {operation = "div"} : (tensor<1x2x?x6xf32>, tensor<f32>) -> tensor<1x2x?x6xf32>
  %a = nn.eltwise %d, %bias {operation = "sum"} : (tensor<1x2x?x6xf32>, tensor<1x1x?x6xf32>) -> tensor<1x2x?x6xf32>
  %p = nn.softmax %a {axis = -1 : i64} : (tensor<1x2x?x6xf32>) -> tensor<1x2x?x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<1x2x?x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x?x8xf32>
  func.return %y : tensor<1x2x?x8xf32>
}
// CHECK-LABEL: func.func @runtime_queries
// CHECK-NEXT:    %[[K:[a-z_0-9]+]] = nn.permute %kt {order = array<i64: 0, 1, 3, 2>, name = "attn/key"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %[[K]], %v, %bias {scale = 5.000000e-01 : f32, name = "attn"} : {{.*}} -> tensor<1x2x?x8xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Run-time sizes anywhere but no view needed (FastSpeech2-Conformer's decoder: batch, queries
// and keys all run-time after the length regulator; its relative-position term an additive
// mask computed from q): one attention of the product's type.
func.func @one_view(%q: tensor<?x2x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x8xf32>, %rel: tensor<?x2x?x?xf32>) -> tensor<?x2x?x8xf32> {
  %c = nn.constant dense<2.0> : tensor<f32>
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<?x2x?x8xf32>) -> tensor<?x2x8x?xf32>
  %s = nn.matmul %q, %kt : (tensor<?x2x?x8xf32>, tensor<?x2x8x?xf32>) -> tensor<?x2x?x?xf32>
  %a = nn.eltwise %s, %rel {operation = "sum"} : (tensor<?x2x?x?xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %d = nn.eltwise %a, %c {operation = "div"} : (tensor<?x2x?x?xf32>, tensor<f32>) -> tensor<?x2x?x?xf32>
  %p = nn.softmax %d {axis = -1 : i64} : (tensor<?x2x?x?xf32>) -> tensor<?x2x?x?xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<?x2x?x?xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  func.return %y : tensor<?x2x?x8xf32>
}
// CHECK-LABEL: func.func @one_view
// CHECK:         %[[M:[a-z_0-9]+]] = nn.eltwise %rel, %{{.*}} {operation = "mul", name = "attn/mask0_scaled"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %k, %v, %[[M]] {scale = 5.000000e-01 : f32, name = "attn"} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x?xf32>) -> tensor<?x2x?x8xf32>
// CHECK-NEXT:    func.return %[[Y]]

// -----

// Run-time sizes and a view of the scores (heads folded into the batch): left alone (the
// views would need more than one inferred size).
func.func @views_of_runtime_sizes(%q: tensor<?x6x8xf32>, %kt: tensor<?x8x6xf32>, %v: tensor<?x6x8xf32>, %pad: tensor<?x1x1x6xf32>) -> tensor<?x6x8xf32> {
  %s = nn.matmul %q, %kt : (tensor<?x6x8xf32>, tensor<?x8x6xf32>) -> tensor<?x6x6xf32>
  %r = nn.reshape %s {shape = array<i64: -1, 2, 6, 6>} : (tensor<?x6x6xf32>) -> tensor<?x2x6x6xf32>
  %a = nn.eltwise %r, %pad {operation = "sum"} : (tensor<?x2x6x6xf32>, tensor<?x1x1x6xf32>) -> tensor<?x2x6x6xf32>
  %b = nn.reshape %a {shape = array<i64: -1, 6, 6>} : (tensor<?x2x6x6xf32>) -> tensor<?x6x6xf32>
  %p = nn.softmax %b {axis = -1 : i64} : (tensor<?x6x6xf32>) -> tensor<?x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<?x6x6xf32>, tensor<?x6x8xf32>) -> tensor<?x6x8xf32>
  func.return %y : tensor<?x6x8xf32>
}
// CHECK-LABEL: func.func @views_of_runtime_sizes
// CHECK:         nn.softmax
// CHECK-NOT:     nn.scaled_dot_product_attention

// -----

// torch's SDPA exported with dynamic axes (TorchScript: BERT, GPT-2): a padding mask of
// run-time sizes [?, 1, 1, ?] on [?, ?, ?, ?] scores, the NaN guard kept on the result.
func.func @dynamic_axes(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>, %v: tensor<?x?x?x8xf32>, %mask: tensor<?x1x1x?xf32>) -> tensor<?x?x?x8xf32> {
  %c = nn.constant dense<0.594603539> : tensor<f32>
  %zero = nn.constant dense<0.0> : tensor<f32>
  %qs = nn.eltwise %q, %c {operation = "mul"} : (tensor<?x?x?x8xf32>, tensor<f32>) -> tensor<?x?x?x8xf32>
  %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>} : (tensor<?x?x?x8xf32>) -> tensor<?x?x8x?xf32>
  %ks = nn.eltwise %kt, %c {operation = "mul"} : (tensor<?x?x8x?xf32>, tensor<f32>) -> tensor<?x?x8x?xf32>
  %s = nn.matmul %qs, %ks : (tensor<?x?x?x8xf32>, tensor<?x?x8x?xf32>) -> tensor<?x?x?x?xf32>
  %a = nn.eltwise %s, %mask {operation = "sum"} : (tensor<?x?x?x?xf32>, tensor<?x1x1x?xf32>) -> tensor<?x?x?x?xf32>
  %p = nn.softmax %a {axis = -1 : i64} : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %n = nn.is_nan %p : (tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xi1>
  %g = nn.select %n, %zero, %p : (tensor<?x?x?x?xi1>, tensor<f32>, tensor<?x?x?x?xf32>) -> tensor<?x?x?x?xf32>
  %y = nn.matmul %g, %v {name = "attn"} : (tensor<?x?x?x?xf32>, tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>
  func.return %y : tensor<?x?x?x8xf32>
}
// CHECK-LABEL: func.func @dynamic_axes
// CHECK:         %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %q, %k, %v, %mask {{.*}} : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x1x1x?xf32>) -> tensor<?x?x?x8xf32>
// CHECK:         %{{.*}} = nn.is_nan %[[Y]]
// CHECK-NOT:     nn.softmax

// -----

// Every size a run-time one, the head width too (torchvision's ViT through TorchScript with a
// dynamic batch: nn.MultiheadAttention's heads folded into the batch, [?, ?, ?]): the scale
// stays explicit (1/sqrt(E) cannot be told apart).
func.func @runtime_width(%q: tensor<?x?x?xf32>, %kt: tensor<?x?x?xf32>, %v: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c = nn.constant dense<0.25> : tensor<f32>
  %qs = nn.eltwise %q, %c {operation = "mul"} : (tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %s = nn.matmul %qs, %kt : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %p = nn.softmax %s {axis = -1 : i64} : (tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}
// CHECK-LABEL: func.func @runtime_width
// CHECK:         nn.scaled_dot_product_attention {{.*}} {scale = 2.500000e-01 : f32, name = "attn"} : (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
// CHECK-NOT:     nn.softmax

// -----

// torchaudio's own fill, -1e8, does not absorb the scores: a sample whose keys are all padded
// has uniform rows in the source (softmax of equal fills), so the fused attention takes those
// rows (the mask's row maximum below 0) from the mean of v (`uniform_when_masked`).
func.func @emformer_fill_1e8(%q: tensor<4x6x8xf32>, %kt: tensor<4x8x6xf32>, %v: tensor<4x6x8xf32>, %pad: tensor<2x1x1x?xi1>) -> tensor<4x6x8xf32> {
  %fill = nn.constant dense<-1.0e8> : tensor<f32>
  %s = nn.matmul %q, %kt : (tensor<4x6x8xf32>, tensor<4x8x6xf32>) -> tensor<4x6x6xf32>
  %r = nn.reshape %s {shape = array<i64: 2, 2, 6, -1>} : (tensor<4x6x6xf32>) -> tensor<2x2x6x6xf32>
  %w = nn.select %pad, %fill, %r : (tensor<2x1x1x?xi1>, tensor<f32>, tensor<2x2x6x6xf32>) -> tensor<2x2x6x6xf32>
  %b = nn.reshape %w {shape = array<i64: 4, 6, -1>} : (tensor<2x2x6x6xf32>) -> tensor<4x6x6xf32>
  %p = nn.softmax %b {axis = -1 : i64} : (tensor<4x6x6xf32>) -> tensor<4x6x6xf32>
  %y = nn.matmul %p, %v {name = "attn"} : (tensor<4x6x6xf32>, tensor<4x6x8xf32>) -> tensor<4x6x8xf32>
  func.return %y : tensor<4x6x8xf32>
}
// CHECK-LABEL: func.func @emformer_fill_1e8
// CHECK:         %[[V:[a-z_0-9]+]] = nn.reshape %v {shape = array<i64: 2, 2, 6, 8>, name = "attn/value_view"}
// CHECK:         %[[M:[a-z_0-9]+]] = nn.select %pad, %{{.*}}, %{{.*}} {name = "attn/mask0_where"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %{{.*}}, %{{.*}}, %[[V]], %[[M]]
// CHECK-NEXT:    %[[TOP:[a-z_0-9]+]] = nn.reduce %[[M]] {operation = "max", axes = array<i64: -1>, name = "attn/row_top"} : (tensor<2x1x1x?xf32>) -> tensor<2x1x1x1xf32>
// CHECK-NEXT:    %[[ZERO:[a-z_0-9]+]] = nn.constant dense<0.000000e+00>
// CHECK-NEXT:    %[[ROWS:[a-z_0-9]+]] = nn.eltwise %[[TOP]], %[[ZERO]] {operation = "less", name = "attn/masked_rows"}
// CHECK-NEXT:    %[[MEAN:[a-z_0-9]+]] = nn.reduce %[[V]] {operation = "mean", axes = array<i64: -2>, name = "attn/value_mean"} : (tensor<2x2x6x8xf32>) -> tensor<2x2x1x8xf32>
// CHECK-NEXT:    %[[U:[a-z_0-9]+]] = nn.select %[[ROWS]], %[[MEAN]], %[[Y]] {name = "attn/uniform_rows"}
// CHECK-NEXT:    %{{.*}} = nn.reshape %[[U]] {shape = array<i64: 4, 6, 8>, name = "attn"}
