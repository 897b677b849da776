"""SegNet / ENet with the unpooling masks fixed: where two values of a pooling window are
equal to float rounding, OpenCV's convolutions and irforge's can round them apart either way,
so the argmax (and the value the unpooling moves) flips: bench/caffe_zoo.py then shows errors
in a small share of the outputs. Here OpenCV's masks are fed to both runtimes (each Upsample's
mask bottom becomes an input holding the mask OpenCV computed), so what remains is every
other difference: the check that the rest of the net, unpooling included, computes alike.

    PYTHONPATH=. /work/zoo-venv/bin/python bench/caffe_zoo_masks.py --zoo DIR [--only NAME ...]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import caffe_zoo as zoo  # noqa: E402

import irforge.frontends.caffe.extractors  # noqa: E402,F401  (registers the extractors)

NETS = ["segnet_basic", "segnet", "enet"]


def mask_blobs(text: str) -> list[str]:
    """The mask bottoms of the Upsample layers (their second bottom)."""
    found = []
    for block in re.finditer(r"layer\s*\{[^{}]*type:\s*\"Upsample\"[^{}]*", text):
        bottoms = re.findall(r'bottom:\s*"([^"]+)"', block.group(0))
        if len(bottoms) == 2:
            found.append(bottoms[1])
    return found


def fed(text: str, masks: dict[str, np.ndarray]) -> str:
    """The prototxt with each mask bottom of an Upsample read from an Input instead."""
    inputs = "".join(
        f'layer {{ name: "{m}_fed" type: "Input" top: "{m}_fed" input_param {{ shape {{ {" ".join(f"dim: {d}" for d in a.shape)} }} }} }}\n'
        for m, a in masks.items()
    )

    def swap(block: re.Match[str]) -> str:
        body = block.group(0)
        for m in masks:
            body = re.sub(rf'(bottom:\s*"){re.escape(m)}(")', rf"\g<1>{m}_fed\2", body)
        return body

    text = re.sub(r"layer\s*\{[^{}]*type:\s*\"Upsample\"[^{}]*", swap, text)
    first = re.search(r"\blayer\s*\{", text)
    assert first is not None
    return text[: first.start()] + inputs + text[first.start() :]


def bench(path: Path, work: Path) -> str:
    from irforge.backends.reference import run
    from irforge.frontends.caffe.importer import NetImporter
    from irforge.frontends.caffe.loader import load_caffe
    from irforge.model import output_names

    path = zoo.with_input_layer(zoo.without_final_softmax(path, work), work)
    text = path.read_text()
    masks = mask_blobs(text)
    # OpenCV's masks: a Power layer reads each (forward() takes layer names)
    readers = "".join(f'layer {{ name: "read_{i}" type: "Power" bottom: "{m}" top: "read_{i}" }}\n' for i, m in enumerate(masks))
    recorder = zoo.WeightRecorder()
    recorder.install()
    empty = work / "empty.caffemodel"
    empty.write_bytes(b"")
    model = NetImporter(load_caffe(empty, path)).run()
    weights = work / "w.caffemodel"
    weights.write_bytes(zoo.caffemodel(recorder.blobs))
    feeds = zoo.feeds_of(model)
    strip = lambda t: re.sub(r"\w+_filler\s*\{[^{}]*\}", "", t)  # noqa: E731  (OpenCV: flat fork params only)
    first = work / "masks.prototxt"
    first.write_text(strip(text + readers))
    got_masks = zoo.opencv_run(first, weights, feeds, [f"read_{i}" for i in range(len(masks))])
    values = {m: got_masks[f"read_{i}"] for i, m in enumerate(masks)}
    second = work / "fed.prototxt"
    second.write_text(fed(text, values))
    model = NetImporter(load_caffe(empty, second)).run()
    feeds = {**feeds, **{f"{m}_fed": a for m, a in values.items()}}
    opencv_text = work / "fed.opencv.prototxt"
    opencv_text.write_text(strip(second.read_text()))
    last = text[[m.start() for m in re.finditer(r"\blayer\s*\{", text)][-1] :]
    layer, output = re.findall(r'name:\s*"([^"]+)"', last)[0], re.findall(r'top:\s*"([^"]+)"', last)[0]
    assert output in output_names(model.func)  # the pooling masks, no longer read, are outputs too
    want = next(iter(zoo.opencv_run(opencv_text, weights, feeds, [layer]).values()))
    return f"{len(masks)} masks fed, ref {zoo.error(run(model, feeds)[output], want, False)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zoo", type=Path, required=True)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    for name in args.only or NETS:
        with tempfile.TemporaryDirectory() as work:
            print(f"{name}: {bench(args.zoo / f'{name}.prototxt', Path(work))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
