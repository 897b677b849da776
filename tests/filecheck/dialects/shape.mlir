// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @concat(%a: tensor<1x2x4xf32>, %b: tensor<1x3x4xf32>, %c: tensor<1x1x4xf32>) -> tensor<1x6x4xf32> {
  %y = nn.concat %a, %b, %c {name = "cat1"} : (tensor<1x2x4xf32>, tensor<1x3x4xf32>, tensor<1x1x4xf32>) -> tensor<1x6x4xf32>
  func.return %y : tensor<1x6x4xf32>
}
// CHECK:      %y = nn.concat %a, %b, %c {name = "cat1"} : (tensor<1x2x4xf32>, tensor<1x3x4xf32>, tensor<1x1x4xf32>) -> tensor<1x6x4xf32>

// -----
func.func @concat_dynamic(%a: tensor<?x3xi64>, %b: tensor<2x?xi64>) -> tensor<2x?xi64> {
  %y = nn.concat %a, %b {axis = -1 : i64} : (tensor<?x3xi64>, tensor<2x?xi64>) -> tensor<2x?xi64>
  func.return %y : tensor<2x?xi64>
}
// CHECK: %y = nn.concat %a, %b {axis = -1 : i64} : (tensor<?x3xi64>, tensor<2x?xi64>) -> tensor<2x?xi64>

// -----
func.func @split(%x: tensor<?x6x2xf16>) -> (tensor<?x1x2xf16>, tensor<?x2x2xf16>, tensor<?x3x2xf16>) {
  %a, %b, %c = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 1, 2, 3>} : (tensor<?x6x2xf16>) -> (tensor<?x1x2xf16>, tensor<?x2x2xf16>, tensor<?x3x2xf16>)
  func.return %a, %b, %c : tensor<?x1x2xf16>, tensor<?x2x2xf16>, tensor<?x3x2xf16>
}
// CHECK: %a, %b, %c = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 1, 2, 3>} : (tensor<?x6x2xf16>) -> (tensor<?x1x2xf16>, tensor<?x2x2xf16>, tensor<?x3x2xf16>)

// -----
func.func @split_one(%x: tensor<4x6xi1>) -> tensor<4x6xi1> {
  %a = nn.split %x {axis = -1 : i64, split_lengths = array<i64: 6>} : (tensor<4x6xi1>) -> tensor<4x6xi1>
  func.return %a : tensor<4x6xi1>
}
// CHECK: %a = nn.split %x {axis = -1 : i64, split_lengths = array<i64: 6>} : (tensor<4x6xi1>) -> tensor<4x6xi1>

// -----
func.func @reshape(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %y = nn.reshape %x {shape = array<i64: 0, -1>} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  func.return %y : tensor<?x12xf32>
}
// CHECK: %y = nn.reshape %x {shape = array<i64: 0, -1>} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>

// -----
func.func @reshape_zero_size(%x: tensor<0x3xi32>) -> tensor<3x0xi32> {
  %y = nn.reshape %x {shape = array<i64: 3, 0>, special_zero = false} : (tensor<0x3xi32>) -> tensor<3x0xi32>
  func.return %y : tensor<3x0xi32>
}
// CHECK: %y = nn.reshape %x {shape = array<i64: 3, 0>, special_zero = false} : (tensor<0x3xi32>) -> tensor<3x0xi32>

