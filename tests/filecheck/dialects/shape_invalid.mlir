// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @concat_none() -> tensor<2xf32> {
  %r = nn.concat : () -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
// CHECK: nn.concat: needs at least one input

// -----
func.func @concat_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = nn.concat %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK: nn.concat: axis 2 is out of range for rank 2

// -----
func.func @concat_types(%x: tensor<2x3xf32>, %y: tensor<2x3xi32>) -> tensor<2x6xf32> {
  %r = nn.concat %x, %y : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<2x6xf32>
  func.return %r : tensor<2x6xf32>
}
// CHECK: nn.concat: input #1 has element type i32, expected f32

// -----
func.func @concat_rank(%x: tensor<2x3xf32>, %y: tensor<2x3x1xf32>) -> tensor<2x6xf32> {
  %r = nn.concat %x, %y : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<2x6xf32>
  func.return %r : tensor<2x6xf32>
}
// CHECK: nn.concat: input #1 has rank 3, expected 2

// -----
func.func @concat_shapes(%x: tensor<2x3xf32>, %y: tensor<4x3xf32>) -> tensor<2x6xf32> {
  %r = nn.concat %x, %y {name = "cat2"} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  func.return %r : tensor<2x6xf32>
}
// CHECK: nn.concat 'cat2': input shapes [2, 3], [4, 3] differ outside axis 1

// -----
func.func @concat_result(%x: tensor<2x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x4xf32> {
  %r = nn.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<?x3xf32>) -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}
// CHECK: nn.concat: result #0 has type tensor<?x4xf32> but the operands imply tensor<?x3xf32>

// -----
func.func @split_empty(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = nn.split %x {axis = 1 : i64, split_lengths = array<i64>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}
// CHECK: nn.split: split_lengths must not be empty

// -----
func.func @split_negative(%x: tensor<4x6xf32>) -> (tensor<4x7xf32>, tensor<4x6xf32>) {
  %r0, %r1 = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 7, -1>} : (tensor<4x6xf32>) -> (tensor<4x7xf32>, tensor<4x6xf32>)
  func.return %r0, %r1 : tensor<4x7xf32>, tensor<4x6xf32>
}
// CHECK: nn.split: split_lengths must be >= 0, got [7, -1]

// -----
func.func @split_sum(%x: tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>) {
  %r0, %r1 = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 2, 3>} : (tensor<4x6xf32>) -> (tensor<4x2xf32>, tensor<4x3xf32>)
  func.return %r0, %r1 : tensor<4x2xf32>, tensor<4x3xf32>
}
// CHECK: nn.split: split_lengths [2, 3] sum to 5, but axis 1 has size 6

