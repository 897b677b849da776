"""Fuzz the CPU program cache's write (`program_cache.save`) and load across processes.

Each case runs in fresh processes (`python bench/fuzz_program_cache.py --case NAME` is one
worker) on a model with 17 MiB of constants (its entry is written in a thread while the
model runs) or a small one (written before compile returns), and checks that every run gives
the reference's numbers or a one-line coded error, never a traceback, a signal or an entry a
later load accepts with other numbers:

    removed     the cache directory removed between compile and close
    readonly    the directory made read-only between compile and close
    full        file writes fail (RLIMIT_FSIZE: EFBIG, as a full disk's ENOSPC) from compile on
    full_late   the same, set right after compile returns (the threaded write fails)
    two         two processes compile the same model into one directory at once, then a third loads
    tiny_cap    IRFORGE_CACHE_MAX_MB=1: the trim removes the new entry's files
    truncated   the entry's .bin cut in place (and .json cut) while other processes load it
    cut_mapped  a hit's .bin cut to 0 bytes in place before it runs (outside irforge: irforge
                only renames and unlinks cache files; a hit mapped the region and died of
                SIGBUS until session 13, it now reads it into its own memory)
    changed     64 bytes of the .bin overwritten (same size): a later load must not accept it

    python bench/fuzz_program_cache.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent


def model(big: bool):  # type: ignore[no-untyped-def]
    import onnx
    from onnx import TensorProto as T
    from onnx import helper

    n = 2112 if big else 64  # 2112 x 2112 f32: 17 MiB, over BACKGROUND_BYTES
    w = np.random.default_rng(3).standard_normal((n, n)).astype(np.float32) / n
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", T.FLOAT, [4, n])], [helper.make_tensor_value_info("y", T.FLOAT, None)],
                              [onnx.numpy_helper.from_array(w, "w")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    return proto


def worker(args: argparse.Namespace) -> int:
    """One process: compile, (the case's action), run, close; print 'ok' or the error."""
    from irforge.backends.cpu import compile_model
    from irforge.backends.reference import run
    from irforge.errors import IrforgeError
    from irforge.frontends.onnx import import_onnx

    proto = model(args.big)
    n = proto.graph.input[0].type.tensor_type.shape.dim[1].dim_value
    feeds = {"x": np.random.default_rng(4).standard_normal((4, n)).astype(np.float32)}
    want = run(import_onnx(proto), feeds)["y"]
    if args.case == "full":
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))
    try:
        compiled = compile_model(import_onnx(proto), threads=1, cache_dir=args.dir)
        if args.case == "removed":
            shutil.rmtree(args.dir, ignore_errors=True)
        elif args.case == "readonly":
            os.chmod(args.dir, stat.S_IRUSR | stat.S_IXUSR)
        elif args.case == "cut_mapped":  # (a hit's region is a mapping of the .bin)
            for path in Path(args.dir).glob("p*.bin"):
                os.truncate(path, 0)
        elif args.case == "full_late":
            import resource
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.RLIM_INFINITY))
        got = compiled(feeds)["y"]
        hit = getattr(compiled.stats, "program_cached", False)
        compiled.close()
    except IrforgeError as error:
        print(f"error {str(error).splitlines()[0]}")
        return 2
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        print(f"WRONG max abs diff {np.max(np.abs(got - want))}")
        return 3
    print("ok hit" if hit else "ok")
    return 0


def spawn(case: str, directory: Path, big: bool, env: dict | None = None) -> subprocess.Popen:
    command = [sys.executable, __file__, "--case", case, "--dir", str(directory)] + (["--big"] if big else [])
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(HERE), **(env or {})})


def verdict(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=600)
    text = (out + err).strip()
    if process.returncode < 0:
        return f"FINDING signal {-process.returncode}: {text[-300:]}"
    if "Traceback" in text or process.returncode not in (0, 2):
        return f"FINDING rc {process.returncode}: {text[-600:]}"
    if process.returncode == 2 and len([line for line in text.splitlines() if line.strip()]) != 1:
        return f"FINDING multi-line error: {text[-600:]}"
    return text.splitlines()[-1] if text else "?"


def stray(directory: Path) -> list[str]:
    """Temporary files left behind (a writer that died mid-write is the only excuse)."""
    return [p.name for p in directory.glob(".*")] if directory.is_dir() else []


def run_case(case: str, big: bool, root: Path) -> list[str]:
    directory = root / f"{case}-{'big' if big else 'small'}"
    directory.mkdir()
    results = []
    if case in ("removed", "readonly", "full", "full_late"):
        results.append(verdict(spawn(case, directory, big)))
        if directory.exists():
            os.chmod(directory, stat.S_IRWXU)
            results += [f"stray {stray(directory)}"] if stray(directory) else []
        results.append(verdict(spawn("plain", directory, big)))  # compiles afresh or loads a whole entry
        results.append(verdict(spawn("plain", directory, big)))
    elif case == "two":
        both = [spawn("plain", directory, big), spawn("plain", directory, big)]
        results += [verdict(p) for p in both]
        results += [f"stray {stray(directory)}"] if stray(directory) else []
        results.append(verdict(spawn("plain", directory, big)))
    elif case == "tiny_cap":
        for _ in range(3):
            results.append(verdict(spawn("plain", directory, big, {"IRFORGE_CACHE_MAX_MB": "1"})))
    elif case == "cut_mapped":
        results.append(verdict(spawn("plain", directory, big)))
        results.append(verdict(spawn("cut_mapped", directory, big)))
        results.append(verdict(spawn("plain", directory, big)))
    elif case in ("truncated", "changed"):
        results.append(verdict(spawn("plain", directory, big)))
        bins = sorted(directory.glob("p*.bin"))
        jsons = sorted(directory.glob("p*.json"))
        if case == "changed":
            for path in bins:
                data = bytearray(path.read_bytes())
                middle = len(data) // 2
                data[middle:middle + 64] = b"\x42" * 64  # 16 weights of 48.6
                path.write_bytes(bytes(data))
            results.append(verdict(spawn("plain", directory, big)))
        else:
            loaders = [spawn("plain", directory, big) for _ in range(2)]
            time.sleep(2.5)  # (while they import, hash and load)
            for path in bins:
                os.truncate(path, path.stat().st_size // 2)
            for path in jsons:
                os.truncate(path, path.stat().st_size - 10)
            results += [verdict(p) for p in loaders]
            results.append(verdict(spawn("plain", directory, big)))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", default="")
    parser.add_argument("--dir", default="")
    parser.add_argument("--big", action="store_true")
    parser.add_argument("--cases", default="removed,readonly,full,full_late,two,tiny_cap,truncated,changed,cut_mapped")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    if args.case:
        return worker(args)
    findings = 0
    total = 0
    for _ in range(args.rounds):
        for case in args.cases.split(","):
            for big in (False, True):
                root = Path(tempfile.mkdtemp(prefix="irforge-cache-fuzz-"))
                try:
                    results = run_case(case, big, root)
                finally:
                    for path in root.rglob("*"):
                        if path.is_dir():
                            os.chmod(path, stat.S_IRWXU)
                    shutil.rmtree(root, ignore_errors=True)
                total += len(results)
                bad = [r for r in results if r.startswith(("FINDING", "WRONG", "stray"))]
                findings += len(bad)
                print(f"{case:10} {'big' if big else 'small':5} {' | '.join(r[:200] for r in results)}", flush=True)
    print(f"{total} runs, {findings} findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
