"""Imports every built-in frontend's registration (`<framework>/frontend.py`), so that
`irforge.frontends.registry.FRONTENDS` lists them all; extensions register more."""

from irforge.frontends.caffe import frontend as _caffe  # noqa: F401
from irforge.frontends.ir_xml import frontend as _ir_xml  # noqa: F401
from irforge.frontends.mxnet import frontend as _mxnet  # noqa: F401
from irforge.frontends.onnx import frontend as _onnx  # noqa: F401
from irforge.frontends.tf import frontend as _tf  # noqa: F401
from irforge.frontends import mlir_frontend as _mlir  # noqa: F401
from irforge.frontends.kaldi import frontend as _kaldi  # noqa: F401
