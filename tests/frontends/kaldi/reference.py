"""Kaldi's components in numpy, frame by frame: the reference the importer is checked against.

Models are evaluated per output frame the way Kaldi defines them: a node at frames `times`
reads its inputs at `times + offset`, the utterance's frames clamped to [0, T-1] (nnet2,
nnet3: the input padded by edge frames; nnet1: each Splice clamps its own input)."""

from __future__ import annotations

import re

import numpy as np

from irforge.testing.kaldi_models import Layer, Nnet3Spec


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def apply(layer: Layer, x: np.ndarray) -> np.ndarray:
    """One frame-local component on rows of frames (float64)."""
    kind, get = layer.kind, layer.get
    if kind == "<AffineTransform>":
        return x @ np.asarray(get("<Linearity>"), np.float64).T + get("<Bias>")
    if kind in ("<FixedAffineComponent>", "<AffineComponent>", "<AffineComponentPreconditionedOnline>", "<NaturalGradientAffineComponent>"):
        return x @ np.asarray(get("<LinearParams>"), np.float64).T + get("<BiasParams>")
    if kind == "<AddShift>":
        return x + get("<Shift>")
    if kind == "<Rescale>":
        return x * get("<Scale>")
    if kind in ("<Sigmoid>", "<SigmoidComponent>"):
        return 1 / (1 + np.exp(-x))
    if kind in ("<Tanh>", "<TanhComponent>"):
        return np.tanh(x)
    if kind == "<RectifiedLinearComponent>":
        return np.maximum(x, 0)
    if kind in ("<Softmax>", "<SoftmaxComponent>"):
        return softmax(x)
    if kind == "<LogSoftmaxComponent>":
        return np.log(softmax(x))
    if kind == "<PnormComponent>":
        p, groups = float(get("<P>")), int(get("<OutputDim>"))
        g = np.abs(x.reshape(len(x), groups, -1))
        return (g**p).sum(axis=2) ** (1 / p)
    if kind == "<NormalizeComponent>":
        return x / np.sqrt(np.maximum((x * x).mean(axis=1, keepdims=True), 2.0**-66))
    if kind == "<MaxpoolingComponent>":
        dims = [int(get(f"<Input{a}Dim>")) for a in "XYZ"]  # type: ignore[call-overload]
        size = [int(get(f"<Pool{a}Size>")) for a in "XYZ"]  # type: ignore[call-overload]
        step = [int(get(f"<Pool{a}Step>")) for a in "XYZ"]  # type: ignore[call-overload]
        pools = [1 + (d - s) // st for d, s, st in zip(dims, size, step)]
        grid = x.reshape(len(x), *dims)
        out = np.full((len(x), *pools), -np.inf)
        for px, py, pz in np.ndindex(*pools):
            window = grid[:, px * step[0] : px * step[0] + size[0], py * step[1] : py * step[1] + size[1], pz * step[2] : pz * step[2] + size[2]]
            out[:, px, py, pz] = window.reshape(len(x), -1).max(axis=1)
        return out.reshape(len(x), -1)
    if kind == "<LengthNormComponent>":
        return x / np.sqrt((x * x).sum(axis=1, keepdims=True))
    if kind in ("<NoOpComponent>", "<GeneralDropoutComponent>"):
        return x
    if kind == "<BatchNormComponent>":
        dim, block = int(get("<Dim>")), int(get("<BlockDim>"))
        mean, var = get("<StatsMean>"), get("<StatsVar>")
        blocks = x.reshape(len(x), dim // block, block)
        return ((blocks - mean) * float(get("<TargetRms>")) / np.sqrt(var + float(get("<Epsilon>")))).reshape(len(x), dim)
    raise NotImplementedError(kind)


def lstm_projected(layer: Layer, x: np.ndarray) -> np.ndarray:
    """nnet1 LstmProjected frame by frame from a zero state (nnet-forward's per-utterance reset)."""
    get = layer.get
    options = dict(layer.options or [])
    cell, clip = int(options["<CellDim>"]), float(options["<CellClip>"])  # type: ignore[arg-type]
    w_x, w_r, bias, w_rm = (np.asarray(get(k), np.float64) for k in ("<GifoX>", "<GifoR>", "<Bias>", "<RM>"))
    p_i, p_f, p_o = (np.asarray(get(k), np.float64) for k in ("<PeepholeI>", "<PeepholeF>", "<PeepholeO>"))
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    r, c, out = np.zeros(w_rm.shape[0]), np.zeros(cell), []
    for frame in x:
        gifo = w_x @ frame + bias + w_r @ r
        g, i, f, o = np.split(gifo, 4)
        i, f = sigmoid(i + c * p_i), sigmoid(f + c * p_f)
        c = np.clip(np.tanh(g) * i + c * f, -clip, clip)
        r = w_rm @ (np.tanh(c) * sigmoid(o + c * p_o))
        out.append(r)
    return np.array(out)


def splice(x: np.ndarray, offsets: tuple[int, ...]) -> np.ndarray:
    """nnet1's Splice: each frame with its neighbours, indices clamped to the utterance."""
    t = np.arange(len(x))
    return np.concatenate([x[np.clip(t + o, 0, len(x) - 1)] for o in offsets], axis=1)


def run_nnet1(layers: list[Layer], x: np.ndarray) -> np.ndarray:
    y = x.astype(np.float64)
    for layer in layers:
        if layer.kind == "<Splice>":
            y = splice(y, layer.get("<Offsets>").values)  # type: ignore[attr-defined]
        elif layer.kind == "<ParallelComponent>":
            parts, start = [], 0
            for nested in layer.nested:
                width = nested[0].dims[1]
                parts.append(run_nnet1(nested, y[:, start : start + width]))
                start += width
            y = np.concatenate(parts, axis=1)
        elif layer.kind == "<LstmProjected>":
            y = lstm_projected(layer, y)
        elif layer.kind == "<Copy>":
            y = y[:, np.asarray(layer.get("<Indices>").values) - 1]  # type: ignore[attr-defined]
        else:
            y = apply(layer, y)
    return y


def run_nnet2(layers: list[Layer], x: np.ndarray) -> np.ndarray:
    """Per output frame: layer k at frames `times` reads layer k-1 at times + context."""

    def at(k: int, times: np.ndarray) -> np.ndarray:
        if k < 0:
            return x[np.clip(times, 0, len(x) - 1)].astype(np.float64)
        layer = layers[k]
        if layer.kind == "<SpliceComponent>":
            return np.concatenate([at(k - 1, times + c) for c in layer.get("<Context>").values], axis=1)  # type: ignore[attr-defined]
        return apply(layer, at(k - 1, times))

    return at(len(layers) - 1, np.arange(len(x)))


def run_nnet3(spec: Nnet3Spec, x: np.ndarray) -> np.ndarray:
    """Per output frame, following the config lines' descriptors (Append and Offset)."""
    nodes = {}
    for line in spec.config:
        kind, rest = line.split(None, 1)
        options = {k: v for k, v in re.findall(r"([\w-]+)=((?:(?:Append|Sum)\(.*\))|\S+)", rest)}
        nodes[options["name"]] = (kind, options)
    components = {c.name: c for c in spec.components}

    def desc(text: str, times: np.ndarray) -> np.ndarray:
        text = text.strip()
        if text.startswith("Append("):
            return np.concatenate([desc(part, times) for part in split_args(text[7:-1])], axis=1)
        if text.startswith("Sum("):
            return sum(desc(part, times) for part in split_args(text[4:-1]))  # type: ignore[return-value]
        if text.startswith("Scale("):
            scale, inner = split_args(text[6:-1])
            return float(scale) * desc(inner, times)
        if text.startswith("Offset("):
            inner, offset = split_args(text[7:-1])
            return desc(inner, times + int(offset))
        return node(text, times)

    def node(name: str, times: np.ndarray) -> np.ndarray:
        kind, options = nodes[name]
        if kind == "input-node":
            return x[np.clip(times, 0, len(x) - 1)].astype(np.float64)
        component = components[options["component"]]
        if component.kind == "<TimeHeightConvolutionComponent>":
            return time_height_convolution(component, lambda dt: desc(options["input"], times + dt))
        if component.kind == "<TdnnComponent>":  # reads its input at its own time offsets
            offsets = component.get("<TimeOffsets>").values  # type: ignore[attr-defined]
            spliced = np.concatenate([desc(options["input"], times + o) for o in offsets], axis=1)
            bias = np.asarray(component.get("<BiasParams>"))
            return spliced @ np.asarray(component.get("<LinearParams>"), np.float64).T + (bias if bias.size else 0)
        return apply(component, desc(options["input"], times))

    return desc(nodes["output"][1]["input"], np.arange(len(x)))


def split_args(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def run_lstm_nnet3(spec: Nnet3Spec, x: np.ndarray) -> np.ndarray:
    """km.lstm_nnet3_model frame by frame from a zero state (IfDefined at frame -1)."""
    comps = {c.name: c for c in spec.components}
    w_all, b_all = (np.asarray(comps["lstm1.W_all"].get(k), np.float64) for k in ("<LinearParams>", "<BiasParams>"))
    w_ic, w_fc, w_oc = np.asarray(comps["lstm1.lstm_nonlin"].get("<Params>"), np.float64)
    w_rp, b_rp = (np.asarray(comps["lstm1.W_rp"].get(k), np.float64) for k in ("<LinearParams>", "<BiasParams>"))
    cell, proj = w_ic.shape[0], w_rp.shape[0] // 2
    sigmoid = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    r, c, rows = np.zeros(proj), np.zeros(cell), []
    for frame in x:
        i, f, g, o = np.split(w_all @ np.concatenate([frame, r]) + b_all, 4)
        i, f = sigmoid(i + w_ic * c), sigmoid(f + w_fc * c)
        c = f * c + i * np.tanh(g)
        m = sigmoid(o + w_oc * c) * np.tanh(c)
        rp = w_rp @ m + b_rp
        r = rp[:proj]
        rows.append(rp)
    return np.log(softmax(apply(comps["output.affine"], np.array(rows))))


def time_height_convolution(layer: Layer, frames_at: object) -> np.ndarray:
    """out[t, h, g] = b[g] + sum over offsets k = (dt, dh) and f of
    W[g, k F_in + f] x[t + dt, h * step + dh, f], x zero outside the heights."""
    get = layer.get
    f_in, f_out = int(get("<NumFiltersIn>")), int(get("<NumFiltersOut>"))  # type: ignore[call-overload]
    h_in, h_out, step = int(get("<HeightIn>")), int(get("<HeightOut>")), int(get("<HeightSubsampleOut>"))  # type: ignore[call-overload]
    offsets = get("<Offsets>").values  # type: ignore[attr-defined]
    w, b = np.asarray(get("<LinearParams>"), np.float64), np.asarray(get("<BiasParams>"), np.float64)
    out = None
    for k, (dt, dh) in enumerate(offsets.tolist()):
        x = frames_at(int(dt)).reshape(-1, h_in, f_in)  # type: ignore[operator]
        if out is None:
            out = np.tile(b, (len(x), h_out, 1))
        for h in range(h_out):
            src = h * step + dh
            if 0 <= src < h_in:
                out[:, h, :] += x[:, src, :] @ w[:, k * f_in : (k + 1) * f_in].T
    assert out is not None
    return out.reshape(len(out), -1)
