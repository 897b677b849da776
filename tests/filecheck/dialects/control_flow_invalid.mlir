// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @branch_ranks(%c: tensor<i1>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "nn.if"(%c, %x) <{operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%a: tensor<3xf32>):
    nn.yield %a : tensor<3xf32>
  }, {
  ^bb0(%a: tensor<3xf32>):
    %b = nn.reshape %a {shape = array<i64: 1, 3>} : (tensor<3xf32>) -> tensor<1x3xf32>
    nn.yield %b : tensor<1x3xf32>
  }) : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
// CHECK: nn.if: output #0 has type tensor<3xf32> in one place and tensor<1x3xf32> in another (rank and element type must agree)

// -----
func.func @condition_type(%c: tensor<f32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %r = "nn.if"(%c, %x) <{operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%a: tensor<3xf32>):
    nn.yield %a : tensor<3xf32>
  }, {
  ^bb0(%a: tensor<3xf32>):
    nn.yield %a : tensor<3xf32>
  }) : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
// CHECK: nn.if: the condition must be one i1 value, got tensor<f32>

// -----
func.func @endless(%x: tensor<3xf32>) -> tensor<3xf32> {
  %l = "nn.loop"(%x) <{operandSegmentSizes = array<i32: 0, 0, 1>, carried = 1 : i64}> ({
  ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<3xf32>):
    nn.yield %k, %v : tensor<i1>, tensor<3xf32>
  }) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %l : tensor<3xf32>
}
// CHECK: nn.loop: needs a trip count or a condition (it would never stop)

// -----
func.func @growing_static(%n: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %l = "nn.loop"(%n, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>, carried = 1 : i64}> ({
  ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<2xf32>):
    %w = nn.concat %v, %v {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    nn.yield %k, %w : tensor<i1>, tensor<4xf32>
  }) : (tensor<i64>, tensor<2xf32>) -> tensor<2xf32>
  func.return %l : tensor<2xf32>
}
// CHECK: nn.loop: the body argument of carried value #0 has type tensor<2xf32>, expected tensor<?xf32> (sizes that change over iterations are ?)

// -----
func.func @yield_outside(%x: tensor<3xf32>) -> tensor<3xf32> {
  nn.yield %x : tensor<3xf32>
  func.return %x : tensor<3xf32>
}
// CHECK: 'nn.yield' must be the last operation in its parent block
