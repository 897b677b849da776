// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @region_yolo_v2(%x: tensor<1x125x13x13xf32>) -> tensor<1x21125xf32> {
  %r = nn.region_yolo %x {coords = 4 : i64, classes = 20 : i64, num = 5 : i64, anchors = array<f32: 1.08, 1.19, 3.42, 4.41>, name = "region"} : (tensor<1x125x13x13xf32>) -> tensor<1x21125xf32>
  func.return %r : tensor<1x21125xf32>
}
// CHECK:      %r = nn.region_yolo %x {num = 5 : i64, anchors = array<f32: 1.080000e+00, 1.190000e+00, 3.420000e+00, 4.410000e+00>, name = "region"} : (tensor<1x125x13x13xf32>) -> tensor<1x21125xf32>

// -----
func.func @region_yolo_v3(%x: tensor<1x255x?x?xf32>) -> tensor<1x255x?x?xf32> {
  %r = nn.region_yolo %x {coords = 4 : i64, classes = 80 : i64, num = 9 : i64, mask = array<i64: 6, 7, 8>, do_softmax = false, axis = 1 : i64, end_axis = 3 : i64} : (tensor<1x255x?x?xf32>) -> tensor<1x255x?x?xf32>
  func.return %r : tensor<1x255x?x?xf32>
}
// CHECK:      %r = nn.region_yolo %x {classes = 80 : i64, num = 9 : i64, mask = array<i64: 6, 7, 8>, do_softmax = false, end_axis = 3 : i64} : (tensor<1x255x?x?xf32>) -> tensor<1x255x?x?xf32>

// -----
func.func @reorg_yolo(%x: tensor<1x64x26x26xf32>) -> tensor<1x256x13x13xf32> {
  %r = nn.reorg_yolo %x {stride = 2 : i64, name = "reorg"} : (tensor<1x64x26x26xf32>) -> tensor<1x256x13x13xf32>
  func.return %r : tensor<1x256x13x13xf32>
}
// CHECK:      %r = nn.reorg_yolo %x {stride = 2 : i64, name = "reorg"} : (tensor<1x64x26x26xf32>) -> tensor<1x256x13x13xf32>

// -----
// The Caffe forks' Region: darknet's region layer with the shape kept (flattening C alone)
func.func @region_yolo_shape_kept(%x: tensor<2x16x3x5xf32>) -> tensor<2x16x3x5xf32> {
  %r = nn.region_yolo %x {coords = 4 : i64, classes = 3 : i64, num = 2 : i64, anchors = array<f32: 1.0, 2.0, 3.0, 4.0>, axis = 1 : i64, end_axis = 1 : i64} : (tensor<2x16x3x5xf32>) -> tensor<2x16x3x5xf32>
  func.return %r : tensor<2x16x3x5xf32>
}
// CHECK:      %r = nn.region_yolo %x {classes = 3 : i64, num = 2 : i64, anchors = array<f32: 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00>, end_axis = 1 : i64} : (tensor<2x16x3x5xf32>) -> tensor<2x16x3x5xf32>
