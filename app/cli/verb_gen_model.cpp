// hearth-cli gen-model: a random-weight model with a real model's shapes and a
// real vocabulary, quantized to a chosen type, so speed can be measured
// without downloading anything. The values are meaningless; the bytes moved
// per token are those of the real model.
#include <fmt/format.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <cstdio>
#include <thread>

#include "args.h"
#include "verbs.h"

namespace hearth::cli {
namespace {

struct Shape {
  const char* name;
  const char* arch;
  int64_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_ctx;
  float rope_base, rms_eps;
  bool qkv_bias;
  // Gemma 3: head size apart from n_embd / n_head, QK norms, post-attention
  // and post-FFN norms, sliding-window layers (5 local : 1 global) with their
  // own RoPE base, linear RoPE scaling on the global layers.
  int64_t head_dim = 0;  // 0: n_embd / n_head
  bool gemma3 = false;
  int64_t window = 0;
  float rope_base_swa = 0.0f;
  float rope_linear = 0.0f;  // scaling factor; 0: none
  bool qk_norm = false;      // per-head Q and K RMSNorm (Qwen3)
  // Mixture of experts (0: a dense feed-forward of n_ff).
  int64_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0;
  // gpt-oss: biases on attention, router and experts, attention sinks, the
  // FFN norm stored as post_attention_norm, YaRN (factor 32 over 4096
  // positions), windows on even layers, experts in MXFP4 whatever --type says.
  bool gpt_oss = false;
};

// Published configurations: Llama 3.2 1B (tied embeddings, GQA 32/8),
// Qwen2.5 0.5B (tied, GQA 14/2, Q/K/V biases), Gemma 3 1B and 4B (tied, head
// size 256, window 512 / 1024, 4B with linear RoPE scaling 8), SmolLM3 3B
// (tied, GQA 16/4, no RoPE on every 4th layer), Qwen3-30B-A3B (48 layers, 128
// experts of 768, 8 per token, heads of 128, untied output), gpt-oss-20b
// (24 layers of 2880, 64 heads of 64, 8 KV heads, 32 experts of 2880, 4 per
// token, window 128 on even layers, RoPE base 150000 with YaRN); `tiny*` are
// the fixtures' shapes.
constexpr Shape kShapes[] = {
    {"llama3.2-1b", "llama", 2048, 16, 32, 8, 8192, 131072, 500000.0f, 1e-5f, false},
    {"qwen2.5-0.5b", "qwen2", 896, 24, 14, 2, 4864, 32768, 1000000.0f, 1e-6f, true},
    {"gemma3-1b", "gemma3", 1152, 26, 4, 1, 6912, 32768, 1000000.0f, 1e-6f, false, 256, true, 512, 10000.0f, 0.0f},
    {"gemma3-4b", "gemma3", 2560, 34, 8, 4, 10240, 131072, 1000000.0f, 1e-6f, false, 256, true, 1024, 10000.0f, 8.0f},
    {"smollm3-3b", "smollm3", 2048, 36, 16, 4, 11008, 65536, 5000000.0f, 1e-6f, false},
    {"qwen3-30b-a3b", "qwen3moe", 2048, 48, 32, 4, 6144, 40960, 1000000.0f, 1e-6f, false, 128, false, 0, 0.0f, 0.0f,
     true, 128, 8, 768},
    {.name = "gpt-oss-20b", .arch = "gpt-oss", .n_embd = 2880, .n_layer = 24, .n_head = 64, .n_head_kv = 8,
     .n_ff = 2880, .n_ctx = 131072, .rope_base = 150000.0f, .rms_eps = 1e-5f, .qkv_bias = true, .head_dim = 64,
     .window = 128, .n_expert = 32, .n_expert_used = 4, .n_ff_exp = 2880, .gpt_oss = true},
    {"tiny", "llama", 256, 2, 4, 2, 768, 2048, 10000.0f, 1e-5f, false},
    {"tiny-gemma3", "gemma3", 256, 6, 4, 2, 512, 512, 1000000.0f, 1e-6f, false, 80, true, 24, 10000.0f, 8.0f},
    {"tiny-smollm3", "smollm3", 256, 4, 4, 2, 512, 512, 2000000.0f, 1e-6f, false, 64},
    {.name = "tiny-gpt-oss", .arch = "gpt-oss", .n_embd = 256, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 128,
     .n_ctx = 512, .rope_base = 150000.0f, .rms_eps = 1e-6f, .qkv_bias = true, .head_dim = 64, .window = 16,
     .n_expert = 8, .n_expert_used = 2, .n_ff_exp = 128, .gpt_oss = true},
    {"tiny-qwen3moe", "qwen3moe", 256, 2, 4, 2, 768, 2048, 1000000.0f, 1e-6f, false, 64, false, 0, 0.0f, 0.0f, true, 8,
     2, 128},
};

std::string shape_names() {
  std::string names;
  for (const Shape& s : kShapes) names += (names.empty() ? "" : ", ") + std::string(s.name);
  return names;
}

// Q4_K_M's mix, as the reference quantizer makes it: Q6_K for the output
// matrix (the embedding when tied) and for attn_v / ffn_down on the first and
// last eighth of the layers and every third layer between.
DType tensor_type(const std::string& name, int64_t layer, int64_t n_layer, DType base, bool q4_k_m) {
  // The router stays F32, as the reference quantizer leaves it.
  if (name.find("ffn_gate_inp") != std::string::npos) return DType::F32;
  if (!q4_k_m) return base;
  if (name == "token_embd.weight" || name == "output.weight") return DType::Q6_K;
  const bool more_bits = layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
  if ((name.find("attn_v") != std::string::npos || name.find("ffn_down") != std::string::npos) && more_bits) {
    return DType::Q6_K;
  }
  return DType::Q4_K;
}

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Planned {
  gguf::TensorSpec spec;
  float scale;  // uniform(-scale, scale); 0: all ones (norm weights)
};

}  // namespace

int run_gen_model(const std::vector<std::string>& argv) {
  const std::string names = shape_names();
  VerbSpec spec{"gen-model", "--shape NAME --vocab V.gguf --type TYPE --out OUT.gguf [--layers N]",
                "Writes a random-weight model with a real model's shapes and vocabulary.",
                {{"shape", FlagKind::Value, names, "", "NAME"},
                 {"layers", FlagKind::Value, "keep only the first N layers (default: the shape's count)", "", "N"},
                 {"vocab", FlagKind::Value, "GGUF whose tokenizer (and chat template) to copy", "", "V.gguf"},
                 {"type", FlagKind::Value, "F32, F16, Q8_0, Q4_0, Q4_K_M, Q6_K, ... (default Q4_K_M)", "", "TYPE"},
                 {"out", FlagKind::Value, "output file", "o", "OUT.gguf"},
                 {"seed", FlagKind::Value, "random seed (default 1)", "", "S"},
                 {"threads", FlagKind::Value, "quantization threads (default 2)", "t", "N"}}};
  int exit_code = kExitOk;
  auto args = parse_verb_args(spec, argv, exit_code);
  if (!args) return exit_code;
  const std::string shape_name = args->get_or("shape", "");
  const Shape* shape = nullptr;
  for (const auto& s : kShapes) {
    if (shape_name == s.name) shape = &s;
  }
  if (!shape || !args->has("vocab") || !args->has("out")) {
    std::fprintf(stderr, "gen-model: --shape (%s), --vocab and --out are required\n", names.c_str());
    return kExitUsage;
  }
  const std::string type_name = args->get_or("type", "Q4_K_M");
  const bool q4_k_m = type_name == "Q4_K_M" || type_name == "q4_k_m";
  const auto base = q4_k_m ? std::optional<DType>(DType::Q4_K) : dtype_from_name(type_name);
  if (!base || !(quant::has_reference(*base) || *base == DType::F32)) {
    std::fprintf(stderr, "gen-model: --type '%s' is not a type Hearth can write\n", type_name.c_str());
    return kExitUsage;
  }
  auto seed = args->get_int("seed", 1, 0, INT64_MAX);
  auto threads = args->get_int("threads", 2, 1, 64);
  auto layers = args->get_int("layers", shape->n_layer, 1, shape->n_layer);
  if (!seed.ok() || !threads.ok() || !layers.ok()) {
    std::fprintf(stderr, "gen-model: bad --seed, --threads or --layers (1..%lld)\n",
                 static_cast<long long>(shape->n_layer));
    return kExitUsage;
  }

  auto vocab = gguf::GgufFile::open(*args->get("vocab"));
  if (!vocab.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", vocab.error().message.c_str());
    return kExitBadInput;
  }
  auto tokens = vocab->get_array_size("tokenizer.ggml.tokens");
  if (!tokens.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", tokens.error().message.c_str());
    return kExitBadInput;
  }
  const auto n_vocab = static_cast<int64_t>(*tokens);
  Shape s = *shape;
  s.n_layer = *layers;
  const int64_t head_dim = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head;
  const std::string a = s.arch;

  gguf::GgufWriter w;
  w.add_metadata("general.architecture", gguf::make_string(a));
  w.add_metadata("general.name", gguf::make_string(fmt::format("random {} {}", s.name, type_name)));
  w.add_metadata(a + ".context_length", gguf::make_uint32(static_cast<uint32_t>(s.n_ctx)));
  w.add_metadata(a + ".embedding_length", gguf::make_uint32(static_cast<uint32_t>(s.n_embd)));
  w.add_metadata(a + ".block_count", gguf::make_uint32(static_cast<uint32_t>(s.n_layer)));
  w.add_metadata(a + ".feed_forward_length", gguf::make_uint32(static_cast<uint32_t>(s.n_ff)));
  w.add_metadata(a + ".attention.head_count", gguf::make_uint32(static_cast<uint32_t>(s.n_head)));
  w.add_metadata(a + ".attention.head_count_kv", gguf::make_uint32(static_cast<uint32_t>(s.n_head_kv)));
  w.add_metadata(a + ".attention.layer_norm_rms_epsilon", gguf::make_float32(s.rms_eps));
  w.add_metadata(a + ".rope.freq_base", gguf::make_float32(s.rope_base));
  w.add_metadata(a + ".rope.dimension_count", gguf::make_uint32(static_cast<uint32_t>(head_dim)));
  if (s.head_dim > 0) {
    w.add_metadata(a + ".attention.key_length", gguf::make_uint32(static_cast<uint32_t>(head_dim)));
    w.add_metadata(a + ".attention.value_length", gguf::make_uint32(static_cast<uint32_t>(head_dim)));
  }
  if (s.window > 0) {
    w.add_metadata(a + ".attention.sliding_window", gguf::make_uint32(static_cast<uint32_t>(s.window)));
    if (s.rope_base_swa > 0.0f) w.add_metadata(a + ".rope.freq_base_swa", gguf::make_float32(s.rope_base_swa));
  }
  if (s.gpt_oss) {
    w.add_metadata(a + ".rope.scaling.type", gguf::make_string("yarn"));
    w.add_metadata(a + ".rope.scaling.factor", gguf::make_float32(32.0f));
    w.add_metadata(a + ".rope.scaling.original_context_length", gguf::make_uint32(4096));
  }
  if (s.rope_linear > 0.0f) {
    w.add_metadata(a + ".rope.scaling.type", gguf::make_string("linear"));
    w.add_metadata(a + ".rope.scaling.factor", gguf::make_float32(s.rope_linear));
  }
  if (s.n_expert > 0) {
    w.add_metadata(a + ".expert_count", gguf::make_uint32(static_cast<uint32_t>(s.n_expert)));
    w.add_metadata(a + ".expert_used_count", gguf::make_uint32(static_cast<uint32_t>(s.n_expert_used)));
    w.add_metadata(a + ".expert_feed_forward_length", gguf::make_uint32(static_cast<uint32_t>(s.n_ff_exp)));
  }
  for (const auto& kv : vocab->metadata()) {
    if (kv.key.rfind("tokenizer.", 0) == 0) w.add_metadata(kv.key, kv.value);
  }

  std::vector<Planned> plan;
  auto add = [&](const std::string& name, std::vector<int64_t> dims, int64_t layer) {
    const bool vec = dims.size() == 1;
    // gpt-oss's stacked expert biases stay F32, its experts are MXFP4.
    const bool f32 = vec || name.ends_with(".bias");
    DType t = f32 ? DType::F32 : tensor_type(name, layer, s.n_layer, *base, q4_k_m);
    if (s.gpt_oss && name.find("_exps.weight") != std::string::npos) t = DType::MXFP4;
    // Rows that are not whole 256-value super-blocks (Qwen2.5 0.5B's 896)
    // fall back as the reference quantizer does: Q4_K -> Q5_0, Q6_K -> Q8_0.
    if (dims[0] % traits(t).block_elements != 0) t = t == DType::Q6_K ? DType::Q8_0 : DType::Q5_0;
    const float scale = vec ? 0.0f : std::sqrt(3.0f / static_cast<float>(dims[0]));
    plan.push_back({gguf::TensorSpec{name, t, std::move(dims)}, scale});
  };
  const int64_t q = s.n_head * head_dim, kv = s.n_head_kv * head_dim;
  add("token_embd.weight", {s.n_embd, n_vocab}, -1);
  add("output_norm.weight", {s.n_embd}, -1);
  for (int64_t il = 0; il < s.n_layer; ++il) {
    auto name = [&](const char* n) { return fmt::format("blk.{}.{}", il, n); };
    add(name("attn_norm.weight"), {s.n_embd}, il);
    add(name("attn_q.weight"), {s.n_embd, q}, il);
    add(name("attn_k.weight"), {s.n_embd, kv}, il);
    add(name("attn_v.weight"), {s.n_embd, kv}, il);
    if (s.qkv_bias) {
      add(name("attn_q.bias"), {q}, il);
      add(name("attn_k.bias"), {kv}, il);
      add(name("attn_v.bias"), {kv}, il);
    }
    if (s.gemma3) {
      add(name("attn_q_norm.weight"), {head_dim}, il);
      add(name("attn_k_norm.weight"), {head_dim}, il);
    }
    add(name("attn_output.weight"), {q, s.n_embd}, il);
    if (s.gpt_oss) {
      add(name("attn_output.bias"), {s.n_embd}, il);
      add(name("attn_sinks.weight"), {s.n_head}, il);
    }
    if (s.gemma3 || s.gpt_oss) add(name("post_attention_norm.weight"), {s.n_embd}, il);
    if (s.qk_norm) {
      add(name("attn_q_norm.weight"), {head_dim}, il);
      add(name("attn_k_norm.weight"), {head_dim}, il);
    }
    if (!s.gpt_oss) add(name("ffn_norm.weight"), {s.n_embd}, il);
    if (s.n_expert > 0) {
      add(name("ffn_gate_inp.weight"), {s.n_embd, s.n_expert}, il);
      add(name("ffn_gate_exps.weight"), {s.n_embd, s.n_ff_exp, s.n_expert}, il);
      add(name("ffn_up_exps.weight"), {s.n_embd, s.n_ff_exp, s.n_expert}, il);
      add(name("ffn_down_exps.weight"), {s.n_ff_exp, s.n_embd, s.n_expert}, il);
      if (s.gpt_oss) {
        add(name("ffn_gate_inp.bias"), {s.n_expert}, il);
        add(name("ffn_gate_exps.bias"), {s.n_ff_exp, s.n_expert}, il);
        add(name("ffn_up_exps.bias"), {s.n_ff_exp, s.n_expert}, il);
        add(name("ffn_down_exps.bias"), {s.n_embd, s.n_expert}, il);
      }
    } else {
      add(name("ffn_gate.weight"), {s.n_embd, s.n_ff}, il);
      add(name("ffn_up.weight"), {s.n_embd, s.n_ff}, il);
      add(name("ffn_down.weight"), {s.n_ff, s.n_embd}, il);
    }
    if (s.gemma3) add(name("post_ffw_norm.weight"), {s.n_embd}, il);
  }
  // Untied output (Qwen3-30B-A3B, gpt-oss): its own matrix.
  if (s.n_expert > 0) add("output.weight", {s.n_embd, n_vocab}, -1);
  for (const auto& p : plan) {
    if (auto st = w.add_tensor(p.spec); !st.ok()) {
      std::fprintf(stderr, "gen-model: %s\n", st.error().message.c_str());
      return kExitBadInput;
    }
  }
  const std::string out = *args->get("out");
  if (auto st = w.begin(out); !st.ok()) {
    std::fprintf(stderr, "gen-model: %s\n", st.error().message.c_str());
    return kExitBadInput;
  }
  uint64_t written = 0;
  for (size_t ti = 0; ti < plan.size(); ++ti) {
    const auto& p = plan[ti];
    const int64_t cols = p.spec.dims[0];
    int64_t rows = 1;  // every row of every matrix (experts stacked along dims[2])
    for (size_t d = 1; d < p.spec.dims.size(); ++d) rows *= p.spec.dims[d];
    const size_t rb = *row_bytes(p.spec.type, cols);
    std::vector<uint8_t> bytes(rb * static_cast<size_t>(rows));
    auto work = [&](int64_t r0, int64_t r1) {
      std::vector<float> row(static_cast<size_t>(cols));
      for (int64_t r = r0; r < r1; ++r) {
        uint64_t state = mix(static_cast<uint64_t>(*seed) * 0x9E3779B97F4A7C15ull + ti * 0x100000001ull + static_cast<uint64_t>(r));
        for (auto& v : row) {
          state = mix(state + 0x9E3779B97F4A7C15ull);
          const float u = static_cast<float>(state >> 40) / static_cast<float>(1 << 24);  // [0, 1)
          v = p.scale == 0.0f ? 1.0f : (2.0f * u - 1.0f) * p.scale;
        }
        (void)quant::quantize_row(p.spec.type, row.data(), bytes.data() + static_cast<size_t>(r) * rb, cols);
      }
    };
    const int64_t nt = std::min<int64_t>(*threads, rows);
    std::vector<std::thread> pool;
    for (int64_t t = 1; t < nt; ++t) pool.emplace_back(work, rows * t / nt, rows * (t + 1) / nt);
    work(0, rows / nt);
    for (auto& th : pool) th.join();
    if (auto st = w.write_tensor_data(bytes); !st.ok()) {
      std::fprintf(stderr, "gen-model: %s\n", st.error().message.c_str());
      return kExitBadInput;
    }
    written += bytes.size();
    std::fprintf(stderr, "\r%zu/%zu tensors, %.0f MB", ti + 1, plan.size(), static_cast<double>(written) / 1e6);
  }
  if (auto st = w.finish(); !st.ok()) {
    std::fprintf(stderr, "\ngen-model: %s\n", st.error().message.c_str());
    return kExitBadInput;
  }
  std::fprintf(stderr, "\nwrote %s (%s, %lld layers, %s, %lld tokens)\n", out.c_str(), s.name,
               static_cast<long long>(s.n_layer), type_name.c_str(), static_cast<long long>(n_vocab));
  return kExitOk;
}

}  // namespace hearth::cli
