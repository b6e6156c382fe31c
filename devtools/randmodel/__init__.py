"""Random valid int8 models (seeded), for differential testing against TFLite Micro.

A model is described by a *spec*, plain JSON data:

    {"seed": 7, "input": [1, 9, 9, 4], "input_q": [0.04, -3],
     "ops": [{"op": "conv", "src": 0, "oc": 4, "k": [3, 3], "pad": "SAME", ...},
             {"op": "binary", "kind": "add", "src": 1, "src2": 0}, ...]}

Value 0 is the graph input, value k + 1 the output of op k; `src`/`src2`/`srcs` name values. `build`
turns a spec into .tflite bytes with `devtools.tflite_writer`. It adapts every op to the shapes it
actually meets and skips an op it cannot apply (its value then stands for its first source), so
every spec -- also one a shrinker has cut down -- gives a valid model.

Quantization is calibrated as a post-training quantizer would: a few random int8 inputs flow through
the graph in floating point (weights and activations fake-quantized), and each output's scale and
zero point are taken from the observed range, widened or narrowed by a per-op jitter (so some values
saturate, but not all). Weights are int8 with realistic scales per tensor or per channel; biases are
int32 at the input scale times the weight scale, with magnitudes like the accumulator's.

Graph outputs are every value no op reads (branches that are not merged become extra outputs). An
op whose output is the same for two calibration inputs is skipped too (a vacuous, saturated branch).

Modules: `graph` (the builder: `build`, `GraphBuilder`, the float calibration); `specs` (random
specs, `random_spec`, and a MobileNetV2 spec for the compile-limit test and benchmark,
`mobilenet_v2_spec`); `check` (the differential run, `check_models`: compile, batched host C build,
TFLM in one child process, byte comparison); `shrinking` (shrinking a failing spec and keeping it as a
fixture: `shrink_failure`, `save_fixture`). Their public names are importable from here too.
Command line: tools/random_models.py.
"""

from devtools.randmodel.graph import GraphBuilder, build
from devtools.randmodel.check import Outcome, check_models
from devtools.randmodel.shrinking import check_spec, save_fixture, shrink, shrink_failure
from devtools.randmodel.specs import MOBILENET_V2_BLOCKS, mobilenet_v2_spec, random_spec

__all__ = ["GraphBuilder", "build", "Outcome", "check_models", "check_spec", "save_fixture", "shrink",
           "shrink_failure", "MOBILENET_V2_BLOCKS", "mobilenet_v2_spec", "random_spec"]
