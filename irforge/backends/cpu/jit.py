"""llvmlite JIT: LLVM modules optimised at O3 for the host CPU, loaded by MCJIT.

Functions get `"prefer-vector-width"="512"` (without it LLVM's vectoriser keeps to 256-bit
vectors on AVX-512 CPUs) and the host's CPU name and features. Modules found in the object
cache skip optimisation and code generation; the others are compiled to object files by an
`llvm_worker.Pool` (in parallel processes when there are several, from the moment the
lowering submits each kernel's module), written to the cache, and loaded like hits.
"""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
from llvmlite import ir

from irforge.backends.cpu.cache import ObjectCache
from irforge.backends.cpu.llvm_worker import Pool, emit_level, init_llvm, opt_level, target_machine

_DEFINE = re.compile(r"^(define [^\n]*)\n\{", re.M)
"""A function definition's header (its attributes, such as noinline, included)."""


def unrolls(module: ir.Module) -> bool:
    """Whether LLVM may unroll the loops of `module`: not where its generator set
    `module.unroll = False` (loops already register-blocked by hand, such as the GEMM
    micro-kernel's k loop, whose unrolling only grows the code)."""
    return getattr(module, "unroll", True)


class Jit:
    """One execution engine holding all the modules of a compiled model."""

    def __init__(self, cache_dir: Path | None) -> None:
        init_llvm()
        self.cpu = llvm.get_host_cpu_name()
        self.features = llvm.get_host_cpu_features().flatten()
        self.triple = llvm.get_process_triple()
        self.tm = target_machine(self.triple, self.cpu, self.features)
        self.cache = ObjectCache(cache_dir, f"{self.triple}|{self.cpu}|{self.features}")
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.tm)
        self.engine.set_object_cache(self.cache.notify, self.cache.getbuffer)
        self._modules: list[llvm.ModuleRef] = []
        self._pool: Pool | None = None
        self._keys: dict[int, str] = {}
        """id(module) -> its object's name, for the modules submitted"""
        self._queued: dict[str, str] = {}
        """name -> IR text of the modules the pool compiles"""

    def module(self, name: str, spec: str | None = None) -> ir.Module:
        """A new module; given the kernel's specification, one whose object may be cached
        already: then `module.cached` holds it, and the caller builds no IR into it."""
        m = ir.Module(name)
        m.triple = self.triple
        m.data_layout = str(self.tm.target_data)
        if spec is not None:
            m.spec_key = self.cache.spec_key(spec)  # type: ignore[attr-defined]
            m.cached = self.cache.lookup(m.spec_key)  # type: ignore[attr-defined]
        return m

    def text(self, module: ir.Module) -> str:
        """The module's IR with every defined function carrying the target attributes."""
        text = _DEFINE.sub(r"\1 #0\n{", str(module))
        attrs = (
            f'"prefer-vector-width"="512" "min-legal-vector-width"="512" '
            f'"target-cpu"="{self.cpu}" "target-features"="{self.features}" nounwind'
        )
        return f"{text}\nattributes #0 = {{ {attrs} }}\n"

    def start(self, workers: int, eager: bool = False) -> None:
        """Compile modules with up to `workers` processes from now on: `submit` hands each
        one to them as soon as its IR is built (see `llvm_worker.Pool`); `eager`: start the
        first worker process now (`Pool.prestart`)."""
        self._pool = Pool((self.triple, self.cpu, self.features), workers)
        if eager:
            self._pool.prestart()

    def submit(self, module: ir.Module) -> None:
        """Queue `module` for compiling unless its object is cached (or it is queued)."""
        if getattr(module, "cached", None) is not None or id(module) in self._keys:
            return
        if self._pool is None:
            self.start(1)
        text = self.text(module)
        key = getattr(module, "spec_key", None) or self.cache.key(text)
        self._keys[id(module)] = key
        data = None if hasattr(module, "spec_key") else self.cache.lookup(key)
        if data is not None:
            self.cache.loaded[key] = data
        elif key not in self.cache.loaded and key not in self._queued:
            self._queued[key] = text
            self._pool.submit((key, text, opt_level(module.name, unrolls(module)), unrolls(module), emit_level(module.name)))  # type: ignore[union-attr]

    def abandon(self) -> None:
        """Stop compiling what was submitted (the lowering failed)."""
        if self._pool is not None:
            self._pool.abandon()
            self._pool = None

    def add_all(self, modules: list[ir.Module], workers: int = 1, track=None) -> None:  # type: ignore[no-untyped-def]
        """Add `modules`: cached objects as they are, the others compiled by up to `workers`
        processes (`llvm_worker`; those given to `submit` are on their way already);
        `track(items, what)` yields the modules to compile."""
        if self._pool is None:
            self.start(workers)
        names = []
        for module in modules:
            cached = getattr(module, "cached", None)
            if cached is not None:
                names.append(module.spec_key)  # type: ignore[attr-defined]
                self.cache.loaded[module.spec_key] = cached  # type: ignore[attr-defined]
                continue
            self.submit(module)
            names.append(self._keys[id(module)])
        items = list(self._queued.items())
        ticks = iter(track(items, "compile cpu")) if track is not None else iter(items)

        def compiled(name: str, data: bytes) -> None:
            self.cache.store(name, data)
            self.cache.loaded[name] = data
            next(ticks, None)  # a progress bar advances as each module compiles

        pool, self._pool = self._pool, None
        pool.finish(compiled)  # type: ignore[union-attr]
        self._queued.clear()
        next(ticks, None)  # lets the bar finish
        for name in names:
            self.add_object(name, self.cache.loaded[name])

    def add_object(self, name: str, data: bytes) -> None:
        """The cached object `name`: the engine takes it from the cache, there is no IR to parse."""
        mod = llvm.parse_assembly(f'target triple = "{self.triple}"\n')
        mod.name = name
        self.cache.loaded[name] = data
        self.engine.add_module(mod)
        self._modules.append(mod)

    @property
    def object_names(self) -> list[str]:
        """The object-cache names of the modules added, in order."""
        return [mod.name for mod in self._modules]

    def finalize(self) -> None:
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        assert addr, f"symbol {name} not found in the JIT"
        return addr
