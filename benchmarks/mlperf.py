"""The benchmark set shared by the scripts in this folder: the four MLPerf Tiny int8 models, by
short name (the display name is its upper case)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MLPERF = {name: ROOT / "tests" / "fixtures" / "mlperf" / file for name, file in (
    ("kws", "kws_ref_model.tflite"),
    ("vww", "vww_96_int8.tflite"),
    ("ic", "pretrainedResnet_quant.tflite"),
    ("ad", "ad01_int8.tflite"),
)}
