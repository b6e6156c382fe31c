"""Development tools: the .tflite writer (`tflite_writer` over `tflite_codec`), the random-model
generator (`randmodel`), the malformed-model fuzzer (`fuzz`) and the recurrent-layer models
(`recurrent_models`).

Used by the tests, tools/ and benchmarks/, never by the product: the wheel does not ship this
package. Import it from a checkout (pytest puts the repository root on sys.path; tools/ and
benchmarks/ scripts do so themselves)."""