// -----
func.func @flatten(%x: tensor<2x3x4x5xf32>) -> tensor<6x20xf32> {
  %y = nn.flatten %x {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
  func.return %y : tensor<6x20xf32>
}
// CHECK: %y = nn.flatten %x {axis = 2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>

// -----
func.func @flatten_default(%x: tensor<?x3x4xf32>) -> tensor<?x12xf32> {
  %y = nn.flatten %x : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
  func.return %y : tensor<?x12xf32>
}
// CHECK: %y = nn.flatten %x : (tensor<?x3x4xf32>) -> tensor<?x12xf32>

// -----
func.func @permute(%x: tensor<?x3x8x9xf32>) -> tensor<?x8x9x3xf32> {
  %y = nn.permute %x {order = array<i64: 0, 2, 3, 1>, name = "nhwc"} : (tensor<?x3x8x9xf32>) -> tensor<?x8x9x3xf32>
  func.return %y : tensor<?x8x9x3xf32>
}
// CHECK: %y = nn.permute %x {order = array<i64: 0, 2, 3, 1>, name = "nhwc"} : (tensor<?x3x8x9xf32>) -> tensor<?x8x9x3xf32>

// -----
func.func @squeeze(%x: tensor<1x3x1x?xf32>) -> (tensor<3x?xf32>, tensor<3x1x?xf32>) {
  %a = nn.squeeze %x : (tensor<1x3x1x?xf32>) -> tensor<3x?xf32>
  %b = nn.squeeze %x {axes = array<i64: 0>} : (tensor<1x3x1x?xf32>) -> tensor<3x1x?xf32>
  func.return %a, %b : tensor<3x?xf32>, tensor<3x1x?xf32>
}
// CHECK:      %a = nn.squeeze %x : (tensor<1x3x1x?xf32>) -> tensor<3x?xf32>
// CHECK-NEXT: %b = nn.squeeze %x {axes = array<i64: 0>} : (tensor<1x3x1x?xf32>) -> tensor<3x1x?xf32>

// -----
func.func @unsqueeze(%x: tensor<?x3xi64>) -> tensor<1x?x3x1xi64> {
  %y = nn.unsqueeze %x {axes = array<i64: 0, -1>} : (tensor<?x3xi64>) -> tensor<1x?x3x1xi64>
  func.return %y : tensor<1x?x3x1xi64>
}
// CHECK: %y = nn.unsqueeze %x {axes = array<i64: 0, -1>} : (tensor<?x3xi64>) -> tensor<1x?x3x1xi64>

// -----
func.func @slice(%x: tensor<?x3x8x9xf32>) -> tensor<?x3x6x5xf32> {
  %y = nn.slice %x {begins = array<i64: 1, -1>, ends = array<i64: 7, -9223372036854775808>, axes = array<i64: 2, 3>, steps = array<i64: 1, -2>, name = "crop1"} : (tensor<?x3x8x9xf32>) -> tensor<?x3x6x5xf32>
  func.return %y : tensor<?x3x6x5xf32>
}
// CHECK: %y = nn.slice %x {begins = array<i64: 1, -1>, ends = array<i64: 7, -9223372036854775808>, axes = array<i64: 2, 3>, steps = array<i64: 1, -2>, name = "crop1"} : (tensor<?x3x8x9xf32>) -> tensor<?x3x6x5xf32>

// -----
func.func @slice_defaults(%x: tensor<10x4xi1>) -> tensor<7x4xi1> {
  %y = nn.slice %x {begins = array<i64: 3>, ends = array<i64: 9223372036854775807>} : (tensor<10x4xi1>) -> tensor<7x4xi1>
  func.return %y : tensor<7x4xi1>
}
// CHECK: %y = nn.slice %x {begins = array<i64: 3>, ends = array<i64: 9223372036854775807>} : (tensor<10x4xi1>) -> tensor<7x4xi1>

// -----
func.func @tile(%x: tensor<?x2x3xi32>) -> tensor<?x4x3xi32> {
  %y = nn.tile %x {repeats = array<i64: 3, 2, 1>} : (tensor<?x2x3xi32>) -> tensor<?x4x3xi32>
  func.return %y : tensor<?x4x3xi32>
}
// CHECK: %y = nn.tile %x {repeats = array<i64: 3, 2, 1>} : (tensor<?x2x3xi32>) -> tensor<?x4x3xi32>

// -----
func.func @pad(%x: tensor<1x3x8x8xf32>) -> (tensor<1x3x11x10xf32>, tensor<1x3x10x10xf32>) {
  %a = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 2, 1>, value = -1.000000e+00 : f32} : (tensor<1x3x8x8xf32>) -> tensor<1x3x11x10xf32>
  %b = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 1, 1>, mode = "reflect"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  func.return %a, %b : tensor<1x3x11x10xf32>, tensor<1x3x10x10xf32>
}
// CHECK:      %a = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 2, 1>, value = -1.000000e+00 : f32} : (tensor<1x3x8x8xf32>) -> tensor<1x3x11x10xf32>
// CHECK-NEXT: %b = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 1, 1>, mode = "reflect"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>

// -----
func.func @gather(%x: tensor<?x8x4xf32>, %i: tensor<2x3xi32>) -> tensor<?x2x3x4xf32> {
  %y = nn.gather %x, %i {axis = 1 : i64} : (tensor<?x8x4xf32>, tensor<2x3xi32>) -> tensor<?x2x3x4xf32>
  func.return %y : tensor<?x2x3x4xf32>
}
// CHECK: %y = nn.gather %x, %i {axis = 1 : i64} : (tensor<?x8x4xf32>, tensor<2x3xi32>) -> tensor<?x2x3x4xf32>

// -----
func.func @gather_batch(%x: tensor<2x5x4xf16>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf16> {
  %y = nn.gather %x, %i {axis = 1 : i64, batch_dims = 1 : i64} : (tensor<2x5x4xf16>, tensor<2x3xi64>) -> tensor<2x3x4xf16>
  func.return %y : tensor<2x3x4xf16>
}
// CHECK: %y = nn.gather %x, %i {axis = 1 : i64, batch_dims = 1 : i64} : (tensor<2x5x4xf16>, tensor<2x3xi64>) -> tensor<2x3x4xf16>
