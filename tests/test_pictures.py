"""Pictures a person can use: `plan --picture` and `bench --picture`, SVG and PNG from one layout
(mcuforge.drawing), the PNG with text from the built-in pixel font."""

import re
import struct
import zlib

import numpy as np
import pytest
from conftest import MLPERF_MODELS

from mcuforge.bench import bars
from mcuforge.drawing import PNG_SCALE, Scene, nice_ticks
from mcuforge.driver import Options, compile_model
from mcuforge.planner.picture import KINDS, scene
from mcuforge.planner.report import plan_json


def decode_png(data: bytes) -> np.ndarray:
    """RGB pixels of an 8-bit truecolor PNG whose rows all use filter 0 (what mcuforge writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        n, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        assert zlib.crc32(tag + body) & 0xFFFFFFFF == struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        if tag == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert (depth, color) == (8, 2)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(height, 1 + 3 * width)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(height, width, 3)


@pytest.mark.parametrize("top, want", [(17216, [0, 5000, 10000, 15000]), (768, [0, 200, 400, 600]),
                                       (55328, [0, 20000, 40000]), (7, [0, 2, 4, 6]),
                                       (100, [0, 20, 40, 60, 80, 100])])
def test_round_ticks(top, want):
    assert nice_ticks(top) == want


def test_text_is_drawn_with_the_pixel_font():
    """'E' at font size 10: cap height 7 pixel rows of 2x2 PNG pixels, its glyph's exact shape."""
    sc = Scene(20, 12)
    sc.text(2, 10, "E", size=10)
    img = decode_png(sc.png())
    assert img.shape == (12 * PNG_SCALE, 20 * PNG_SCALE, 3)
    ink = (img.sum(axis=2) == 0)
    rows, cols = np.nonzero(ink)
    block = ink[rows.min():rows.max() + 1:2, cols.min():cols.max() + 1:2]
    assert ["".join("#" if p else "." for p in r) for r in block] == \
        ["#####", "#....", "#....", "####.", "#....", "#....", "#####"]
    assert (rows.min(), rows.max() + 1) == (20 - 14, 20)  # baseline at y = 10 units = 20 pixels
    sideways = Scene(12, 20)
    sideways.text(10, 18, "E", size=10, vertical=True)
    turned = decode_png(sideways.png()).sum(axis=2) == 0
    assert np.array_equal(turned[np.ix_(*[np.unique(a) for a in np.nonzero(turned)])][::2, ::2],
                          np.rot90(block))  # read bottom to top: the glyph turned a quarter left


@pytest.fixture(scope="module")
def kws_plan():
    # `min`: every depthwise layer over its input (a buffer too small for its label, or with another
    # right above it, has none: which ones depends on the planner's layout)
    return plan_json(compile_model(MLPERF_MODELS["kws"], Options(memory="min")))


def test_plan_svg_has_legend_labels_op_names_and_round_ticks(kws_plan):
    svg = scene(kws_plan).svg()
    texts = re.findall(r">([^<>]+)</text>", svg)
    for _, legend in KINDS.values():
        assert legend in texts
    assert {"input 0", "scratch 1", "t0"} <= set(texts)  # one-step buffers are labelled too
    ops = [s["op"] for s in kws_plan["schedule"]]
    assert [t for t in texts if t in set(ops)] == ops  # every step's op under its column, in order
    ticks = [int(t.replace(",", "")) for t in texts if re.fullmatch(r"\d{1,3}(,\d{3})+|\d+", t)][:4]
    assert ticks == [0, 2000, 4000, 6000]  # round steps over KWS's 8,964 B
    titles = re.findall(r"<title>([^<]+)</title>", svg)
    shared = kws_plan["memory"]["overlaps"]  # an output over its input: its shared bytes, marked
    assert len(titles) == sum(1 for b in kws_plan["buffers"] if b["size"]) + len(shared) and "input 0 (input_1)" in svg
    assert sum(1 for t in titles if " over " in t) == len(shared)


def test_plan_png_is_the_same_picture_with_text(kws_plan):
    sc = scene(kws_plan)
    img = decode_png(sc.png())
    assert img.shape[:2] == (sc.height * PNG_SCALE, sc.width * PNG_SCALE)
    for kind, (color, _) in KINDS.items():  # the legend's swatches, in their colours
        x = next(s[1] for s in sc.shapes if s[0] == "rect" and s[5] == color and s[2] == 32)
        assert tuple(img[38 * PNG_SCALE, round((x + 6) * PNG_SCALE)]) == tuple(bytes.fromhex(color[1:])), kind
    title_band = img[4 * PNG_SCALE:22 * PNG_SCALE, 80 * PNG_SCALE:600 * PNG_SCALE]
    assert (title_band.sum(axis=2) == 0).sum() > 2000  # the title is written
    below_axis = img[(62 + 400 + 22) * PNG_SCALE:, :]
    assert (below_axis.sum(axis=2) == 0).sum() > 5000  # op names under the axis


def test_bench_bars_show_share_and_per_mac():
    r = {"model": "m.tflite", "board": "b", "unit": "instructions", "instructions": 1000,
         "flash": {"total": 10, "code": 5, "weights": 5}, "ram": {"total": 8, "arena": 4, "stack": 4},
         "layers": [{"step": 0, "tflite": [{"index": 0, "op": "CONV_2D"}], "op": "conv_2d", "kernel": "k",
                     "instructions": 750, "instructions_per_mac": 1.5},
                    {"step": 1, "tflite": [{"index": 1, "op": "RESHAPE"}], "op": "reshape", "kernel": None,
                     "instructions": 50, "instructions_per_mac": None}]}
    sc = bars(r)
    svg = sc.svg()
    assert "750 (75.0%) 1.5/MAC" in svg and "50 (5.0%)</text>" in svg and " 0 #0 CONV_2D" in svg
    widths = [float(w) for w in re.findall(r'width="([\d.]+)" height="14.0" fill="#4e79a7"', svg)]
    assert len(widths) == 2 and abs(widths[0] - 15 * widths[1]) < 1  # bars to scale (SVG keeps 0.1 units)
    assert decode_png(sc.png()).shape == (sc.height * 2, sc.width * 2, 3)


def test_pictures_from_the_command_line(cli, tmp_path):
    for name in ("kws.svg", "kws.png"):
        proc = cli("plan", MLPERF_MODELS["kws"], "--picture", tmp_path / name)
        assert proc.returncode == 0 and f"picture:      {tmp_path / name}" in proc.stdout, proc.stderr
    assert decode_png((tmp_path / "kws.png").read_bytes()).shape == (2 * 604, 2 * 960, 3)
    bad = cli("bench", MLPERF_MODELS["ad"], "--board", "mps2-an386", "--picture", tmp_path / "x.gif")
    assert bad.returncode == 2 and ".svg or .png" in bad.stderr
