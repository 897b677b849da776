"""ir-convert's options after parsing: the spellings of ovc and mo.py brought to one form.

    --compress_to_fp16[=True|False]   (ovc)  -> data_type FP16 / FP32
    --scale 255                       (mo.py) -> scale_values [255] for every input
    --output_model D/N.xml            (ovc)  -> output_dir D, model_name N
    --input a[1,3,224,224]{f32},b[1,10]  (ovc) -> input names + input_shape (+ element types)

Shared by ir-convert and `irforge.convert_model`, which both hold an `argparse.Namespace` of
ir-convert's parser.
"""

from __future__ import annotations

import argparse

from irforge.errors import IrforgeError


def normalise_options(args: argparse.Namespace) -> None:
    """Bring ovc's and mo.py's alternative spellings to the fields the pipeline reads."""
    compress = getattr(args, "compress_to_fp16", None)
    if compress is not None:
        if args.data_type not in ("FP32", "FLOAT") and bool(compress) != (args.data_type in ("FP16", "HALF")):
            raise IrforgeError(
                f"--compress_to_fp16={compress} contradicts --data_type {args.data_type}",
                fix="give one of them", code="E054",
            )
        args.data_type = "FP16" if compress else "FP32"
