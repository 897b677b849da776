"""Backends: the numpy reference interpreter (and later IR XML, CPU and OpenCL)."""
