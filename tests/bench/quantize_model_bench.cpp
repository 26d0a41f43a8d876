// Whole-model quantization throughput: F16 -> Q4_K_M with 2 threads, in MB/s
// of F16 input (the target is >= 100 MB/s on 2 cores). The model is a
// ~300 MB random F16 file with Llama-like shapes (n_embd 2048, n_ff 8192, GQA
// 32/8), written once to the temporary folder and removed at exit.
#include <benchmark/benchmark.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/quant/fp16.h>
#include <hearth/engine/tools/quantize_model.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace hearth;

constexpr int64_t kEmbd = 2048, kFf = 8192, kLayers = 2, kKv = 512, kVocab = 8192;

fs::path model_file() {
  static const fs::path path = [] {
    const fs::path p = fs::temp_directory_path() / "hearth_bench_quantize_f16.gguf";
    gguf::GgufWriter w;
    w.add_metadata("general.architecture", gguf::make_string("llama"));
    w.add_metadata("llama.block_count", gguf::make_uint32(kLayers));
    w.add_metadata("llama.attention.head_count", gguf::make_uint32(32));
    w.add_metadata("llama.attention.head_count_kv", gguf::make_uint32(8));
    std::vector<gguf::TensorSpec> specs = {{"token_embd.weight", DType::F16, {kEmbd, kVocab}},
                                           {"output.weight", DType::F16, {kEmbd, kVocab}},
                                           {"output_norm.weight", DType::F32, {kEmbd}}};
    for (int64_t l = 0; l < kLayers; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      specs.push_back({b + "attn_q.weight", DType::F16, {kEmbd, kEmbd}});
      specs.push_back({b + "attn_k.weight", DType::F16, {kEmbd, kKv}});
      specs.push_back({b + "attn_v.weight", DType::F16, {kEmbd, kKv}});
      specs.push_back({b + "attn_output.weight", DType::F16, {kEmbd, kEmbd}});
      specs.push_back({b + "ffn_gate.weight", DType::F16, {kEmbd, kFf}});
      specs.push_back({b + "ffn_up.weight", DType::F16, {kEmbd, kFf}});
      specs.push_back({b + "ffn_down.weight", DType::F16, {kFf, kEmbd}});
      specs.push_back({b + "attn_norm.weight", DType::F32, {kEmbd}});
      specs.push_back({b + "ffn_norm.weight", DType::F32, {kEmbd}});
    }
    for (const auto& s : specs) (void)w.add_tensor(s);
    if (!w.begin(p).ok()) return p;
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (const auto& s : specs) {
      int64_t n = 1;
      for (int64_t d : s.dims) n *= d;
      std::vector<uint8_t> bytes(static_cast<size_t>(n) * (s.type == DType::F16 ? 2 : 4));
      for (int64_t i = 0; i < n; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        // Roughly normal weights of scale 0.02: sum of two uniforms.
        const float u = static_cast<float>((state >> 40) & 0xffff) / 65536.0f +
                        static_cast<float>((state >> 16) & 0xffff) / 65536.0f - 1.0f;
        if (s.type == DType::F16) {
          const uint16_t h = quant::fp32_to_fp16(0.03f * u);
          std::memcpy(bytes.data() + 2 * i, &h, 2);
        } else {
          const float one = 1.0f;
          std::memcpy(bytes.data() + 4 * i, &one, 4);
        }
      }
      (void)w.write_tensor_data(bytes);
    }
    (void)w.finish();
    return p;
  }();
  // Removed when the program exits.
  struct Remover {
    fs::path p;
    ~Remover() {
      std::error_code ignored;
      fs::remove(p, ignored);
    }
  };
  static const Remover remover{path};
  return path;
}

void BM_QuantizeF16ToQ4_K_M(benchmark::State& state) {
  const fs::path in = model_file();
  const fs::path out = fs::temp_directory_path() / "hearth_bench_quantize_q4_k_m.gguf";
  tools::QuantizeOptions options;
  options.target = tools::QuantTarget::Q4_K_M;
  options.threads = 2;
  options.error_report = state.range(0) ? tools::ErrorReport::Compute : tools::ErrorReport::Skip;
  uint64_t input = 0;
  for (auto _ : state) {
    auto r = tools::quantize_model(in, out, options);
    if (!r.ok()) {
      state.SkipWithError(r.error().message.c_str());
      break;
    }
    input += r->input_bytes;
  }
  state.SetBytesProcessed(static_cast<int64_t>(input));
  state.counters["input_MB"] = static_cast<double>(input) / 1e6 / static_cast<double>(state.iterations());
  fs::remove(out);
}
BENCHMARK(BM_QuantizeF16ToQ4_K_M)->ArgName("error_report")->Arg(0)->Arg(1)->Unit(benchmark::kSecond)
    ->Iterations(2)->UseRealTime();

}  // namespace
