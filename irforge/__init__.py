"""irforge: a neural-network model compiler built on xDSL.

Framework models are imported into the `nn` dialect, optimised by xDSL passes and
emitted as OpenVINO IR or run by one of the backends.
"""

__version__ = "0.1.0"


def compile(model, device: str = "cpu", **options):  # type: ignore[no-untyped-def]  # noqa: A001
    """Compile a `Model` for `device` ("cpu", or "gpu": OpenCL with HETERO fallback to the
    CPU); returns a callable from a dict of input arrays (by name) to a dict of output arrays.
    Options: cpu: threads=N, cache_dir=PATH|False; gpu: opencl_device=N|NAME, cpu_ops=[...]."""
    from irforge.errors import IrforgeError

    if device == "gpu":
        from irforge.backends.opencl import compile_model as compile_opencl

        return compile_opencl(model, options.pop("opencl_device", None), **options)
    if device != "cpu":
        raise IrforgeError(f"unknown device '{device}'", fix="use device='cpu' or device='gpu'", code="E040")
    from irforge.backends.cpu import compile_model

    return compile_model(model, **options)
