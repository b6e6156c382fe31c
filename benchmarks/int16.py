"""Per-layer figures of the 16x8 and recurrent models: instructions per MAC of the cmsis-nn kernels
(int16 conv / depthwise / fully connected / transpose conv, LSTM, SVDF) on the Cortex-M4 and M55,
beside the portable kernels' (the same model compiled for the `c` target alone).

    python benchmarks/int16.py [--boards mps2-an386,mps3-an547] [--out benchmarks/int16.md]

The models are the committed fixtures (Keras-made 16x8 models, hand-built LSTM / SVDF models); the
figures are QEMU -icount instructions per inference (deterministic), all-zero inputs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERAS = ROOT / "tests" / "fixtures" / "keras"
MODELS = ROOT / "tests" / "fixtures" / "models"
FIXTURES = {
    "kws_dscnn_16x8_i16": KERAS / "kws_dscnn_16x8_i16.tflite",
    "tasnet_tconv_16x8_i16": KERAS / "tasnet_tconv_16x8_i16.tflite",
    "svdf_style_kws_i16": KERAS / "svdf_style_kws_i16.tflite",
    "speaker_embedding_16x8": KERAS / "speaker_embedding_16x8_float_fallback.tflite",
    "lstm_kws_i8": KERAS / "lstm_kws_i8.tflite",
    "lstm_16x8": MODELS / "lstm_16x8.tflite",
    "svdf_kws_two_layers": MODELS / "svdf_kws_two_layers.tflite",
    "lstm_16x8_49x40x64": None,  # made here: 49 steps of 40 features, 64 units (the converter makes no 16x8 LSTM)
}


def model_path(name: str, tmp: Path) -> Path:
    """The fixture's path; the one model made here is written into `tmp` once."""
    if FIXTURES[name] is not None:
        return FIXTURES[name]
    path = tmp / f"{name}.tflite"
    if not path.exists():
        if str(ROOT) not in sys.path:
            sys.path.insert(0, str(ROOT))
        from devtools.recurrent_models import LstmConfig, lstm_model

        path.write_bytes(lstm_model(LstmConfig(activations="int16", steps=49, inputs=40, units=64), seed=3))
    return path
# layers whose kernels this table is about (the rest are summed as "other")
CMSIS_NN_NOTE = """
CMSIS-NN's s16 kernels, for comparison (not measured here: estimated from their DSP inner loops in
CMSIS-NN 6.x): arm_nn_mat_mult_kernel_s16 (convolutions) runs about 24 instructions per 16 MACs
(two LDR of int16 pairs per column, read_and_pad per weight row: LDR, two SXTB16, PKH) plus im2col
and a 64-bit requantization (~25 instructions) per output: about 1.6 instructions/MAC at K = 288 and
2.3 at K = 32; arm_depthwise_conv_fast_s16 about 26 instructions per 8 MACs (PKHBT/PKHTB pairing of
four channels) plus the im2col copy and one 64-bit requantization per output: about 6-7 per MAC on
a 3x3 filter; arm_nn_vec_mat_mult_t_s16 (fully connected) about 2 per MAC on long rows. mcuforge's
16x8 LSTM (mcu_cmsis_lstm_s16) runs its gate products through the same 16x8 tiles, one 64-bit
requantization per gate row; int16 TRANSPOSE_CONV keeps the portable kernel (CMSIS-NN has no s16
transpose convolution: TFLM runs its reference kernel).
"""
HEAVY = {"conv_2d", "depthwise_conv_2d", "fully_connected", "transpose_conv", "unidirectional_sequence_lstm", "svdf"}


def main() -> int:
    from mcuforge.bench import bench

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", default="mps2-an386,mps3-an547")
    ap.add_argument("--models", default=",".join(FIXTURES))
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "int16.md"))
    args = ap.parse_args()
    lines = ["# 16x8 and recurrent kernels: instructions per MAC\n", __doc__.strip() + "\n", CMSIS_NN_NOTE]
    tmp = Path(tempfile.mkdtemp(prefix="mcuforge-int16-"))
    for name in args.models.split(","):
        for board in args.boards.split(","):
            print(f"bench {name} on {board} ...", file=sys.stderr, flush=True)
            path = model_path(name, tmp)
            fast = bench(path, board)
            plain = bench(path, board, targets=("c",))
            lines.append(f"\n## {name} on {board}\n\nTotal: {fast['instructions']:,} instructions "
                         f"(portable kernels: {plain['instructions']:,}, {plain['instructions'] / fast['instructions']:.2f}x)\n")
            lines.append("| # | op | input -> output | kernel | MACs | instructions | per MAC | portable per MAC |")
            lines.append("|---|---|---|---|---:|---:|---:|---:|")
            for L, P in zip(fast["layers"], plain["layers"]):
                if L["op"] not in HEAVY or not L["macs"]:
                    continue
                shapes = " ".join("x".join(map(str, s)) for s in L["input_shapes"][:1]) + " -> " + \
                    "x".join(map(str, L["output_shape"]))
                lines.append(f"| {L['step']} | {L['op']} | {shapes} | `{L['kernel']}` | {L['macs']:,} | "
                             f"{L['instructions']:,} | {L['instructions_per_mac']:.2f} | "
                             f"{P['instructions_per_mac'] if P['op'] == L['op'] else float('nan'):.2f} |")
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
