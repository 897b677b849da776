"""Choosing the OpenCL device and describing what the printers tune for.

`--device gpu` means the first GPU device of any platform, else the first OpenCL device at
all (so the pocl CPU driver serves machines without a GPU); `--opencl-device N` picks the
N-th device in platform order and any other text the first device whose name contains it.
"""

from __future__ import annotations

from dataclasses import dataclass

from irforge.errors import IrforgeError


def _all_devices() -> list:  # type: ignore[type-arg]
    try:
        import pyopencl as cl
    except ImportError:
        raise IrforgeError("the OpenCL backend needs pyopencl", fix="pip install pyopencl (and an OpenCL driver)", code="E853") from None
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    devices = []
    for platform in platforms:
        try:
            devices.extend(platform.get_devices())
        except cl.Error:
            continue  # a platform without devices of any type
    return devices


def device_names() -> list[str]:
    return [d.name.strip() for d in _all_devices()]


def select_device(spec: str | int | None = None):  # type: ignore[no-untyped-def]
    """The OpenCL device for `spec`: None (first GPU, else first device), an index, or a
    name substring (case-insensitive)."""
    import pyopencl as cl

    devices = _all_devices()
    if not devices:
        raise IrforgeError("no OpenCL device found", fix="install an OpenCL driver (pocl runs on the CPU), or use --device cpu", code="E853")
    listing = ", ".join(f"{i}: {d.name.strip()}" for i, d in enumerate(devices))
    if spec is None or spec == "":
        gpus = [d for d in devices if d.type & cl.device_type.GPU]
        return (gpus or devices)[0]
    text = str(spec)
    if text.isdigit():
        index = int(text)
        if index >= len(devices):
            raise IrforgeError(f"no OpenCL device {index}", fix=f"the devices are {listing}", code="E853")
        return devices[index]
    matches = [d for d in devices if text.lower() in d.name.lower()]
    if not matches:
        raise IrforgeError(f"no OpenCL device named like '{text}'", fix=f"the devices are {listing}", code="E853")
    return matches[0]


@dataclass(frozen=True)
class DeviceInfo:
    """The limits the printers specialise for (a plain value, so specs stay hashable)."""

    name: str
    is_gpu: bool
    max_work_group_size: int
    local_mem_size: int
    vector_width: int
    """preferred_vector_width_float, clamped to the widths the GEMM printer emits."""

    @staticmethod
    def of(device) -> DeviceInfo:  # type: ignore[no-untyped-def]
        import pyopencl as cl

        preferred = max(1, int(device.preferred_vector_width_float))
        width = 1
        while width * 2 <= min(preferred, 8):  # 16-wide accumulators spill on every device
            width *= 2
        return DeviceInfo(
            name=device.name.strip(),
            is_gpu=bool(device.type & cl.device_type.GPU),
            max_work_group_size=int(device.max_work_group_size),
            local_mem_size=int(device.local_mem_size),
            vector_width=width,
        )
