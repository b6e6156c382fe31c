"""The arena over time as a picture: x = schedule step (with each step's op), y = arena offset with
round ticks, one rectangle per buffer, coloured and labelled by kind (model input, model output,
intermediate tensor, kernel scratch) with a legend. SVG (with a tooltip per buffer) or PNG, drawn by
mcuforge.drawing from one layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcuforge.drawing import Scene, nice_ticks, text_width

KINDS = {  # kind -> (colour, legend text)
    "input": ("#59a14f", "model input"),
    "output": ("#e15759", "model output"),
    "tensor": ("#4e79a7", "intermediate tensor"),
    "scratch": ("#c8c8c8", "kernel scratch"),
    "overlap": ("#ff9da7", "output over its input"),
    "fused": ("#f28e2b", "fused layers' line buffers"),
}
TENSOR_COLORS = ["#4e79a7", "#76b7b2", "#9ecae9", "#edc948", "#b07aa1", "#9c755f", "#f1ce63", "#d4a6c8"]
LABEL = 9  # font size of buffer and axis labels


def _kinds(info: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """buffer name -> (kind, label)."""
    out = {t["name"]: ("input", f"input {i}") for i, t in enumerate(info["inputs"])}
    out.update({t["name"]: ("output", f"output {i}") for i, t in enumerate(info["outputs"])})
    for b in info["buffers"]:
        if b["name"] not in out:
            scratch = b["tensor"] == "scratch"
            out[b["name"]] = ("scratch", f"scratch {b['name'].removeprefix('scratch')}") if scratch else \
                ("tensor", b["name"])
    return out


def scene(info: dict[str, Any], width: int = 960) -> Scene:
    schedule = info["schedule"]
    steps = max(len(schedule), 1)
    arena = max(info["arena_bytes"], 1)
    fused = {f["step"]: f for f in info.get("memory", {}).get("fused", ())}
    ops = [(f"fused x{len(fused[s['step']]['kernels'])}" if s["step"] in fused else s["op"])[:18] for s in schedule]
    left, top, right = 80, 62, 20
    bottom = 34 + max((text_width(o, LABEL) for o in ops), default=0) + 16
    ph = 400
    pw = width - left - right
    sc = Scene(width, round(top + ph + bottom))
    xs = pw / steps

    def y(off: float) -> float:
        return top + ph - off / arena * ph

    sc.text(left, 20, f"{Path(info['model']).name}: arena {info['arena_bytes']:,} B, lower bound "
            f"{info['lower_bound_bytes']:,} B, gap {info['gap_bytes']:,} B", size=14)
    x = left
    for color, text in KINDS.values():
        sc.rect(x, 32, 12, 12, color)
        sc.text(x + 16, 42, text, size=LABEL + 1)
        x += 16 + text_width(text, LABEL + 1) + 18
    for t in nice_ticks(arena):
        sc.line(left, y(t), left + pw, y(t), "#e0e0e0")
        sc.text(left - 5, y(t) + 3, f"{t:,}", size=LABEL, anchor="end")
    kinds = _kinds(info)
    boxes = {}
    for i, b in enumerate(info["buffers"]):
        if b["size"] == 0:
            continue
        kind, label = kinds[b["name"]]
        color = TENSOR_COLORS[i % len(TENSOR_COLORS)] if kind == "tensor" else KINDS[kind][0]
        x0, w = left + b["first_use"] * xs, (b["last_use"] - b["first_use"] + 1) * xs
        y0, h = y(b["offset"] + b["size"]), max(y(b["offset"]) - y(b["offset"] + b["size"]), 0.5)
        sc.rect(x0, y0, w, h, color, title=f"{label} ({b['tensor']}): {b['size']:,} B at offset {b['offset']:,}, "
                                            f"steps {b['first_use']}..{b['last_use']}")
        boxes[b["name"]] = (x0, y0, w, h)
    for o in info.get("memory", {}).get("overlaps", ()):  # the bytes an output shares with its input
        x0, y0 = left + o["step"] * xs, y(o["offset"] + o["shared_bytes"])
        sc.rect(x0, y0, xs, max(y(o["offset"]) - y0, 0.5), KINDS["overlap"][0],
                title=f"step {o['step']}: {o['output']} over {o['input']} ({o['shift']:+} B), "
                      f"{o['shared_bytes']:,} B shared")
    offsets = {b["name"]: b["offset"] for b in info["buffers"]}
    for step, f in fused.items():  # a fused step's line buffers: the start of its scratch
        lo = offsets[f"scratch{step}"]
        y0 = y(lo + sum(f["line_bytes"]))
        sc.rect(left + step * xs, y0, xs, max(y(lo) - y0, 0.5), KINDS["fused"][0],
                title=f"step {step}: fused {' -> '.join(f['tflite'])}, line buffers "
                      f"{' + '.join(f'{n:,}' for n in f['line_bytes'])} B")
    taken = list(boxes.values())
    for name, (x0, y0, w, h) in boxes.items():
        kind, label = kinds[name]
        if not _label(sc, label, x0, y0, w, h) and kind != "tensor":
            _label_above(sc, label, x0, y0, taken)
    sc.line(left, top + ph, left + pw, top + ph)
    sc.line(left, top, left, top + ph)
    every = max(1, round(LABEL * 1.4 / xs))  # op names need about 1.4 font sizes of width each
    for s in range(0, steps, every):
        cx = left + (s + 0.5) * xs
        sc.text(cx, top + ph + 13, str(s), size=LABEL, anchor="middle")
        if s < len(ops):
            sc.text(cx + 3, top + ph + 22, ops[s], size=LABEL, anchor="end", vertical=True)
    sc.text(left + pw / 2, sc.height - 6, "schedule step and its op", size=LABEL + 1, anchor="middle")
    sc.text(16, top + ph / 2, "arena offset (bytes)", size=LABEL + 1, anchor="middle", vertical=True)
    return sc


def _label(sc: Scene, label: str, x0: float, y0: float, w: float, h: float) -> bool:
    """The buffer's label inside its rectangle: across, else along a tall narrow one, else smaller."""
    for size in (LABEL, 7):
        if text_width(label, size) + 4 <= w and h >= size + 2:
            sc.text(x0 + 2, y0 + h / 2 + size * 0.35, label, size=size)
            return True
        if text_width(label, size) + 4 <= h and w >= size + 2:
            sc.text(x0 + w / 2 + size * 0.35, y0 + h - 2, label, size=size, vertical=True)
            return True
    return False


def _label_above(sc: Scene, label: str, x0: float, y0: float, taken: list) -> None:
    """A small buffer's label just above it, where that overlaps no buffer and no other such label."""
    box = (x0 + 1, y0 - 9, text_width(label, 7), 7)
    if box[1] > 0 and not any(_overlap(box, t) for t in taken):
        sc.text(box[0], y0 - 2, label, size=7)
        taken.append(box)


def _overlap(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def write_picture(info: dict[str, Any], path: str | Path) -> Path:
    return scene(info).write(path)
