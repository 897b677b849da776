"""Weights kept outside the IR: the store, its file format and element types."""

from irforge.weights.store import WeightSpec, WeightStore

__all__ = ["WeightSpec", "WeightStore"]
