// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @region_channels(%x: tensor<1x120x13x13xf32>) -> tensor<1x20280xf32> {
  %r = nn.region_yolo %x {coords = 4 : i64, classes = 20 : i64, num = 5 : i64, name = "region"} : (tensor<1x120x13x13xf32>) -> tensor<1x20280xf32>
  func.return %r : tensor<1x20280xf32>
}
// CHECK: nn.region_yolo 'region': input must have num * (coords + 1 + classes) = 125 channels, got 120

// -----
func.func @region_mask(%x: tensor<1x255x13x13xf32>) -> tensor<1x255x13x13xf32> {
  %r = nn.region_yolo %x {coords = 4 : i64, classes = 80 : i64, num = 9 : i64, mask = array<i64: 6, 7, 9>, do_softmax = false} : (tensor<1x255x13x13xf32>) -> tensor<1x255x13x13xf32>
  func.return %r : tensor<1x255x13x13xf32>
}
// CHECK: nn.region_yolo: mask values must be in [0, num = 9), got [6, 7, 9]

// -----
func.func @region_no_mask(%x: tensor<1x255x13x13xf32>) -> tensor<1x255x13x13xf32> {
  %r = nn.region_yolo %x {coords = 4 : i64, classes = 80 : i64, num = 9 : i64, do_softmax = false} : (tensor<1x255x13x13xf32>) -> tensor<1x255x13x13xf32>
  func.return %r : tensor<1x255x13x13xf32>
}
// CHECK: nn.region_yolo: mask must not be empty without do_softmax (it selects the regions)

// -----
func.func @region_flatten(%x: tensor<1x125x13x13xf32>) -> tensor<1x125x13x13xf32> {
  %r = nn.region_yolo %x {coords = 4 : i64, classes = 20 : i64, num = 5 : i64} : (tensor<1x125x13x13xf32>) -> tensor<1x125x13x13xf32>
  func.return %r : tensor<1x125x13x13xf32>
}
// CHECK: nn.region_yolo: result #0 has type tensor<1x125x13x13xf32> but the operands imply tensor<1x21125xf32>

// -----
func.func @reorg_channels(%x: tensor<1x6x26x26xf32>) -> tensor<1x24x13x13xf32> {
  %r = nn.reorg_yolo %x {stride = 2 : i64, name = "reorg"} : (tensor<1x6x26x26xf32>) -> tensor<1x24x13x13xf32>
  func.return %r : tensor<1x24x13x13xf32>
}
// CHECK: nn.reorg_yolo 'reorg': input channels (6) must be a multiple of stride^2 = 4

// -----
func.func @reorg_width(%x: tensor<1x64x26x25xf32>) -> tensor<1x256x13x12xf32> {
  %r = nn.reorg_yolo %x {stride = 2 : i64} : (tensor<1x64x26x25xf32>) -> tensor<1x256x13x12xf32>
  func.return %r : tensor<1x256x13x12xf32>
}
// CHECK: nn.reorg_yolo: input width (25) must be a multiple of stride 2
