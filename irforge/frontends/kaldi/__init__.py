"""The Kaldi importer: nnet1 (`.nnet`), nnet2 (`.mdl`) and nnet3 (`.raw`, `.mdl`) acoustic
models, binary or text, as whole-utterance graphs.

Layers, bottom up: `tokens.py` (both encodings behind one reader), `component.py` (a
component's fields), one reader per format (`nnet1.py`, `nnet2.py`, `nnet3.py` with
`nnet3_config.py`), `loader.py` (which format a file holds), `registry.py` (component type ->
extractor) and `extractors/`, then `importer.py` / `nnet3_graph.py` (the graph) and
`postprocess.py` (--counts, --remove_output_softmax); `frontend.py` is the frontend table's entry.
"""

from irforge.frontends.kaldi import extractors  # noqa: F401  (built-ins first: extensions replace them)
from irforge.frontends.kaldi.importer import import_kaldi
from irforge.frontends.kaldi.registry import kaldi_extractor

__all__ = ["import_kaldi", "kaldi_extractor"]
