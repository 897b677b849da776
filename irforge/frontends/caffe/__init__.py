"""The Caffe importer: deploy `.prototxt` + `.caffemodel` -> `nn` dialect, without Caffe."""

from irforge.frontends.caffe.importer import import_caffe
from irforge.frontends.caffe.registry import EXTRACTORS, LayerContext, caffe_extractor

__all__ = ["EXTRACTORS", "LayerContext", "caffe_extractor", "import_caffe"]
