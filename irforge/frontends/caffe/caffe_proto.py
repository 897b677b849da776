"""The subset of Caffe's `caffe.proto` (proto2, package `caffe`) that irforge reads.

Messages, field names and numbers follow BVLC Caffe's public schema so that real
`.prototxt` and `.caffemodel` files parse; the detection and segmentation layers follow the
forks that introduced them (SSD: Permute, Normalize, PriorBox, DetectionOutput; Faster R-CNN:
ROIPooling; R-FCN: PSROIPooling; DeepLab/PSPNet: Interp; OpenVINO's Caffe: Proposal,
RegionYolo, ReorgYolo). Fork field numbers only matter for binary files, and binary files are
read only for their blobs (fork fields without a settled number get numbers >= 1000). Fields irforge never reads (solvers, data layers, fillers' details)
are left out: in a prototxt they are skipped with a warning, in a caffemodel ignored.

`schema.py` turns this text into protobuf message classes at run time (no protoc).
"""

CAFFE_PROTO = """
message BlobShape { repeated int64 dim = 1 [packed = true]; }

message BlobProto {
  optional BlobShape shape = 7;
  repeated float data = 5 [packed = true];
  repeated float diff = 6 [packed = true];
  repeated double double_data = 8 [packed = true];
  repeated double double_diff = 9 [packed = true];
  optional int32 num = 1 [default = 0];
  optional int32 channels = 2 [default = 0];
  optional int32 height = 3 [default = 0];
  optional int32 width = 4 [default = 0];
}

message FillerParameter {
  optional string type = 1 [default = "constant"];
  optional float value = 2 [default = 0];
  optional float min = 3 [default = 0];
  optional float max = 4 [default = 1];
  optional float mean = 5 [default = 0];
  optional float std = 6 [default = 1];
  optional int32 sparse = 7 [default = -1];
}

enum Phase { TRAIN = 0; TEST = 1; }

message NetState {
  optional Phase phase = 1 [default = TEST];
  optional int32 level = 2 [default = 0];
  repeated string stage = 3;
}

message NetStateRule {
  optional Phase phase = 1;
  optional int32 min_level = 2;
  optional int32 max_level = 3;
  repeated string stage = 4;
  repeated string not_stage = 5;
}

message ParamSpec {
  optional string name = 1;
  optional float lr_mult = 3 [default = 1];
  optional float decay_mult = 4 [default = 1];
}

message NetParameter {
  optional string name = 1;
  repeated string input = 3;
  repeated BlobShape input_shape = 8;
  repeated int32 input_dim = 4;
  optional bool force_backward = 5 [default = false];
  optional NetState state = 6;
  optional bool debug_info = 7 [default = false];
  repeated LayerParameter layer = 100;
  repeated V1LayerParameter layers = 2;
}

message LayerParameter {
  optional string name = 1;
  optional string type = 2;
  repeated string bottom = 3;
  repeated string top = 4;
  optional Phase phase = 10;
  repeated float loss_weight = 5;
  repeated ParamSpec param = 6;
  repeated BlobProto blobs = 7;
  repeated bool propagate_down = 11;
  repeated NetStateRule include = 8;
  repeated NetStateRule exclude = 9;
  optional ArgMaxParameter argmax_param = 103;
  optional BatchNormParameter batch_norm_param = 139;
  optional BiasParameter bias_param = 141;
  optional ConcatParameter concat_param = 104;
  optional ConvolutionParameter convolution_param = 106;
  optional CropParameter crop_param = 144;
  optional DropoutParameter dropout_param = 108;
  optional EltwiseParameter eltwise_param = 110;
  optional ELUParameter elu_param = 140;
  optional ExpParameter exp_param = 111;
  optional FlattenParameter flatten_param = 135;
  optional InnerProductParameter inner_product_param = 117;
  optional InputParameter input_param = 143;
  optional LogParameter log_param = 134;
  optional LRNParameter lrn_param = 118;
  optional MVNParameter mvn_param = 120;
  optional PoolingParameter pooling_param = 121;
  optional PowerParameter power_param = 122;
  optional PReLUParameter prelu_param = 131;
  optional PythonParameter python_param = 130;
  optional ReductionParameter reduction_param = 136;
  optional ReLUParameter relu_param = 123;
  optional ReshapeParameter reshape_param = 133;
  optional ScaleParameter scale_param = 142;
  optional SigmoidParameter sigmoid_param = 124;
  optional SoftmaxParameter softmax_param = 125;
  optional SliceParameter slice_param = 126;
  optional TanHParameter tanh_param = 127;
  optional TileParameter tile_param = 138;
  optional PermuteParameter permute_param = 202;
  optional PriorBoxParameter prior_box_param = 203;
  optional DetectionOutputParameter detection_output_param = 204;
  optional NormalizeParameter norm_param = 206;
  optional InterpParameter interp_param = 2210;
  optional ProposalParameter proposal_param = 2211;
  optional RegionYoloParameter region_yolo_param = 2212;
  optional ReorgYoloParameter reorg_yolo_param = 2213;
  optional PriorBoxClusteredParameter prior_box_clustered_param = 2214;
  optional ROIPoolingParameter roi_pooling_param = 8266711;
  optional PSROIPoolingParameter psroi_pooling_param = 10002;
  optional ThresholdParameter threshold_param = 128;
  optional EmbedParameter embed_param = 137;
  optional BNParameter bn_param = 1003;
  optional UpsampleParameter upsample_param = 1004;
  optional ShuffleChannelParameter shuffle_channel_param = 1005;
  optional ReorgParameter reorg_param = 1006;
  optional RegionParameter region_param = 1007;
}

message V1LayerParameter {
  repeated string bottom = 2;
  repeated string top = 3;
  optional string name = 4;
  repeated NetStateRule include = 32;
  repeated NetStateRule exclude = 33;
  enum LayerType {
    NONE = 0; ABSVAL = 35; ACCURACY = 1; ARGMAX = 30; BNLL = 2; CONCAT = 3;
    CONTRASTIVE_LOSS = 37; CONVOLUTION = 4; DATA = 5; DECONVOLUTION = 39; DROPOUT = 6;
    DUMMY_DATA = 32; EUCLIDEAN_LOSS = 7; ELTWISE = 25; EXP = 38; FLATTEN = 8; HDF5_DATA = 9;
    HDF5_OUTPUT = 10; HINGE_LOSS = 28; IM2COL = 11; IMAGE_DATA = 12; INFOGAIN_LOSS = 13;
    INNER_PRODUCT = 14; LRN = 15; MEMORY_DATA = 29; MULTINOMIAL_LOGISTIC_LOSS = 16; MVN = 34;
    POOLING = 17; POWER = 26; RELU = 18; SIGMOID = 19; SIGMOID_CROSS_ENTROPY_LOSS = 27;
    SILENCE = 36; SOFTMAX = 20; SOFTMAX_LOSS = 21; SPLIT = 22; SLICE = 33; TANH = 23;
    WINDOW_DATA = 24; THRESHOLD = 31;
  }
  optional LayerType type = 5;
  repeated BlobProto blobs = 6;
  repeated float blobs_lr = 7;
  repeated float weight_decay = 8;
  repeated float loss_weight = 35;
  optional ArgMaxParameter argmax_param = 23;
  optional ConcatParameter concat_param = 9;
  optional ConvolutionParameter convolution_param = 10;
  optional DropoutParameter dropout_param = 12;
  optional EltwiseParameter eltwise_param = 24;
  optional ExpParameter exp_param = 41;
  optional InnerProductParameter inner_product_param = 17;
  optional LRNParameter lrn_param = 18;
  optional MVNParameter mvn_param = 34;
  optional PoolingParameter pooling_param = 19;
  optional PowerParameter power_param = 21;
  optional ReLUParameter relu_param = 30;
  optional SigmoidParameter sigmoid_param = 38;
  optional SoftmaxParameter softmax_param = 39;
  optional SliceParameter slice_param = 31;
  optional TanHParameter tanh_param = 37;
}

message ArgMaxParameter {
  optional bool out_max_val = 1 [default = false];
  optional uint32 top_k = 2 [default = 1];
  optional int32 axis = 3;
}

message BatchNormParameter {
  optional bool use_global_stats = 1;
  optional float moving_average_fraction = 2 [default = 0.999];
  optional float eps = 3 [default = 1e-5];
}

message BiasParameter {
  optional int32 axis = 1 [default = 1];
  optional int32 num_axes = 2 [default = 1];
  optional FillerParameter filler = 3;
}

message ConcatParameter {
  optional int32 axis = 2 [default = 1];
  optional uint32 concat_dim = 1 [default = 1];
}

message ConvolutionParameter {
  optional uint32 num_output = 1;
  optional bool bias_term = 2 [default = true];
  repeated uint32 pad = 3;
  repeated uint32 kernel_size = 4;
  repeated uint32 stride = 6;
  repeated uint32 dilation = 18;
  optional uint32 pad_h = 9 [default = 0];
  optional uint32 pad_w = 10 [default = 0];
  optional uint32 kernel_h = 11;
  optional uint32 kernel_w = 12;
  optional uint32 stride_h = 13;
  optional uint32 stride_w = 14;
  optional uint32 group = 5 [default = 1];
  optional FillerParameter weight_filler = 7;
  optional FillerParameter bias_filler = 8;
  enum Engine { DEFAULT = 0; CAFFE = 1; CUDNN = 2; }
  optional Engine engine = 15 [default = DEFAULT];
  optional int32 axis = 16 [default = 1];
  optional bool force_nd_im2col = 17 [default = false];
}

message CropParameter {
  optional int32 axis = 1 [default = 2];
  repeated uint32 offset = 2;
}

message DropoutParameter {
  optional float dropout_ratio = 1 [default = 0.5];
  optional bool scale_train = 2 [default = true];
}

message EltwiseParameter {
  enum EltwiseOp { PROD = 0; SUM = 1; MAX = 2; }
  optional EltwiseOp operation = 1 [default = SUM];
  repeated float coeff = 2;
  optional bool stable_prod_grad = 3 [default = true];
}

message ELUParameter { optional float alpha = 1 [default = 1]; }

message ExpParameter {
  optional float base = 1 [default = -1];
  optional float scale = 2 [default = 1];
  optional float shift = 3 [default = 0];
}

message FlattenParameter {
  optional int32 axis = 1 [default = 1];
  optional int32 end_axis = 2 [default = -1];
}

message InnerProductParameter {
  optional uint32 num_output = 1;
  optional bool bias_term = 2 [default = true];
  optional FillerParameter weight_filler = 3;
  optional FillerParameter bias_filler = 4;
  optional int32 axis = 5 [default = 1];
  optional bool transpose = 6 [default = false];
}

message InputParameter { repeated BlobShape shape = 1; }

message LogParameter {
  optional float base = 1 [default = -1];
  optional float scale = 2 [default = 1];
  optional float shift = 3 [default = 0];
}

message LRNParameter {
  optional uint32 local_size = 1 [default = 5];
  optional float alpha = 2 [default = 1];
  optional float beta = 3 [default = 0.75];
  enum NormRegion { ACROSS_CHANNELS = 0; WITHIN_CHANNEL = 1; }
  optional NormRegion norm_region = 4 [default = ACROSS_CHANNELS];
  optional float k = 5 [default = 1];
}

message MVNParameter {
  optional bool normalize_variance = 1 [default = true];
  optional bool across_channels = 2 [default = false];
  optional float eps = 3 [default = 1e-9];
}

message PoolingParameter {
  enum PoolMethod { MAX = 0; AVE = 1; STOCHASTIC = 2; }
  optional PoolMethod pool = 1 [default = MAX];
  optional uint32 pad = 4 [default = 0];
  optional uint32 pad_h = 9 [default = 0];
  optional uint32 pad_w = 10 [default = 0];
  optional uint32 kernel_size = 2;
  optional uint32 kernel_h = 5;
  optional uint32 kernel_w = 6;
  optional uint32 stride = 3 [default = 1];
  optional uint32 stride_h = 7;
  optional uint32 stride_w = 8;
  optional bool global_pooling = 12 [default = false];
  enum RoundMode { CEIL = 0; FLOOR = 1; }
  optional RoundMode round_mode = 13 [default = CEIL];
  optional bool ceil_mode = 1000 [default = true];
}

message PowerParameter {
  optional float power = 1 [default = 1];
  optional float scale = 2 [default = 1];
  optional float shift = 3 [default = 0];
}

message PReLUParameter {
  optional FillerParameter filler = 1;
  optional bool channel_shared = 2 [default = false];
}

message PythonParameter {
  optional string module = 1;
  optional string layer = 2;
  optional string param_str = 3 [default = ""];
}

message ReductionParameter {
  enum ReductionOp { SUM = 1; ASUM = 2; SUMSQ = 3; MEAN = 4; }
  optional ReductionOp operation = 1 [default = SUM];
  optional int32 axis = 2 [default = 0];
  optional float coeff = 3 [default = 1];
}

message ReLUParameter { optional float negative_slope = 1 [default = 0]; }

message ReshapeParameter {
  optional BlobShape shape = 1;
  optional int32 axis = 2 [default = 0];
  optional int32 num_axes = 3 [default = -1];
}

message ScaleParameter {
  optional int32 axis = 1 [default = 1];
  optional int32 num_axes = 2 [default = 1];
  optional FillerParameter filler = 3;
  optional bool bias_term = 4 [default = false];
  optional FillerParameter bias_filler = 5;
}

message SigmoidParameter { }

message SoftmaxParameter { optional int32 axis = 2 [default = 1]; }

message SliceParameter {
  optional int32 axis = 3 [default = 1];
  repeated uint32 slice_point = 2;
  optional uint32 slice_dim = 1 [default = 1];
}

message TanHParameter { }

message TileParameter {
  optional int32 axis = 1 [default = 1];
  optional int32 tiles = 2;
}

message PermuteParameter { repeated uint32 order = 1; }

message NormalizeParameter {
  optional bool across_spatial = 1 [default = true];
  optional FillerParameter scale_filler = 2;
  optional bool channel_shared = 3 [default = true];
  optional float eps = 4 [default = 1e-10];
}

message PriorBoxParameter {
  enum CodeType { CORNER = 1; CENTER_SIZE = 2; CORNER_SIZE = 3; }
  repeated float min_size = 1;
  repeated float max_size = 2;
  repeated float aspect_ratio = 3;
  optional bool flip = 4 [default = true];
  optional bool clip = 5 [default = false];
  repeated float variance = 6;
  optional uint32 img_size = 7;
  optional uint32 img_h = 8;
  optional uint32 img_w = 9;
  optional float step = 10;
  optional float step_h = 11;
  optional float step_w = 12;
  optional float offset = 13 [default = 0.5];
}

message PriorBoxClusteredParameter {
  repeated float width = 1;
  repeated float height = 2;
  optional bool clip = 3 [default = false];
  repeated float variance = 4;
  optional uint32 img_h = 5;
  optional uint32 img_w = 6;
  optional float step = 7;
  optional float step_h = 8;
  optional float step_w = 9;
  optional float offset = 10 [default = 0.5];
}

message NonMaximumSuppressionParameter {
  optional float nms_threshold = 1 [default = 0.3];
  optional int32 top_k = 2;
  optional float eta = 3 [default = 1];
}

message SaveOutputParameter {
  optional string output_directory = 1;
  optional string output_name_prefix = 2;
  optional string output_format = 3;
  optional string label_map_file = 4;
  optional string name_size_file = 5;
  optional uint32 num_test_image = 6;
}

message DetectionOutputParameter {
  optional uint32 num_classes = 1;
  optional bool share_location = 2 [default = true];
  optional int32 background_label_id = 3 [default = 0];
  optional NonMaximumSuppressionParameter nms_param = 4;
  optional SaveOutputParameter save_output_param = 5;
  optional PriorBoxParameter.CodeType code_type = 6 [default = CORNER];
  optional bool variance_encoded_in_target = 8 [default = false];
  optional int32 keep_top_k = 7 [default = -1];
  optional float confidence_threshold = 9;
  optional bool visualize = 10 [default = false];
  optional float visualize_threshold = 11;
  optional string save_file = 12;
  optional bool clip = 1000 [default = false];
  optional bool clip_before_nms = 1001 [default = false];
  optional bool clip_after_nms = 1002 [default = false];
}

message InterpParameter {
  optional int32 height = 1 [default = 0];
  optional int32 width = 2 [default = 0];
  optional int32 zoom_factor = 3 [default = 1];
  optional int32 shrink_factor = 4 [default = 1];
  optional int32 pad_beg = 5 [default = 0];
  optional int32 pad_end = 6 [default = 0];
  optional bool use_blob_size = 1000 [default = false];  // forks (soeaver's): size of bottom[1]
}

message ProposalParameter {
  optional uint32 feat_stride = 1 [default = 16];
  optional uint32 base_size = 2 [default = 16];
  optional uint32 min_size = 3 [default = 16];
  repeated float ratio = 4;
  repeated float scale = 5;
  optional uint32 pre_nms_topn = 6 [default = 6000];
  optional uint32 post_nms_topn = 7 [default = 300];
  optional float nms_thresh = 8 [default = 0.7];
}

message RegionYoloParameter {
  optional int32 coords = 1 [default = 4];
  optional int32 classes = 2 [default = 20];
  optional int32 num = 3 [default = 1];
  optional bool do_softmax = 4 [default = true];
  repeated float anchors = 5;
  repeated int32 mask = 6;
}

message ThresholdParameter { optional float threshold = 1 [default = 0]; }

message EmbedParameter {
  optional uint32 num_output = 1;
  optional uint32 input_dim = 2;
  optional bool bias_term = 3 [default = true];
  optional FillerParameter weight_filler = 4;
  optional FillerParameter bias_filler = 5;
}

message BNParameter {
  optional FillerParameter scale_filler = 1;
  optional FillerParameter shift_filler = 2;
  enum BNMode { LEARN = 0; INFERENCE = 1; }
  optional BNMode bn_mode = 3 [default = LEARN];
  optional FillerParameter slope_filler = 4;
  optional FillerParameter bias_filler = 5;
  optional float momentum = 6 [default = 0.9];
  optional float eps = 7 [default = 1e-5];
  optional bool frozen = 8 [default = false];
  enum Engine { DEFAULT = 0; CAFFE = 1; CUDNN = 2; }
  optional Engine engine = 9 [default = DEFAULT];
}

message UpsampleParameter {
  optional uint32 scale = 1 [default = 2];
  optional uint32 scale_h = 2;
  optional uint32 scale_w = 3;
  optional bool pad_out_h = 4 [default = false];
  optional bool pad_out_w = 5 [default = false];
  optional uint32 upsample_h = 6;
  optional uint32 upsample_w = 7;
}

message ShuffleChannelParameter { optional uint32 group = 1 [default = 1]; }

message ReorgParameter {
  optional uint32 stride = 1 [default = 2];
  optional bool reverse = 2 [default = false];
}

// YOLOv2 Caffe forks' `Region` (darknet's region layer). The forks disagree: classes, coords and
// num (darknet's names) are honoured; caffe-yolov2's boxes_of_each_grid is read only to refuse
// it (that fork's Region transposes to channels-last); anchors / biases are carried.
message RegionParameter {
  optional uint32 classes = 1 [default = 20];
  optional uint32 coords = 2 [default = 4];
  optional uint32 boxes_of_each_grid = 3 [default = 5];
  optional bool softmax = 4 [default = true];
  optional uint32 num = 1000 [default = 5];
  repeated float anchors = 1001;
  repeated float biases = 1002;
}

message ReorgYoloParameter { optional int32 stride = 1 [default = 1]; }

message ROIPoolingParameter {
  optional uint32 pooled_h = 1 [default = 0];
  optional uint32 pooled_w = 2 [default = 0];
  optional float spatial_scale = 3 [default = 1];
}

message PSROIPoolingParameter {
  optional float spatial_scale = 1;
  optional int32 output_dim = 2;
  optional int32 group_size = 3;
}
"""
