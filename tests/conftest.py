import os

os.environ.setdefault("PYOPENCL_CTX", "0")
# One BLAS thread: the reference interpreter is the numerical ground truth, not a speed
# contest, and OpenBLAS's own thread pool was seen to hang (workers asleep, the caller
# spinning in exec_blas) in a test process that also runs the CPU backend's thread teams,
# OpenVINO's and pocl's.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

# CI runs every property test on hypothesis's fixed sequence of examples, so a red CI names a
# change, not a lucky draw; runs elsewhere keep drawing new examples (and keep finding bugs).
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("IRFORGE_CI"):
    settings.load_profile("ci")
