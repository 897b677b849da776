"""torchvision's MViT v1 / v2 through torch's TorchScript exporter (the `onnx_zoo_video.py`
rows that onnxruntime could not run), against onnxruntime on a repaired copy.

The export's 51 Loops each build a Python list (SequenceEmpty -> Loop(SequenceInsert) ->
SequenceAt: `torch.tensor_split` in the pooling blocks), which irforge resolves at import
(frontends/onnx/sequences.py; the trip counts are constants, so the loops unroll). irforge
converts the file as torch wrote it. onnxruntime refuses that file for three defects of the
export, which this script repairs in a copy used only as the reference: (1) If-branch and
Loop-body outputs annotated with the trace's shapes ([1, 5183, 192] where the run gives
[1, 577, 192]): annotations cleared; (2) Loop bodies whose iteration-number and condition
inputs have no type: typed int64 / bool scalars; (3) Slice inside the bodies fed scalar
starts / ends (ONNX requires 1-D): reshaped to [-1]. The repaired copy's output is also
compared with torch's own.

    PYTHONPATH=$PWD:$PWD/bench /work/zoo-venv/bin/python bench/mvit_torchscript.py [--models tv-mvit_v2_s,tv-mvit_v1_b]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper
from onnx_zoo import export, max_error, run_openvino  # bench/, next to this script
from onnx_zoo_video import ZOO


def repaired(model: onnx.ModelProto) -> onnx.ModelProto:
    """The three repairs above, in place."""

    def fix_slices(graph: onnx.GraphProto) -> None:
        nodes = []
        for node in graph.node:
            if node.op_type == "Slice":
                for i in range(1, len(node.input)):
                    if node.input[i]:
                        flat, shape = f"{node.name}/flat{i}", f"{node.name}/minus_one{i}"
                        nodes.append(helper.make_node("Constant", [], [shape], value=numpy_helper.from_array(np.array([-1], np.int64))))
                        nodes.append(helper.make_node("Reshape", [node.input[i], shape], [flat]))
                        node.input[i] = flat
            nodes.append(node)
        del graph.node[:]
        graph.node.extend(nodes)

    def clear(graph: onnx.GraphProto) -> None:
        for out in graph.output:
            if out.type.HasField("tensor_type"):
                out.type.tensor_type.ClearField("shape")
        del graph.value_info[:]
        fix_slices(graph)
        walk(graph)

    def walk(graph: onnx.GraphProto) -> None:
        for node in graph.node:
            if node.op_type == "Loop":
                body = node.attribute[0].g
                for k, elem in ((0, TensorProto.INT64), (1, TensorProto.BOOL)):
                    if not body.input[k].type.HasField("tensor_type"):
                        body.input[k].CopyFrom(helper.make_tensor_value_info(body.input[k].name, elem, []))
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    clear(attr.g)

    walk(model.graph)
    del model.graph.value_info[:]
    return model


def sequence_ops(graph: onnx.GraphProto) -> int:
    count = 0
    for node in graph.node:
        count += node.op_type.startswith("Sequence") or node.op_type in ("ConcatFromSequence", "SplitToSequence")
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                count += sequence_ops(attr.g)
    return count


def row(name: str, work: Path) -> str:
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    entry = next(e for e in ZOO if e.name == name)
    path = work / f"{name}.onnx"
    feeds = export(entry, "torchscript", path)
    with torch.no_grad():
        torch_out = entry.build()(*entry.inputs()).numpy()
    original = onnx.load(str(path))
    fixed = work / f"{name}-repaired.onnx"
    onnx.save(repaired(original), str(fixed), save_as_external_data=True, location=f"{name}-repaired.data")
    want = ort.InferenceSession(str(fixed), providers=["CPUExecutionProvider"]).run(None, feeds)
    loops = sum(n.op_type == "Loop" for n in onnx.load(str(path), load_external_data=False).graph.node)
    model = import_onnx(str(path))  # the file as torch wrote it
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    fused = [op.name for op in model.func.body.block.ops].count("nn.scaled_dot_product_attention")
    on_ov = run_openvino(model, work / f"{name}.xml", feeds, write_ir_xml, ov)
    got_ref = list(run(model, feeds).values())
    cpu = compile_model(model)
    try:
        got_cpu = list(cpu(feeds).values())
    finally:
        cpu.close()
    return (
        f"| {name} | torchscript | {loops} Loops, {sequence_ops(original.graph)} sequence ops | {max_error([torch_out], want):.1e} | yes | "
        f"{max_error(on_ov, want):.1e} | {max_error(got_ref, want):.1e} | {max_error(got_cpu, want):.1e} | {fused}/{entry.attention_blocks} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="tv-mvit_v2_s,tv-mvit_v1_b")
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp())
    print("| model | exporter | export | onnxruntime (repaired) vs torch | convert | openvino | ref | cpu | attention |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        print(row(name, work), flush=True)


if __name__ == "__main__":
    main()
