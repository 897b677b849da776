"""Kaldi's two encodings behind one reader: tokens, numbers, matrices and vectors.

A binary file starts with `\\0B`. In both modes a token is `<Tok>` plus one space (leading
whitespace skipped). Binary numbers are a size byte and the raw little-endian value (int32:
0x04 + 4 bytes, float 0x04 + f32, double 0x08 + f64), a bool a bare `T`/`F`; a matrix is `FM `
(or `DM `) + int rows + int cols + row-major data, a vector `FV `/`DV ` + int dim + data, an
integer vector a size byte, a raw i32 count and the data. Text numbers are words; a matrix is
` [\\n  a b \\n  c d ]`, a vector ` [ a b ]`. Every malformed read (truncation, a size larger
than the file, an unexpected token) is one `IrforgeError` naming the byte offset.
"""

from __future__ import annotations

import math
import mmap
import struct
import warnings

import numpy as np

from irforge.errors import IrforgeError

BINARY_MAGIC = b"\0B"
WHITESPACE = b" \t\n\r\v\f"
FAQ_READ = "check that the file is a complete Kaldi model (Model Optimizer FAQ #90)"


class KaldiReader:
    """Reads one Kaldi object stream from `data`, in the mode its first bytes say."""

    def __init__(self, data: bytes | mmap.mmap, path: str) -> None:
        self.data = data
        self.path = path
        self.binary = bytes(data[:2]) == BINARY_MAGIC
        self.pos = 2 if self.binary else 0

    # -- errors and low-level access ----------------------------------------------------
    def error(self, what: str, code: str = "E502", fix: str = FAQ_READ) -> IrforgeError:
        return IrforgeError(f"Kaldi model is not readable: {what}", where=f"{self.path}, byte {self.pos}", fix=fix, code=code)

    def _take(self, size: int) -> bytes:
        if size < 0 or self.pos + size > len(self.data):
            raise self.error(f"the file ends inside a value ({size} bytes wanted, {len(self.data) - self.pos} left)")
        chunk = bytes(self.data[self.pos : self.pos + size])
        self.pos += size
        return chunk

    def skip_whitespace(self) -> None:
        while self.pos < len(self.data) and self.data[self.pos : self.pos + 1] in (b" ", b"\t", b"\n", b"\r", b"\v", b"\f"):
            self.pos += 1

    def at_end(self) -> bool:
        self.skip_whitespace()
        return self.pos >= len(self.data)

    def peek_byte(self) -> bytes:
        """The next non-whitespace byte (b"" at the end)."""
        self.skip_whitespace()
        return bytes(self.data[self.pos : self.pos + 1])

    def peek_bytes(self, n: int) -> bytes:
        self.skip_whitespace()
        return bytes(self.data[self.pos : self.pos + n])

    def word(self) -> str:
        """A whitespace-delimited word (a token, a name, a text number), and the one
        whitespace after it."""
        self.skip_whitespace()
        start = self.pos
        end = len(self.data)
        while self.pos < end and self.data[self.pos : self.pos + 1] not in (b" ", b"\t", b"\n", b"\r", b"\v", b"\f"):
            self.pos += 1
            if self.pos - start > 4096:
                raise self.error("a word longer than 4096 bytes (not a Kaldi token)")
        if start == self.pos:
            raise self.error("the file ends where a token was expected")
        text = bytes(self.data[start : self.pos])
        if self.pos < end:
            self.pos += 1
        try:
            return text.decode("ascii")
        except UnicodeDecodeError:
            self.pos = start
            raise self.error(f"expected a token, found bytes {text[:16]!r}") from None

    def line(self) -> str:
        """The rest of the current line, raw (nnet3's config lines, in both modes)."""
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise self.error("the file ends inside the nnet3 config lines")
        text = bytes(self.data[self.pos : end])
        self.pos = end + 1
        try:
            return text.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            raise self.error("an nnet3 config line is not text") from None

    # -- tokens --------------------------------------------------------------------------
    def token(self) -> str:
        start = self.pos
        word = self.word()
        if not (word.startswith("<") and word.endswith(">")):
            self.pos = start
            raise self.error(f"expected a <Token>, found '{word[:40]}'")
        return word

    def peek_token(self) -> str | None:
        """The next token without consuming it, or None if the next thing is not a token."""
        if self.peek_byte() != b"<":
            return None
        start = self.pos
        try:
            return self.token()
        finally:
            self.pos = start

    def expect(self, token: str) -> None:
        start = self.pos
        got = self.word() if not self.at_end() else "the end of the file"
        if got != token:
            self.pos = start
            raise self.error(f"expected token {token}, has {got[:40]}")

    def maybe(self, token: str) -> bool:
        """Consume `token` if it comes next."""
        if self.peek_token() == token:
            self.token()
            return True
        return False

    # -- numbers -------------------------------------------------------------------------
    def _sized(self, sizes: dict[int, str], what: str) -> float | int:
        self.skip_whitespace()
        size = self._take(1)[0]
        if size not in sizes:
            self.pos -= 1
            raise self.error(f"expected a binary {what} (size byte {sorted(sizes)}), found byte 0x{size:02x}")
        return struct.unpack("<" + sizes[size], self._take(size))[0]

    def int(self) -> int:
        if self.binary:
            return int(self._sized({4: "i", 8: "q"}, "integer"))
        start = self.pos
        word = self.word()
        try:
            return int(word)
        except ValueError:
            self.pos = start
            raise self.error(f"expected an integer, found '{word[:40]}'") from None

    def float(self) -> float:
        if self.binary:
            return float(self._sized({4: "f", 8: "d"}, "float"))
        start = self.pos
        word = self.word()
        try:
            return float(word)
        except ValueError:
            self.pos = start
            raise self.error(f"expected a number, found '{word[:40]}'") from None

    def bool(self) -> bool:
        self.skip_whitespace()
        c = self._take(1)
        if c not in (b"T", b"F"):
            self.pos -= 1
            raise self.error(f"expected a bool (T or F), found {c!r}")
        if not self.binary and self.pos < len(self.data) and self.data[self.pos : self.pos + 1] in (b" ", b"\n"):
            self.pos += 1
        return c == b"T"

    # -- arrays --------------------------------------------------------------------------
    def _count(self, n: int, item: int, what: str) -> int:
        """`n` checked against the bytes left, so a corrupted size cannot allocate."""
        if n < 0 or n * item > len(self.data) - self.pos:
            raise self.error(f"{what} of {n} elements does not fit in the {len(self.data) - self.pos} bytes left")
        return n

    def _binary_array(self, kind: str) -> np.ndarray:
        start = self.pos
        tag = self.word()
        if tag in ("CM", "CM2", "CM3"):
            self.pos = start
            raise self.error("compressed matrices are not supported", code="E509", fix="write the model uncompressed (nnet-copy / nnet3-copy)")
        if tag not in (f"F{kind}", f"D{kind}"):
            self.pos = start
            raise self.error(f"expected a {'matrix' if kind == 'M' else 'vector'} (F{kind}/D{kind}), found '{tag[:16]}'")
        dtype = np.dtype("<f4") if tag[0] == "F" else np.dtype("<f8")
        shape = (self.int(), self.int()) if kind == "M" else (self.int(),)
        for n in shape:
            self._count(n, 0, "an array dimension")
        count = self._count(math.prod(shape), dtype.itemsize, f"a {tag}")
        array = np.frombuffer(self.data, dtype, count, self.pos).reshape(shape)
        self.pos += count * dtype.itemsize
        return array.astype(np.float32)

    def _bracketed(self, what: str, consume: bool = True) -> tuple[bytes, bool]:
        """The text between `[` and `]` and whether it was written as a matrix (a line break
        after the `[`)."""
        self.skip_whitespace()
        if self.data[self.pos : self.pos + 1] != b"[":
            raise self.error(f"expected '[' opening a {what}")
        end = self.data.find(b"]", self.pos + 1)
        if end < 0:
            raise self.error(f"the file ends inside a {what} (no closing ']')")
        body = bytes(self.data[self.pos + 1 : end])
        if consume:
            self.pos = end + 1
        return body, body[:1] in (b"\n", b"\r")

    def _text_numbers(self, what: str) -> tuple[list[list[str]], bool]:
        """The rows of words of a bracketed text array and whether it was written as a matrix."""
        body, is_matrix = self._bracketed(what)
        rows = [line.split() for line in body.decode("ascii", "replace").splitlines()]
        return [r for r in rows if r], is_matrix

    def _text_floats(self, what: str) -> tuple[np.ndarray, int]:
        """The numbers of a bracketed text array (parsed in C: text models hold millions) and
        its row count."""
        body, _ = self._bracketed(what)
        lines = [line for line in body.split(b"\n") if line.strip()]
        widths = {len(line.split()) for line in lines}
        if len(widths) > 1:
            raise self.error(f"a text {what} has rows of different lengths")
        count = len(lines) * (widths.pop() if widths else 0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy warns (and stops) at a word that is no number
            try:
                values = np.fromstring(body, dtype=np.float64, sep=" ") if count else np.zeros(0)
            except (ValueError, DeprecationWarning):
                values = np.zeros(0)
        if values.size != count:
            raise self.error(f"a {what} holds a non-number")
        return values.astype(np.float32), len(lines)

    def matrix(self) -> np.ndarray:
        if self.binary:
            return self._binary_array("M")
        values, rows = self._text_floats("matrix")
        return values.reshape(rows, -1) if rows else np.zeros((0, 0), np.float32)

    def vector(self) -> np.ndarray:
        if self.binary:
            return self._binary_array("V")
        return self._text_floats("vector")[0]

    def int_vector(self) -> np.ndarray:
        if self.binary:
            self.skip_whitespace()
            size = self._take(1)[0]
            if size != 4:
                self.pos -= 1
                raise self.error(f"expected an int32 vector (size byte 4), found byte 0x{size:02x}")
            n = self._count(struct.unpack("<i", self._take(4))[0], 4, "an integer vector")
            values = np.frombuffer(self.data, "<i4", n, self.pos).astype(np.int64)
            self.pos += 4 * n
            return values
        rows, _ = self._text_numbers("integer vector")
        try:
            return np.array([int(w) for r in rows for w in r], np.int64)
        except ValueError:
            raise self.error("an integer vector holds a non-integer") from None

    def int_pair_vector(self) -> np.ndarray:
        """Kaldi's WriteIntegerPairVector: [n, 2] (binary: size byte, i32 n, pairs; text:
        `[ a,b c,d ]`)."""
        if self.binary:
            self.skip_whitespace()
            size = self._take(1)[0]
            if size != 4:
                self.pos -= 1
                raise self.error(f"expected an int32 pair vector (size byte 4), found byte 0x{size:02x}")
            n = self._count(struct.unpack("<i", self._take(4))[0], 8, "an integer pair vector")
            values = np.frombuffer(self.data, "<i4", 2 * n, self.pos).astype(np.int64).reshape(n, 2)
            self.pos += 8 * n
            return values
        rows, _ = self._text_numbers("integer pair vector")
        try:
            return np.array([[int(v) for v in w.split(",")] for r in rows for w in r], np.int64).reshape(-1, 2)
        except ValueError:
            raise self.error("an integer pair vector holds something other than a,b pairs") from None

    def array(self) -> np.ndarray:
        """A matrix or a vector, whichever comes next."""
        if self.binary:
            return self.matrix() if self.peek_bytes(2)[1:2] == b"M" else self.vector()
        _, is_matrix = self._bracketed("matrix or vector", consume=False)
        return self.matrix() if is_matrix else self.vector()

    def next_is_array(self) -> bool:
        head = self.peek_bytes(3)
        if self.binary:
            return head[:2] in (b"FM", b"DM", b"FV", b"DV", b"CM")
        return head[:1] == b"["
