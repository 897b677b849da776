// RUN: ir-opt %s --split-input-file --verify-diagnostics | filecheck %s

func.func @proposal_scores(%s: tensor<1x10x5x7xf32>, %d: tensor<1x24x5x7xf32>, %info: tensor<3xf32>) -> tensor<300x5xf32> {
  %p = nn.proposal %s, %d, %info {base_size = 16 : i64, feat_stride = 16 : i64, min_size = 16 : i64, ratio = array<f32: 0.5, 1.0, 2.0>, scale = array<f32: 8.0, 16.0>, pre_nms_topn = 6000 : i64, post_nms_topn = 300 : i64, nms_thresh = 0.7 : f32, name = "proposal"} : (tensor<1x10x5x7xf32>, tensor<1x24x5x7xf32>, tensor<3xf32>) -> tensor<300x5xf32>
  func.return %p : tensor<300x5xf32>
}
// CHECK: nn.proposal 'proposal': class_probs must be [N, 12, H, W] (2 per anchor), got shape [1, 10, 5, 7]

// -----
func.func @proposal_ratio(%s: tensor<1x12x5x7xf32>, %d: tensor<1x24x5x7xf32>, %info: tensor<3xf32>) -> tensor<300x5xf32> {
  %p = nn.proposal %s, %d, %info {base_size = 16 : i64, feat_stride = 16 : i64, min_size = 16 : i64, ratio = array<f32: 0.5, 0.0>, scale = array<f32: 8.0, 16.0, 32.0>, pre_nms_topn = 6000 : i64, post_nms_topn = 300 : i64, nms_thresh = 0.7 : f32} : (tensor<1x12x5x7xf32>, tensor<1x24x5x7xf32>, tensor<3xf32>) -> tensor<300x5xf32>
  func.return %p : tensor<300x5xf32>
}
// CHECK: nn.proposal: ratio values must be > 0, got [0.5, 0]

// -----
func.func @proposal_info(%s: tensor<1x12x5x7xf32>, %d: tensor<1x24x5x7xf32>, %info: tensor<5xf32>) -> tensor<300x5xf32> {
  %p = nn.proposal %s, %d, %info {base_size = 16 : i64, feat_stride = 16 : i64, min_size = 16 : i64, ratio = array<f32: 0.5, 1.0, 2.0>, scale = array<f32: 8.0, 16.0>, pre_nms_topn = 6000 : i64, post_nms_topn = 300 : i64, nms_thresh = 0.7 : f32} : (tensor<1x12x5x7xf32>, tensor<1x24x5x7xf32>, tensor<5xf32>) -> tensor<300x5xf32>
  func.return %p : tensor<300x5xf32>
}
// CHECK: nn.proposal: image_shape must hold 3 or 4 values ([3], [4], [1, 3] or [1, 4]), got shape [5]

// -----
func.func @proposal_rows(%s: tensor<2x12x5x7xf32>, %d: tensor<2x24x5x7xf32>, %info: tensor<3xf32>) -> tensor<300x5xf32> {
  %p = nn.proposal %s, %d, %info {base_size = 16 : i64, feat_stride = 16 : i64, min_size = 16 : i64, ratio = array<f32: 0.5, 1.0, 2.0>, scale = array<f32: 8.0, 16.0>, pre_nms_topn = 6000 : i64, post_nms_topn = 300 : i64, nms_thresh = 0.7 : f32} : (tensor<2x12x5x7xf32>, tensor<2x24x5x7xf32>, tensor<3xf32>) -> tensor<300x5xf32>
  func.return %p : tensor<300x5xf32>
}
// CHECK: nn.proposal: result #0 has type tensor<300x5xf32> but the operands imply tensor<600x5xf32>

// -----
func.func @roi_pooling_rois(%x: tensor<1x512x14x14xf32>, %rois: tensor<300x4xf32>) -> tensor<300x512x7x7xf32> {
  %r = nn.roi_pooling %x, %rois {pooled_h = 7 : i64, pooled_w = 7 : i64, spatial_scale = 0.0625 : f32, name = "roi_pool5"} : (tensor<1x512x14x14xf32>, tensor<300x4xf32>) -> tensor<300x512x7x7xf32>
  func.return %r : tensor<300x512x7x7xf32>
}
// CHECK: nn.roi_pooling 'roi_pool5': rois must be [R, 5] (batch index, x1, y1, x2, y2), got shape [300, 4]

// -----
func.func @roi_pooling_method(%x: tensor<1x512x14x14xf32>, %rois: tensor<300x5xf32>) -> tensor<300x512x7x7xf32> {
  %r = nn.roi_pooling %x, %rois {pooled_h = 7 : i64, pooled_w = 7 : i64, spatial_scale = 0.0625 : f32, method = "avg"} : (tensor<1x512x14x14xf32>, tensor<300x5xf32>) -> tensor<300x512x7x7xf32>
  func.return %r : tensor<300x512x7x7xf32>
}
// CHECK: nn.roi_pooling: method must be one of bilinear, max, got 'avg'

// -----
func.func @roi_pooling_size(%x: tensor<1x512x14x14xf32>, %rois: tensor<300x5xf32>) -> tensor<300x512x0x7xf32> {
  %r = nn.roi_pooling %x, %rois {pooled_h = 0 : i64, pooled_w = 7 : i64, spatial_scale = 0.0625 : f32} : (tensor<1x512x14x14xf32>, tensor<300x5xf32>) -> tensor<300x512x0x7xf32>
  func.return %r : tensor<300x512x0x7xf32>
}
// CHECK: nn.roi_pooling: pooled_h must be >= 1, got 0

// -----
func.func @psroi_channels(%x: tensor<1x1000x14x14xf32>, %rois: tensor<300x5xf32>) -> tensor<300x21x7x7xf32> {
  %r = nn.psroi_pooling %x, %rois {output_dim = 21 : i64, group_size = 7 : i64, spatial_scale = 0.0625 : f32, name = "ps"} : (tensor<1x1000x14x14xf32>, tensor<300x5xf32>) -> tensor<300x21x7x7xf32>
  func.return %r : tensor<300x21x7x7xf32>
}
// CHECK: nn.psroi_pooling 'ps': input must have output_dim * 49 = 1029 channels in average mode, got 1000

// -----
func.func @psroi_mode(%x: tensor<1x1029x14x14xf32>, %rois: tensor<300x5xf32>) -> tensor<300x21x7x7xf32> {
  %r = nn.psroi_pooling %x, %rois {output_dim = 21 : i64, group_size = 7 : i64, spatial_scale = 0.0625 : f32, mode = "max"} : (tensor<1x1029x14x14xf32>, tensor<300x5xf32>) -> tensor<300x21x7x7xf32>
  func.return %r : tensor<300x21x7x7xf32>
}
// CHECK: nn.psroi_pooling: mode must be one of average, bilinear, got 'max'

// -----
func.func @psroi_scale(%x: tensor<1x1029x14x14xf32>, %rois: tensor<300x5xf32>) -> tensor<300x21x7x7xf32> {
  %r = nn.psroi_pooling %x, %rois {output_dim = 21 : i64, group_size = 7 : i64, spatial_scale = -1.0 : f32} : (tensor<1x1029x14x14xf32>, tensor<300x5xf32>) -> tensor<300x21x7x7xf32>
  func.return %r : tensor<300x21x7x7xf32>
}
// CHECK: nn.psroi_pooling: spatial_scale must be > 0, got -1
