// RUN: ir-opt %s --split-input-file -p xdsl-cse | filecheck %s --check-prefix=CSE
// RUN: ir-opt %s --split-input-file -p xdsl-dce | filecheck %s --check-prefix=DCE
// RUN: ir-opt %s --split-input-file -p xdsl-cse | filecheck %s --check-prefix=NAMED

// xDSL's cse and dce (as xdsl-cse, xdsl-dce: irforge has a cse of its own) run on nn ops
// (they are Pure): equal ops, layer names included, are merged; unused ones removed.
func.func @twice(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %a = nn.relu %x {name = "a"} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %b = nn.relu %x {name = "a"} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %dead = nn.clamp %x {min = 0.0 : f32, max = 6.0 : f32, name = "dead"} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %s = nn.eltwise %a, %b {operation = "sum", name = "s"} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %s : tensor<1x3xf32>
}
// CSE-LABEL: func.func @twice
// CSE:         %[[A:.*]] = nn.relu
// CSE-NOT:     nn.relu
// CSE:         nn.eltwise %[[A]], %[[A]]
// DCE-LABEL: func.func @twice
// DCE:         %a = nn.relu
// DCE:         %b = nn.relu
// DCE-NOT:     nn.clamp
// DCE:         nn.eltwise

// -----

// Ops whose layer names differ are different layers: cse keeps both.
func.func @named(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %a = nn.relu %x {name = "a"} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %b = nn.relu %x {name = "b"} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %s = nn.eltwise %a, %b {operation = "sum", name = "s"} : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %s : tensor<1x3xf32>
}
// NAMED-LABEL: func.func @named
// NAMED:         %a = nn.relu
// NAMED:         %b = nn.relu
