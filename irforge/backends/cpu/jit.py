"""llvmlite JIT: LLVM modules optimised at O3 for the host CPU, compiled by MCJIT.

Functions get `"prefer-vector-width"="512"` (without it LLVM's vectoriser keeps to 256-bit
vectors on AVX-512 CPUs) and the host's CPU name and features. Modules found in the object
cache skip optimisation and code generation.
"""

from __future__ import annotations

import re
from pathlib import Path

import llvmlite.binding as llvm
from llvmlite import ir

from irforge.backends.cpu.cache import ObjectCache

_DEFINE = re.compile(r'^(define [^\n]*\))\n\{', re.M)


def _init_llvm() -> None:
    # llvm.initialize() raises in llvmlite >= 0.45: only the native target is set up.
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


class Jit:
    """One execution engine holding all the modules of a compiled model."""

    def __init__(self, cache_dir: Path | None) -> None:
        _init_llvm()
        self.cpu = llvm.get_host_cpu_name()
        self.features = llvm.get_host_cpu_features().flatten()
        self.triple = llvm.get_process_triple()
        target = llvm.Target.from_triple(self.triple)
        self.tm = target.create_target_machine(cpu=self.cpu, features=self.features, opt=3, codemodel="jitdefault")
        self.cache = ObjectCache(cache_dir, f"{self.triple}|{self.cpu}|{self.features}")
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), self.tm)
        self.engine.set_object_cache(self.cache.notify, self.cache.getbuffer)
        self._modules: list[llvm.ModuleRef] = []

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

    def add(self, module: ir.Module) -> None:
        cached = getattr(module, "cached", None)
        if cached is not None:
            self.add_object(module.spec_key, cached)  # type: ignore[attr-defined]
            return
        text = self.text(module)
        key = getattr(module, "spec_key", None) or self.cache.key(text)
        cached = None if hasattr(module, "spec_key") else self.cache.lookup(key)
        mod = llvm.parse_assembly(text)
        mod.name = key
        if cached is None:
            mod.verify()
            self._optimise(mod)
        self.engine.add_module(mod)
        self._modules.append(mod)

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

    def _optimise(self, mod: llvm.ModuleRef) -> None:
        pto = llvm.create_pipeline_tuning_options(speed_level=3)
        pto.loop_vectorization = True
        pto.slp_vectorization = True
        pb = llvm.create_pass_builder(self.tm, pto)
        pb.getModulePassManager().run(mod, pb)

    def finalize(self) -> None:
        self.engine.finalize_object()

    def address(self, name: str) -> int:
        addr = self.engine.get_function_address(name)
        assert addr, f"symbol {name} not found in the JIT"
        return addr
