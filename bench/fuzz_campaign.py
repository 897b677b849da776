"""A longer fuzz campaign than `make test` runs, each case in its own process (10 s limit).

    python bench/fuzz_campaign.py --cases 50 --seed 1 [--formats onnx,caffe,tf,pbtxt,mxnet,kaldi,xml,mlir,flags,run,tools] [--focus new-ops|session5|session6|session7|session8|session9|session10|session11|session12|session13]

Prints, per input format and in total, the issue-19 table: cases, clean errors, internal
errors, tracebacks, hangs over the limit, partial files, outside access, multi-line or uncoded
errors, and exit-0 IRs OpenVINO cannot read; then the first findings of each kind.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from irforge.testing.fuzz import FORMATS, Outcome, make_cases, openvino_reads, run_case, seed_files

COLUMNS = ("cases", "ok", "clean", "internal", "traceback", "hang", "partial", "outside", "multiline", "unreadable")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=50, help="cases per format")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--formats", default=",".join(FORMATS))
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per case (a longer run is a hang)")
    p.add_argument("--in-process", action="store_true", help="faster, but a crash would end the campaign")
    p.add_argument("--focus", default="", choices=["", "new-ops", "session5", "session6", "session7", "session8", "session9", "session10", "session11", "session12", "session13"],
                   help="new-ops: only the seeds of irforge.testing.fuzz_new_ops (onnx, xml, mlir, run); "
                        "session5: only its ONNX Attention / com.microsoft / Asin..Atanh seeds (onnx); "
                        "session6: only irforge.testing.fuzz_session6_ops's seeds (GQA, MHA, rotary, DeformConv, STFT, sequences, ...); "
                        "session7: only irforge.testing.fuzz_session7_ops's seeds (TensorScatter, losses, BitCast, CausalConvWithState, "
                        "LinearAttention, 4-bit weights and their i4 / u4 IR XML, float16 mixes, FusedMatMul transBatch); "
                        "session8: only irforge.testing.fuzz_session8_ops's seeds (run-time / negative Pad, Resize antialias, integer "
                        "ArgMax, run-time Expand, shared attention probabilities, the IR writer's OpenVINO workarounds, exact QDQ); "
                        "session9: only irforge.testing.fuzz_session9_ops's seeds (the CPU blocked attention kernel's masks / "
                        "blocks, causal products, HF's padding mask, pow(x, 2), depthwise padded planes, average pools, stride-2 convolutions); "
                        "session10: only irforge.testing.fuzz_session10_ops's seeds (residual in place, the squeeze-excite fold, "
                        "dilated / shared depthwise kernels, FC K blocks, run-time-shaped / split-key / masked-row attention, run-time k^T); "
                        "session11: only irforge.testing.fuzz_session11_ops's seeds (1x1 B packing, Winograd at 14x14, merged heads, "
                        "FC over its residual, native Gather / GatherElements, shared weights, tiled transposes); "
                        "session12: only irforge.testing.fuzz_session12_ops's seeds (B packed per block over 4 KiB-aliased rows, "
                        "depthwise writing 1x1 panels, Concat in place, negative Gather indices, uniform attention rows, bound-call outputs); "
                        "session13: only irforge.testing.fuzz_session13_ops's seeds (3x3 stride-2 Winograd, squeeze-excite in the B pack, "
                        "balanced grouped rows, column tails, packed-key attention)")
    p.add_argument("--show", type=int, default=5, help="findings shown per kind (distinct messages)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="irforge-fuzz-") as tmp:
        root = Path(tmp)
        seeds = seed_files(root / "seeds")
        rows: dict[str, dict[str, int]] = {}
        findings: list[Outcome] = []
        for fmt in args.formats.split(","):
            started = time.perf_counter()
            counts = dict.fromkeys(COLUMNS, 0)
            for i, case in enumerate(make_cases(fmt, args.cases, args.seed, seeds, args.focus)):
                case_root = root / fmt / str(i)
                outcome = run_case(case, case_root, in_process=args.in_process, timeout=args.timeout)
                counts["cases"] += 1
                counts[outcome.kind] += 1
                if outcome.kind == "ok":
                    for xml in (case_root / "out").glob("*.xml"):
                        if not openvino_reads(xml):
                            counts["unreadable"] += 1
                            outcome.kind = "unreadable"
                if outcome.kind not in ("ok", "clean"):
                    findings.append(outcome)
            rows[fmt] = counts
            print(f"[{fmt}] {counts['cases']} cases in {time.perf_counter() - started:.0f} s", flush=True)
        rows["total"] = {c: sum(r[c] for r in rows.values()) for c in COLUMNS}
        print("\n| format | " + " | ".join(COLUMNS) + " |")
        print("|---" * (len(COLUMNS) + 1) + "|")
        for fmt, counts in rows.items():
            print(f"| {fmt} | " + " | ".join(str(counts[c]) for c in COLUMNS) + " |")
        shown: dict[str, int] = {}
        seen: set[tuple[str, str]] = set()
        for outcome in findings:
            key = (outcome.kind, outcome.stderr[:160])
            if key in seen:
                continue
            seen.add(key)
            shown[outcome.kind] = shown.get(outcome.kind, 0) + 1
            if shown[outcome.kind] <= args.show:
                print(f"\n{outcome.kind}: {outcome.case.tool} {outcome.case.label} {outcome.case.argv}\n  {outcome.stderr[:400]}")


if __name__ == "__main__":
    main()
