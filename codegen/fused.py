"""The C of a fused step (planner/fusion.py): a loop over the last layer's output rows; per row,
each earlier layer drops the rows of its line buffer no longer needed (moving the kept ones to the
buffer's start), computes the rows the next layer's windows need that it has not computed yet (a
band: its kernel called with its parameters for those rows), and the last layer computes the row.
Each band call is its layer's own template, rendered with in_h, out_h and pad_top as the band's
C variables (the parameter struct then a const local, not a static one in flash). The loop is the
one planner.fusion.schedule_rows simulates (line buffer sizes, bytes moved)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mcuforge.errors import IRError
from mcuforge.planner.fusion import FusedCall, row_bytes


def render_fused(kc: FusedCall, src: str, out: str, scratch: str, const: Mapping[str, str],
                 render_part: Callable[..., str]) -> str:
    """The fused step's code. `render_part(part, params, src, dst, scratch, const)` renders one
    kernel call (its template with those variables)."""
    ps = [k.params for k in kc.parts]
    n = len(ps)
    lines, off = [], 0
    for k, size in enumerate(kc.lines):
        lines.append(f"        int8_t *const line{k} = (int8_t *)((uint8_t *){scratch} + {off}); /* {size} B */")
        off += -(-size // 4) * 4
    code = ["    {",
            f"        /* fused: {', '.join(k.info.op + ' ' + k.info.tflite for k in kc.parts)}, row by row */",
            *lines,
            f"        void *const part_scratch = (void *)((uint8_t *){scratch} + {kc.part_scratch});",
            *[f'        _Static_assert({k.scratch_check} <= {kc.scratch_bytes - kc.part_scratch}, '
              f'"fused part {i}: scratch smaller than the kernel needs");' for i, k in enumerate(kc.parts)
              if k.scratch_check],
            "        int32_t " + ", ".join(f"lo{k} = 0, hi{k} = 0" for k in range(n - 1)) + ";",
            f"        for (int32_t r = 0; r < {ps[-1]['out_h']}; r += {kc.rows}) {{",
            f"            const int32_t want{n - 1}_lo = r, want{n - 1}_hi = r + {kc.rows} < {ps[-1]['out_h']} ? "
            f"r + {kc.rows} : {ps[-1]['out_h']};"]
    for k in range(n - 1, 0, -1):  # the rows of part k - 1's output that part k's rows need
        code.append(f"            const int32_t {_need(ps[k], f'want{k}', f'want{k - 1}')};")
    for k in range(n):
        source = (src, "0", str(ps[0]["in_h"])) if k == 0 else (f"line{k - 1}", f"lo{k - 1}", f"hi{k - 1}")
        const_k = {role.split("_", 1)[1]: name for role, name in const.items() if role.startswith(f"s{k}_")}
        if k == n - 1:
            dst, first, count = f"((int8_t *){out} + r * {row_bytes(ps[k], 'out')})", "r", f"want{k}_hi - r"
            code.append("            {")
        else:
            rb = row_bytes(ps[k], "out")
            code += [f"            if (want{k}_lo > lo{k}) {{ /* drop the rows no longer needed */",
                     f"                if (want{k}_lo < hi{k}) {{",
                     f"                    memmove(line{k}, line{k} + (want{k}_lo - lo{k}) * {rb}, "
                     f"(size_t)(hi{k} - want{k}_lo) * {rb});",
                     "                } else {",
                     f"                    hi{k} = want{k}_lo;",
                     "                }",
                     f"                lo{k} = want{k}_lo;",
                     "            }",
                     f"            if (want{k}_hi > hi{k}) {{"]
            dst, first, count = f"(line{k} + (hi{k} - lo{k}) * {rb})", f"hi{k}", f"want{k}_hi - hi{k}"
        code += _band(ps[k], source, first, count)
        body = render_part(kc.parts[k], {**ps[k], "in_h": "band_in_h", "out_h": "band_out_h",
                                          "pad_top": "band_pad_top"}, "band_src", dst, "part_scratch", const_k)
        code += [" " * 12 + line if line else line for line in _runtime_params(body).splitlines()]
        if k < n - 1:
            code.append(f"                hi{k} = want{k}_hi;")
        code.append("            }")
    code += ["        }", "    }"]
    return "\n".join(code)


def _need(p: Mapping, rows: str, need: str) -> str:
    """C declarations of the input rows [need_lo, need_hi) the windows of rows [rows_lo, rows_hi)
    read, clipped to the input (planner.fusion.needed_rows)."""
    span = (p["k_h"] - 1) * p["dil_h"]
    lo = f"{rows}_lo * {p['stride_h']} - {p['pad_top']}"
    hi = f"({rows}_hi - 1) * {p['stride_h']} - {p['pad_top']} + {span + 1}"
    return f"{need}_lo = {_clip(lo, p['in_h'])}, {need}_hi = {_clip(hi, p['in_h'])}"


def _clip(e: str, h: int) -> str:
    return f"(({e}) < 0 ? 0 : ({e}) > {h} ? {h} : ({e}))"


def _band(p: Mapping, source: tuple[str, str, str], first: str, count: str) -> list[str]:
    """Declarations of a band's input pointer and parameters: output rows [first, first + count)
    from the input rows [lo, hi) held at `base`. The band's first window starts at input row y; the
    rows held before it are skipped, or (y < 0) it starts in the real top padding."""
    base, lo, hi = source
    rb = row_bytes(p, "in")
    return [f"                const int32_t band_y = {first} * {p['stride_h']} - {p['pad_top']};",
            f"                const int32_t band_skip = band_y > {lo} ? band_y - {lo} : 0;",
            f"                const int8_t *const band_src = (const int8_t *){base} + band_skip * {rb};",
            f"                const int32_t band_in_h = {hi} - {lo} - band_skip;",
            f"                const int32_t band_pad_top = {lo} + band_skip - band_y;",
            f"                const int32_t band_out_h = {count};"]


def _runtime_params(body: str) -> str:
    """A kernel call's parameter struct as a const local (its band fields are variables)."""
    if body.count("static const ") != 1:
        raise IRError(f"a fused part's call has no single static parameter struct:\n{body}")
    return body.replace("static const ", "const ")
