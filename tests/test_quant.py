"""TFLM fixed-point primitives on hand-checked values and edge cases."""

import numpy as np
import pytest
from mcuforge.ir import quant


@pytest.mark.parametrize("real, mult, shift", [
    (0.5, 1 << 30, 0),
    (1.0, 1 << 30, 1),
    (0.25, 1 << 30, -1),
    (0.0, 0, 0),
    (0.75, 1610612736, 0),
    (2.0 ** -40, 0, 0),          # flushed to zero below 2**-32
    (2.0 ** -32, 1 << 30, -31),  # the smallest multiplier kept
    (2.0 ** 40, 1 << 30, 41),    # not capped: TFLM's shift (its requantization is then undefined)
])
def test_quantize_multiplier(real, mult, shift):
    assert quant.quantize_multiplier(real) == (mult, shift)


def test_quantize_multiplier_round_up_to_next_power():
    # A significand that rounds up to 2**31 moves to the next exponent.
    m, s = quant.quantize_multiplier(1.0 - 2.0 ** -40)
    assert (m, s) == (1 << 30, 1)


def test_requantization_refuses_a_left_shift_of_31():
    """A left shift of 31 or more is undefined in TFLM: the model raises rather than guessing."""
    assert int(quant.multiply_by_quantized_multiplier(1, 1 << 30, 30)) == 1 << 29  # 1 * 2**30 * 0.5
    with pytest.raises(ValueError, match="left shift of 31"):
        quant.multiply_by_quantized_multiplier(np.array([1, 2]), 1 << 30, np.array([0, 31]))


def test_srdhm_saturates_only_at_int32_min_squared():
    assert int(quant.saturating_rounding_doubling_high_mul(-(2**31), -(2**31))) == 2**31 - 1
    assert int(quant.saturating_rounding_doubling_high_mul(-(2**31), 2**31 - 1)) == -(2**31) + 1


@pytest.mark.parametrize("x, exp, want", [(5, 1, 3), (-5, 1, -3), (4, 1, 2), (6, 2, 2), (-6, 2, -2),
                                          (-7, 2, -2), (7, 2, 2), (0, 5, 0), (-1, 1, -1), (1, 1, 1)])
def test_rounding_divide_by_pot_rounds_half_away_from_zero(x, exp, want):
    assert int(quant.rounding_divide_by_pot(x, exp)) == want


def test_multiply_by_quantized_multiplier_is_double_rounding():
    # 0.5 * x with a right shift: TFLM rounds twice (high-mul, then shift).
    m, s = quant.quantize_multiplier(0.3)
    xs = np.arange(-1000, 1000)
    got = quant.multiply_by_quantized_multiplier(xs, m, s)
    step1 = quant.saturating_rounding_doubling_high_mul(xs, m)
    assert np.array_equal(got, quant.rounding_divide_by_pot(step1, -s))
    assert np.max(np.abs(got - np.round(xs * 0.3))) <= 1


def test_activation_range():
    assert quant.activation_range("NONE", 0.1, 5) == (-128, 127)
    assert quant.activation_range("RELU", 0.1, -10) == (-10, 127)
    assert quant.activation_range("RELU6", 0.1, -10) == (-10, 50)
    assert quant.activation_range("RELU_N1_TO_1", 0.5, 0) == (-2, 2)
    with pytest.raises(ValueError):
        quant.activation_range("TANH", 0.1, 0)


def test_activation_bounds_beyond_int32_raise():
    """TFLM's Quantize refuses a bound whose round(bound / scale) leaves int32; zero point + bound
    must fit too (else an undefined conversion or overflow)."""
    assert quant.clamp_bound(6.0, 6.0 / 2**30, 5) == 2**30 + 5
    assert quant.clamp_bound(6.0, 6.0 / 2**31, 0) is None  # round() = 2**31
    assert quant.clamp_bound(-1.0, 1.0 / 2**31, 0) == -(2**31)  # exactly INT32_MIN fits
    assert quant.clamp_bound(-1.0, 1.0 / 2**31, -1) is None  # ... minus the zero point does not
    assert quant.activation_range("RELU", 1e-30, 3) == (3, 127)  # 0 / scale always fits
    with pytest.raises(ValueError, match="RELU6 bound 6"):
        quant.activation_range("RELU6", 1e-12, 0)
