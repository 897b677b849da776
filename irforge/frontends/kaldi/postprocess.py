"""What the Model Optimizer does at a Kaldi model's output: `--remove_output_softmax` and
`--counts` (subtract the log priors of the pdf counts)."""

from __future__ import annotations

import os

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Eltwise, SoftMax
from irforge.errors import IrforgeError
from irforge.frontends.folding import FoldingBuilder
from irforge.frontends.kaldi.importer import dim_of

COUNT_CUTOFF = 1.00000001e-10


def read_counts(path: str) -> np.ndarray:
    """Log priors from a counts file `[ c1 c2 ... ]`, as mo's read_counts_file: counts below
    the cutoff are raised to it, normalised to sum 1, logged, and those cut off get a huge
    value (their pdfs are never chosen)."""
    if not os.path.isfile(path):
        raise IrforgeError(f"Model Optimizer is not able to read counts file {path}: it does not exist", fix="check the path (Model Optimizer FAQ #91)", code="E505")
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    if len(lines) != 1:
        raise IrforgeError("Expect counts file to be one-line file", where=path, fix="write the counts as one line '[ c1 c2 ... ]' (Model Optimizer FAQ #89)", code="E505")
    words = lines[0].replace("[", " ").replace("]", " ").split()
    try:
        counts = np.array([float(w) for w in words], np.float64)
    except ValueError:
        raise IrforgeError("Expect counts file to contain list of integers", where=path, fix="write the counts as '[ c1 c2 ... ]' (Model Optimizer FAQ #89)", code="E505") from None
    if counts.size == 0:
        raise IrforgeError("the counts file holds no counts", where=path, fix="write the counts as '[ c1 c2 ... ]' (Model Optimizer FAQ #89)", code="E505")
    return counts_to_log_priors(counts)


def counts_to_log_priors(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts, np.float64).copy()
    cut = counts < COUNT_CUTOFF
    counts[cut] = COUNT_CUTOFF
    log_priors = np.log(counts / counts.sum())
    log_priors[cut] += np.finfo(np.float32).max / 2
    return log_priors


def finish_output(builder: FoldingBuilder, output: SSAValue, counts: np.ndarray | None, remove_softmax: bool, path: str) -> SSAValue:
    softmax = output.owner if isinstance(output.owner, SoftMax) else None
    if remove_softmax:
        if softmax is None:
            raise IrforgeError(
                "--remove_output_softmax: the Kaldi model's output is not a softmax or log-softmax", where=path,
                fix="drop the flag", code="E512",
            )
        output = softmax.operands[0]
        softmax.detach()
        softmax.erase()
        softmax = None
    if counts is None:
        return output
    if counts.shape[0] != dim_of(output):
        raise IrforgeError(f"the counts file has {counts.shape[0]} counts for {dim_of(output)} outputs", where=path, fix="pass the counts of this model's pdfs", code="E505")
    # mo's apply_biases_to_last_layer: the priors go before a final softmax (after a log-softmax)
    if softmax is not None and softmax.log is not None and softmax.log.value.data:
        softmax = None
    target = softmax.operands[0] if softmax is not None else output
    shifted = builder.add(Eltwise, [target, builder.constant((-counts).astype(np.float32), "sub_counts/priors")], name="sub_counts", operation="sum")[0]
    if softmax is None:
        return shifted
    props = {"axis": softmax.int_prop("axis"), "log": bool(softmax.log.value.data) if softmax.log is not None else False}
    name = softmax.layer_name.data if softmax.layer_name is not None else "softmax"
    softmax.detach()
    softmax.erase()
    return builder.add(SoftMax, [shifted], name=name, **props)[0]
