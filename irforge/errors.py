"""User-facing errors.

Every problem a user can cause (bad input file, bad flag, unsupported op) is raised as
`IrforgeError`; the tools print it as one line, `irforge: error[E0xx]: what (where); fix`, and
exit with code 2. The code is stable and listed in docs/errors.md (the Model Optimizer FAQ's
role); codes are numbered by area:

    E0xx command line, files and paths     E5xx Kaldi importer
    E1xx ONNX importer                     E6xx IR XML / .mlir / weights reading
    E2xx Caffe importer                    E7xx passes, pipelines, extensions
    E3xx TensorFlow importer               E8xx backends (reference, CPU, OpenCL), ir-run
    E4xx MXNet importer                    E9xx custom layers, ir-extgen
"""

from __future__ import annotations


class IrforgeError(Exception):
    """An error caused by the user's input, with a hint on how to fix it."""

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None, code: str | None = None):
        self.what = what
        self.where = where
        self.fix = fix
        self.code = code
        super().__init__(self.render())

    def render(self) -> str:
        text = self.what
        if self.where:
            text += f" ({self.where})"
        if self.fix:
            text += f"; {self.fix}"
        return text


class NotConstantError(IrforgeError):
    """A value that conversion needs as a constant (a Reshape target, Resize scales) is not one.

    `tensor` names the framework tensor, so a caller can freeze that input to a value
    (as mo.py's --freeze_placeholder_with_value does) and convert again.
    """

    def __init__(self, what: str, tensor: str, *, where: str | None = None, fix: str | None = None, code: str | None = None):
        self.tensor = tensor
        super().__init__(what, where=where, fix=fix, code=code)
