"""Loading extensions: Python files or packages that add ops, passes and kernels.

An extension is imported once, from `--extensions PATH` (a `.py` file or a package folder)
or from the `irforge.extensions` entry-point group, and registers what it adds by calling
`register_dialect` / `register_pass` here and the backends' kernel decorators
(`irforge.backends.reference.kernel`).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from xdsl.ir import Dialect
from xdsl.passes import ModulePass

from irforge.errors import IrforgeError, quoted

ENTRY_POINT_GROUP = "irforge.extensions"

_dialects: list[Dialect] = []
_passes: dict[str, Callable[[], type[ModulePass]]] = {}
_loaded: dict[str, ModuleType] = {}


def register_dialect(dialect: Dialect, replace: bool = False) -> None:
    """Make `dialect` known to the tools; `replace` swaps in a newer version of one with the
    same name (a custom-layer extension grows its dialect op by op)."""
    existing = [i for i, d in enumerate(_dialects) if d.name == dialect.name]
    if not existing:
        _dialects.append(dialect)
    elif replace:
        _dialects[existing[0]] = dialect


def register_pass(pass_class: type[ModulePass]) -> type[ModulePass]:
    """Register a pass under its `name`; usable as a class decorator."""
    _passes[pass_class.name] = lambda: pass_class
    return pass_class


def loaded_dialects() -> list[Dialect]:
    return list(_dialects)


def extension_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return dict(_passes)


def load_extension(path: str) -> ModuleType:
    """Import the extension at `path` (a .py file or a package folder), once."""
    p = Path(path).resolve()
    key = str(p)
    if key in _loaded:
        return _loaded[key]
    if p.is_dir():
        init = p / "__init__.py"
        if not init.is_file():
            raise IrforgeError(
                f"extension folder '{path}' has no __init__.py",
                fix="point --extensions at a .py file or a Python package",
                code="E740",
            )
        p = init
    elif not p.is_file() or p.suffix != ".py":
        raise IrforgeError(
            f"extension '{path}' not found or not a .py file",
            fix="point --extensions at a .py file or a Python package folder",
            code="E740",
        )
    module_name = f"irforge_ext_{len(_loaded)}_{p.parent.name if p.name == '__init__.py' else p.stem}"
    spec = importlib.util.spec_from_file_location(
        module_name, p, submodule_search_locations=[str(p.parent)] if p.name == "__init__.py" else None
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except IrforgeError:
        raise
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # an extension is user code (even sys.exit): report, do not crash
        del sys.modules[module_name]
        raise IrforgeError(
            f"extension {quoted(path)} failed to load: {type(e).__name__}: {e}",
            fix="fix the extension module (run it with python to see the traceback)",
            code="E710",
        ) from None
    _loaded[key] = module
    return module


def load_entry_point_extensions() -> None:
    """Import every installed extension registered in the `irforge.extensions` group."""
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.value in _loaded:
            continue
        try:
            _loaded[ep.value] = ep.load()
        except KeyboardInterrupt:
            raise
        except BaseException as e:
            raise IrforgeError(
                f"installed extension {quoted(ep.name)} ({ep.value}) failed to load: {type(e).__name__}: {e}",
                code="E710",
                fix="reinstall or uninstall the package that provides it",
            ) from None
