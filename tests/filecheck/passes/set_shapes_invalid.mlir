// RUN: not ir-opt %s -p 'set-shapes{shapes="x[1,3,9,9]"}' 2>&1 | filecheck %s --check-prefix STOP
// RUN: not ir-opt %s -p 'set-shapes{shapes="nope[1,3,9,9]"}' 2>&1 | filecheck %s --check-prefix NAME
// RUN: not ir-opt %s -p 'set-shapes{shapes="x[1,0]"}' 2>&1 | filecheck %s --check-prefix BAD
// RUN: ir-opt %s -p 'set-shapes{shapes="[1,3,8,8]"}' | filecheck %s --check-prefix SAME

// A reshape to fixed sizes cannot take another spatial size: propagation stops there.
func.func @fixed(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
  %p = nn.relu %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %r = nn.reshape %p {shape = array<i64: 1, 192>, name = "fixed_reshape"} : (tensor<1x3x8x8xf32>) -> tensor<1x192xf32>
  %s = nn.reshape %r {shape = array<i64: 1, 3, 8, 8>, name = "back"} : (tensor<1x192xf32>) -> tensor<1x3x8x8xf32>
  func.return %s : tensor<1x3x8x8xf32>
}
// STOP: irforge: error[{{E[0-9]+}}]: stopped shape propagation at node nn.reshape 'fixed_reshape': shape [1, 192] cannot hold the elements of input [1, 3, 9, 9]
// NAME: irforge: error[{{E[0-9]+}}]: set-shapes names input 'nope', which the model does not have; its inputs are: input0
// BAD: irforge: error[{{E[0-9]+}}]: bad shapes 'x[1,0]' for set-shapes
// SAME: func.func @fixed(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
