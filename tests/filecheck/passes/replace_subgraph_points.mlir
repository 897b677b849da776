// RUN: ir-opt %s -p 'replace-subgraph{config="%inputs/replace_subgraph_points.json"}' | filecheck %s
// RUN: not ir-opt %s -p 'replace-subgraph{config="%inputs/replace_subgraph_leak.json"}' 2>&1 | filecheck %s --check-prefix LEAK
// RUN: not ir-opt %s -p 'replace-subgraph{config="%inputs/replace_subgraph_scope.json"}' 2>&1 | filecheck %s --check-prefix SCOPE
// RUN: not ir-opt %s -p 'replace-subgraph{config="%inputs/nonexistent.json"}' 2>&1 | filecheck %s --check-prefix MISSING
// RUN: not ir-opt %s -p 'replace-subgraph{config="%inputs/replace_subgraph_side.json"}' 2>&1 | filecheck %s --check-prefix SIDE

// Points: everything from `sig` to `mul` (sigmoid(2x) * x, with the constant 2 read inside)
// becomes the op the config names, with its attributes; `relu1` before and `relu3` after stay.
func.func @main(%x: tensor<1x4xf32> {nn.name = "data"}) -> (tensor<1x4xf32> {nn.name = "out"}, tensor<1x4xf32> {nn.name = "side"}) {
  %r1 = nn.relu %x {name = "relu1"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %two = nn.constant dense<2.0> : tensor<f32>
  %t = nn.eltwise %r1, %two {operation = "mul", name = "scale"} : (tensor<1x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %s = nn.activation %t {kind = "sigmoid", name = "sig"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %m = nn.eltwise %r1, %s {operation = "mul", name = "mul"} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %r2 = nn.relu %m {name = "relu2"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %r3 = nn.relu %r2 {name = "relu3"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %r3, %r1 : tensor<1x4xf32>, tensor<1x4xf32>
}
// `mul` reads relu1's result directly, so it is a start point too; the new op takes that
// value once.
// CHECK:      %r1 = nn.relu %x {name = "relu1"}
// CHECK-NEXT: %m = nn.activation %r1 {kind = "swish", alpha = 2.000000e+00 : f32, name = "block"}
// CHECK-NEXT: %r2 = nn.relu %m {name = "relu2"}
// CHECK-NEXT: %r3 = nn.relu %r2 {name = "relu3"}
// CHECK-NEXT: func.return %r3, %r1

// LEAK: irforge: error[{{E[0-9]+}}]: replacement 'Leaky': nn.relu 'relu1' inside the sub-graph is also used by a model output outside it; add that layer to end_points
// SCOPE: irforge: error[{{E[0-9]+}}]: replacement 'Scoped': match kind "scope" is not supported
// MISSING: irforge: error[{{E[0-9]+}}]: transformations config '{{.*}}nonexistent.json' does not exist
// SIDE: irforge: error[{{E[0-9]+}}]: replacement 'Side': the sub-graph reads model input 'data' other than through its start points; add the layer that reads it to start_points
