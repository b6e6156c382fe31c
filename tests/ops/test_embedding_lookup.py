"""EMBEDDING_LOOKUP against TFLite Micro: the numpy reference and the portable C, float32 and int8
tables copied as stored, an int8 table dequantized to float32 (TFLM's hybrid path), tables of rank
2 to 4, repeated indices and every row; and the rules (and what an index out of range gives)."""

from __future__ import annotations

import numpy as np
import pytest
from elementwise_cases import Model, check, problems, values

# (table shape, number of lookups)
SHAPES = [((10, 4), 6), ((7, 3, 5), 9), ((5, 2, 3, 2), 5), ((1, 8), 3), ((300, 16), 300)]


def lookups(rng, rows: int, n: int) -> np.ndarray:
    idx = rng.integers(0, rows, size=n)
    idx[: min(n, rows)] = np.arange(min(n, rows))[::-1]  # every row at least once where n allows
    return idx.astype(np.int32)


def test_lookup(tmp_path):
    rng = np.random.default_rng(61)
    m = Model()
    sets = []
    for table_dtype, out_dtype in (("float32", "float32"), ("int8", "int8"), ("int8", "float32")):
        for k, (shape, n) in enumerate(SHAPES):
            tq = (float(np.float32(10 ** rng.uniform(-3, 0))), 0) if out_dtype == "float32" and table_dtype == "int8" \
                else ((0.05, -3) if table_dtype == "int8" else None)
            table = m.input(values(rng, shape, table_dtype), quant=tq, const=k != 3)
            idx = m.input(lookups(rng, shape[0], n))
            sets.append((len(m.data) - 1, shape[0], n))
            oq = (0.3, 7) if out_dtype == "int8" else None
            m.op("EMBEDDING_LOOKUP", [idx, table], (n, *shape[1:]), out_dtype, quant=oq)
    extra = []
    for _ in range(2):
        data = list(m.data)
        for pos, rows, n in sets:
            data[pos] = lookups(rng, rows, n)
        extra.append(data)
    check(tmp_path, m, [m.data] + extra)


def test_rules():
    m = Model()
    t8 = np.zeros((4, 3), np.int8)
    m.op("EMBEDDING_LOOKUP", [m.input(np.zeros((2, 1), np.int32)), m.input(t8, quant=(0.1, 0), const=True)],
         (2, 3), "int8", quant=(0.1, 0))
    m.op("EMBEDDING_LOOKUP", [m.input(np.zeros(2, np.int32)), m.input(t8.astype(np.int16), quant=(0.1, 0),
                                                                       const=True)], (2, 3), "int16", quant=(0.1, 0))
    m.op("EMBEDDING_LOOKUP", [m.input(np.zeros(2, np.int32)), m.input(t8.astype(np.float32), const=True)],
         (2, 3), "int8", quant=(0.1, 0))
    m.op("EMBEDDING_LOOKUP", [m.input(np.zeros(2, np.int32)), m.input(t8, quant=(0.1, 2), const=True)],
         (2, 3), "float32")
    found = problems(m.finish())
    assert [p[0] for p in found] == list(range(4)), found
    assert found[0][2] == "The lookup (input 1) must be a 1-D int32 tensor (got int32[2, 1])"
    assert "(table int16, output int16)" in found[1][2]
    assert "(table float32, output int8)" in found[2][2]
    assert found[3][2].startswith("An int8 table dequantized to a float32 output must be quantized per tensor "
                                  "with zero point 0") and "zero point 2)" in found[3][2]


def test_index_out_of_range_stops_the_run_as_tflm(tmp_path):
    """TFLM stops with an error; so does the generated run (<PREFIX>_ERR_INDEX, -2), while in-range
    indices run."""
    from mcuforge.driver import Options, compile_model
    from mcuforge.errors import McuforgeError
    from mcuforge.oracle import OracleError, run_tflm
    from _opmodels import run_c

    m = Model()
    table = np.arange(1, 13, dtype=np.int8).reshape(4, 3)
    m.op("EMBEDDING_LOOKUP", [m.input(np.array([1, 4, -1], np.int32)), m.input(table, quant=(0.1, 0), const=True)],
         (3, 3), "int8", quant=(0.1, 0))
    blob = m.finish()
    try:
        run_tflm(blob, [m.data])
        raise AssertionError("TFLM ran an out-of-range lookup")
    except OracleError:
        pass
    path = tmp_path / "m.tflite"
    path.write_bytes(blob)
    compiled = compile_model(path, Options(targets=("c",)))
    with pytest.raises(McuforgeError, match=r"returned -2 \(an index input out of range"):
        run_c(compiled, [m.data])
    inside = [np.array([3, 0, 1], np.int32)]
    (out,), = run_c(compiled, [inside])
    ((want,), _), = run_tflm(blob, [inside])
    assert out.tolist() == want.tolist() == [[10, 11, 12], [1, 2, 3], [4, 5, 6]]
