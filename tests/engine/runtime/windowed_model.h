// A tiny Gemma 2 model with random F32 weights and a small sliding window on
// its even layers, written as a GGUF file for the sliding-window KV tests
// (no fixture model has a window).
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/gguf/writer.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace hearth::runtime::testing {

struct WindowedModelSpec {
  int n_layer = 4;
  int n_embd = 64;
  int n_head = 2;   // head_dim 32
  int n_head_kv = 1;
  int n_ff = 96;
  int n_vocab = 64;
  int window = 24;  // even layers; odd layers are global
};

// The written file, removed when this goes away: the file name carries the
// process id (below), so files left behind would pile up run after run.
class WindowedModelFile {
 public:
  WindowedModelFile() = default;
  explicit WindowedModelFile(std::string path) : path_(std::move(path)) {}
  WindowedModelFile(WindowedModelFile&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  WindowedModelFile& operator=(WindowedModelFile&& other) noexcept {
    if (this != &other) {
      remove();
      path_ = std::exchange(other.path_, {});
    }
    return *this;
  }
  WindowedModelFile(const WindowedModelFile&) = delete;
  WindowedModelFile& operator=(const WindowedModelFile&) = delete;
  ~WindowedModelFile() { remove(); }
  const std::string& path() const { return path_; }

 private:
  // A model loaded from the file keeps its mapping after the unlink.
  void remove() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  std::string path_;
};

inline WindowedModelFile write_windowed_model(const WindowedModelSpec& sp, const std::string& name) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  std::vector<std::pair<gguf::TensorSpec, std::vector<uint8_t>>> tensors;
  auto add = [&](const std::string& tensor, int cols, int rows, float scale, float offset) {
    std::vector<float> m(static_cast<size_t>(cols * rows));
    for (auto& e : m) e = offset + scale * uni(rng);
    std::vector<uint8_t> bytes(m.size() * 4);
    std::memcpy(bytes.data(), m.data(), bytes.size());
    std::vector<int64_t> dims{cols};
    if (rows > 1) dims.push_back(rows);
    tensors.push_back({gguf::TensorSpec{tensor, DType::F32, dims}, std::move(bytes)});
  };
  const int E = sp.n_embd, D = sp.n_embd / sp.n_head, F = sp.n_ff;
  const float ws = 1.0f / std::sqrt(float(E));
  add("token_embd.weight", E, sp.n_vocab, 0.1f, 0.0f);
  add("output_norm.weight", E, 1, 0.2f, 1.0f);
  for (int l = 0; l < sp.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", E, 1, 0.2f, 1.0f);
    add(b + "attn_q.weight", E, sp.n_head * D, 2 * ws, 0.0f);
    add(b + "attn_k.weight", E, sp.n_head_kv * D, 2 * ws, 0.0f);
    add(b + "attn_v.weight", E, sp.n_head_kv * D, ws, 0.0f);
    add(b + "attn_output.weight", sp.n_head * D, E, ws, 0.0f);
    add(b + "post_attention_norm.weight", E, 1, 0.2f, 1.0f);
    add(b + "ffn_norm.weight", E, 1, 0.2f, 1.0f);
    add(b + "ffn_gate.weight", E, F, ws, 0.0f);
    add(b + "ffn_up.weight", E, F, ws, 0.0f);
    add(b + "ffn_down.weight", F, E, 1.0f / std::sqrt(float(F)), 0.0f);
    add(b + "post_ffw_norm.weight", E, 1, 0.2f, 1.0f);
  }
  const std::string a = "gemma2";
  const std::vector<gguf::KeyValue> md = {
      {"general.architecture", gguf::make_string(a)},
      {a + ".context_length", gguf::make_uint32(8192)},
      {a + ".embedding_length", gguf::make_uint32(static_cast<uint32_t>(E))},
      {a + ".block_count", gguf::make_uint32(static_cast<uint32_t>(sp.n_layer))},
      {a + ".feed_forward_length", gguf::make_uint32(static_cast<uint32_t>(F))},
      {a + ".attention.head_count", gguf::make_uint32(static_cast<uint32_t>(sp.n_head))},
      {a + ".attention.head_count_kv", gguf::make_uint32(static_cast<uint32_t>(sp.n_head_kv))},
      {a + ".attention.layer_norm_rms_epsilon", gguf::make_float32(1e-6f)},
      {a + ".rope.freq_base", gguf::make_float32(10000.0f)},
      {a + ".attention.sliding_window", gguf::make_uint32(static_cast<uint32_t>(sp.window))},
  };
  // One file per process: ctest runs test cases as parallel processes, and
  // rewriting a file another process has mapped would fault its reads.
  const std::string path =
      ::testing::TempDir() + "hearth-windowed-" + name + "-" + std::to_string(::getpid()) + ".gguf";
  auto st = gguf::GgufWriter::write_file(path, md, tensors);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return WindowedModelFile(path);
}

}  // namespace hearth::runtime::testing
