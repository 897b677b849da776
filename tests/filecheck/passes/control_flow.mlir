// RUN: ir-opt %s -p canonicalize,cse,convert-layout | filecheck %s

// canonicalize and cse work inside the bodies (the identity goes, the duplicate relu merges),
// never across them (the loop and the if stay, with their operands); convert-layout leaves
// an nn.loop / nn.if alone.
func.func @bodies(%n: tensor<i64>, %c: tensor<i1>, %x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<?x2x3xf32>, tensor<2x3xf32>) {
  %l, %s = "nn.loop"(%n, %x, %x) <{operandSegmentSizes = array<i32: 1, 0, 2>, carried = 1 : i64, name = "loop"}> ({
  ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<2x3xf32>, %w: tensor<2x3xf32>):
    %a = nn.identity %v : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %b = nn.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %d = nn.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %e = nn.eltwise %b, %d {operation = "sum"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %f = nn.eltwise %e, %w {operation = "mul"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    nn.yield %k, %f, %e : tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>
  }) : (tensor<i64>, tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<?x2x3xf32>)
  %r = "nn.if"(%c, %l) <{operandSegmentSizes = array<i32: 1, 1>, name = "branch"}> ({
  ^bb0(%a: tensor<2x3xf32>):
    %t = nn.identity %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    nn.yield %t : tensor<2x3xf32>
  }, {
  ^bb0(%a: tensor<2x3xf32>):
    %t = nn.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
    nn.yield %t : tensor<2x3xf32>
  }) : (tensor<i1>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %l, %s, %r : tensor<2x3xf32>, tensor<?x2x3xf32>, tensor<2x3xf32>
}
// CHECK:      "nn.loop"(%n, %x, %x) <{operandSegmentSizes = array<i32: 1, 0, 2>, carried = 1 : i64, name = "loop"}> ({
// CHECK-NEXT: ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<2x3xf32>, %w: tensor<2x3xf32>):
// CHECK-NEXT:   %b = nn.relu %v : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %e = nn.eltwise %b, %b {operation = "sum"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   %f = nn.eltwise %e, %w {operation = "mul"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   nn.yield %k, %f, %e : tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>
// CHECK-NEXT: })
// CHECK:      "nn.if"(%c, %l) <{operandSegmentSizes = array<i32: 1, 1>, name = "branch"}> ({
// CHECK-NEXT: ^bb0(%a: tensor<2x3xf32>):
// CHECK-NEXT:   nn.yield %a : tensor<2x3xf32>
// CHECK-NEXT: }, {
// CHECK-NEXT: ^bb0(%a_1: tensor<2x3xf32>):
// CHECK-NEXT:   %t = nn.relu %a_1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:   nn.yield %t : tensor<2x3xf32>
// CHECK-NEXT: })
