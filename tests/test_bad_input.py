"""Bad input: each case is one clear line on stderr, exit code 2, no traceback, nothing else."""

import numpy as np
import pytest
from conftest import BAD, MLPERF_MODELS


def assert_clean_error(proc, *needles: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout
    assert len(err.splitlines()) == 1, err
    assert err.startswith("mcuforge: error: "), err
    for n in needles:
        assert n in err, (n, err)
    return err


@pytest.fixture
def kws_bytes():
    return MLPERF_MODELS["kws"].read_bytes()


@pytest.mark.parametrize("cut", [7, 64, 1000, 20000, -100])
def test_truncated_file(tmp_path, cli, kws_bytes, cut):
    p = tmp_path / "cut.tflite"
    p.write_bytes(kws_bytes[:cut])
    err = assert_clean_error(cli("inspect", p))
    assert "cut.tflite" in err


def test_garbage_file(tmp_path, cli):
    p = tmp_path / "noise.tflite"
    p.write_bytes(np.random.default_rng(1).integers(0, 256, 5000, dtype=np.uint8).tobytes())
    assert_clean_error(cli("inspect", p), "not a TFLite file")


def test_garbage_with_tflite_identifier(tmp_path, cli):
    rng = np.random.default_rng(2)
    blob = bytearray(rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
    blob[4:8] = b"TFL3"
    p = tmp_path / "fake.tflite"
    p.write_bytes(bytes(blob))
    err = assert_clean_error(cli("inspect", p))
    assert "fake.tflite" in err


def test_not_a_tflite_file(tmp_path, cli):
    p = tmp_path / "model.onnx"
    p.write_text("this is a text file, not a model\n" * 10)
    assert_clean_error(cli("inspect", p), "not a TFLite file")


def test_empty_file_directory_and_missing(tmp_path, cli):
    (tmp_path / "empty.tflite").write_bytes(b"")
    assert_clean_error(cli("inspect", tmp_path / "empty.tflite"), "too short")
    assert_clean_error(cli("inspect", tmp_path), "is a directory")
    assert_clean_error(cli("verify", tmp_path / "nope.tflite"), "no such file")


def test_unsupported_ops_are_all_named_and_table_still_printed(cli):
    proc = cli("inspect", BAD / "unsupported_ops.tflite")
    assert_clean_error(proc, "2 unsupported operators", "#1 EXP: Input and output must be float32 (TFLM's EXP kernel "
                       "has no int8 variant) (got int8)", "#4 SIGN: operator not supported")
    table = proc.stdout
    assert table.count("UNSUPPORTED") == 2 and "CONV_2D" in table and "DEQUANTIZE" in table, table


def test_unsupported_ops_refused_by_verify(cli):
    assert_clean_error(cli("verify", BAD / "unsupported_ops.tflite", "-n", "1"), "#1 EXP: Input and output must be float32")


def test_float_model(cli):
    assert_clean_error(cli("inspect", BAD / "float_model.tflite"), "float32 model", "int8")


def test_int16_weights(tmp_path, cli):
    """int16 activations take int8 weights (16x8); int16 weights are refused, as TFLM refuses them."""
    from devtools.tflite_writer import ModelWriter

    w = ModelWriter()
    x = w.tensor((1, 4, 4, 2), "int16", scale=0.01)
    k = w.tensor((3, 1, 1, 2), "int16", data=np.ones((3, 1, 1, 2)), scale=0.01)
    y = w.tensor((1, 4, 4, 3), "int16", scale=0.01)
    w.op("CONV_2D", [x, k], [y], Padding="SAME", StrideW=1, StrideH=1)
    p = tmp_path / "int16_weights.tflite"
    p.write_bytes(w.finish([x], [y]))
    assert_clean_error(cli("inspect", p), "#0 CONV_2D", "int8", "weights are int16")


def test_dynamic_shape(cli):
    assert_clean_error(cli("inspect", BAD / "dynamic_shape.tflite"), "dynamic shape")


def test_several_subgraphs(cli):
    assert_clean_error(cli("inspect", BAD / "two_subgraphs.tflite"), "subgraphs", "single-subgraph")


def test_input_file_wrong_shape(tmp_path, cli):
    p = tmp_path / "x.npy"
    np.save(p, np.zeros((1, 49, 10), dtype=np.int8))
    assert_clean_error(cli("verify", MLPERF_MODELS["kws"], "--input", p), "input 0", "[1, 49, 10, 1]", "[1, 49, 10]")


def test_input_file_wrong_dtype(tmp_path, cli):
    """An integer array of another type is refused (a float array is quantized: tests/test_typed_api.py)."""
    p = tmp_path / "x.npy"
    np.save(p, np.zeros((1, 49, 10, 1), dtype=np.int16))
    assert_clean_error(cli("verify", MLPERF_MODELS["kws"], "--input", p), "input 0", "int8", "int16")


def test_input_file_not_an_array(tmp_path, cli):
    p = tmp_path / "x.npy"
    p.write_text("hello")
    assert_clean_error(cli("verify", MLPERF_MODELS["kws"], "--input", p), "x.npy")


def test_input_file_wrong_count(tmp_path, cli):
    a, b = tmp_path / "a.npy", tmp_path / "b.npy"
    np.save(a, np.zeros((1, 49, 10, 1), dtype=np.int8))
    np.save(b, np.zeros((1, 49, 10, 1), dtype=np.int8))
    assert_clean_error(cli("verify", MLPERF_MODELS["kws"], "--input", a, "--input", b), "1 input(s), got 2")
