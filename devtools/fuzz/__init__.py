"""Fuzzing with malformed models: mutate real .tflite files and check that every command ends with
exit 0 or one clean error line and exit 2 — no traceback, no hang, no memory blow-up, nothing
half-written on disk.

A model is decoded to plain data and encoded back with devtools.tflite_codec (whose
`encode_with_vectors` also says where each vector landed, so that a length prefix can be patched).
The modules, each usable alone:

    structural  mutations of the decoded data (`STRUCTURAL`): out-of-range indices, absurd
                shapes, cycles, empty or missing subgraphs, bad opcodes, quantization of the
                wrong length, wrong options ...
    mutant      one seeded mutant of a model (`mutate`): structural damage re-encoded, sometimes
                with a vector whose length claims gigabytes; or byte-level damage (bit flips,
                bytes, truncation, int32 overwrites, chunks)
    worker      one command on a mutant: the CLI's main() in a worker process (a mutant costs
                milliseconds, not an interpreter start) or the real `python -m mcuforge` entry
                point, under an address-space limit; a hang is a timeout that kills the worker;
                `judge` tells a clean ending from a failure
    campaign    `Campaign` runs `inspect`, `plan` and `compile` on each mutant, reruns a sample
                through the entry point to guard the exit codes and messages and, with `verify`,
                checks that a mutant that compiles is bit-exact with TFLite Micro (`verify --on
                reference`) or refused by it

`python tools/fuzz_models.py --seed S --count N --time-limit T` is the long run.
"""

from devtools.fuzz.campaign import Campaign, Failure, Report, source_models
from devtools.fuzz.mutant import Mutant, mutate
from devtools.fuzz.worker import (COMMANDS, MEMORY_LIMIT, Result, Worker, check_output_dir, judge,
                                  run_subprocess)

__all__ = ["Campaign", "Failure", "Report", "source_models", "Mutant", "mutate", "COMMANDS", "MEMORY_LIMIT",
           "Result", "Worker", "check_output_dir", "judge", "run_subprocess"]
