// RUN: ir-opt %s --split-input-file -p canonicalize | filecheck %s

// Identity (Dropout imports as it) is removed.
func.func @identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.identity %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = nn.relu %y : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
// CHECK-LABEL: func.func @identity
// CHECK-NEXT:    %z = nn.relu %x : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    func.return %z

// -----

// Ops on constants fold; small results stay inline.
func.func @fold_inline() -> tensor<2xi64> {
  %a = nn.constant dense<[3, 4]> : tensor<2xi64>
  %b = nn.constant dense<[10, 20]> : tensor<2xi64>
  %c = nn.eltwise %a, %b {operation = "mul"} : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  func.return %c : tensor<2xi64>
}
// CHECK-LABEL: func.func @fold_inline
// CHECK-NEXT:    %{{.*}} = nn.constant dense<[30, 80]> : tensor<2xi64>
// CHECK-NEXT:    func.return

// -----

// Large folded results go to the weight store, named after the layer.
func.func @fold_to_store() -> tensor<32xf32> {
  %a = nn.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %t = nn.tile %a {repeats = array<i64: 16>, name = "tiled"} : (tensor<2xf32>) -> tensor<32xf32>
  func.return %t : tensor<32xf32>
}
// CHECK-LABEL: func.func @fold_to_store
// CHECK-NEXT:    %{{.*}} = nn.constant @tiled : tensor<32xf32>

// -----

// An op with a non-constant operand does not fold.
func.func @no_fold(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = nn.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %c = nn.eltwise %x, %a {operation = "sum"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %c : tensor<2xf32>
}
// CHECK-LABEL: func.func @no_fold
// CHECK:         nn.eltwise %x, %a {operation = "sum"}

// -----

// Reshape of reshape becomes one reshape; a reshape back to the input shape vanishes.
func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<6x4xf32>, tensor<2x3x4xf32>) {
  %a = nn.reshape %x {shape = array<i64: 24>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
  %b = nn.reshape %a {shape = array<i64: 6, 4>} : (tensor<24xf32>) -> tensor<6x4xf32>
  %c = nn.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %d = nn.reshape %c {shape = array<i64: 2, 3, 4>} : (tensor<2x12xf32>) -> tensor<2x3x4xf32>
  func.return %b, %d : tensor<6x4xf32>, tensor<2x3x4xf32>
}
// CHECK-LABEL: func.func @reshapes
// CHECK-NEXT:    %b = nn.reshape %x {shape = array<i64: 6, 4>} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT:    func.return %b, %x

// -----

// A reshape to a dynamic shape is kept (its result size is not known statically).
func.func @dynamic_reshape(%x: tensor<?x12xf32>) -> tensor<?x3x4xf32> {
  %a = nn.reshape %x {shape = array<i64: -1, 3, 4>} : (tensor<?x12xf32>) -> tensor<?x3x4xf32>
  %b = nn.reshape %a {shape = array<i64: 0, 3, 4>} : (tensor<?x3x4xf32>) -> tensor<?x3x4xf32>
  func.return %b : tensor<?x3x4xf32>
}
// CHECK-LABEL: func.func @dynamic_reshape
// CHECK-NEXT:    %a = nn.reshape %x
// CHECK-NEXT:    %b = nn.reshape %a

// -----

// Permutes compose; inverse permutes cancel.
func.func @permutes(%x: tensor<1x2x3x4xf32>) -> (tensor<1x2x3x4xf32>, tensor<4x3x2x1xf32>) {
  %a = nn.permute %x {order = array<i64: 0, 2, 3, 1>} : (tensor<1x2x3x4xf32>) -> tensor<1x3x4x2xf32>
  %b = nn.permute %a {order = array<i64: 0, 3, 1, 2>} : (tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32>
  %c = nn.permute %a {order = array<i64: 2, 1, 3, 0>} : (tensor<1x3x4x2xf32>) -> tensor<4x3x2x1xf32>
  func.return %b, %c : tensor<1x2x3x4xf32>, tensor<4x3x2x1xf32>
}
// CHECK-LABEL: func.func @permutes
// CHECK-NEXT:    %c = nn.permute %x {order = array<i64: 3, 2, 1, 0>} : (tensor<1x2x3x4xf32>) -> tensor<4x3x2x1xf32>
// CHECK-NEXT:    func.return %x, %c

// -----

// A single non-identity permute stays.
func.func @one_permute(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %a = nn.permute %x {order = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %a : tensor<3x2xf32>
}
// CHECK-LABEL: func.func @one_permute
// CHECK-NEXT:    %a = nn.permute %x {order = array<i64: 1, 0>}

// -----

// No-op pad, slice, tile, concat and convert are removed; real ones stay.
func.func @no_ops(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x2xf32>) {
  %p = nn.pad %x {pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = nn.slice %x {begins = array<i64: 0>, ends = array<i64: 3>, axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = nn.tile %x {repeats = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = nn.concat %x {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %v = nn.convert %x {destination_type = f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %q = nn.pad %x {pads_begin = array<i64: 0, 1>, pads_end = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x5xf32>
  %r = nn.slice %x {begins = array<i64: 1>, ends = array<i64: 3>, axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %p, %s, %t, %c, %v, %q, %r : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x2xf32>
}
// CHECK-LABEL: func.func @no_ops
// CHECK-NEXT:    %q = nn.pad %x
// CHECK-NEXT:    %r = nn.slice %x
// CHECK-NEXT:    func.return %x, %x, %x, %x, %x, %q, %r

// -----

// A reversing slice keeps the shape but is not a no-op.
func.func @reverse(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = nn.slice %x {begins = array<i64: -1>, ends = array<i64: -9223372036854775807>, steps = array<i64: -1>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @reverse
// CHECK-NEXT:    %r = nn.slice %x

// -----

// Dead code goes; results that are returned stay.
func.func @dce(%x: tensor<4xf32>) -> tensor<4xf32> {
  %unused = nn.activation %x {kind = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
  %c = nn.constant dense<1.0> : tensor<4xf32>
  %y = nn.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @dce
// CHECK-NEXT:    %y = nn.relu %x
// CHECK-NEXT:    func.return %y
