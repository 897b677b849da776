"""The MXNet importer: `NAME-symbol.json` + `NAME-0000.params`, read without MXNet.

`loader.py` memory-maps NDArray list files (.params, .nd) with the arrays as views,
`symbol.py` reads the symbol JSON, `registry.py` holds the op -> extractor table
(`@mxnet_extractor("Op")`), `extractors/<family>.py` the extractors, `importer.py` the walk,
`frontend.py` the entry in the frontend table.
"""

from irforge.frontends.mxnet.importer import Weights, import_mxnet
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor

__all__ = ["NodeContext", "Weights", "import_mxnet", "mxnet_extractor"]
