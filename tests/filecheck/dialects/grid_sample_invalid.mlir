// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @grid_sample_grid(%x: tensor<1x3x4x4xf32>, %g: tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32> {
  %y = nn.grid_sample %x, %g {name = "gs"} : (tensor<1x3x4x4xf32>, tensor<1x2x2x3xf32>) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}
// CHECK: nn.grid_sample 'gs': grid must have shape [N, H_out, W_out, 2], got [1, 2, 2, 3]

// -----
func.func @grid_sample_mode(%x: tensor<1x3x4x4xf32>, %g: tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32> {
  %y = nn.grid_sample %x, %g {mode = "cubic"} : (tensor<1x3x4x4xf32>, tensor<1x2x2x2xf32>) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}
// CHECK: nn.grid_sample: mode must be one of bicubic, bilinear, nearest, got 'cubic'

// -----
func.func @grid_sample_result(%x: tensor<1x3x4x4xf32>, %g: tensor<1x2x5x2xf32>) -> tensor<1x3x2x2xf32> {
  %y = nn.grid_sample %x, %g : (tensor<1x3x4x4xf32>, tensor<1x2x5x2xf32>) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}
// CHECK: nn.grid_sample: result #0 has type tensor<1x3x2x2xf32> but the operands imply tensor<1x3x2x5xf32>
