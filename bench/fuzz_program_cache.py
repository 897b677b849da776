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
    record      the entry's record (.json) edited: each number in it changed, one at a time
    swapped     two models' entries of one size: their .bin files swapped by rename (the
                mtimes go with them) and by copy
    symlink     the .bin (then the .json) replaced by a symlink to a copy outside the cache
                directory, and to a file that is no entry at all
    unreadable  the .bin (then the .json) made unreadable (chmod 000)

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


def model(big: bool, seed: int = 3):  # type: ignore[no-untyped-def]
    import onnx
    from onnx import TensorProto as T
    from onnx import helper

    n = 2112 if big else 64  # 2112 x 2112 f32: 17 MiB, over BACKGROUND_BYTES
    w = np.random.default_rng(seed).standard_normal((n, n)).astype(np.float32) / n
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

    proto = model(args.big, args.weights)
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


def spawn(case: str, directory: Path, big: bool, env: dict | None = None, weights: int = 3) -> subprocess.Popen:
    command = [sys.executable, __file__, "--case", case, "--dir", str(directory), "--weights", str(weights)] + (["--big"] if big else [])
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
    elif case in ("record", "swapped", "symlink", "unreadable"):
        results += READ_PATH[case](directory, big, root)
    return results


def _entries(directory: Path) -> list[tuple[Path, Path]]:
    return [(b, b.with_suffix(".json")) for b in sorted(directory.glob("p*.bin"))]


def _record_edits(directory: Path, big: bool, root: Path) -> list[str]:
    """Each number of the record changed in turn (+1, then 0): a miss or the same numbers."""
    import json
    import re

    results = [verdict(spawn("plain", directory, big))]
    (bin_path, json_path), = _entries(directory)
    original = json_path.read_text()
    spans = [m.span() for m in re.finditer(r"-?\d+", original)]
    for start, end in spans[:: max(1, len(spans) // 12)]:  # (a dozen of them)
        for value in (int(original[start:end]) + 1, 0):
            json_path.write_text(original[:start] + str(value) + original[end:])
            try:
                json.loads(json_path.read_text())
            except ValueError:
                continue
            results.append(verdict(spawn("plain", directory, big)))
            for path in directory.glob("p*"):  # (a miss wrote the entry anew: back to the edited one's pair)
                if path not in (bin_path, json_path):
                    path.unlink()
    json_path.write_text(original)
    return results


def _swapped(directory: Path, big: bool, root: Path) -> list[str]:
    results = [verdict(spawn("plain", directory, big, weights=3)), verdict(spawn("plain", directory, big, weights=5))]
    entries = _entries(directory)
    if len(entries) != 2:
        return results + [f"FINDING expected 2 entries, found {len(entries)}"]
    (a, _), (b, _) = entries
    spare = directory / "swap.tmp"
    os.rename(a, spare)
    os.rename(b, a)
    os.rename(spare, b)
    results += [verdict(spawn("plain", directory, big, weights=3)), verdict(spawn("plain", directory, big, weights=5))]
    for path in directory.glob("p*"):
        path.unlink()
    results += [verdict(spawn("plain", directory, big, weights=3)), verdict(spawn("plain", directory, big, weights=5))]
    (a, _), (b, _) = _entries(directory)
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    results += [verdict(spawn("plain", directory, big, weights=3)), verdict(spawn("plain", directory, big, weights=5))]
    return results


def _symlink(directory: Path, big: bool, root: Path) -> list[str]:
    results = [verdict(spawn("plain", directory, big))]
    (bin_path, json_path), = _entries(directory)
    outside = root / "outside"
    outside.mkdir()
    for target in (bin_path, json_path):
        for kind in ("copy", "other"):
            keep = target.read_bytes()
            away = outside / f"{kind}{target.suffix}"
            away.write_bytes(keep if kind == "copy" else b"\0" * len(keep))
            target.unlink()
            target.symlink_to(away)
            results.append(verdict(spawn("plain", directory, big)))
            if away.read_bytes() != (keep if kind == "copy" else b"\0" * len(keep)):
                results.append(f"FINDING {away.name} outside the cache written through the link")
            if target.is_symlink():
                target.unlink()
                target.write_bytes(keep)
    return results


def _unreadable(directory: Path, big: bool, root: Path) -> list[str]:
    results = [verdict(spawn("plain", directory, big))]
    (bin_path, json_path), = _entries(directory)
    for target in (bin_path, json_path):
        os.chmod(target, 0)
        results.append(verdict(spawn("plain", directory, big)))
        if target.exists():
            os.chmod(target, stat.S_IRUSR | stat.S_IWUSR)
        results.append(verdict(spawn("plain", directory, big)))
    return results


READ_PATH = {"record": _record_edits, "swapped": _swapped, "symlink": _symlink, "unreadable": _unreadable}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", default="")
    parser.add_argument("--dir", default="")
    parser.add_argument("--big", action="store_true")
    parser.add_argument("--weights", type=int, default=3, help="(worker) the seed of the model's weights")
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
