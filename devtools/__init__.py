"""Development tools: the .tflite writer, the random-model generator and the malformed-model fuzzer.

Used by the tests, tools/ and benchmarks/, never by the product: the wheel does not ship this
package. Import it from a checkout (pytest puts the repository root on sys.path; tools/ and
benchmarks/ scripts do so themselves)."""
