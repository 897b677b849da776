import os

os.environ.setdefault("PYOPENCL_CTX", "0")
# One BLAS thread: the reference interpreter is the numerical ground truth, not a speed
# contest, and OpenBLAS's own thread pool was seen to hang (workers asleep, the caller
# spinning in exec_blas) in a test process that also runs the CPU backend's thread teams,
# OpenVINO's and pocl's.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
