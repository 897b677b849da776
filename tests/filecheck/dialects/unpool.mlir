// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @max_pool_indices(%x: tensor<1x64x23x30xf32>) -> tensor<1x64x12x15xi64> {
  %i = nn.max_pool_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, rounding_type = "ceil", axis = 2 : i64, name = "pool5/mask_index"} : (tensor<1x64x23x30xf32>) -> tensor<1x64x12x15xi64>
  func.return %i : tensor<1x64x12x15xi64>
}
// CHECK:      %i = nn.max_pool_indices %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, rounding_type = "ceil", name = "pool5/mask_index"} : (tensor<1x64x23x30xf32>) -> tensor<1x64x12x15xi64>

// -----
func.func @max_pool_indices_whole_tensor(%x: tensor<2x3x7x9xf32>) -> tensor<2x3x4x5xi64> {
  %i = nn.max_pool_indices %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, axis = 0 : i64} : (tensor<2x3x7x9xf32>) -> tensor<2x3x4x5xi64>
  func.return %i : tensor<2x3x4x5xi64>
}
// CHECK:      nn.max_pool_indices %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>, axis = 0 : i64} : (tensor<2x3x7x9xf32>) -> tensor<2x3x4x5xi64>

// -----
func.func @max_unpool(%x: tensor<1x64x12x15xf32>, %i: tensor<1x64x12x15xi64>) -> tensor<1x64x23x30xf32> {
  %y = nn.max_unpool %x, %i {spatial = array<i64: 23, 30>, name = "upsample5"} : (tensor<1x64x12x15xf32>, tensor<1x64x12x15xi64>) -> tensor<1x64x23x30xf32>
  func.return %y : tensor<1x64x23x30xf32>
}
// CHECK:      %y = nn.max_unpool %x, %i {spatial = array<i64: 23, 30>, name = "upsample5"} : (tensor<1x64x12x15xf32>, tensor<1x64x12x15xi64>) -> tensor<1x64x23x30xf32>
