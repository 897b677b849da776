// RUN: ir-opt %s --split-input-file -p replace-subgraph | filecheck %s

// PyTorch's Gelu export: Div(x, 1.414) -> Erf -> Add 1 -> Mul x -> Mul 0.5.
func.func @gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.eltwise %x, %c {operation = "div"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.activation %d {kind = "erf"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.eltwise %e, %one {operation = "sum"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.eltwise %x, %a {operation = "mul"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %y = nn.eltwise %m, %half {operation = "mul", name = "gelu"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT:    %y = nn.activation %x {kind = "gelu", name = "gelu"}
// CHECK-NEXT:    func.return %y

// -----

// The same with 0.6 for 0.5 is not a Gelu: nothing changes.
func.func @not_gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = nn.constant dense<1.41421354> : tensor<f32>
  %d = nn.eltwise %x, %c {operation = "div"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.activation %d {kind = "erf"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.eltwise %e, %one {operation = "sum"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.eltwise %x, %a {operation = "mul"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %half = nn.constant dense<0.6> : tensor<f32>
  %y = nn.eltwise %m, %half {operation = "mul", name = "gelu"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT:     gelu"
// CHECK:         nn.activation %d {kind = "erf"}
// CHECK:         %y = nn.eltwise %m, %half {operation = "mul", name = "gelu"}

// -----

// The tanh form, x^3 as Pow 3, the 0.5 applied to x first.
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %three = nn.constant dense<3.0> : tensor<f32>
  %p = nn.eltwise %x, %three {operation = "pow"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %k = nn.constant dense<0.044715> : tensor<f32>
  %q = nn.eltwise %k, %p {operation = "mul"} : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = nn.eltwise %x, %q {operation = "sum"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = nn.constant dense<0.797884583> : tensor<f32>
  %t = nn.eltwise %s, %r {operation = "mul"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %h = nn.activation %t {kind = "tanh"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %a = nn.eltwise %one, %h {operation = "sum"} : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %xh = nn.eltwise %x, %half {operation = "mul"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = nn.eltwise %xh, %a {operation = "mul", name = "gelu"} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NEXT:    %y = nn.activation %x {kind = "gelu_tanh", name = "gelu"}
// CHECK-NEXT:    func.return %y

// -----

// SiLU, and one whose sigmoid is also a model output: that sigmoid would have to be
// computed anyway, so the pattern is not replaced.
func.func @swish(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = nn.activation %x {kind = "sigmoid"} : (tensor<4xf32>) -> tensor<4xf32>
  %y = nn.eltwise %s, %x {operation = "mul", name = "silu"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = nn.activation %y {kind = "sigmoid"} : (tensor<4xf32>) -> tensor<4xf32>
  %z = nn.eltwise %y, %s2 {operation = "mul", name = "kept"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z, %s2 : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @swish
// CHECK-NEXT:    %y = nn.activation %x {kind = "swish", name = "silu"}
// CHECK-NEXT:    %s2 = nn.activation %y {kind = "sigmoid"}
// CHECK-NEXT:    %z = nn.eltwise %y, %s2 {operation = "mul", name = "kept"}
// CHECK-NEXT:    func.return %z, %s2

// -----

// x * sigmoid(1.702 x) is a swish with alpha 1.702.
func.func @swish_beta(%x: tensor<4xf32>) -> tensor<4xf32> {
  %b = nn.constant dense<1.702> : tensor<1xf32>
  %bx = nn.eltwise %x, %b {operation = "mul"} : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %s = nn.activation %bx {kind = "sigmoid"} : (tensor<4xf32>) -> tensor<4xf32>
  %y = nn.eltwise %x, %s {operation = "mul", name = "qgelu"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @swish_beta
// CHECK-NEXT:    %y = nn.activation %x {kind = "swish", alpha = 1.702000e+00 : f32, name = "qgelu"}

// -----

// HardSwish x * clip(x + 3, 0, 6) / 6 and HardSigmoid relu6(x + 3) / 6.
func.func @hard(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %three = nn.constant dense<3.0> : tensor<f32>
  %a = nn.eltwise %x, %three {operation = "sum"} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %c = nn.clamp %a {min = 0.0 : f32, max = 6.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  %m = nn.eltwise %x, %c {operation = "mul"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %six = nn.constant dense<6.0> : tensor<f32>
  %y = nn.eltwise %m, %six {operation = "div", name = "hswish"} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %a2 = nn.eltwise %y, %three {operation = "sum"} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %r = nn.activation %a2 {kind = "relu6"} : (tensor<4xf32>) -> tensor<4xf32>
  %sixth = nn.constant dense<0.166666672> : tensor<f32>
  %z = nn.eltwise %r, %sixth {operation = "mul", name = "hsigmoid"} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y, %z : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @hard
// CHECK-NEXT:    %y = nn.activation %x {kind = "hswish", name = "hswish"}
// CHECK-NEXT:    %z = nn.activation %y {kind = "hsigmoid", alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32, name = "hsigmoid"}
// CHECK-NEXT:    func.return %y, %z

// -----

// MVN over the last axis: ReduceMean, Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div.
func.func @mvn(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %m = nn.reduce %x {operation = "mean", axes = array<i64: -1>} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %d = nn.eltwise %x, %m {operation = "sub"} : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %two = nn.constant dense<2.0> : tensor<f32>
  %s = nn.eltwise %d, %two {operation = "pow"} : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
  %v = nn.reduce %s {operation = "mean", axes = array<i64: 2>} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %eps = nn.constant dense<1.0e-05> : tensor<f32>
  %a = nn.eltwise %v, %eps {operation = "sum"} : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %r = nn.activation %a {kind = "sqrt"} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %y = nn.eltwise %d, %r {operation = "div", name = "ln"} : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}
// CHECK-LABEL: func.func @mvn
// CHECK-NEXT:    %y = nn.mvn %x {axes = array<i64: 2>, eps = 1.000000e-05 : f32, name = "ln"}
// CHECK-NEXT:    func.return %y

// -----

// squared_diff(x, mean) for the square, eps outside the square root.
func.func @mvn_squared_diff(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %m = nn.reduce %x {operation = "mean", axes = array<i64: 2, 3>} : (tensor<1x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  %d = nn.eltwise %x, %m {operation = "sub"} : (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %s = nn.eltwise %x, %m {operation = "squared_diff"} : (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %v = nn.reduce %s {operation = "mean", axes = array<i64: 2, 3>} : (tensor<1x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  %r = nn.activation %v {kind = "sqrt"} : (tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %eps = nn.constant dense<1.0e-03> : tensor<1xf32>
  %a = nn.eltwise %r, %eps {operation = "sum"} : (tensor<1x4x1x1xf32>, tensor<1xf32>) -> tensor<1x4x1x1xf32>
  %y = nn.eltwise %d, %a {operation = "div", name = "mvn"} : (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  func.return %y : tensor<1x4x3x3xf32>
}
// CHECK-LABEL: func.func @mvn_squared_diff
// CHECK-NEXT:    %y = nn.mvn %x {axes = array<i64: 2, 3>, eps = 1.000000e-03 : f32, eps_mode = "outside_sqrt", name = "mvn"}
// CHECK-NEXT:    func.return %y

// -----

// Mean and variance over different axes is no MVN; the squared_diff left is decomposed.
func.func @not_mvn(%x: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %m = nn.reduce %x {operation = "mean", axes = array<i64: 2, 3>} : (tensor<1x4x3x3xf32>) -> tensor<1x4x1x1xf32>
  %d = nn.eltwise %x, %m {operation = "sub"} : (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %s = nn.eltwise %x, %m {operation = "squared_diff", name = "sq"} : (tensor<1x4x3x3xf32>, tensor<1x4x1x1xf32>) -> tensor<1x4x3x3xf32>
  %v = nn.reduce %s {operation = "mean", axes = array<i64: 1, 2, 3>} : (tensor<1x4x3x3xf32>) -> tensor<1x1x1x1xf32>
  %eps = nn.constant dense<1.0e-03> : tensor<f32>
  %a = nn.eltwise %v, %eps {operation = "sum"} : (tensor<1x1x1x1xf32>, tensor<f32>) -> tensor<1x1x1x1xf32>
  %r = nn.activation %a {kind = "sqrt"} : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1xf32>
  %y = nn.eltwise %d, %r {operation = "div", name = "mvn"} : (tensor<1x4x3x3xf32>, tensor<1x1x1x1xf32>) -> tensor<1x4x3x3xf32>
  func.return %y : tensor<1x4x3x3xf32>
}
// CHECK-LABEL: func.func @not_mvn
// CHECK-NOT:     nn.mvn
// CHECK:         %[[D:.*]] = nn.eltwise %x, %m {operation = "sub", name = "sq/sub"}
// CHECK-NEXT:    %[[S:.*]] = nn.eltwise %[[D]], %[[D]] {operation = "mul", name = "sq"}
// CHECK-NEXT:    nn.reduce %[[S]]
// CHECK:         %y = nn.eltwise %d, %r {operation = "div", name = "mvn"}

// -----

// TensorFlow's instance norm: moments into an inference batch norm, its input transposed
// to NCHW from the NHWC tensor the moments read -> MVN over the spatial axes, then scale/shift.
func.func @moments_batch_norm(%c: tensor<1x4x6x5xf32>) -> tensor<1x4x6x5xf32> {
  %x = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x5xf32>) -> tensor<1x6x5x4xf32>
  %m = nn.reduce %x {operation = "mean", axes = array<i64: 1, 2>} : (tensor<1x6x5x4xf32>) -> tensor<1x1x1x4xf32>
  %d = nn.eltwise %x, %m {operation = "squared_diff"} : (tensor<1x6x5x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x6x5x4xf32>
  %v = nn.reduce %d {operation = "mean", axes = array<i64: 1, 2>} : (tensor<1x6x5x4xf32>) -> tensor<1x1x1x4xf32>
  %sm = nn.squeeze %m {axes = array<i64: 0, 1, 2>} : (tensor<1x1x1x4xf32>) -> tensor<4xf32>
  %sv = nn.squeeze %v {axes = array<i64: 0, 1, 2>} : (tensor<1x1x1x4xf32>) -> tensor<4xf32>
  %g = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = nn.constant dense<[0.5, 0.5, 0.5, 0.5]> : tensor<4xf32>
  %y = nn.batch_norm %c, %g, %b, %sm, %sv {epsilon = 1.0e-03 : f32, name = "fbn"} : (tensor<1x4x6x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x6x5xf32>
  func.return %y : tensor<1x4x6x5xf32>
}
// CHECK-LABEL: func.func @moments_batch_norm
// CHECK:         %[[N:.*]] = nn.mvn %c {axes = array<i64: 2, 3>, eps = 1.000000e-03 : f32, name = "fbn/mvn"}
// CHECK-NEXT:    %[[Y:.*]] = nn.scale_shift %[[N]], %g, %b {name = "fbn"}
// CHECK-NOT:     nn.batch_norm
// CHECK-NOT:     nn.reduce

// -----

// Negative: moments over the channel axis are not an instance norm: nothing changes.
func.func @moments_wrong_axes(%c: tensor<1x4x6x5xf32>) -> tensor<1x4x6x5xf32> {
  %x = nn.permute %c {order = array<i64: 0, 2, 3, 1>} : (tensor<1x4x6x5xf32>) -> tensor<1x6x5x4xf32>
  %m = nn.reduce %x {operation = "mean", axes = array<i64: 0, 3>} : (tensor<1x6x5x4xf32>) -> tensor<1x6x5x1xf32>
  %d = nn.eltwise %x, %m {operation = "squared_diff"} : (tensor<1x6x5x4xf32>, tensor<1x6x5x1xf32>) -> tensor<1x6x5x4xf32>
  %v = nn.reduce %d {operation = "mean", axes = array<i64: 0, 3>} : (tensor<1x6x5x4xf32>) -> tensor<1x6x5x1xf32>
  %sm = nn.reshape %m {shape = array<i64: 30>} : (tensor<1x6x5x1xf32>) -> tensor<30xf32>
  %sv = nn.reshape %v {shape = array<i64: 30>} : (tensor<1x6x5x1xf32>) -> tensor<30xf32>
  %g = nn.constant dense<1.0> : tensor<30xf32>
  %b = nn.constant dense<0.0> : tensor<30xf32>
  %r = nn.reshape %c {shape = array<i64: 1, 30, 4, 1>} : (tensor<1x4x6x5xf32>) -> tensor<1x30x4x1xf32>
  %y = nn.batch_norm %r, %g, %b, %sm, %sv {epsilon = 1.0e-03 : f32} : (tensor<1x30x4x1xf32>, tensor<30xf32>, tensor<30xf32>, tensor<30xf32>, tensor<30xf32>) -> tensor<1x30x4x1xf32>
  %o = nn.reshape %y {shape = array<i64: 1, 4, 6, 5>} : (tensor<1x30x4x1xf32>) -> tensor<1x4x6x5xf32>
  func.return %o : tensor<1x4x6x5xf32>
}
// CHECK-LABEL: func.func @moments_wrong_axes
// CHECK:         nn.batch_norm
// CHECK-NOT:     nn.mvn
