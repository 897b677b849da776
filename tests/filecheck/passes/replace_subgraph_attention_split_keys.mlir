// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// PEGASUS-X's block-local attention (2 blocks of 4 tokens, 3 global keys): the global and
// block scores joined, masked and normalised together, the probabilities split again for two
// value products. Keys and values are joined (the global ones tiled over the blocks): one
// attention.
func.func @global_local(%q: tensor<1x2x8x8xf32>, %kg: tensor<1x2x3x8xf32>, %vg: tensor<1x2x3x8xf32>, %kb: tensor<1x2x2x4x8xf32>, %vb: tensor<1x2x2x4x8xf32>, %mask: tensor<1x1x2x1x7xf32>) -> tensor<1x2x2x4x8xf32> {
  %s1 = nn.matmul %q, %kg {transpose_b = true} : (tensor<1x2x8x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x8x3xf32>
  %r1 = nn.reshape %s1 {shape = array<i64: 1, 2, 2, 4, 3>} : (tensor<1x2x8x3xf32>) -> tensor<1x2x2x4x3xf32>
  %qb = nn.reshape %q {shape = array<i64: 1, 2, 2, 4, 8>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x2x4x8xf32>
  %s2 = nn.matmul %qb, %kb {transpose_b = true} : (tensor<1x2x2x4x8xf32>, tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x4xf32>
  %c = nn.concat %r1, %s2 {axis = -1 : i64} : (tensor<1x2x2x4x3xf32>, tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x7xf32>
  %x = nn.eltwise %c, %mask {operation = "sum"} : (tensor<1x2x2x4x7xf32>, tensor<1x1x2x1x7xf32>) -> tensor<1x2x2x4x7xf32>
  %p = nn.softmax %x {axis = -1 : i64} : (tensor<1x2x2x4x7xf32>) -> tensor<1x2x2x4x7xf32>
  %p1 = nn.slice %p {begins = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 4>} : (tensor<1x2x2x4x7xf32>) -> tensor<1x2x2x4x3xf32>
  %p2 = nn.slice %p {begins = array<i64: 3>, ends = array<i64: 9223372036854775807>, axes = array<i64: 4>} : (tensor<1x2x2x4x7xf32>) -> tensor<1x2x2x4x4xf32>
  %f1 = nn.reshape %p1 {shape = array<i64: 1, 2, 8, 3>} : (tensor<1x2x2x4x3xf32>) -> tensor<1x2x8x3xf32>
  %a1 = nn.matmul %f1, %vg : (tensor<1x2x8x3xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x8x8xf32>
  %b1 = nn.reshape %a1 {shape = array<i64: 1, 2, 2, 4, 8>} : (tensor<1x2x8x8xf32>) -> tensor<1x2x2x4x8xf32>
  %a2 = nn.matmul %p2, %vb : (tensor<1x2x2x4x4xf32>, tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %y = nn.eltwise %b1, %a2 {operation = "sum", name = "out"} : (tensor<1x2x2x4x8xf32>, tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  func.return %y : tensor<1x2x2x4x8xf32>
}
// CHECK-LABEL: func.func @global_local
// CHECK:         %[[KG:[a-z_0-9]+]] = nn.reshape %kg {shape = array<i64: 1, 2, 1, 3, 8>, name = "out/key0_view"}
// CHECK-NEXT:    %[[KT:[a-z_0-9]+]] = nn.tile %[[KG]] {repeats = array<i64: 1, 1, 2, 1, 1>, name = "out/key0_blocks"}
// CHECK-NEXT:    %[[Q:[a-z_0-9]+]] = nn.reshape %q {shape = array<i64: 1, 2, 2, 4, 8>, name = "out/query_view"}
// CHECK-NEXT:    %[[K:[a-z_0-9]+]] = nn.concat %[[KT]], %kb {axis = -2 : i64, name = "out/keys"}
// CHECK:         %[[VG:[a-z_0-9]+]] = nn.reshape %vg {shape = array<i64: 1, 2, 1, 3, 8>, name = "out/value0_view"}
// CHECK-NEXT:    %[[VT:[a-z_0-9]+]] = nn.tile %[[VG]] {repeats = array<i64: 1, 1, 2, 1, 1>, name = "out/value0_blocks"}
// CHECK-NEXT:    %[[V:[a-z_0-9]+]] = nn.concat %[[VT]], %vb {axis = -2 : i64, name = "out/values"}
// CHECK-NEXT:    %[[Y:[a-z_0-9]+]] = nn.scaled_dot_product_attention %[[Q]], %[[K]], %[[V]], %mask {scale = 1.000000e+00 : f32, name = "out/joined"} : (tensor<1x2x2x4x8xf32>, tensor<1x2x2x7x8xf32>, tensor<1x2x2x7x8xf32>, tensor<1x1x2x1x7xf32>) -> tensor<1x2x2x4x8xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     nn.softmax

// -----

// The same with the probabilities also returned: nothing changes.
func.func @probs_used(%q: tensor<1x2x4x8xf32>, %kg: tensor<1x2x3x8xf32>, %vg: tensor<1x2x3x8xf32>, %kb: tensor<1x2x4x8xf32>, %vb: tensor<1x2x4x8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x7xf32>) {
  %s1 = nn.matmul %q, %kg {transpose_b = true} : (tensor<1x2x4x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x4x3xf32>
  %s2 = nn.matmul %q, %kb {transpose_b = true} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x4xf32>
  %c = nn.concat %s1, %s2 {axis = -1 : i64} : (tensor<1x2x4x3xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x7xf32>
  %p = nn.softmax %c {axis = -1 : i64} : (tensor<1x2x4x7xf32>) -> tensor<1x2x4x7xf32>
  %p1 = nn.slice %p {begins = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 3>} : (tensor<1x2x4x7xf32>) -> tensor<1x2x4x3xf32>
  %p2 = nn.slice %p {begins = array<i64: 3>, ends = array<i64: 7>, axes = array<i64: 3>} : (tensor<1x2x4x7xf32>) -> tensor<1x2x4x4xf32>
  %a1 = nn.matmul %p1, %vg : (tensor<1x2x4x3xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x4x8xf32>
  %a2 = nn.matmul %p2, %vb : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = nn.eltwise %a1, %a2 {operation = "sum"} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x7xf32>
}
// CHECK-LABEL: func.func @probs_used
// CHECK:         nn.concat %s1, %s2
// CHECK:         nn.softmax
// CHECK-NOT:     nn.scaled_dot_product_attention
