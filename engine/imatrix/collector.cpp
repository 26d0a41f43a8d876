// The importance collector: a matmul observer on the CPU backend, and the
// chunked run over a text that feeds it (collector.h).
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/imatrix/collector.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/quality/segments.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <fmt/format.h>

#include <cmath>
#include <numeric>

namespace hearth::imatrix {
namespace {

// The reference skips products over fewer rows (single-token steps).
constexpr int64_t kMinRows = 16;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

void ImportanceCollector::observe(const backend::Node& node) {
  if (!status_) return;
  const backend::Tensor* w = node.src[0];
  const backend::Tensor* x = node.src[1];
  if (!w || !x || x->type != DType::F32 || !x->data) return;
  if (node.op == backend::Op::MatMulId) {
    experts(node, entries_[w->name]);
    return;
  }
  if (node.op != backend::Op::MatMul || x->ne[1] < kMinRows) return;
  if (!(starts_with(w->name, "blk.") || (include_output_ && w->name == "output.weight"))) return;
  dense(node, entries_[w->name]);
}

void ImportanceCollector::dense(const backend::Node& node, ImportanceEntry& e) {
  const backend::Tensor* w = node.src[0];
  const backend::Tensor* x = node.src[1];
  const int64_t cols = x->ne[0];
  const int64_t rows = x->ne[1] * x->ne[2] * x->ne[3];
  if (e.counts.empty()) {
    e.sums.assign(static_cast<size_t>(cols), 0.0);
    e.counts.assign(1, 0.0);
  } else if (static_cast<int64_t>(e.sums.size()) != cols) {
    status_ = make_error(ErrorCode::Internal, fmt::format("importance: '{}' was seen with {} and with {} columns", w->name,
                                                          e.sums.size(), cols));
    return;
  }
  const float* data = x->as<const float>();
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = data + r * cols;
    for (int64_t c = 0; c < cols; ++c) e.sums[static_cast<size_t>(c)] += static_cast<double>(row[c]) * row[c];
  }
  for (int64_t c = 0; c < cols; ++c) {
    if (!std::isfinite(e.sums[static_cast<size_t>(c)])) {
      status_ = make_error(ErrorCode::InvalidArgument,
                           fmt::format("importance: the input of '{}' has a non-finite value in column {}", w->name, c));
      return;
    }
  }
  e.counts[0] += static_cast<double>(rows);
}

void ImportanceCollector::experts(const backend::Node& node, ImportanceEntry& e) {
  const backend::Tensor* w = node.src[0];
  const backend::Tensor* x = node.src[1];
  const backend::Tensor* ids = node.src[2];
  const int64_t cols = w->ne[0], n_expert = w->ne[2];
  const int64_t k = ids->ne[0], n_tok = ids->ne[1];
  // One input row per token (gate, up: shared by the token's slots) or per slot (down).
  const bool shared = x->ne[1] == n_tok;
  if (e.counts.empty()) {
    e.sums.assign(static_cast<size_t>(cols * n_expert), 0.0);
    e.counts.assign(static_cast<size_t>(n_expert), 0.0);
  } else if (e.n_mat() != n_expert || e.cols() != cols) {
    status_ = make_error(ErrorCode::Internal, fmt::format("importance: '{}' changed shape", w->name));
    return;
  }
  const auto* id = ids->as<const int32_t>();
  const float* data = x->as<const float>();
  for (int64_t t = 0; t < n_tok; ++t) {
    for (int64_t s = 0; s < k; ++s) {
      const int32_t ex = id[t * k + s];
      if (ex < 0 || ex >= n_expert) {
        status_ = make_error(ErrorCode::Internal, fmt::format("importance: '{}': expert id {} of {}", w->name, ex, n_expert));
        return;
      }
      const float* row = data + (shared ? t : t * k + s) * cols;
      double* sums = e.sums.data() + ex * cols;
      for (int64_t c = 0; c < cols; ++c) sums[c] += static_cast<double>(row[c]) * row[c];
      e.counts[static_cast<size_t>(ex)] += 1.0;
    }
  }
  for (const double v : e.sums) {
    if (!std::isfinite(v)) {
      status_ = make_error(ErrorCode::InvalidArgument, fmt::format("importance: the input of '{}' is not finite", w->name));
      return;
    }
  }
}

Result<ImportanceMatrix> collect_importance(const model::Model& model, std::string_view text,
                                            const CollectOptions& options) {
  HEARTH_TRY(auto tok, tokenizer::Tokenizer::from_gguf(model.file()));
  HEARTH_TRY(auto chunks, quality::text_windows(quality::tokenize_text(tok, text), options.n_ctx));
  if (options.max_chunks > 0 && static_cast<size_t>(options.max_chunks) < chunks.size()) {
    chunks.resize(static_cast<size_t>(options.max_chunks));
  }
  ImportanceCollector collector(options.include_output);
  backend::CpuBackendOptions cpu;
  cpu.threads = options.threads;
  cpu.observer = &collector;
  auto backend = backend::make_cpu_backend(cpu);
  HEARTH_TRY(auto cache, kv::KvCache::create(*backend, model.kv_config(options.n_ctx, options.kv_type)));
  std::vector<int32_t> positions(static_cast<size_t>(options.n_ctx));
  std::iota(positions.begin(), positions.end(), 0);
  std::vector<float> logits;
  // output.weight sees every row only when every row's logits are asked for;
  // every other product sees every row either way.
  const auto rows = options.include_output ? model::LogitsRows::All : model::LogitsRows::LastOfWholeLayers;
  const auto total = static_cast<int32_t>(chunks.size());
  for (int32_t i = 0; i < total; ++i) {
    const auto& chunk = chunks[static_cast<size_t>(i)];
    cache->clear();
    const model::Batch batch{chunk.tokens, std::span<const int32_t>(positions).first(chunk.tokens.size())};
    HEARTH_CHECK(model.forward(*backend, *cache, batch, rows, logits));
    HEARTH_CHECK(collector.status());
    if (options.on_chunk && !options.on_chunk(i + 1, total)) {
      return make_error(ErrorCode::Cancelled, "importance collection cancelled");
    }
  }
  ImportanceMatrix out;
  out.entries = collector.take();
  if (!options.dataset.empty()) out.datasets.push_back(options.dataset);
  out.chunk_count = static_cast<uint32_t>(total);
  out.chunk_size = static_cast<uint32_t>(options.n_ctx);
  if (out.entries.empty()) {
    return make_error(ErrorCode::Unsupported, "importance: the model ran no weight product over 16 or more rows");
  }
  return out;
}

}  // namespace hearth::imatrix
