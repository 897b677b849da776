// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @operation(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.eltwise %a, %b {operation = "add", name = "add1"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: nn.eltwise 'add1': operation must be one of and, div, equal, floor_mod, greater, greater_equal, less, less_equal, max, min, mod, mul, not_equal, or, pow, squared_diff, sub, sum, xor, got 'add'

// -----
func.func @element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) -> tensor<2x3xf32> {
  %y = nn.eltwise %a, %b {operation = "sum"} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: nn.eltwise: operand element types differ: f32 vs f16

// -----
func.func @broadcast(%a: tensor<2x3xf32>, %b: tensor<4x1x2xf32>) -> tensor<4x2x3xf32> {
  %y = nn.eltwise %a, %b {operation = "mul"} : (tensor<2x3xf32>, tensor<4x1x2xf32>) -> tensor<4x2x3xf32>
  func.return %y : tensor<4x2x3xf32>
}
// CHECK: nn.eltwise: shapes [1, 2, 3] and [4, 1, 2] cannot be broadcast

// -----
func.func @logical_on_float(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xi1> {
  %y = nn.eltwise %a, %b {operation = "or"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  func.return %y : tensor<2xi1>
}
// CHECK: nn.eltwise: operation 'or' needs i1 operands, got f32

// -----
func.func @comparison_result(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.eltwise %a, %b {operation = "less"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: nn.eltwise: result #0 has type tensor<2xf32> but the operands imply tensor<2xi1>

// -----
func.func @arithmetic_result(%a: tensor<?x3xi64>, %b: tensor<3xi64>) -> tensor<?x4xi64> {
  %y = nn.eltwise %a, %b {operation = "sub"} : (tensor<?x3xi64>, tensor<3xi64>) -> tensor<?x4xi64>
  func.return %y : tensor<?x4xi64>
}
// CHECK: nn.eltwise: result #0 has type tensor<?x4xi64> but the operands imply tensor<?x3xi64>

// -----
func.func @convert_destination(%x: tensor<2xf32>) -> tensor<2xindex> {
  %y = nn.convert %x {destination_type = index, name = "cast1"} : (tensor<2xf32>) -> tensor<2xindex>
  func.return %y : tensor<2xindex>
}
// CHECK: nn.convert 'cast1': destination_type must be an integer or float type, got index

// -----
func.func @convert_result(%x: tensor<2xf32>) -> tensor<2xi64> {
  %y = nn.convert %x {destination_type = i32} : (tensor<2xf32>) -> tensor<2xi64>
  func.return %y : tensor<2xi64>
}
// CHECK: nn.convert: result #0 has type tensor<2xi64> but the operands imply tensor<2xi32>

// -----
func.func @identity_result(%x: tensor<2xf32>) -> tensor<2xf16> {
  %y = nn.identity %x : (tensor<2xf32>) -> tensor<2xf16>
  func.return %y : tensor<2xf16>
}
// CHECK: nn.identity: result #0 has type tensor<2xf16> but the operands imply tensor<2xf32>

// -----
func.func @select_condition(%c: tensor<2xf32>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %y = nn.select %c, %a, %a : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// CHECK: nn.select: condition must be i1, got f32