// -----
func.func @split_axis(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %r = nn.split %x {axis = -3 : i64, split_lengths = array<i64: 4>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}
// CHECK: nn.split: axis -3 is out of range for rank 2

// -----
func.func @split_count(%x: tensor<4x6xf32>) -> tensor<4x2xf32> {
  %r = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 2, 4>} : (tensor<4x6xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}
// CHECK: nn.split: expected 2 results, got 1

// -----
func.func @reshape_values(%x: tensor<2x3xf32>) -> tensor<6x1xf32> {
  %r = nn.reshape %x {shape = array<i64: -1, -1>} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  func.return %r : tensor<6x1xf32>
}
// CHECK: nn.reshape: shape values must be >= -1 with at most one -1, got [-1, -1]

// -----
func.func @reshape_zero(%x: tensor<2x3xf32>) -> tensor<0x6xf32> {
  %r = nn.reshape %x {shape = array<i64: 0, -1>, special_zero = false} : (tensor<2x3xf32>) -> tensor<0x6xf32>
  func.return %r : tensor<0x6xf32>
}
// CHECK: nn.reshape: shape cannot hold both -1 and a size 0, got [0, -1]

// -----
func.func @reshape_copy(%x: tensor<6xf32>) -> tensor<3x2xf32> {
  %r = nn.reshape %x {shape = array<i64: 3, 0>} : (tensor<6xf32>) -> tensor<3x2xf32>
  func.return %r : tensor<3x2xf32>
}
// CHECK: nn.reshape: shape [3, 0] copies a dim (0) beyond the input rank 1

// -----
func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<2x5xf32> {
  %r = nn.reshape %x {shape = array<i64: 0, 5>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  func.return %r : tensor<2x5xf32>
}
// CHECK: nn.reshape: shape [0, 5] cannot hold the elements of input [2, 3]

// -----
func.func @reshape_elements(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %r = nn.reshape %x {shape = array<i64: 4, -1>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}
// CHECK: nn.reshape: shape [4, -1] cannot hold the elements of input [2, 3]

// -----
func.func @flatten_axis(%x: tensor<2x3xf32>) -> tensor<6x1xf32> {
  %r = nn.flatten %x {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  func.return %r : tensor<6x1xf32>
}
// CHECK: nn.flatten: axis 3 is out of range [-2, 2] for rank 2

// -----
func.func @permute_order(%x: tensor<2x3x4xf32>) -> tensor<2x4x4xf32> {
  %r = nn.permute %x {order = array<i64: 0, 2, 2>} : (tensor<2x3x4xf32>) -> tensor<2x4x4xf32>
  func.return %r : tensor<2x4x4xf32>
}
// CHECK: nn.permute: order must be a permutation of 0..2, got [0, 2, 2]

// -----
func.func @squeeze_size(%x: tensor<1x3xf32>) -> tensor<1xf32> {
  %r = nn.squeeze %x {axes = array<i64: 1>} : (tensor<1x3xf32>) -> tensor<1xf32>
  func.return %r : tensor<1xf32>
}
// CHECK: nn.squeeze: axes names dim 1 of size 3, which is not 1

// -----
func.func @squeeze_repeated(%x: tensor<1x1xf32>) -> tensor<1xf32> {
  %r = nn.squeeze %x {axes = array<i64: 0, -2>} : (tensor<1x1xf32>) -> tensor<1xf32>
  func.return %r : tensor<1xf32>
}
// CHECK: nn.squeeze: axes names axis 0 more than once, got [0, -2]

// -----
func.func @unsqueeze_empty(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = nn.unsqueeze %x {axes = array<i64>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK: nn.unsqueeze: axes must not be empty

// -----
func.func @unsqueeze_axes(%x: tensor<2x3xf32>) -> tensor<2x3x1xf32> {
  %r = nn.unsqueeze %x {axes = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  func.return %r : tensor<2x3x1xf32>
}
// CHECK: nn.unsqueeze: axes 3 is out of range for rank 3

// -----
func.func @slice_ends(%x: tensor<4x5xf32>) -> tensor<2x4xf32> {
  %r = nn.slice %x {begins = array<i64: 0, 1>, ends = array<i64: 2>} : (tensor<4x5xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK: nn.slice: ends needs 2 values (one per begin), got 1

// -----
func.func @slice_steps(%x: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %r = nn.slice %x {begins = array<i64: 0>, ends = array<i64: 2>, steps = array<i64: 0>} : (tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %r : tensor<2x5xf32>
}
// CHECK: nn.slice: steps must not be 0, got [0]

// -----
func.func @slice_axes(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = nn.slice %x {begins = array<i64: 0>, ends = array<i64: 2>, axes = array<i64: 2>} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %r : tensor<4x5xf32>
}
// CHECK: nn.slice: axes 2 is out of range for rank 2

// -----
func.func @slice_rank(%x: tensor<4xf32>) -> tensor<2xf32> {
  %r = nn.slice %x {begins = array<i64: 0, 0>, ends = array<i64: 2, 2>} : (tensor<4xf32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
// CHECK: nn.slice: begins has 2 values, more than the input rank 1

// -----
func.func @tile_count(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = nn.tile %x {repeats = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// CHECK: nn.tile: repeats needs 2 values (one per dim), got 1

// -----
func.func @tile_negative(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %r = nn.tile %x {repeats = array<i64: 2, -1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
// CHECK: nn.tile: repeats must be >= 0, got [2, -1]

// -----
func.func @pad_count(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %r = nn.pad %x {pads_begin = array<i64: 0, 1>, pads_end = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
// CHECK: nn.pad: pads_end needs 2 values (one per dim), got 1

// -----
func.func @pad_negative(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %r = nn.pad %x {pads_begin = array<i64: 0, -1>, pads_end = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}
// CHECK: nn.pad: pads_begin values must be >= 0, got [0, -1]

// -----
func.func @pad_reflect(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %r = nn.pad %x {pads_begin = array<i64: 0, 3>, pads_end = array<i64: 0, 0>, mode = "reflect"} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  func.return %r : tensor<2x6xf32>
}
// CHECK: nn.pad: reflect padding of 3 does not fit dim 1 of size 3

// -----
func.func @pad_mode(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = nn.pad %x {pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>, mode = "wrap"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK: nn.pad: mode must be one of constant, edge, reflect, symmetric, got 'wrap'

// -----
func.func @gather_indices(%x: tensor<4x3xf32>, %y: tensor<2xf32>) -> tensor<2x3xf32> {
  %r = nn.gather %x, %y : (tensor<4x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK: nn.gather: indices must be i32 or i64, got f32

// -----
func.func @gather_axis(%x: tensor<4x3xf32>, %y: tensor<2xi64>) -> tensor<2x3xf32> {
  %r = nn.gather %x, %y {axis = -3 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
// CHECK: nn.gather: axis -3 is out of range for rank 2

// -----
func.func @gather_batch_dims(%x: tensor<4x3xf32>, %y: tensor<2xi64>) -> tensor<4x2xf32> {
  %r = nn.gather %x, %y {axis = 1 : i64, batch_dims = 2 : i64} : (tensor<4x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}
// CHECK: nn.gather: batch_dims 2 must be in [0, 1] (at most axis 1 and the indices rank 1)

// -----
func.func @gather_batch(%x: tensor<4x3xf32>, %y: tensor<2x2xi64>) -> tensor<4x2xf32> {
  %r = nn.gather %x, %y {axis = 1 : i64, batch_dims = 1 : i64} : (tensor<4x3xf32>, tensor<2x2xi64>) -> tensor<4x2xf32>
  func.return %r : tensor<4x2xf32>
}
// CHECK: nn.gather: the first 1 dims of data [4, 3] and indices [2, 2] differ
