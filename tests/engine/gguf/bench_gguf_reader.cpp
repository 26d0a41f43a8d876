// Opening a 1 GB model: parse and validate all metadata and tensor infos.
// The file is written once (sparse data section) with the real Llama 3
// vocabulary (128,256 tokens and 280,147 merges) and a Llama-3.2-1B-like
// tensor list, so the metadata is as heavy as a real model's.
#include <benchmark/benchmark.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>

namespace {

using namespace hearth;
using namespace hearth::gguf;

std::filesystem::path make_big_model() {
  const auto path = std::filesystem::temp_directory_path() / fmt::format("hearth-bench-1gb-{}.gguf", ::getpid());
  auto vocab = GgufFile::open(std::filesystem::path(HEARTH_TEST_DATA_DIR) / "vocab" / "vocab-llama3.gguf");
  if (!vocab) throw std::runtime_error(vocab.error().message);
  GgufWriter w;
  for (const auto& kv : vocab->metadata()) w.add_metadata(kv.key, kv.value);
  // 16 layers x 9 tensors of a 2048-wide model at Q8_0 is about 1 GB.
  const int64_t n = 2048, ff = 8192;
  for (int layer = 0; layer < 16; ++layer) {
    auto add = [&](const char* name, std::vector<int64_t> dims, DType type) {
      (void)w.add_tensor(TensorSpec{fmt::format("blk.{}.{}", layer, name), type, std::move(dims)});
    };
    add("attn_q.weight", {n, n}, DType::Q8_0);
    add("attn_k.weight", {n, 512}, DType::Q8_0);
    add("attn_v.weight", {n, 512}, DType::Q8_0);
    add("attn_output.weight", {n, n}, DType::Q8_0);
    add("ffn_gate.weight", {n, ff}, DType::Q8_0);
    add("ffn_up.weight", {n, ff}, DType::Q8_0);
    add("ffn_down.weight", {ff, n}, DType::Q8_0);
    add("attn_norm.weight", {n}, DType::F32);
    add("ffn_norm.weight", {n}, DType::F32);
  }
  if (!w.begin(path).ok()) throw std::runtime_error("cannot write benchmark model");
  return path;  // header only: the data section is extended sparsely below
}

void BM_OpenOneGigabyteModel(benchmark::State& state) {
  // Removes the 1 GB sparse file when the benchmark program exits.
  struct TempModel {
    std::filesystem::path path;
    ~TempModel() { std::filesystem::remove(path); }
  };
  static const TempModel model{[] {
    auto p = make_big_model();
    std::filesystem::resize_file(p, 1100ull << 20);
    return p;
  }()};
  const auto& path = model.path;
  for (auto _ : state) {
    auto file = GgufFile::open(path);
    if (!file) {
      state.SkipWithError(file.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(file->tensors().size());
  }
  state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
}
BENCHMARK(BM_OpenOneGigabyteModel)->Unit(benchmark::kMillisecond);

}  // namespace
