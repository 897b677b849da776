// RUN: ir-opt %s -p 'cut{inputs="relu1" outputs="conv2"}' | filecheck %s
// RUN: ir-opt %s -p 'cut{inputs="conv1:0" outputs="conv2:0"}' | filecheck %s --check-prefix OUTPORT
// RUN: ir-opt %s -p 'cut{inputs="0:conv2"}' | filecheck %s --check-prefix INPORT
// RUN: ir-opt %s -p 'cut{outputs="relu1"}' | filecheck %s --check-prefix HEAD
// RUN: not ir-opt %s -p 'cut{inputs="nope"}' 2>&1 | filecheck %s --check-prefix MISSING
// RUN: not ir-opt %s -p 'cut{inputs="relu2" outputs="conv1"}' 2>&1 | filecheck %s --check-prefix UNREACHABLE

func.func @main(%x: tensor<1x2x4x4xf32> {nn.name = "data"}) -> (tensor<1x2x4x4xf32> {nn.name = "relu2"}) {
  %w1 = nn.constant dense<1.0> : tensor<2x2x1x1xf32>
  %c1 = nn.convolution %x, %w1 {name = "conv1"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r1 = nn.relu %c1 {name = "relu1"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %w2 = nn.constant dense<2.0> : tensor<2x2x1x1xf32>
  %c2 = nn.convolution %r1, %w2 {name = "conv2"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r2 = nn.relu %c2 {name = "relu2"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %r2 : tensor<1x2x4x4xf32>
}
// `relu1` as an input: its operand is fed from outside; conv1 and the data input go.
// CHECK:      func.func @main(%{{.*}}: tensor<1x2x4x4xf32> {nn.name = "relu1"}) -> (tensor<1x2x4x4xf32> {nn.name = "conv2"})
// CHECK-NEXT:   %r1 = nn.relu %{{.*}} {name = "relu1"}
// CHECK-NEXT:   %w2 = nn.constant
// CHECK-NEXT:   %c2 = nn.convolution %r1, %w2
// CHECK-NEXT:   func.return %c2

// OUTPORT:      func.func @main(%[[A:.*]]: tensor<1x2x4x4xf32> {nn.name = "conv1:0"}) -> (tensor<1x2x4x4xf32> {nn.name = "conv2:0"})
// OUTPORT-NEXT:   %r1 = nn.relu %[[A]] {name = "relu1"}

// INPORT:      func.func @main(%[[A:.*]]: tensor<1x2x4x4xf32> {nn.name = "0:conv2"}) -> (tensor<1x2x4x4xf32> {nn.name = "relu2"})
// INPORT-NEXT:   %w2 = nn.constant
// INPORT-NEXT:   %c2 = nn.convolution %[[A]], %w2

// HEAD:      func.func @main(%x: tensor<1x2x4x4xf32> {nn.name = "data"}) -> (tensor<1x2x4x4xf32> {nn.name = "relu1"})
// HEAD-NEXT:   %w1 = nn.constant
// HEAD-NEXT:   %c1 = nn.convolution %x, %w1
// HEAD-NEXT:   %r1 = nn.relu %c1
// HEAD-NEXT:   func.return %r1

// MISSING: irforge: error[{{E[0-9]+}}]: cut: input 'nope' names no layer of the model
// UNREACHABLE: irforge: error[{{E[0-9]+}}]: cut: output 'conv1' is not reachable from the given inputs
