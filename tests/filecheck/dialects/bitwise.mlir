// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @bits(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %u: tensor<4xui8>) -> (tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xui8>) {
  %x = nn.bitwise %a, %b {operation = "xor"} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %n = nn.bitwise %a {operation = "not"} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %s = nn.bitwise %u, %u {operation = "right_shift"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  func.return %x, %n, %s : tensor<2x3xi32>, tensor<2x3xi32>, tensor<4xui8>
}
// CHECK:      nn.bitwise %a, %b {operation = "xor"} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: nn.bitwise %a {operation = "not"} : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: nn.bitwise %u, %u {operation = "right_shift"} : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
