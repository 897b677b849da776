// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// TensorFlow's exact GELU: 0.5 * x * erfc(-x * 0.7071), with Erfc imported as 1 - erf.
func.func @gelu_erfc(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = nn.constant dense<0.5> : tensor<f32>
  %hx = nn.eltwise %half, %x {operation = "mul"} : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %n = nn.activation %x {kind = "neg"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %c = nn.constant dense<0.707106769> : tensor<f32>
  %s = nn.eltwise %n, %c {operation = "mul"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.activation %s {kind = "erf"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %erfc = nn.eltwise %one, %e {operation = "sub"} : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = nn.eltwise %hx, %erfc {operation = "mul", name = "gelu"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @gelu_erfc
// CHECK-NEXT:    %y = nn.activation %x {kind = "gelu", name = "gelu"}
// CHECK-NEXT:    func.return %y

// -----

// erfc(+x / sqrt 2) is not a Gelu: nothing changes.
func.func @not_gelu_erfc(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = nn.constant dense<0.5> : tensor<f32>
  %hx = nn.eltwise %half, %x {operation = "mul"} : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %c = nn.constant dense<0.707106769> : tensor<f32>
  %s = nn.eltwise %x, %c {operation = "mul"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.activation %s {kind = "erf"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %erfc = nn.eltwise %one, %e {operation = "sub"} : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = nn.eltwise %hx, %erfc {operation = "mul", name = "gelu"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @not_gelu_erfc
// CHECK-NOT:     kind = "gelu"
// CHECK:         %y = nn.eltwise %hx, %erfc {operation = "mul", name = "gelu"}
