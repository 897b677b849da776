"""Hand-written Caffe deploy files of YOLO v2 as the Caffe YOLO forks convert darknet's
yolo-voc.cfg and tiny-yolo-voc.cfg (no published file with a settled licence to copy):
Convolution (no bias) + BatchNorm + Scale + leaky ReLU (negative_slope 0.1) blocks, MAX
pooling, and for YOLO v2 the passthrough route through the forks' `Reorg` (reorg_param
stride 2) concatenated with the last 1024-channel block. Both end at the 125-channel
detection convolution, where the forks' deploy files end (their `Region` layer is the training
loss; boxes are decoded on the host). tiny-yolo-voc's 2x2 / stride 1 max pooling (darknet pads
it asymmetrically, which Caffe cannot) is written as Caffe conversions do: kernel 2, stride 1,
no pad (13x13 -> 12x12).

    PYTHONPATH=. python bench/caffe_zoo_yolo.py DIR    (writes yolov2_voc.prototxt, yolov2_tiny_voc.prototxt)
"""

from __future__ import annotations

import sys
from pathlib import Path


def conv_block(index: int, bottom: str, channels: int, kernel: int) -> tuple[str, str]:
    name = f"conv{index}"
    text = f"""layer {{
  name: "{name}"
  type: "Convolution"
  bottom: "{bottom}"
  top: "{name}"
  convolution_param {{ num_output: {channels} kernel_size: {kernel} pad: {kernel // 2} stride: 1 bias_term: false }}
}}
layer {{ name: "bn{index}" type: "BatchNorm" bottom: "{name}" top: "{name}" batch_norm_param {{ use_global_stats: true }} }}
layer {{ name: "scale{index}" type: "Scale" bottom: "{name}" top: "{name}" scale_param {{ bias_term: true }} }}
layer {{ name: "relu{index}" type: "ReLU" bottom: "{name}" top: "{name}" relu_param {{ negative_slope: 0.1 }} }}
"""
    return text, name


def pool(index: int, bottom: str, kernel: int = 2, stride: int = 2) -> tuple[str, str]:
    name = f"pool{index}"
    return f'layer {{ name: "{name}" type: "Pooling" bottom: "{bottom}" top: "{name}" pooling_param {{ pool: MAX kernel_size: {kernel} stride: {stride} }} }}\n', name


def header(name: str) -> str:
    return f'name: "{name}"\nlayer {{ name: "data" type: "Input" top: "data" input_param {{ shape: {{ dim: 1 dim: 3 dim: 416 dim: 416 }} }} }}\n'


def detection(index: int, bottom: str) -> str:
    return f"""layer {{
  name: "conv{index}"
  type: "Convolution"
  bottom: "{bottom}"
  top: "conv{index}"
  convolution_param {{ num_output: 125 kernel_size: 1 pad: 0 stride: 1 }}
}}
"""


def tiny_yolo_voc() -> str:
    text, top, index = header("TINY-YOLO-VOC"), "data", 1
    for channels in (16, 32, 64, 128, 256, 512):
        block, top = conv_block(index, top, channels, 3)
        last = channels == 512
        pooled, top = pool(index, top, 2, 1 if last else 2)
        text, index = text + block + pooled, index + 1
    for _ in range(2):
        block, top = conv_block(index, top, 1024, 3)
        text, index = text + block, index + 1
    return text + detection(index, top)


def yolo_voc() -> str:
    plan = [(32, 3), "M", (64, 3), "M", (128, 3), (64, 1), (128, 3), "M", (256, 3), (128, 1), (256, 3), "M",
            (512, 3), (256, 1), (512, 3), (256, 1), (512, 3), "ROUTE", "M",
            (1024, 3), (512, 1), (1024, 3), (512, 1), (1024, 3), (1024, 3), (1024, 3)]  # fmt: skip
    text, top, index, pools, route = header("YOLO-VOC"), "data", 1, 1, ""
    for step in plan:
        if step == "M":
            pooled, top = pool(pools, top)
            text, pools = text + pooled, pools + 1
        elif step == "ROUTE":
            route = top
        else:
            block, top = conv_block(index, top, *step)
            text, index = text + block, index + 1
    block, passthrough = conv_block(index, route, 64, 1)
    text, index = text + block, index + 1
    text += f'layer {{ name: "reorg" type: "Reorg" bottom: "{passthrough}" top: "reorg" reorg_param {{ stride: 2 }} }}\n'
    text += f'layer {{ name: "concat" type: "Concat" bottom: "reorg" bottom: "{top}" top: "concat" }}\n'
    block, top = conv_block(index, "concat", 1024, 3)
    return text + block + detection(index + 1, top)


NETS = {"yolov2_voc.prototxt": yolo_voc, "yolov2_tiny_voc.prototxt": tiny_yolo_voc}


def main() -> int:
    directory = Path(sys.argv[1])
    for name, make in NETS.items():
        (directory / name).write_text(make())
        print(directory / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
