// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @grid_sample(%x: tensor<?x3x10x12xf32>, %g: tensor<?x4x5x2xf32>) -> tensor<?x3x4x5xf32> {
  %y = nn.grid_sample %x, %g {mode = "bicubic", padding_mode = "reflection", align_corners = true, name = "gs"} : (tensor<?x3x10x12xf32>, tensor<?x4x5x2xf32>) -> tensor<?x3x4x5xf32>
  func.return %y : tensor<?x3x4x5xf32>
}
// CHECK: nn.grid_sample %x, %g {mode = "bicubic", padding_mode = "reflection", align_corners = true, name = "gs"} : (tensor<?x3x10x12xf32>, tensor<?x4x5x2xf32>) -> tensor<?x3x4x5xf32>

// -----
func.func @grid_sample_defaults(%x: tensor<1x2x3x4xf32>, %g: tensor<1x6x7x2xf32>) -> tensor<1x2x6x7xf32> {
  %y = nn.grid_sample %x, %g : (tensor<1x2x3x4xf32>, tensor<1x6x7x2xf32>) -> tensor<1x2x6x7xf32>
  func.return %y : tensor<1x2x6x7xf32>
}
// CHECK: nn.grid_sample %x, %g : (tensor<1x2x3x4xf32>, tensor<1x6x7x2xf32>) -> tensor<1x2x6x7xf32>
