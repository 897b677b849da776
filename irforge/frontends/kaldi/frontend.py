"""The Kaldi frontend's entry in the frontend table: `.nnet` (nnet1), `.mdl` (nnet2/nnet3),
`.raw` (nnet3), or any file starting `\\0B<Nnet` / `<Nnet`; --input_shape [T,D] gives the
utterance length, --counts and --remove_output_softmax act at the output as in mo.py."""

from __future__ import annotations

import argparse

from irforge.errors import IrforgeError
from irforge.frontends.registry import Frontend, register_frontend
from irforge.model import Model


def import_from_args(args: argparse.Namespace) -> Model:
    from irforge.frontends.kaldi.importer import import_kaldi
    from irforge.frontends.kaldi.postprocess import read_counts

    shapes: dict[str, list[int]] = {}
    if args.input_shape:
        names = args.input or ["input"]
        if len(names) != len(args.input_shape):
            raise IrforgeError(
                f"--input_shape gives {len(args.input_shape)} shapes for {len(names)} inputs ({', '.join(names)})",
                fix="give one [T,D] shape per name in --input (default: the input 'input')", code="E504",
            )
        shapes = dict(zip(names, args.input_shape))
    if getattr(args, "batch", None) is not None:
        raise IrforgeError("--batch does not apply to a Kaldi model", fix="give the utterance's frames with --input_shape [T,D]", code="E504")
    counts_file = getattr(args, "counts", None)
    counts = read_counts(counts_file) if counts_file else None
    return import_kaldi(
        args.input_model, input_shapes=shapes, counts=counts, counts_from_model=counts_file == "",
        remove_output_softmax=bool(getattr(args, "remove_output_softmax", False)),
    )


def _sniff(head: bytes) -> bool:
    from irforge.frontends.kaldi.loader import looks_like_kaldi

    return looks_like_kaldi(head)


def _add_arguments(group: argparse._ArgumentGroup) -> None:
    group.add_argument("--counts", metavar="FILE", help="Kaldi: pdf counts '[ c1 c2 ... ]' whose log priors are subtracted at the output, as mo.py; \"\" takes the priors stored in the .mdl")
    group.add_argument("--remove_output_softmax", action="store_true", help="Kaldi: drop the softmax / log-softmax at the output")


FRONTEND = register_frontend(Frontend("kaldi", (".nnet", ".mdl", ".raw"), import_from_args, sniff=_sniff, add_arguments=_add_arguments))
