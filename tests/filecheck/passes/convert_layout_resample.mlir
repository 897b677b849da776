// RUN: ir-opt %s --split-input-file -p convert-layout | filecheck %s

// An NHWC resize written as transpose -> NCHW resize -> transpose is a resize of the NHWC
// tensor: both transposes go.
func.func @resize(%x: tensor<1x4x6x3xf32>) -> tensor<1x8x12x3xf32> {
  %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>} : (tensor<1x4x6x3xf32>) -> tensor<1x3x4x6xf32>
  %r = nn.resample %a {mode = "linear", sizes = array<i64: 1, 3, 8, 12>, name = "resize"} : (tensor<1x3x4x6xf32>) -> tensor<1x3x8x12xf32>
  %b = nn.permute %r {order = array<i64: 0, 2, 3, 1>} : (tensor<1x3x8x12xf32>) -> tensor<1x8x12x3xf32>
  func.return %b : tensor<1x8x12x3xf32>
}
// CHECK-LABEL: func.func @resize
// CHECK-NEXT:    %r = nn.resample %x {mode = "linear", sizes = array<i64: 1, 8, 12, 3>, name = "resize"}
// CHECK-NEXT:    func.return %r
