"""Fuzz irforge with the ONNX backend node suite's models of chosen ops, mutated.

    python bench/fuzz_node_models.py --cases 1000 --seed 8 [--ops DeformConv,STFT,...|session7|session8|session9|session10|session11|session12]

Seeds: every (non-expanded) node-suite case whose graph uses one of `--ops` (default: the
ops added in session 6 and the legacy forms). Each case is one or two edits of a seed by
`irforge.testing.fuzz_new_ops.mutate_onnx_new_ops` (`fuzz_session7_ops.mutate_onnx_session7`
with `--ops session7`: declared types, 4-bit tensors too), run in process through ir-convert or
ir-run (ref or cpu); prints the outcome counts of `irforge.testing.fuzz.run_case` and every
finding (internal error, traceback, hang, partial output, outside access, multi-line error),
writing each finding's model to `--keep` for reproduction.
"""

from __future__ import annotations

import argparse
import collections
import random
import tempfile
from pathlib import Path

import onnx.backend.test.case.node as node_cases

from irforge.testing.fuzz import run_case
from irforge.testing.fuzz_flags import Case
from irforge.testing.fuzz_new_ops import mutate_onnx_new_ops
from irforge.testing.fuzz_session7_ops import mutate_onnx_session7

SESSION6_OPS = (
    "DeformConv,STFT,HannWindow,HammingWindow,BlackmanWindow,MelWeightMatrix,Compress,Unique,Det,BitwiseAnd,BitwiseOr,"
    "BitwiseXor,BitwiseNot,BitShift,ReverseSequence,CenterCropPad,AffineGrid,CumProd,SwiGLU,SequenceEmpty,SequenceConstruct,"
    "SequenceInsert,SequenceAt,SequenceErase,SequenceLength,SplitToSequence,ConcatFromSequence,SequenceMap,Optional,"
    "OptionalHasElement,OptionalGetElement,Scan,LpPool,GlobalLpPool,Hardmax,MaxUnpool,RotaryEmbedding,DequantizeLinear,"
    "Upsample,MeanVarianceNormalization"
)

SESSION7_OPS = "TensorScatter,NegativeLogLikelihoodLoss,SoftmaxCrossEntropyLoss,BitCast,CausalConvWithState,LinearAttention,DequantizeLinear,Cast"
"""`--ops session7`: the ops of session 7 (and Cast, whose 4-bit / float16 forms it touched)."""

SESSION8_OPS = "Pad,Resize,ArgMax,ArgMin,Expand,GatherElements,QuantizeLinear,DequantizeLinear"
"""`--ops session8`: the ops whose forms session 8 changed (run-time / negative Pad, Resize antialias, integer ArgMax,
run-time Expand, Slice before GatherElements, exact dequantization)."""

SESSION9_OPS = "Attention,AveragePool,Conv,Pow,Softmax"
"""`--ops session9`: the ops whose CPU kernels session 9 added or changed (the blocked attention kernel, average pools
through the row kernel, depthwise padded planes and stride-2 phase planes, pow(x, 2) as x * x)."""

SESSION10_OPS = "Conv,Gemm,MatMul,Where,Softmax,Range"
"""`--ops session10`: the ops session 10's code reads (the residual stored in place, the squeeze-excite fold, dilated and
shared depthwise kernels, FC K blocks, masked and run-time-shaped attention)."""

SESSION11_OPS = "Conv,MatMul,Gemm,Gather,GatherElements,Transpose"
"""`--ops session11`: the ops session 11's code reads (1x1 B packing, Winograd at 14x14, merged heads, FC over its
residual, native Gather / GatherElements, shared packed weights, tiled transposes)."""

SESSION12_OPS = "Conv,ConvTranspose,MatMul,Concat,Gather,GatherElements,Where,Identity"
"""`--ops session12`: the ops session 12's code reads (B packed per block over 4 KiB-aliased rows, depthwise writing
1x1 panels, Concat in place, the check words of Gather / GatherElements, uniform attention rows, the bound call)."""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=400)
    p.add_argument("--seed", type=int, default=6)
    p.add_argument("--ops", default=SESSION6_OPS, help="comma-separated ONNX op types whose node cases seed the run")
    p.add_argument("--keep", type=Path, default=Path("fuzz-findings"), help="folder for the findings' models")
    args = p.parse_args()
    wanted = set({"session7": SESSION7_OPS, "session8": SESSION8_OPS, "session9": SESSION9_OPS, "session10": SESSION10_OPS, "session11": SESSION11_OPS, "session12": SESSION12_OPS}.get(args.ops, args.ops).split(","))
    seeds = {case.name: case.model.SerializeToString() for case in node_cases.collect_testcases(None)
             if "expanded" not in case.name and wanted & {n.op_type for n in case.model.graph.node}}
    print(f"{len(seeds)} seed models", flush=True)
    rng = random.Random(args.seed)
    names = sorted(seeds)
    counts: collections.Counter[str] = collections.Counter()
    with tempfile.TemporaryDirectory(prefix="irforge-fuzz-nodes-") as tmp:
        for i in range(args.cases):
            name = rng.choice(names)
            data = (mutate_onnx_session7 if args.ops in ("session7", "session8", "session9", "session10", "session11", "session12") else mutate_onnx_new_ops)(seeds[name], rng)
            if rng.random() < 0.5:
                case = Case("ir-convert", ["--input_model", "IN/m.onnx", "--output_dir", "OUT"], {"m.onnx": data}, name)
            else:
                case = Case("ir-run", ["IN/m.onnx", "--device", rng.choice(["ref", "cpu"]), "--output", "OUT/o.npz"], {"m.onnx": data}, name)
            outcome = run_case(case, Path(tmp) / str(i), in_process=True, timeout=20)
            counts[outcome.kind] += 1
            if outcome.kind not in ("ok", "clean"):
                args.keep.mkdir(parents=True, exist_ok=True)
                kept = args.keep / f"{i}_{name}.onnx"
                kept.write_bytes(data)
                last = outcome.stderr.strip().splitlines()[-1] if outcome.stderr.strip() else ""
                print(f"{outcome.kind}: {case.tool} {name} -> {kept}: {last[:300]}", flush=True)
    print(dict(counts))


if __name__ == "__main__":
    main()
