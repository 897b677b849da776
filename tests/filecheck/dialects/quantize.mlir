// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @per_channel(%x: tensor<1x3x4x4xf32>, %lo: tensor<1x3x1x1xf32>, %hi: tensor<1x3x1x1xf32>, %olo: tensor<f32>, %ohi: tensor<f32>) -> tensor<1x3x4x4xf32> {
  %y = nn.fake_quantize %x, %lo, %hi, %olo, %ohi {levels = 256 : i64, name = "fq"} : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xf32>
  func.return %y : tensor<1x3x4x4xf32>
}
// CHECK: %y = nn.fake_quantize %x, %lo, %hi, %olo, %ohi {levels = 256 : i64, name = "fq"} : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<f32>, tensor<f32>) -> tensor<1x3x4x4xf32>
