"""The small models shipped in onnx/backend/test/data (simple, pytorch-operator,
pytorch-converted) with their own test data sets, through import -> reference interpreter."""

import pytest

from irforge.frontends.onnx.conformance import run_data_model, supported_data_models

MODELS = supported_data_models()


def test_most_shipped_models_are_supported():
    # 123 of the 140 use only supported ops and element types (onnx 1.23); a drop means a regression
    assert len(MODELS) >= 120


@pytest.mark.parametrize("entry", MODELS, ids=lambda m: m.name)
def test_data_model(entry):
    outcome = run_data_model(entry)
    assert outcome.passed, outcome.message
