"""Pictures as a list of shapes (rectangles, axis-aligned lines, text), written as SVG or rasterized
to PNG with the standard library, numpy and a built-in 5x7 pixel font: one layout, two formats, no
drawing dependency. The PNG is drawn at twice the SVG's size so its text is legible.

    scene = Scene(400, 200)
    scene.rect(10, 10, 100, 20, "#4e79a7", title="tooltip (SVG only)")
    scene.text(10, 50, "CONV_2D 1,234", size=11)
    scene.write("out.png")    # or .svg
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

# 5x7 glyphs, one string of 7 rows of 5 pixels each ('#' on). Lower case is drawn as upper case; a
# character without a glyph is drawn as '?'.
_GLYPHS = {
    "A": ".###. #...# #...# ##### #...# #...# #...#", "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.", "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####", "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####", "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.", "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#", "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#", "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.", "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#", "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.", "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.", "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.", "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..", "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.", "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####", "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.", "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.", "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.", "9": ".###. #...# #...# .#### ....# ...#. .##..",
    " ": "..... ..... ..... ..... ..... ..... .....", ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...", ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    ";": "..... .##.. .##.. ..... .##.. ..#.. .#...", "-": "..... ..... ..... ##### ..... ..... .....",
    "_": "..... ..... ..... ..... ..... ..... #####", "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.", ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "[": ".###. .#... .#... .#... .#... .#... .###.", "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "/": "..... ....# ...#. ..#.. .#... #.... .....", "%": "##..# ##..# ...#. ..#.. .#... #..## #..##",
    "#": ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.", "=": "..... ..... ##### ..... ##### ..... .....",
    "'": "..#.. ..#.. .#... ..... ..... ..... .....", "*": "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..", "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
    "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.", ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "&": ".##.. #..#. #.#.. .#... #.#.# #..#. .##.#"
}
_FONT = {c: np.array([[p == "#" for p in row] for row in rows.split()], dtype=bool)
         for c, rows in _GLYPHS.items()}
PNG_SCALE = 2  # PNG pixels per SVG unit


def char_width(size: float) -> float:
    """Advance of one character at font size `size` in picture units (the same in SVG and PNG)."""
    return size * 0.6


def text_width(s: str, size: float) -> float:
    return len(s) * char_width(size)


@dataclass
class Scene:
    width: int
    height: int
    shapes: list[tuple] = field(default_factory=list)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str | None = "#000000",
             title: str | None = None) -> None:
        self.shapes.append(("rect", x, y, w, h, fill, stroke, title))

    def line(self, x1: float, y1: float, x2: float, y2: float, color: str = "#000000") -> None:
        if x1 != x2 and y1 != y2:
            raise ValueError("only horizontal and vertical lines")
        self.shapes.append(("line", x1, y1, x2, y2, color))

    def text(self, x: float, y: float, s: str, size: float = 11, anchor: str = "start", vertical: bool = False,
             color: str = "#000000") -> None:
        """Text whose baseline starts (anchor start), is centred (middle) or ends (end) at (x, y);
        vertical: read bottom to top, (x, y) then the end of the baseline for anchor "end"."""
        self.shapes.append(("text", x, y, s, size, anchor, vertical, color))

    def svg(self) -> str:
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" height="{self.height}" '
               f'font-family="monospace" font-size="11">',
               f'<rect x="0" y="0" width="{self.width}" height="{self.height}" fill="white"/>']
        for kind, *a in self.shapes:
            if kind == "rect":
                x, y, w, h, fill, stroke, title = a
                edge = f' stroke="{stroke}" stroke-width="0.5"' if stroke else ""
                tip = f"<title>{escape(title)}</title>" if title else ""
                out.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}"{edge}>'
                           f'{tip}</rect>')
            elif kind == "line":
                x1, y1, x2, y2, color = a
                out.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{color}"/>')
            else:
                x, y, s, size, anchor, vertical, color = a
                turn = f' transform="rotate(-90 {x:.1f} {y:.1f})"' if vertical else ""
                out.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}"'
                           f' textLength="{text_width(s, size):.1f}"{turn}>{escape(s)}</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def png(self) -> bytes:
        k = PNG_SCALE
        img = np.full((self.height * k, self.width * k, 3), 255, dtype=np.uint8)
        for kind, *a in self.shapes:
            if kind == "rect":
                x, y, w, h, fill, stroke, _ = a
                x0, y0 = round(x * k), round(y * k)
                x1, y1 = max(round((x + w) * k), x0 + 1), max(round((y + h) * k), y0 + 1)
                img[y0:y1, x0:x1] = _rgb(fill)
                if stroke:
                    c = _rgb(stroke)
                    img[y0, x0:x1] = img[y1 - 1, x0:x1] = c
                    img[y0:y1, x0] = img[y0:y1, x1 - 1] = c
            elif kind == "line":
                x1, y1, x2, y2, color = a
                xa, xb = sorted((round(x1 * k), round(x2 * k)))
                ya, yb = sorted((round(y1 * k), round(y2 * k)))
                img[ya:yb + 1, xa:xb + 1] = _rgb(color)
            else:
                _draw_text(img, *a)
        return _png_bytes(img)

    def write(self, path: str | Path) -> Path:
        p = Path(path)
        if p.suffix.lower() == ".svg":
            p.write_text(self.svg())
        elif p.suffix.lower() == ".png":
            p.write_bytes(self.png())
        else:
            from mcuforge.errors import McuforgeError

            raise McuforgeError(f"--picture {p}: use a .svg or .png file name")
        return p


def _rgb(color: str) -> list[int]:
    return list(bytes.fromhex(color.lstrip("#")))


def _draw_text(img: np.ndarray, x: float, y: float, s: str, size: float, anchor: str, vertical: bool,
               color: str) -> None:
    """Glyphs of 5x7 pixels, each pixel a square of `px` PNG pixels: cap height = 0.7 * size."""
    k = PNG_SCALE
    px = max(1, round(size * k / 10))
    advance = char_width(size) * k
    start = {"start": 0.0, "middle": -0.5, "end": -1.0}[anchor] * text_width(s, size) * k
    h, w = img.shape[:2]
    rgb = _rgb(color)
    for i, ch in enumerate(s):
        glyph = _FONT.get(ch.upper(), _FONT["?"])
        along = start + i * advance
        for r, c in zip(*np.nonzero(glyph)):
            if vertical:  # baseline runs upwards from (x, y); glyph tops point left
                px0, py0 = round(x * k) - (7 - r) * px, round(y * k - along) - (c + 1) * px
            else:
                px0, py0 = round(x * k + along) + c * px, round(y * k) - (7 - r) * px
            if 0 <= px0 and px0 + px <= w and 0 <= py0 and py0 + px <= h:
                img[py0:py0 + px, px0:px0 + px] = rgb


def _png_bytes(img: np.ndarray) -> bytes:
    height, width = img.shape[:2]
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(height))

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def nice_ticks(top: float, count: int = 5) -> list[int]:
    """Round tick values from 0 up to `top`, about `count` of them: steps of 1, 2 or 5 times a power of ten."""
    raw = max(top / count, 1)
    power = 10 ** (len(str(int(raw))) - 1)
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return list(range(0, int(top) + 1, step))
