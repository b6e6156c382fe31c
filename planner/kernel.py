"""KernelCall: what lowering produces for one lifted function, and everything later stages read.

A KernelCall names the C function to call and the kernel source it lives in, and holds its
compile-time parameters and precomputed
constants (weights in the layout the kernel reads, folded biases, per-channel multipliers and
shifts), its scratch size, and the operator information that survives lowering (op name and kind,
attributes, the TFLite operators it came from). `evaluate` is a numpy model of exactly what the
kernel computes from those constants, so the lowered program can be checked bit-exact before any C
exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
from mcuforge.ir.expr import OpSource
from mcuforge.ir.registry import OpKind
from mcuforge.ir.types import TensorType


@dataclass(frozen=True)
class OpInfo:
    """Operator information kept through lowering (for reports, profiler, debugger)."""

    op: str  # registry op name of the composite's root, e.g. "conv_2d"
    kind: OpKind
    attrs: Mapping[str, Any]
    sources: tuple[OpSource, ...]  # TFLite operator index and name(s)
    target: str
    composite: str

    @property
    def tflite(self) -> str:
        return ", ".join(str(s) for s in self.sources)


@dataclass(frozen=True)
class Overlap:
    """How far the kernel's output may overlap its activation input `input`: with the output's base
    at most `max_shift` bytes above that input's base (base(out) - base(in) <= max_shift, so a
    negative value puts the output below the input), no write lands on an input byte the kernel
    still has to read, on every build path (plain C, DSP, Helium). Derived from the kernel's loop
    order next to the kernel call in the lowering; planner/overlap.py proves each plan that uses it
    by simulating that order."""

    input: int
    max_shift: int
    # The lowest shift allowed (None: any below max_shift; 0 with max_shift 0: exactly over the input).
    min_shift: int | None = None
    # Kernel parameters the overlap needs, when the kernel's fastest order does not allow it (they
    # cost instructions: the planner sets them only on the layers whose overlap it uses).
    needs: tuple[tuple[str, Any], ...] = ()
    cost: str = ""  # what those parameters cost, for the report
    cost_instructions: int = 0  # an estimate of the instructions they add (the planner's budget)
    scratch_bytes: int | None = None  # the kernel's scratch with `needs` set (None: unchanged)
    scratch_check: str = ""  # its C expression (KernelCall.scratch_check)
    # What the kernel allows without `needs` (a declaration of its own, needing nothing), if anything.
    without: "Overlap | None" = None


def raster_overlap(p: Mapping[str, Any], block: int, buffered: bool) -> Overlap | None:
    """The overlap a windowed kernel allows when it computes output pixels in raster order in blocks
    of at most `block` pixels, starting anywhere: `buffered` when a block's input windows are all
    read (copied to scratch) before its first write, otherwise its writes interleave with its reads.

    A block's writes end at (its last pixel + 1) * out_c; the input bytes still to be read start at
    the lowest first-read byte of the pixels not yet finished (buffered: after the block, else from
    its first pixel). The first read byte of a window is its top-left tap clipped to the input (a
    lower bound of what it reads). None when no overlap is possible."""
    oh, ow, ic, oc = p["out_h"], p["out_w"], p["in_c"], p["out_c"]
    oy, ox = np.divmod(np.arange(oh * ow), ow)
    iy = np.clip(oy * p["stride_h"] - p["pad_top"], 0, p["in_h"] - 1)
    ix = np.clip(ox * p["stride_w"] - p["pad_left"], 0, p["in_w"] - 1)
    first = (iy * p["in_w"] + ix) * ic
    later = np.minimum.accumulate(first[::-1])[::-1]  # lowest first read of pixel n or after
    n = np.arange(oh * ow)
    if buffered:  # block [n - b, n) done: the reads left start at pixel n (none left at the end)
        shift = (later[1:] - n[1:] * oc).min(initial=oh * ow * oc)
    else:  # block [n, n + b): its writes reach min(n + b, pixels) pixels
        shift = (later - np.minimum(n + block, oh * ow) * oc).min()
    return Overlap(0, int(shift)) if shift > -oh * ow * oc else None


@dataclass(frozen=True, eq=False)
class KernelCall:
    function: str  # the C function called, e.g. "mcu_cmsis_conv2d_s8" ("" for a view)
    source: str  # the kernel's file stem in the target's sources: <source>.c ("" for a view)
    template: str  # Jinja template (relative to the target's template dir) rendering the call
    inputs: tuple[TensorType, ...]  # types of the activation arguments, in call order
    output: TensorType
    params: Mapping[str, Any]  # compile-time scalars and small tuples
    constants: Mapping[str, np.ndarray]  # arrays emitted to flash, by role ("weights", "bias", ...)
    scratch_bytes: int
    info: OpInfo
    evaluate: Callable[[list[np.ndarray], "KernelCall"], np.ndarray]
    # The kernel emits no code: its output is its first input's bytes, reinterpreted.
    view: bool = False
    # The kernel tolerates its output placed exactly over input `in_place_input` (reads each element
    # before writing it): the planner may share the bytes when that input dies at this call.
    in_place: bool = False
    in_place_input: int = 0
    # The kernel tolerates its output overlapping an input below a distance (see Overlap).
    overlap: Overlap | None = None
    # For each argument of the original op: which kernel input it is (None: a constant).
    arg_map: tuple[int | None, ...] = ()
    # For the generic call template (codegen/templates/call.c.j2): the parameter struct `params`
    # fills, and how many op arguments the kernel takes (absent optional ones passed as NULL).
    struct: str = ""
    op_args: int | None = None
    # The C expression of the scratch size the kernel's header declares (e.g.
    # "MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES(54)"): the generated C checks scratch_bytes covers it.
    scratch_check: str = ""
    # The C function returns non-zero for a run-time index input out of range (as TFLM's invoke
    # fails): the generated run returns <PREFIX>_ERR_INDEX after it.
    fails: bool = False

    def run(self, args: list[np.ndarray]) -> np.ndarray:
        out = np.asarray(self.evaluate(args, self))
        if out.dtype != self.output.np_dtype or out.shape != self.output.shape:
            raise AssertionError(f"{self.function} ({self.info.tflite}) produced {out.dtype}{list(out.shape)}, "
                                 f"expected {self.output}")
        return out
