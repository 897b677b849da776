// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

// Arithmetic keeps the element type, comparisons give i1; a dynamic size broadcasts.
func.func @arithmetic(%a: tensor<?x3x4xf32>, %b: tensor<3x1xf32>) {
  %div = nn.eltwise %a, %b {operation = "div"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %floor_mod = nn.eltwise %a, %b {operation = "floor_mod"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %max = nn.eltwise %a, %b {operation = "max"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %min = nn.eltwise %a, %b {operation = "min"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %mod = nn.eltwise %a, %b {operation = "mod"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %mul = nn.eltwise %a, %b {operation = "mul"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %pow = nn.eltwise %a, %b {operation = "pow"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %squared_diff = nn.eltwise %a, %b {operation = "squared_diff"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %sub = nn.eltwise %a, %b {operation = "sub"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  %sum = nn.eltwise %a, %b {operation = "sum"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
  func.return
}
// CHECK:      %div = nn.eltwise %a, %b {operation = "div"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %floor_mod = nn.eltwise %a, %b {operation = "floor_mod"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %max = nn.eltwise %a, %b {operation = "max"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %min = nn.eltwise %a, %b {operation = "min"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %mod = nn.eltwise %a, %b {operation = "mod"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %mul = nn.eltwise %a, %b {operation = "mul"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %pow = nn.eltwise %a, %b {operation = "pow"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %squared_diff = nn.eltwise %a, %b {operation = "squared_diff"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %sub = nn.eltwise %a, %b {operation = "sub"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>
// CHECK-NEXT: %sum = nn.eltwise %a, %b {operation = "sum"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xf32>

// -----
func.func @comparison(%a: tensor<?x3x4xf32>, %b: tensor<3x1xf32>) {
  %equal = nn.eltwise %a, %b {operation = "equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  %greater = nn.eltwise %a, %b {operation = "greater"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  %greater_equal = nn.eltwise %a, %b {operation = "greater_equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  %less = nn.eltwise %a, %b {operation = "less"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  %less_equal = nn.eltwise %a, %b {operation = "less_equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  %not_equal = nn.eltwise %a, %b {operation = "not_equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
  func.return
}
// CHECK:      %equal = nn.eltwise %a, %b {operation = "equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
// CHECK-NEXT: %greater = nn.eltwise %a, %b {operation = "greater"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
// CHECK-NEXT: %greater_equal = nn.eltwise %a, %b {operation = "greater_equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
// CHECK-NEXT: %less = nn.eltwise %a, %b {operation = "less"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
// CHECK-NEXT: %less_equal = nn.eltwise %a, %b {operation = "less_equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>
// CHECK-NEXT: %not_equal = nn.eltwise %a, %b {operation = "not_equal"} : (tensor<?x3x4xf32>, tensor<3x1xf32>) -> tensor<?x3x4xi1>

// -----
// and, or, xor take i1.
func.func @logical(%a: tensor<2x1xi1>, %b: tensor<5xi1>) {
  %and = nn.eltwise %a, %b {operation = "and"} : (tensor<2x1xi1>, tensor<5xi1>) -> tensor<2x5xi1>
  %or = nn.eltwise %a, %b {operation = "or"} : (tensor<2x1xi1>, tensor<5xi1>) -> tensor<2x5xi1>
  %xor = nn.eltwise %a, %b {operation = "xor"} : (tensor<2x1xi1>, tensor<5xi1>) -> tensor<2x5xi1>
  func.return
}
// CHECK:      %and = nn.eltwise %a, %b {operation = "and"} : (tensor<2x1xi1>, tensor<5xi1>) -> tensor<2x5xi1>
// CHECK-NEXT: %or = nn.eltwise %a, %b {operation = "or"} : (tensor<2x1xi1>, tensor<5xi1>) -> tensor<2x5xi1>
// CHECK-NEXT: %xor = nn.eltwise %a, %b {operation = "xor"} : (tensor<2x1xi1>, tensor<5xi1>) -> tensor<2x5xi1>

// -----
// Scalars, rank-different operands, integers, and a layer name.
func.func @broadcast(%x: tensor<2x3x4x5xf32>, %s: tensor<f32>, %c: tensor<3x1x1xf32>, %i: tensor<?x1xi64>, %j: tensor<1x?xi64>) -> (tensor<2x3x4x5xf32>, tensor<?x?xi64>) {
  %0 = nn.eltwise %x, %s {operation = "mul", name = "scale"} : (tensor<2x3x4x5xf32>, tensor<f32>) -> tensor<2x3x4x5xf32>
  %1 = nn.eltwise %c, %0 {operation = "sum"} : (tensor<3x1x1xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %2 = nn.eltwise %i, %j {operation = "div"} : (tensor<?x1xi64>, tensor<1x?xi64>) -> tensor<?x?xi64>
  %3 = nn.eltwise %s, %s {operation = "max"} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %1, %2 : tensor<2x3x4x5xf32>, tensor<?x?xi64>
}
// CHECK:      %0 = nn.eltwise %x, %s {operation = "mul", name = "scale"} : (tensor<2x3x4x5xf32>, tensor<f32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT: %1 = nn.eltwise %c, %0 {operation = "sum"} : (tensor<3x1x1xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT: %2 = nn.eltwise %i, %j {operation = "div"} : (tensor<?x1xi64>, tensor<1x?xi64>) -> tensor<?x?xi64>
// CHECK-NEXT: %3 = nn.eltwise %s, %s {operation = "max"} : (tensor<f32>, tensor<f32>) -> tensor<f32>

// -----
func.func @convert(%x: tensor<?x3xf32>, %i: tensor<4xi64>, %b: tensor<2xi1>) -> tensor<?x3xi32> {
  %0 = nn.convert %x {destination_type = i32, name = "cast1"} : (tensor<?x3xf32>) -> tensor<?x3xi32>
  %1 = nn.convert %x {destination_type = f16} : (tensor<?x3xf32>) -> tensor<?x3xf16>
  %2 = nn.convert %i {destination_type = f32} : (tensor<4xi64>) -> tensor<4xf32>
  %3 = nn.convert %x {destination_type = i1} : (tensor<?x3xf32>) -> tensor<?x3xi1>
  %4 = nn.convert %b {destination_type = i64} : (tensor<2xi1>) -> tensor<2xi64>
  %5 = nn.convert %i {destination_type = ui8} : (tensor<4xi64>) -> tensor<4xui8>
  %6 = nn.convert %i {destination_type = i64} : (tensor<4xi64>) -> tensor<4xi64>
  func.return %0 : tensor<?x3xi32>
}
// CHECK:      %0 = nn.convert %x {destination_type = i32, name = "cast1"} : (tensor<?x3xf32>) -> tensor<?x3xi32>
// CHECK-NEXT: %1 = nn.convert %x {destination_type = f16} : (tensor<?x3xf32>) -> tensor<?x3xf16>
// CHECK-NEXT: %2 = nn.convert %i {destination_type = f32} : (tensor<4xi64>) -> tensor<4xf32>
// CHECK-NEXT: %3 = nn.convert %x {destination_type = i1} : (tensor<?x3xf32>) -> tensor<?x3xi1>
// CHECK-NEXT: %4 = nn.convert %b {destination_type = i64} : (tensor<2xi1>) -> tensor<2xi64>
// CHECK-NEXT: %5 = nn.convert %i {destination_type = ui8} : (tensor<4xi64>) -> tensor<4xui8>
// CHECK-NEXT: %6 = nn.convert %i {destination_type = i64} : (tensor<4xi64>) -> tensor<4xi64>

// -----
func.func @identity(%x: tensor<?x8xf16>, %b: tensor<3xi1>) -> (tensor<?x8xf16>, tensor<3xi1>) {
  %0 = nn.identity %x {name = "dropout1"} : (tensor<?x8xf16>) -> tensor<?x8xf16>
  %1 = nn.identity %b : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0, %1 : tensor<?x8xf16>, tensor<3xi1>
}
// CHECK:      %0 = nn.identity %x {name = "dropout1"} : (tensor<?x8xf16>) -> tensor<?x8xf16>
// CHECK-NEXT: %1 = nn.identity %b : (tensor<3xi1>) -> tensor<3xi1>

// -----
// Select broadcasts its condition and both values.
func.func @select(%c: tensor<3x1xi1>, %a: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %y = nn.select %c, %a, %b : (tensor<3x1xi1>, tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
// CHECK: %y = nn.select %c, %a, %b : (tensor<3x1xi1>, tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
