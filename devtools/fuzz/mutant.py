"""One seeded mutant of a model: structural mutations (devtools.fuzz.structural) re-encoded, then
sometimes a vector length patched to claim gigabytes or byte-level damage; or byte damage alone."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from devtools.fuzz.structural import DEEP, I32, STRUCTURAL, Skip, pick
from devtools.tflite_codec import encode_with_vectors

HUGE_LENGTHS = [2**31 - 1, 2**31, 2**32 - 1, 2**28, 2**20]


# Byte-level mutations take and return the file's bytes.

def b_bitflip(rng, blob):
    out = bytearray(blob)
    k = int(rng.integers(1, 9))
    for pos in rng.integers(0, len(out) * 8, k):
        out[pos // 8] ^= 1 << (pos % 8)
    return bytes(out), f"{k} bit(s) flipped"


def b_bytes(rng, blob):
    out = bytearray(blob)
    k = int(rng.integers(1, 9))
    for pos in rng.integers(0, len(out), k):
        out[pos] = pick(rng, [0, 1, 0x7F, 0x80, 0xFF, int(rng.integers(256))])
    return bytes(out), f"{k} byte(s) set"


def b_int32(rng, blob):
    """An aligned 32-bit word (an offset, a length, an index or a scalar) set to an interesting value."""
    out = bytearray(blob)
    k = int(rng.integers(1, 4))
    for _ in range(k):
        pos = int(rng.integers(0, len(out) // 4)) * 4
        out[pos:pos + 4] = (pick(rng, I32) & 0xFFFFFFFF).to_bytes(4, "little")
    return bytes(out), f"{k} int32 word(s) overwritten"


def b_truncate(rng, blob):
    cut = int(rng.integers(0, len(blob)))
    return blob[:cut], f"truncated to {cut} bytes"


def b_chunk(rng, blob):
    a = int(rng.integers(0, len(blob)))
    n = int(rng.integers(1, 257))
    how = pick(rng, ["delete", "duplicate", "insert"])
    if how == "delete":
        out = blob[:a] + blob[a + n:]
    elif how == "duplicate":
        out = blob[:a] + blob[a:a + n] + blob[a:]
    else:
        out = blob[:a] + rng.integers(0, 256, n, dtype=np.uint8).tobytes() + blob[a:]
    return out, f"{n} bytes at {a}: {how}"


BYTES: dict[str, Callable[[np.random.Generator, bytes], tuple[bytes, str]]] = {
    "bitflip": b_bitflip, "bytes": b_bytes, "int32": b_int32, "truncate": b_truncate, "chunk": b_chunk,
}


def _patch_length(rng: np.random.Generator, blob: bytes, vectors: list[tuple[str, int]]) -> tuple[bytes, str]:
    """A vector whose length prefix claims far more elements than the file holds: a shape of
    2^31 dims, a buffer of gigabytes, a tensor list of billions."""
    kind, pos = pick(rng, vectors)
    n = pick(rng, HUGE_LENGTHS)
    out = bytearray(blob)
    out[pos:pos + 4] = n.to_bytes(4, "little")
    return bytes(out), f"{kind} vector at byte {pos} claims {n} elements"


@dataclass
class Mutant:
    index: int
    source: Path
    data: bytes
    steps: list[str]

    def describe(self) -> str:
        return f"mutant {self.index} of {self.source.name}: " + "; ".join(self.steps)


def mutate(source: Path, blob: bytes, doc: dict[str, Any], rng: np.random.Generator, index: int = 0) -> Mutant:
    """One mutant: 1-3 structural mutations, then sometimes a huge vector length or byte damage;
    or byte damage alone."""
    steps: list[str] = []
    if rng.random() < 0.3:
        data = blob
    else:
        d = copy.deepcopy(doc)
        names = sorted(STRUCTURAL)
        weights = np.asarray([3.0 if n in DEEP else 1.0 for n in names])
        for _ in range(int(rng.choice([1, 2, 3], p=[0.6, 0.3, 0.1]))):
            name = names[int(rng.choice(len(names), p=weights / weights.sum()))]
            try:
                steps.append(f"{name}: {STRUCTURAL[name](rng, d)}")
            except Skip:
                continue
        try:
            data, vectors = encode_with_vectors(d)
        except (TypeError, OverflowError):  # a value its field cannot hold (e.g. a dimension doubled past int32)
            steps, data, vectors = [], blob, []  # byte damage instead
        if vectors and rng.random() < 0.1:
            data, what = _patch_length(rng, data, vectors)
            steps.append(f"huge_vector: {what}")
        if rng.random() < 0.8 and steps:
            return Mutant(index, source, data, steps)
    name = pick(rng, sorted(BYTES))
    data, what = BYTES[name](rng, data)
    steps.append(f"{name}: {what}")
    return Mutant(index, source, data, steps)

