// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @f(%c: tensor<i1>, %x: tensor<3xf32>, %n: tensor<i64>) -> (tensor<?xf32>, tensor<3xf32>, tensor<?x3xf32>) {
  %r = "nn.if"(%c, %x) <{operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%a: tensor<3xf32>):
    nn.yield %a : tensor<3xf32>
  }, {
  ^bb0(%a: tensor<3xf32>):
    %b = nn.concat %a, %a {axis = 0 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<6xf32>
    nn.yield %b : tensor<6xf32>
  }) {name = "if"} : (tensor<i1>, tensor<3xf32>) -> tensor<?xf32>
  %l:2 = "nn.loop"(%n, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>, carried = 1 : i64}> ({
  ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<3xf32>):
    %w = nn.eltwise %v, %v {operation = "sum"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    nn.yield %k, %w, %w : tensor<i1>, tensor<3xf32>, tensor<3xf32>
  }) : (tensor<i64>, tensor<3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>)
  func.return %r, %l#0, %l#1 : tensor<?xf32>, tensor<3xf32>, tensor<?x3xf32>
}
// CHECK:      %r = "nn.if"(%c, %x) <{operandSegmentSizes = array<i32: 1, 1>, name = "if"}> ({
// CHECK-NEXT: ^bb0(%a: tensor<3xf32>):
// CHECK-NEXT:   nn.yield %a : tensor<3xf32>
// CHECK-NEXT: }, {
// CHECK-NEXT: ^bb0(%a_1: tensor<3xf32>):
// CHECK-NEXT:   %b = nn.concat %a_1, %a_1 {axis = 0 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<6xf32>
// CHECK-NEXT:   nn.yield %b : tensor<6xf32>
// CHECK-NEXT: }) : (tensor<i1>, tensor<3xf32>) -> tensor<?xf32>
// CHECK-NEXT: %l, %l_1 = "nn.loop"(%n, %x) <{operandSegmentSizes = array<i32: 1, 0, 1>, carried = 1 : i64}> ({
// CHECK-NEXT: ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<3xf32>):
// CHECK-NEXT:   %w = nn.eltwise %v, %v {operation = "sum"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:   nn.yield %k, %w, %w : tensor<i1>, tensor<3xf32>, tensor<3xf32>
// CHECK-NEXT: }) : (tensor<i64>, tensor<3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>)

// -----
func.func @while_growing(%c: tensor<i1>, %x: tensor<2xf32>, %y: tensor<f32>) -> (tensor<?xf32>) {
  %l = "nn.loop"(%c, %x, %y) <{operandSegmentSizes = array<i32: 0, 1, 2>, carried = 1 : i64}> ({
  ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<?xf32>, %t: tensor<f32>):
    %w = nn.concat %v, %v {axis = 0 : i64} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    nn.yield %k, %w : tensor<i1>, tensor<?xf32>
  }) : (tensor<i1>, tensor<2xf32>, tensor<f32>) -> tensor<?xf32>
  func.return %l : tensor<?xf32>
}
// CHECK:      "nn.loop"(%c, %x, %y) <{operandSegmentSizes = array<i32: 0, 1, 2>, carried = 1 : i64}> ({
// CHECK-NEXT: ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<?xf32>, %t: tensor<f32>):
