// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = nn.softmax %x {axis = 2 : i64, name = "sm1"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
// CHECK: nn.softmax 'sm1': axis 2 is out of range for rank 2

// -----
func.func @softmax_result(%x: tensor<?x3xf32>) -> tensor<?x3xf16> {
  %y = nn.softmax %x : (tensor<?x3xf32>) -> tensor<?x3xf16>
  func.return %y : tensor<?x3xf16>
}
// CHECK: nn.softmax: result #0 has type tensor<?x3xf16> but the operands imply tensor<?x3xf32>

// -----
func.func @lrn_size(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.lrn %x {size = 0 : i64, name = "lrn1"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.lrn 'lrn1': size must be >= 1, got 0

// -----
func.func @lrn_missing_size(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.lrn %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: property 'size' expected in operation 'nn.lrn'

// -----
func.func @lrn_region(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.lrn %x {size = 3 : i64, region = "within"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.lrn: region must be one of across, same, got 'within'

// -----
func.func @lrn_rank(%x: tensor<6xf32>) -> tensor<6xf32> {
  %y = nn.lrn %x {size = 3 : i64} : (tensor<6xf32>) -> tensor<6xf32>
  func.return %y : tensor<6xf32>
}
// CHECK: nn.lrn: input must have rank >= 2 (N, C, ...), got 1

// -----
func.func @lrn_same_rank(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %y = nn.lrn %x {size = 3 : i64, region = "same"} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}
// CHECK: nn.lrn: input must have rank >= 3 (N, C, spatial...) for region same, got 2

// -----
func.func @mvn_missing_axes(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.mvn %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: property 'axes' expected in operation 'nn.mvn'

// -----
func.func @mvn_empty_axes(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.mvn %x {axes = array<i64>, name = "mvn1"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.mvn 'mvn1': axes must not be empty

// -----
func.func @mvn_axis_range(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.mvn %x {axes = array<i64: 2, 4>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.mvn: axes 4 is out of range for rank 4

// -----
func.func @mvn_axis_twice(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.mvn %x {axes = array<i64: 3, -1>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.mvn: axes names axis 3 more than once, got [3, -1]

// -----
func.func @mvn_eps(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.mvn %x {axes = array<i64: 2, 3>, eps = -1.000000e+00 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.mvn: eps must be >= 0, got -1

// -----
func.func @mvn_eps_mode(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.mvn %x {axes = array<i64: 2, 3>, eps_mode = "add"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.mvn: eps_mode must be one of inside_sqrt, outside_sqrt, got 'add'

// -----
func.func @normalize_scale(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.normalize %x, %s {name = "l2n"} : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.normalize 'l2n': scale must have shape [3], got [4]

// -----
func.func @normalize_shared_scale(%x: tensor<1x3x4x4xf32>, %s: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.normalize %x, %s {channel_shared = true} : (tensor<1x3x4x4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.normalize: scale must have shape [1], got [3]

// -----
func.func @normalize_rank(%x: tensor<6xf32>) -> tensor<6xf32> {
  %y = nn.normalize %x : (tensor<6xf32>) -> tensor<6xf32>
  func.return %y : tensor<6xf32>
}
// CHECK: nn.normalize: input must have rank >= 2 (N, C, ...), got 1

// -----
func.func @normalize_eps(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.normalize %x {eps = -1.000000e-03 : f32} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.normalize: eps must be >= 0, got -0.001

// -----
func.func @grn_bias(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %y = nn.grn %x {bias = -5.000000e-01 : f32, name = "grn1"} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: nn.grn 'grn1': bias must be >= 0, got -0.5

// -----
func.func @grn_rank(%x: tensor<6xf32>) -> tensor<6xf32> {
  %y = nn.grn %x : (tensor<6xf32>) -> tensor<6xf32>
  func.return %y : tensor<6xf32>
}
// CHECK: nn.grn: input must have rank >= 2 (N, C, ...), got 1
