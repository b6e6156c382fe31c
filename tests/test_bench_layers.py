"""benchmarks/layers.py's matching of a layer to the peer's measured layers (TFLM + CMSIS-NN)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

LAYERS = Path(__file__).resolve().parents[1] / "benchmarks" / "layers.py"


@pytest.fixture(scope="module")
def layers():
    spec = importlib.util.spec_from_file_location("bench_layers", LAYERS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def conv1x1(in_c: int, out_c: int, px: int) -> dict:
    return {"k": (1, 1), "stride": 1, "in_c": in_c, "out_c": out_c, "px": px}


@pytest.mark.parametrize("board", ["mps2-an386", "mps3-an547"])
def test_a_convolution_matches_the_peer_layer_of_its_depth(layers, board):
    # An 8-deep 1x1 layer with 64 outputs: the peer's 8-deep layer (VWW #2, 8->16), not its 32->64 one
    # of a nearer output count, whose per-MAC cost is 3.5x lower on both cores.
    label, per_mac = layers.match("CONV_2D", conv1x1(8, 64, 125), board)
    assert label.startswith("vww#2 1x1/1 8->16"), label
    peer = next(p for p in layers.PEER if p["board"] == board and p["model"] == "vww" and p["index"] == 2)
    assert per_mac == peer["instructions"] / peer["macs"]
    # and a layer of the peer's own shape matches itself
    label, _ = layers.match("CONV_2D", conv1x1(32, 64, 144), board)
    assert label.startswith("vww#8 1x1/1 32->64 144px"), label


def test_the_peer_cost_per_mac_follows_the_depth(layers):
    # the evidence the weights rest on: same depth, other output counts, within 5%; depth 8 vs 32, > 3x
    def per_mac(board, index):
        p = next(p for p in layers.PEER if p["board"] == board and p["model"] == "vww" and p["index"] == index)
        return p["instructions"] / p["macs"]

    for board in ("mps2-an386", "mps3-an547"):
        assert abs(per_mac(board, 6) / per_mac(board, 8) - 1) < 0.05  # 32->32, 32->64
        assert abs(per_mac(board, 10) / per_mac(board, 12) - 1) < 0.05  # 64->64, 64->128
        assert per_mac(board, 2) / per_mac(board, 8) > 2.4  # 8->16 against 32->64
