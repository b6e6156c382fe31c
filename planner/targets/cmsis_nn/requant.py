"""The requantization prover of the DSP paths: which layers may use the fast epilogue.

For accumulators whose range is known at compile time (`acc_bounds`: weights, bias and the int8
input range), `requant_records` proves per output channel that TFLM's double-rounding
requantization equals SMMULR(2 * acc, m) followed by one rounding add and an arithmetic shift, with
no int32 overflow anywhere in the range (mcu_cmsis_rq in mcu_cmsis_dsp.h). A layer gets the `rq`
constant only when every channel has a proof; otherwise it takes the exact general path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from mcuforge.ir import quant
from mcuforge.ir.ops import _common as c

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def acc_bounds(bias: np.ndarray, taps: np.ndarray, x_lo: int, x_hi: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel, the smallest and largest accumulator bias + sum(x * w) over inputs x in
    [x_lo, x_hi] (taps: [channels, K] weights). A tap may also add nothing (a depthwise border pixel
    skips its padded taps), so each tap's range includes 0; bounds of the exact integers (int64)."""
    w = taps.astype(np.int64)
    ends = np.stack([w * x_lo, w * x_hi, np.zeros_like(w)])
    b = np.asarray(bias, dtype=np.int64).reshape(-1)
    return b + ends.min(axis=0).sum(axis=1), b + ends.max(axis=0).sum(axis=1)


def requant_records(lo: np.ndarray, hi: np.ndarray, mult: np.ndarray, shift: np.ndarray, out_offset: int,
                    act_min: int, act_max: int) -> np.ndarray | None:
    """The DSP kernels' fast requantization records {m, add, right} per channel (see mcu_cmsis_rq in
    mcu_cmsis_dsp.h), or None when a channel has no proof, the layer then taking the general path.

    For accumulators in [lo, hi] (int32, and no int32 wrap-around in the kernel's sums), a channel
    gets {m, 2^(right-1) + (out_offset << right), right} when right = -shift >= 1, 2 * acc fits in
    int32 (then SMMULR(2 * acc, m) is TFLM's doubling high multiply; with m >= 0 it is monotonic, so
    its extremes bound y) and y + add and y + add - 1 cannot overflow; otherwise {0, 2 * v + 1, 1}
    when the clamped output is one value v over the whole range (requantization is monotonic for
    m >= 0 and no wrap in acc << left)."""
    records = []
    for l, h, m, s in zip(lo.tolist(), hi.tolist(), mult.tolist(), shift.tolist()):
        if not (INT32_MIN <= l <= h <= INT32_MAX) or m < 0:
            return None
        right = -s
        if right >= 1 and -(2**30) <= l and h < 2**30:
            y_lo, y_hi = (int(quant.saturating_rounding_doubling_high_mul(v, m)) for v in (l, h))
            add = (1 << (right - 1)) + (out_offset << right)
            # add itself is an int32 record word (a large right shift with a negative offset can take it
            # below INT32_MIN even where y_lo + add would fit)
            if INT32_MIN <= add <= INT32_MAX and INT32_MIN <= y_lo + add - 1 and y_hi + add <= INT32_MAX:
                records.append((m, add, right))
                continue
        left = max(s, 0)
        if INT32_MIN <= l << left and h << left <= INT32_MAX:
            v_lo, v_hi = (int(c.requantize_clamp(np.int64(v), m, s, out_offset, act_min, act_max)) for v in (l, h))
            if v_lo == v_hi:
                records.append((0, 2 * v_lo + 1, 1))
                continue
        return None
    return np.array(records, dtype=np.int32).reshape(-1)


def with_rq(consts: dict[str, np.ndarray], params: Mapping[str, Any], lo: np.ndarray, hi: np.ndarray) -> None:
    """Adds the `rq` constant when requant_records proves the fast path for every channel."""
    rq = requant_records(lo, hi, consts["multiplier"].astype(np.int64), consts["shift"].astype(np.int64),
                         params["output_offset"], params["act_min"], params["act_max"])
    if rq is not None:
        consts["rq"] = rq
