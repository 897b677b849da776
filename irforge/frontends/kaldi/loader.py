"""Opening a Kaldi model file: the encoding, the format (nnet1, nnet2, nnet3) and its reader.

The file is memory-mapped; binary weights are read from the mapping. A TransitionModel
(nnet2/nnet3 `.mdl`) is skipped to its `</TransitionModel>`: the acoustic model does not
need the HMM topology or the transition probabilities.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass

import numpy as np

from irforge.errors import IrforgeError
from irforge.frontends.kaldi.component import Component
from irforge.frontends.kaldi.nnet1 import read_nnet1
from irforge.frontends.kaldi.nnet2 import Nnet2, read_nnet2
from irforge.frontends.kaldi.nnet3 import Nnet3, read_nnet3
from irforge.frontends.kaldi.tokens import BINARY_MAGIC, KaldiReader

STARTS = ("<Nnet>", "<Nnet3>", "<TransitionModel>")


@dataclass
class KaldiModel:
    path: str
    format: str
    """"nnet1", "nnet2" or "nnet3"."""
    binary: bool
    nnet1: list[Component] | None = None
    nnet2: Nnet2 | None = None
    nnet3: Nnet3 | None = None


def looks_like_kaldi(head: bytes) -> bool:
    """Whether a file's first bytes are a Kaldi model's (the frontend table's sniff)."""
    text = head[2:] if head.startswith(BINARY_MAGIC) else head.lstrip()
    return any(text.startswith(s.encode()) for s in STARTS)


def load_kaldi(path: str) -> KaldiModel:
    if not os.path.isfile(path):
        raise IrforgeError(
            f"Model Optimizer is not able to read Kaldi model {path}: the file does not exist",
            fix="check the path (Model Optimizer FAQ #90)", code="E503",
        )
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        data: bytes | mmap.mmap = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    return read_model(KaldiReader(data, path))


def read_model(reader: KaldiReader) -> KaldiModel:
    path = reader.path
    head = bytes(reader.data[:64])
    if not reader.binary and not head.lstrip().startswith(b"<"):
        raise IrforgeError(
            f"File {path} does not appear to be a Kaldi file (magic number does not match)",
            fix="a binary Kaldi model starts with \\0B (16896), a text one with a <Token>; "
            "pass a true Kaldi nnet1/nnet2/nnet3 model (Model Optimizer FAQ #88)",
            code="E500",
        )
    first = reader.peek_token()
    if first not in STARTS:
        raise IrforgeError(
            "Kaldi model should start with <Nnet> tag",
            where=f"{path} starts with {(first or repr(head[:12]))[:40]}",
            fix="pass an nnet1 .nnet, an nnet2 .mdl or an nnet3 .raw/.mdl model (Model Optimizer FAQ #88)",
            code="E501",
        )
    if first == "<TransitionModel>":
        _skip_transition_model(reader)
    where = os.path.basename(path)
    token = reader.token()
    model = KaldiModel(path, "", reader.binary)
    if token == "<Nnet3>":
        model.format, model.nnet3 = "nnet3", read_nnet3(reader, where)
    elif token == "<Nnet>" and reader.peek_token() == "<NumComponents>":
        model.format, model.nnet2 = "nnet2", read_nnet2(reader, where)
    elif token == "<Nnet>":
        model.format, model.nnet1 = "nnet1", read_nnet1(reader, where)
    else:
        raise IrforgeError(
            "Kaldi model should start with <Nnet> tag", where=f"{path}: after the TransitionModel comes {token[:40]}",
            fix="pass an nnet2 or nnet3 acoustic model (Model Optimizer FAQ #88)", code="E501",
        )
    return model


def _skip_transition_model(reader: KaldiReader) -> None:
    end = reader.data.find(b"</TransitionModel>", reader.pos)
    if end < 0:
        raise reader.error("the file ends inside the TransitionModel (no </TransitionModel>)")
    reader.pos = end
    reader.token()


def priors_of(model: KaldiModel) -> np.ndarray | None:
    source = model.nnet2 or model.nnet3
    return source.priors if source is not None else None
