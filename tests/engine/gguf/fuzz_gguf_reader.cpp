// libFuzzer target for the GGUF reader (preset `fuzz`):
//   ./build/fuzz/tests/engine/gguf/fuzz_gguf_reader -max_total_time=600 tests/data/gguf-malformed
// Every input must either parse or be refused with an error; any crash,
// sanitizer report or leak is a bug.
#include <hearth/engine/gguf/reader.h>

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hearth::gguf::ReaderLimits limits;
  limits.max_metadata_bytes = 64ull << 20;  // keep the fuzzer's memory in check
  auto file = hearth::gguf::GgufFile::from_bytes({data, size}, "fuzz", limits);
  if (!file.ok()) return 0;
  // Touch what a loader would touch.
  uint64_t sum = 0;
  for (const auto& t : file->tensors()) {
    auto bytes = file->tensor_data(t);
    if (!bytes.empty()) sum += bytes.front() + bytes.back();
  }
  (void)file->get_string_array("tokenizer.ggml.tokens");
  (void)file->chat_template();
  return static_cast<int>(sum & 0);
}
