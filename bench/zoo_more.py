"""More real architectures for `zoo_latency.py` (full size, random weights): torchvision's
classification and segmentation models, transformers encoders, and keras.applications
graphs frozen to a TF GraphDef.

torchvision is PyPI's wheel made importable on the CPU-only torch by `zoo_torchvision`
(Python kernels for its compiled ops). Torch entries write an ONNX file (the TorchScript
exporter, opset 17) and return the feeds; Keras entries write a frozen .pb
(`convert_variables_to_constants_v2`, BatchNorm statistics randomised as in `tf_zoo.py`) and
return the feeds with TensorFlow's output, the reference for those rows; `keras_onnx`
converts that .pb with tf2onnx (1.17.0, pip-installed into the zoo venv) for onnxruntime.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
Feeds = dict[str, np.ndarray]


def image(size: int = 224) -> Feeds:
    return {"pixel_values": np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)}


def tokens(length: int = 128, vocab: int = 30000) -> Feeds:
    rng = np.random.default_rng(0)
    mask = np.ones((1, length), np.int64)
    mask[0, length - 16:] = 0
    return {"input_ids": rng.integers(0, vocab, (1, length)).astype(np.int64), "attention_mask": mask}


class Output0(nn.Module):
    """The first tensor of a model returning a tuple, dict or ModelOutput."""

    def __init__(self, model: nn.Module, key: str | None = None) -> None:
        super().__init__()
        self.model, self.key = model, key

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        out = self.model(*args)
        if self.key is not None:
            return out[self.key]
        return out[0] if isinstance(out, (tuple, list)) else out


def tv(name: str, segmentation: bool = False, **kwargs: object) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from zoo_torchvision import torchvision

        models = torchvision.models.segmentation if segmentation else torchvision.models
        model = getattr(models, name)(weights=None, **kwargs).eval()
        return Output0(model, "out") if segmentation else model

    return build


def hf(config: str, model: str, **kwargs: object) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        import zoo_torchvision  # noqa: F401  (transformers imports torchvision when installed)
        import transformers as tf

        m = getattr(tf, model)(getattr(tf, config)(**kwargs))
        m.config._attn_implementation = "sdpa"
        return Output0(m.eval())

    return build


class WhisperEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        import zoo_torchvision  # noqa: F401
        import transformers as tf

        config = tf.WhisperConfig.from_dict(dict(d_model=512, encoder_layers=6, encoder_attention_heads=8,
                                                 decoder_layers=6, decoder_attention_heads=8,
                                                 encoder_ffn_dim=2048, decoder_ffn_dim=2048))  # whisper-base
        config._attn_implementation = "sdpa"
        self.encoder = tf.WhisperModel(config).get_encoder().eval()

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.encoder(features)[0]


def whisper_features() -> Feeds:
    return {"input_features": np.random.default_rng(0).standard_normal((1, 80, 3000)).astype(np.float32)}


def t5_tokens() -> Feeds:
    return tokens(128, 32000)


TORCH_MODELS: dict[str, tuple[Callable[[], nn.Module], Callable[[], Feeds]]] = {
    "resnet18": (tv("resnet18"), image),
    "resnet34": (tv("resnet34"), image),
    "resnet101": (tv("resnet101"), image),
    "vgg16": (tv("vgg16"), image),
    "alexnet": (tv("alexnet"), image),
    "densenet121": (tv("densenet121"), image),
    "googlenet": (tv("googlenet", aux_logits=False, init_weights=True), image),
    "inception_v3": (tv("inception_v3", aux_logits=False, init_weights=True), lambda: image(299)),
    "squeezenet1_1": (tv("squeezenet1_1"), image),
    "shufflenet_v2_x1_0": (tv("shufflenet_v2_x1_0"), image),
    "regnet_y_800mf": (tv("regnet_y_800mf"), image),
    "mnasnet1_0": (tv("mnasnet1_0"), image),
    "efficientnet_v2_s": (tv("efficientnet_v2_s"), lambda: image(384)),
    "swin_t": (tv("swin_t"), image),
    "lraspp_mobilenet_v3": (tv("lraspp_mobilenet_v3_large", True, weights_backbone=None), lambda: image(520)),
    "fcn_resnet50": (tv("fcn_resnet50", True, weights_backbone=None, aux_loss=False), lambda: image(520)),
    "distilbert_seq128": (hf("DistilBertConfig", "DistilBertModel"), tokens),
    "roberta_base_seq128": (hf("RobertaConfig", "RobertaModel", add_pooling_layer=False), tokens),
    "t5_small_encoder_seq128": (hf("T5Config", "T5EncoderModel"), t5_tokens),
    "whisper_base_encoder": (WhisperEncoder, whisper_features),
    "deit_small": (hf("ViTConfig", "ViTModel", hidden_size=384, num_attention_heads=6, intermediate_size=1536,
                      add_pooling_layer=False), image),
}


KERAS_MODELS: dict[str, tuple[str, int]] = {
    "keras_ResNet50": ("ResNet50", 224),
    "keras_MobileNetV2": ("MobileNetV2", 224),
    "keras_EfficientNetB0": ("EfficientNetB0", 224),
    "keras_DenseNet121": ("DenseNet121", 224),
    "keras_InceptionV3": ("InceptionV3", 299),
    "keras_Xception": ("Xception", 299),
    "keras_NASNetMobile": ("NASNetMobile", 224),
    "keras_ConvNeXtTiny": ("ConvNeXtTiny", 224),
}


def freeze_keras(name: str, path: Path) -> tuple[Feeds, np.ndarray]:
    """Write the frozen GraphDef of a keras.applications model; its input and TF's output."""
    import keras
    import tensorflow as tf
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2
    from tf_zoo import randomize_batch_norms

    app, size = KERAS_MODELS[name]
    keras.utils.set_random_seed(0)
    model = getattr(keras.applications, app)(weights=None, input_shape=(size, size, 3))
    randomize_batch_norms(model)
    shape = [1, size, size, 3]
    fn = tf.function(lambda x: model(x, training=False)).get_concrete_function(tf.TensorSpec(shape, tf.float32, name="x"))
    frozen = convert_variables_to_constants_v2(fn)
    path.write_bytes(frozen.graph.as_graph_def().SerializeToString())
    (path.parent / f"{path.stem}.io").write_text(f"{frozen.inputs[0].name} {frozen.outputs[0].name}")
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    want = frozen(tf.constant(x))
    want = (want[0] if isinstance(want, (list, tuple)) else want).numpy()
    return {"x": x}, want


def keras_onnx(pb: Path) -> Path:
    """The frozen graph converted by tf2onnx (opset 17) for onnxruntime; raises if it fails."""
    import tensorflow as tf
    import tf2onnx

    inp, out = (pb.parent / f"{pb.stem}.io").read_text().split()
    graph_def = tf.compat.v1.GraphDef()
    graph_def.ParseFromString(pb.read_bytes())
    onnx_path = pb.with_suffix(".onnx")
    tf2onnx.convert.from_graph_def(graph_def, input_names=[inp], output_names=[out], opset=17, output_path=str(onnx_path))
    return onnx_path
