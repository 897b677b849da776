"""irforge: a neural-network model compiler built on xDSL.

Framework models are imported into the `nn` dialect, optimised by xDSL passes and
emitted as OpenVINO IR or run by one of the backends.
"""

__version__ = "0.1.0"
