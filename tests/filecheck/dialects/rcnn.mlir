// RUN: ir-opt %s --split-input-file | ir-opt --split-input-file | filecheck %s

func.func @proposal(%s: tensor<2x12x5x7xf32>, %d: tensor<2x24x5x7xf32>, %info: tensor<1x3xf32>) -> tensor<600x5xf32> {
  %p = nn.proposal %s, %d, %info {base_size = 16 : i64, feat_stride = 16 : i64, min_size = 16 : i64, ratio = array<f32: 0.5, 1.0, 2.0>, scale = array<f32: 8.0, 16.0>, pre_nms_topn = 6000 : i64, post_nms_topn = 300 : i64, nms_thresh = 0.7 : f32, name = "proposal"} : (tensor<2x12x5x7xf32>, tensor<2x24x5x7xf32>, tensor<1x3xf32>) -> tensor<600x5xf32>
  func.return %p : tensor<600x5xf32>
}
// CHECK:      %p = nn.proposal %s, %d, %info {base_size = 16 : i64, feat_stride = 16 : i64, min_size = 16 : i64, ratio = array<f32: 5.000000e-01, 1.000000e+00, 2.000000e+00>, scale = array<f32: 8.000000e+00, 1.600000e+01>, pre_nms_topn = 6000 : i64, post_nms_topn = 300 : i64, nms_thresh = 7.000000e-01 : f32, name = "proposal"} : (tensor<2x12x5x7xf32>, tensor<2x24x5x7xf32>, tensor<1x3xf32>) -> tensor<600x5xf32>

// -----
func.func @proposal_options(%s: tensor<?x6x?x?xf32>, %d: tensor<?x12x?x?xf32>, %info: tensor<4xf32>) -> tensor<?x5xf32> {
  %p = nn.proposal %s, %d, %info {base_size = 256 : i64, feat_stride = 16 : i64, min_size = 1 : i64, ratio = array<f32: 0.5, 1.0, 2.0>, scale = array<f32: 0.25>, pre_nms_topn = 600 : i64, post_nms_topn = 100 : i64, nms_thresh = 0.6 : f32, clip_before_nms = false, clip_after_nms = true, normalize = true, box_size_scale = 5.0 : f32, box_coordinate_scale = 10.0 : f32} : (tensor<?x6x?x?xf32>, tensor<?x12x?x?xf32>, tensor<4xf32>) -> tensor<?x5xf32>
  func.return %p : tensor<?x5xf32>
}
// CHECK:      %p = nn.proposal %s, %d, %info {base_size = 256 : i64, feat_stride = 16 : i64, min_size = 1 : i64, ratio = array<f32: 5.000000e-01, 1.000000e+00, 2.000000e+00>, scale = array<f32: 2.500000e-01>, pre_nms_topn = 600 : i64, post_nms_topn = 100 : i64, nms_thresh = 6.000000e-01 : f32, clip_before_nms = false, clip_after_nms = true, normalize = true, box_size_scale = 5.000000e+00 : f32, box_coordinate_scale = 1.000000e+01 : f32} : (tensor<?x6x?x?xf32>, tensor<?x12x?x?xf32>, tensor<4xf32>) -> tensor<?x5xf32>

// -----
func.func @proposal_scores(%s: tensor<1x6x5x7xf32>, %d: tensor<1x12x5x7xf32>, %info: tensor<3xf32>) -> (tensor<50x5xf32>, tensor<50xf32>) {
  %p:2 = nn.proposal %s, %d, %info {base_size = 16 : i64, feat_stride = 16 : i64, min_size = 16 : i64, ratio = array<f32: 0.5, 1.0, 2.0>, scale = array<f32: 8.0>, pre_nms_topn = 600 : i64, post_nms_topn = 50 : i64, nms_thresh = 0.7 : f32} : (tensor<1x6x5x7xf32>, tensor<1x12x5x7xf32>, tensor<3xf32>) -> (tensor<50x5xf32>, tensor<50xf32>)
  func.return %p#0, %p#1 : tensor<50x5xf32>, tensor<50xf32>
}
// CHECK:      %p, %p_1 = nn.proposal %s, %d, %info {{.*}} -> (tensor<50x5xf32>, tensor<50xf32>)

// -----
func.func @roi_pooling(%x: tensor<1x512x14x14xf32>, %rois: tensor<300x5xf32>) -> (tensor<300x512x7x7xf32>, tensor<300x512x6x6xf32>) {
  %max = nn.roi_pooling %x, %rois {pooled_h = 7 : i64, pooled_w = 7 : i64, spatial_scale = 0.0625 : f32, name = "roi_pool5"} : (tensor<1x512x14x14xf32>, tensor<300x5xf32>) -> tensor<300x512x7x7xf32>
  %bil = nn.roi_pooling %x, %rois {pooled_h = 6 : i64, pooled_w = 6 : i64, spatial_scale = 1.0 : f32, method = "bilinear"} : (tensor<1x512x14x14xf32>, tensor<300x5xf32>) -> tensor<300x512x6x6xf32>
  func.return %max, %bil : tensor<300x512x7x7xf32>, tensor<300x512x6x6xf32>
}
// CHECK:      %max = nn.roi_pooling %x, %rois {pooled_h = 7 : i64, pooled_w = 7 : i64, spatial_scale = 6.250000e-02 : f32, name = "roi_pool5"} : (tensor<1x512x14x14xf32>, tensor<300x5xf32>) -> tensor<300x512x7x7xf32>
// CHECK-NEXT: %bil = nn.roi_pooling %x, %rois {pooled_h = 6 : i64, pooled_w = 6 : i64, spatial_scale = 1.000000e+00 : f32, method = "bilinear"} : (tensor<1x512x14x14xf32>, tensor<300x5xf32>) -> tensor<300x512x6x6xf32>

// -----
func.func @psroi_pooling(%x: tensor<1x1029x14x14xf32>, %y: tensor<1x84x14x14xf32>, %rois: tensor<?x5xf32>) -> (tensor<?x21x7x7xf32>, tensor<?x21x3x3xf32>) {
  %avg = nn.psroi_pooling %x, %rois {output_dim = 21 : i64, group_size = 7 : i64, spatial_scale = 0.0625 : f32, name = "psroipooled_cls_rois"} : (tensor<1x1029x14x14xf32>, tensor<?x5xf32>) -> tensor<?x21x7x7xf32>
  %bil = nn.psroi_pooling %y, %rois {output_dim = 21 : i64, group_size = 3 : i64, spatial_scale = 1.0 : f32, mode = "bilinear", spatial_bins_x = 2 : i64, spatial_bins_y = 2 : i64} : (tensor<1x84x14x14xf32>, tensor<?x5xf32>) -> tensor<?x21x3x3xf32>
  func.return %avg, %bil : tensor<?x21x7x7xf32>, tensor<?x21x3x3xf32>
}
// CHECK:      %avg = nn.psroi_pooling %x, %rois {output_dim = 21 : i64, group_size = 7 : i64, spatial_scale = 6.250000e-02 : f32, name = "psroipooled_cls_rois"} : (tensor<1x1029x14x14xf32>, tensor<?x5xf32>) -> tensor<?x21x7x7xf32>
// CHECK-NEXT: %bil = nn.psroi_pooling %y, %rois {output_dim = 21 : i64, group_size = 3 : i64, spatial_scale = 1.000000e+00 : f32, mode = "bilinear", spatial_bins_x = 2 : i64, spatial_bins_y = 2 : i64} : (tensor<1x84x14x14xf32>, tensor<?x5xf32>) -> tensor<?x21x3x3xf32>
