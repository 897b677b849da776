"""Layer statistics of OpenVINO IR files, to compare irforge's IR with ovc's."""

from __future__ import annotations

import collections
import re

BOOKKEEPING = ("Parameter", "Result", "Const", "Convert")
"""Layer types every IR has in proportion to its inputs, outputs and weights (Convert: the
FP16 decompression), left out so that the counts compare computation."""


def layer_histogram(xml_text: str) -> collections.Counter[str]:
    """Layer type -> count of an IR's computing layers."""
    types = collections.Counter(re.findall(r'<layer id="\d+" name="[^"]*" type="(\w+)"', xml_text))
    for kind in BOOKKEEPING:
        types.pop(kind, None)
    return types
