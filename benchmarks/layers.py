"""Per-layer instructions and estimated cycles beside TFLite Micro + CMSIS-NN, by layer shape.

    python benchmarks/layers.py [--boards mps2-an386,mps3-an547] [--models NAME,...] [--mlperf] [--out FILE.md]
    python benchmarks/layers.py --peer-md .../shared/peer/tflm-cmsis-nn-qemu.md   (peer_layers.json again)

Runs `mcuforge bench --cycles` on each model and board (benchmarks/models/, made by
gen_layer_models.py, and the Keras and multi-op fixtures mcuforge compiles; --mlperf adds KWS and
VWW, whose layers the peer measured exactly) and writes, per model, a table of its convolution,
depthwise and fully connected layers: instructions per inference and per MAC, estimated cycles
(docs/cycles.md), and the ratio to the peer's instructions for a layer of that shape. With --mlperf
it also lists every layer of the peer's four models (softmax, pooling and the rest too) beside the
peer's same layer.

The peer (peer_layers.json, from shared/peer/tflm-cmsis-nn-qemu.md) measured TFLM + CMSIS-NN layer
by layer on the MLPerf Tiny models only, on the same QEMU boards. A layer here is matched to the
measured layer of the same operator closest in shape, and the peer's instructions for it are that
layer's instructions per MAC times this layer's MACs. Closeness: the filter's size (a different
size counts 4), the stride (2; 0.5 for depthwise layers), then the channels and the map (half the
|log2| of the ratio of output pixels). Channels: for depthwise layers twice the |log2| of the ratio of
output channels; for convolutions and fully connected layers twice that of the input channels (the
depth of each dot product) plus half that of the output channels, because the peer's own figures show
its per-MAC cost set by the depth, hardly by the output channels: 1x1 32->32 and 32->64 2.70 / 2.72
instructions per MAC on the M4, 0.62 / 0.62 on the M55; 64->64 and 64->128 2.08 / 2.16 and 0.39 /
0.39; but 8->16 6.63 and 2.18, 16->32 3.96 and 1.07 (until 2026-11-24 both channels weighed 1, which
matched a 1x1 8->64 layer to 32->64 and gave it a peer 3.5x cheaper per MAC than the peer's own
8-deep layer).
CMSIS-NN's per-MAC cost of a depthwise layer depends on its shape mainly through the channels
(VWW's 3x3 layers: 7.5 to 8.9 instructions per MAC on the M4; on the M55 5.4 at 8 channels, 3.6 at
16, 2.8 at 32, 2.3 to 2.6 from 64 up, stride 1 and 2 alike), so the channels weigh most and the
nearest 3x3 layer stands for other filter sizes too (stated in the table). Two kinds of layer have no measured counterpart and take the path CMSIS-NN's
wrapper takes (arm_depthwise_conv_wrapper_s8): a depthwise layer with one input channel runs, on
the M4, depthwise_conv_s8_mult_4 (issue 16 measured it at 4.6 instructions per MAC) and, on the
M55, the conversion to a convolution (matched to the closest measured convolution); other depth
multipliers run CMSIS-NN's scalar kernel (no figure: marked n/a). A convolution with one window over
its whole input (a classifier head after a global pool: one input row times the weights, which
mcuforge computes with its fully connected kernel) is matched to the peer's fully connected layers.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PEER = json.loads((HERE / "peer_layers.json").read_text())["layers"]
ISSUE16_DW_ONE_INPUT_M4 = 4.6  # CMSIS-NN instructions per MAC, depthwise with one input channel (issue 16)

MODELS = {p.stem: p for p in sorted((HERE / "models").glob("*.tflite"))}
MODELS.update({name: ROOT / "tests" / "fixtures" / sub / f"{name}.tflite" for sub, name in (
    ("keras", "squeezenet_64_i8"), ("keras", "svdf_style_kws_i8"), ("models", "mix_ds_cnn"),
    ("models", "mix_mobilenet_block"))})
MLPERF = {"kws": ROOT / "tests/fixtures/mlperf/kws_ref_model.tflite",
          "vww": ROOT / "tests/fixtures/mlperf/vww_96_int8.tflite"}
SAME = dict(MLPERF, ic=ROOT / "tests/fixtures/mlperf/pretrainedResnet_quant.tflite",
            ad=ROOT / "tests/fixtures/mlperf/ad01_int8.tflite")  # the peer's own models: layer by layer
OPS = {"conv_2d": "CONV_2D", "depthwise_conv_2d": "DEPTHWISE_CONV_2D", "fully_connected": "FULLY_CONNECTED"}


def peer_from_md(path: Path) -> dict:
    """peer_layers.json's content from the peer's report: the per-layer tables of its cmsis_nn
    builds ("### MODEL / an386 / cmsis_nn" sections), the layers with MACs."""
    boards = {"an386": "mps2-an386", "an547": "mps3-an547"}
    layers, where = [], None
    for line in path.read_text().splitlines():
        if line.startswith("### "):
            parts = [t.strip() for t in line[4:].split("(")[0].split("/")]
            where = (parts[0], boards.get(parts[1])) if parts[2] == "cmsis_nn" and parts[1] in boards else None
        elif where and line.startswith("| ") and line[2].isdigit():
            cells = [c.strip() for c in line.strip("|").split("|")]
            layers.append({"model": where[0], "board": where[1], "index": int(cells[0]), "op": cells[1],
                           "input": json.loads(cells[2]), "weights": json.loads(cells[3] or "null"),
                           "output": json.loads(cells[4]), "macs": int(cells[5] or 0),
                           "instructions": int(cells[6])})
    return {"source": "shared/peer/tflm-cmsis-nn-qemu.md (TFLM + CMSIS-NN on QEMU 7.2, -icount shift=0, per-layer "
                      "tables of the cmsis_nn builds; measured 2026-11-22)", "layers": layers}


def shape_of(peer: dict) -> dict:
    """The features of a peer layer from its tensor shapes."""
    i, w, o = peer["input"], peer["weights"], peer["output"]
    if peer["op"] == "FULLY_CONNECTED":
        return {"k": (1, 1), "stride": 1, "in_c": w[1], "out_c": w[0], "px": 1}
    kh, kw = (w[1], w[2])
    return {"k": (kh, kw), "stride": max(1, round(i[1] / o[1])), "in_c": i[3], "out_c": o[3], "px": o[1] * o[2]}


def distance(op: str, ours: dict, peer: dict) -> float:
    dw = op == "DEPTHWISE_CONV_2D"
    d = 4.0 * (ours["k"] != peer["k"]) + (0.5 if dw else 2.0) * (ours["stride"] != peer["stride"])
    d += (2.0 if dw else 0.5) * abs(math.log2(ours["out_c"] / peer["out_c"]))
    if not dw:
        d += 2.0 * abs(math.log2(ours["in_c"] / peer["in_c"]))
    return d + 0.5 * abs(math.log2(ours["px"] / peer["px"]))


def match(op: str, ours: dict, board: str) -> tuple[str, float | None]:
    """(what the peer figure is, the peer's instructions per MAC) for a layer of ours."""
    if op == "DEPTHWISE_CONV_2D" and ours["in_c"] == 1:
        if board == "mps2-an386":
            return "issue 16: CMSIS-NN depthwise_conv_s8_mult_4", ISSUE16_DW_ONE_INPUT_M4
        op = "CONV_2D"  # CMSIS-NN converts it on Helium
    elif op == "DEPTHWISE_CONV_2D" and ours["out_c"] != ours["in_c"]:
        return "n/a (CMSIS-NN's scalar depthwise: depth multiplier > 1)", None
    cands = [p for p in PEER if p["board"] == board and p["op"] == op and p["macs"]]
    best = min(cands, key=lambda p: distance(op, ours, shape_of(p)))
    s = shape_of(best)
    label = f"{best['model']}#{best['index']} {s['k'][0]}x{s['k'][1]}/{s['stride']} {s['in_c']}->{s['out_c']} {s['px']}px"
    if op == "CONV_2D" and ours.get("dw_as_conv"):
        label += " (as a convolution)"
    elif s["k"] != ours["k"]:
        label += " (nearest 3x3)" if op == "DEPTHWISE_CONV_2D" else ""
    return label, best["instructions"] / best["macs"]


def layer_features(kc) -> dict:
    p = kc.params
    if "depth" in p and "k_h" not in p:  # a fully connected kernel (also a single-window conv lowered so)
        return {"k": (1, 1), "stride": 1, "in_c": p["depth"], "out_c": p["units"], "px": 1}
    return {"k": (p["k_h"], p["k_w"]), "stride": p["stride_h"], "in_c": p["in_c"], "out_c": p["out_c"],
            "px": p["out_h"] * p["out_w"]}


def model_rows(name: str, path: Path, board: str) -> tuple[list[str], dict]:
    from mcuforge.bench import bench
    from mcuforge.boards import load_board
    from mcuforge.driver import Options, compile_model

    kernels = [b.kernel for b in compile_model(path, Options(isa=load_board(board).isa)).program.bindings]  # as bench
    r = bench(path, board, cycles=True)
    rows, tot = [], {"dw_ours": 0, "dw_peer": 0, "all_ours": 0, "all_peer": 0}
    for kc, L in zip(kernels, r["layers"]):
        op = OPS.get(kc.info.op)
        if op is None or not L["macs"]:
            continue
        f = layer_features(kc)
        f["dw_as_conv"] = op == "DEPTHWISE_CONV_2D" and f["in_c"] == 1
        fc_conv = op == "CONV_2D" and kc.function == "mcu_cmsis_fully_connected_s8"  # one window: an FC layer
        label, peer_ipm = match("FULLY_CONNECTED" if fc_conv else op, f, board)
        label += " (as the fully connected layer it is)" if fc_conv else ""
        ours = L[r["unit"]]
        ratio = ours / (peer_ipm * L["macs"]) if peer_ipm else None
        if peer_ipm:
            tot["all_ours"] += ours
            tot["all_peer"] += peer_ipm * L["macs"]
            if op == "DEPTHWISE_CONV_2D":
                tot["dw_ours"] += ours
                tot["dw_peer"] += peer_ipm * L["macs"]
        k = f"{f['k'][0]}x{f['k'][1]}/{f['stride']}" if op != "FULLY_CONNECTED" else ""
        rows.append(f"| {L['step']} | {op} | {k} | {f['in_c']}->{f['out_c']} | {f['px']} | {L['macs']:,} | "
                    f"{ours:,} | {L[r['unit'] + '_per_mac']:.2f} | {L['cycles_estimate']:,.0f} | "
                    f"{L['cycles_estimate_per_mac']:.2f} | {label} | {f'{peer_ipm:.2f}' if peer_ipm else 'n/a'} | "
                    f"{f'{ratio:.2f}' if ratio else 'n/a'} |")
    tot.update(instructions=r[r["unit"]], cycles=r["cycles_estimate"]["cycles"])
    return rows, tot


def same_layer_rows(name: str, path: Path, board: str) -> list[str]:
    """Every layer of one of the peer's own models (MAC layers and the rest: softmax, pooling, ADD)
    beside the peer's same layer (by TFLite op index): a step computing one op only."""
    from mcuforge.bench import bench

    peer = {p["index"]: p for p in PEER if p["model"] == name and p["board"] == board}
    rows = []
    for L in bench(path, board)["layers"]:
        ops = L["tflite"]
        if len(ops) != 1 or ops[0]["index"] not in peer:
            continue
        q = peer[ops[0]["index"]]
        rows.append(f"| {name} | {board} | #{q['index']} | {q['op']} | {L['instructions']:,} | "
                    f"{q['instructions']:,} | {L['instructions'] / q['instructions']:.2f} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--boards", default="mps2-an386,mps3-an547")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--mlperf", action="store_true", help="add KWS and VWW")
    ap.add_argument("--out", default=str(HERE / "layers.md"))
    ap.add_argument("--peer-md", help="rewrite peer_layers.json from the peer's report (tflm-cmsis-nn-qemu.md) and stop")
    args = ap.parse_args()
    if args.peer_md:
        peer = peer_from_md(Path(args.peer_md))
        (HERE / "peer_layers.json").write_text(
            "{\n  \"source\": " + json.dumps(peer["source"]) + ",\n  \"layers\": [\n"
            + ",\n".join("    " + json.dumps(p) for p in peer["layers"]) + "\n  ]\n}\n")
        return 0
    models = {n: MODELS[n] for n in args.models.split(",") if n}
    if args.mlperf:
        models.update(MLPERF)
    head = ("| # | op | filter/stride | channels | out px | MACs | instr | instr/MAC | est. cycles | cycles/MAC | "
            "peer layer (TFLM + CMSIS-NN) | peer instr/MAC | ratio |\n"
            "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    parts, summary = [], []
    for board in args.boards.split(","):
        for name, path in models.items():
            print(f"{name} on {board} ...", file=sys.stderr, flush=True)
            rows, t = model_rows(name, path, board)
            dw = f"{t['dw_ours'] / t['dw_peer']:.2f}" if t["dw_peer"] else "n/a"
            al = f"{t['all_ours'] / t['all_peer']:.2f}" if t["all_peer"] else "n/a"
            summary.append(f"| {name} | {board} | {t['instructions']:,} | {t['cycles']:,.0f} | {dw} | {al} |")
            parts.append(f"\n### {name} on {board}\n\n{head}\n" + "\n".join(rows) + "\n")
    if args.mlperf:
        same = [r for board in args.boards.split(",") for name, path in SAME.items()
                for r in same_layer_rows(name, path, board)]
        parts.append("\n## The peer's own models, layer by layer\n\nThe same TFLite layer in both builds (steps "
                     "computing one op; fused steps left out); ratio: ours / the peer's instructions.\n\n"
                     "| model | board | layer | op | instr | peer instr | ratio |\n|---|---|---|---|---:|---:|---:|\n"
                     + "\n".join(same) + "\n")
    text = ("# Per-layer instructions beside TFLM + CMSIS-NN, by layer shape\n\n"
            "Generated by `python benchmarks/layers.py` (how layers are matched to the peer's: its docstring). "
            "ratio: our instructions / the peer's instructions per MAC for the matched layer times our MACs "
            "(below 1: fewer instructions than TFLM + CMSIS-NN). Estimated cycles: docs/cycles.md.\n\n"
            "| model | board | instructions | est. cycles | ratio, depthwise layers | ratio, all matched layers |\n"
            "|---|---|---:|---:|---:|---:|\n" + "\n".join(summary) + "\n" + "".join(parts))
    Path(args.out).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
