"""BATCH_MATMUL instructions per MAC on the QEMU boards: the cmsis-nn kernel against the portable one.

    python benchmarks/batch_matmul.py [--boards mps2-an386,mps3-an547]

One single-operator model per shape (devtools/tflite_writer.py, no TensorFlow): zero points 3 / -5
for two activations, 3 / 0 for a constant rhs (symmetric, as converters quantize weights). The
figures are in docs/kernels.md beside TFLM + CMSIS-NN's per-MAC cost of the same inner loop.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from devtools.tflite_writer import ModelWriter  # noqa: E402

# name -> lhs shape, rhs shape, output shape, adj_y, constant rhs
SHAPES = {
    "[1,49,64] x const [64,64]": ((1, 49, 64), (64, 64), (1, 49, 64), False, True),
    "[4,16,32] x [4,32,16]": ((4, 16, 32), (4, 32, 16), (4, 16, 16), False, False),
    "[4,32,32] x [4,32,32]^T": ((4, 32, 32), (4, 32, 32), (4, 32, 32), True, False),
    "[1,1,64] x const [64,64]": ((1, 1, 64), (64, 64), (1, 1, 64), False, True),
    "[1,128] x const [128,128]": ((1, 128), (128, 128), (1, 128), False, True),
    "[1,640] x const [640,128]": ((1, 640), (640, 128), (1, 128), False, True),
}


def model(lhs, rhs, out, adj_y: bool, const: bool) -> bytes:
    rng = np.random.default_rng(0)
    w = ModelWriter()
    a = w.tensor(lhs, "int8", name="a", scale=0.02, zero_point=3)
    data = rng.integers(-128, 128, rhs).astype(np.int8) if const else None
    b = w.tensor(rhs, "int8", name="b", scale=0.02, zero_point=0 if const else -5, data=data)
    y = w.tensor(out, "int8", name="y", scale=0.5, zero_point=1)
    w.op("BATCH_MATMUL", [a, b], [y], AdjX=False, AdjY=adj_y)
    return w.finish([a] if const else [a, b], [y])


def main() -> int:
    from mcuforge.bench import bench

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", default="mps2-an386,mps3-an547")
    args = ap.parse_args()
    print("| shape | board | cmsis-nn | portable |\n|---|---|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="mcuforge-bmm-") as tmp:
        for name, spec in SHAPES.items():
            path = Path(tmp) / "m.tflite"
            path.write_bytes(model(*spec))
            for board in args.boards.split(","):
                per = [bench(path, board, targets=t)["layers"][0]["instructions_per_mac"]
                       for t in (("cmsis-nn", "c"), ("c",))]
                print(f"| {name} | {board} | {per[0]} | {per[1]} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
