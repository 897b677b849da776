import os

os.environ.setdefault("PYOPENCL_CTX", "0")
