"""TFLM's int16 sigmoid and tanh: a 256-entry table of sigmoid with linear interpolation
(reference_integer_ops::Logistic / Tanh for int16, the integer LSTM's gate activations).

The input is first scaled: x' = (x * multiplier + round) >> shift, where a multiplier of 0 means the
power-of-two case (multiplier 3 << shift, no shift). For sigmoid, |x'| indexes the table in steps of
2^9 (9 fraction bits interpolate); for tanh = 2 * sigmoid(2x) - 1 in steps of 2^8. Both are odd
about their midpoint, so the table covers |x'| only. Outputs are Q0.15.

`SIGMOID_TABLE` holds TFLM's table values (sigmoid(i / 24) in Q0.16, as TFLM tabulates them: no
closed formula in double reproduces all 256 entries, so they are data, read back entry by entry out
of TFLM's int16 TANH kernel by tests/ops/test_int16_unary.py). Used by LOGISTIC / TANH on int16 and
by the integer LSTM's gates; the C twin is firmware/include/mcuforge_int16_lut.h. Not an op module
(the leading underscore keeps it out of the registry scan). The C kernels receive the table as a constant array, so it lives in this one place.
"""

from __future__ import annotations

import numpy as np

SIGMOID_TABLE = np.array([
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794, 41432, 42064, 42688,
    43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443, 48964, 49475, 49975, 50464, 50942, 51409,
    51865, 52311, 52745, 53169, 53581, 53983, 54374, 54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433,
    57724, 58007, 58280, 58544, 58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110,
    61279, 61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990, 63090, 63186,
    63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030, 64090, 64148, 64204, 64257, 64308,
    64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652, 64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900,
    64926, 64950, 64974, 64997, 65019, 65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208,
    65221, 65234, 65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360, 65367,
    65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433, 65438, 65442, 65445, 65449,
    65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476, 65479, 65481, 65483, 65485, 65488, 65489, 65491,
    65493, 65495, 65497, 65498, 65500, 65501, 65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513,
    65514, 65515, 65516, 65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529, 65529, 65530, 65530,
    65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532, 65532, 65532, 65532, 65533, 65533, 65533,
    65533, 65533, 65533, 65533, 65533, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
], dtype=np.uint16)


def scale_input(x, multiplier: int, shift: int) -> np.ndarray:
    """TFLM's input scaling of both functions: (x * multiplier + round) >> shift in int32, the
    multiplier 0 standing for 3 << shift with no shift."""
    if multiplier == 0:
        multiplier, shift = 3 << shift, 0
    rnd = (1 << (shift - 1)) if shift > 0 else 0
    return (np.asarray(x, dtype=np.int64) * multiplier + rnd) >> shift


def _interpolate(a: np.ndarray, step_bits: int) -> np.ndarray:
    """(table[h] << step_bits) + frac * (table[h + 1] - table[h]) for |a| = h * 2^step_bits + frac."""
    t = SIGMOID_TABLE.astype(np.int64)
    h = np.minimum(a >> step_bits, 254)
    frac = a & ((1 << step_bits) - 1)
    return (t[h] << step_bits) + frac * (t[h + 1] - t[h])


def logistic_s16(x, multiplier: int = 0, shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Logistic on int16 (the LSTM's gates: multiplier 0, shift 0, Q3.12 in)."""
    v = scale_input(x, multiplier, shift)
    a = np.abs(v)
    r = np.where((a >> 9) >= 255, 0x7FFF << 10, _interpolate(a, 9))
    r = np.where(v >= 0, r + (1 << 9), (1 << 25) - r + (1 << 9) - 1)
    return (r >> 10).astype(np.int16)


def tanh_s16(x, multiplier: int = 0, shift: int = 0) -> np.ndarray:
    """reference_integer_ops::Tanh on int16."""
    v = scale_input(x, multiplier, shift)
    a = np.abs(v)
    r = np.where((a >> 8) >= 255, 0xFFFF << 8, _interpolate(a, 8))
    r = np.where(v >= 0, r - (1 << 23) + (1 << 7), -r + (1 << 23) + (1 << 7) - 1)
    return (r >> 8).astype(np.int16)


def tanh_input_scaling(scale_power: int) -> tuple[int, int]:
    """(multiplier, shift) TFLM's LSTM gives Tanh for an input of scale 2^scale_power
    (lstm_eval.cc, Tanh): input_left_shift = 15 + scale_power - 3; a negative one becomes a right
    shift of a times-3 multiplier; otherwise the multiplier 0 (power of two: 3 << shift)."""
    left = 15 + scale_power - 3
    return (3, -left) if left < 0 else (0, left)
