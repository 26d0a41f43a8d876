#include <fmt/format.h>
#include <hearth/engine/kv/kv_cache.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/runtime/embedder.h>

#include <algorithm>
#include <cmath>

namespace hearth::runtime {
namespace {

// F32 keys and values where the backend has them (the CPU): an embedding is
// one pass, so the cache's size does not matter and precision does.
DType kv_type_for(const backend::Backend& backend) {
  const bool f32 = backend.supports(backend::Op::KvStore, DType::F32) && backend.supports(backend::Op::Attention, DType::F32);
  return f32 ? DType::F32 : DType::F16;
}

int64_t blocks_for(int64_t tokens) { return (tokens + kv::kBlockTokens - 1) / kv::kBlockTokens; }

void l2_normalize(std::vector<float>& v) {
  double sum = 0;
  for (const float x : v) sum += static_cast<double>(x) * x;
  if (sum <= 0) return;
  const auto inv = static_cast<float>(1.0 / std::sqrt(sum));
  for (float& x : v) x *= inv;
}

}  // namespace

std::string format_query(std::string_view task, std::string_view query) {
  return fmt::format("Instruct: {}\nQuery: {}", task, query);
}

Result<std::unique_ptr<Embedder>> Embedder::create(std::unique_ptr<model::Model> model, backend::Backend& backend) {
  const model::HParams& hp = model->hparams();
  const std::string where = model->file().path().string();
  if (hp.pooling == model::Pooling::Unspecified || hp.pooling == model::Pooling::None) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("{}: '{}' is not an embedding model: its pooling is {} ({}.pooling_type must be "
                                  "mean, cls or last)",
                                  where, hp.architecture, model::to_string(hp.pooling), hp.architecture));
  }
  HEARTH_TRY(auto tokenizer, tokenizer::Tokenizer::from_gguf(model->file()));
  return std::unique_ptr<Embedder>(new Embedder(std::move(model), backend, std::move(tokenizer)));
}

Result<std::unique_ptr<Embedder>> Embedder::load(const std::filesystem::path& path, backend::Backend& backend,
                                                 const model::LoadOptions& options) {
  HEARTH_TRY(auto model, model::Model::load(path, options));
  return create(std::move(model), backend);
}

std::string Embedder::prepare(std::string_view text, const EmbedOptions& options) const {
  const model::HParams& hp = model_->hparams();
  const std::string_view task =
      options.query_instruction.empty() ? kDefaultQueryTask : std::string_view(options.query_instruction);
  switch (options.role) {
    case TextRole::AsIs:
      return options.query_instruction.empty() ? std::string(text) : format_query(task, text);
    case TextRole::Document:
      if (hp.architecture == "nomic-bert") return fmt::format("search_document: {}", text);
      return std::string(text);
    case TextRole::Query:
      if (hp.architecture == "nomic-bert") return fmt::format("search_query: {}", text);
      // Decoder embedding models (last-token pooling) take an instruction.
      if (hp.pooling == model::Pooling::Last) return format_query(task, text);
      return std::string(text);
  }
  return std::string(text);
}

std::vector<int32_t> Embedder::tokenize(std::string_view text, const EmbedOptions& options) const {
  return tokenizer_.tokenize(prepare(text, options));
}

Result<Embeddings> Embedder::embed(std::span<const std::string> texts, const EmbedOptions& options) const {
  std::vector<std::vector<int32_t>> ids;
  ids.reserve(texts.size());
  for (const std::string& t : texts) ids.push_back(tokenize(t, options));
  return embed_tokens(ids, options);
}

Result<Embeddings> Embedder::embed_tokens(std::span<const std::vector<int32_t>> texts, const EmbedOptions& options) const {
  const int64_t max = max_tokens();
  for (size_t i = 0; i < texts.size(); ++i) {
    const auto n = static_cast<int64_t>(texts[i].size());
    if (n == 0) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("text {} has no tokens (an empty text, and a vocabulary that adds none)", i));
    }
    if (n > max) {
      return make_error(ErrorCode::LimitExceeded,
                        fmt::format("text {} is {} tokens long; {} takes at most {} tokens per text", i, n,
                                    model_->file().path().filename().string(), max));
    }
  }
  Embeddings out;
  out.dim = dim();
  const int64_t budget = std::max<int64_t>(1, options.max_batch_tokens);
  for (size_t begin = 0; begin < texts.size();) {
    size_t end = begin;
    int64_t tokens = 0;
    while (end < texts.size() && (end == begin || tokens + static_cast<int64_t>(texts[end].size()) <= budget)) {
      tokens += static_cast<int64_t>(texts[end].size());
      ++end;
    }
    HEARTH_CHECK(run_pass(texts.subspan(begin, end - begin), out));
    begin = end;
  }
  return out;
}

Status Embedder::run_pass(std::span<const std::vector<int32_t>> texts, Embeddings& out) const {
  const model::HParams& hp = model_->hparams();
  const int64_t n_embd = hp.n_embd;
  const DType kv_type = kv_type_for(backend_);
  // Each token's query sees its own text only: up to itself when the model
  // is causal, the whole text when it is an encoder.
  auto key_limit = [&](int32_t position, int64_t length) {
    return hp.causal ? position : static_cast<int32_t>(length - 1);
  };
  std::vector<int32_t> tokens, positions, limits, token_seq, tables;
  std::vector<float> hidden;
  if (!backend_.supports_sequence_batches()) {
    int64_t longest = 0;
    for (const auto& t : texts) longest = std::max<int64_t>(longest, static_cast<int64_t>(t.size()));
    HEARTH_TRY(auto cache, kv::KvCache::create(backend_, model_->kv_config(longest, kv_type)));
    for (const auto& t : texts) {
      const auto n = static_cast<int64_t>(t.size());
      positions.clear();
      limits.clear();
      for (int32_t p = 0; p < n; ++p) {
        positions.push_back(p);
        limits.push_back(key_limit(p, n));
      }
      HEARTH_CHECK(model_->hidden_states(backend_, *cache, model::EmbedBatch{t, positions, limits, {}, {}}, hidden));
      out.vectors.emplace_back();
      pool_text(hidden.data(), n, out.vectors.back());
      out.token_counts.push_back(n);
    }
    return {};
  }
  // One pool for the pass: each text gets the blocks its length needs.
  int64_t longest = 0, total_blocks = 0;
  for (const auto& t : texts) {
    longest = std::max<int64_t>(longest, static_cast<int64_t>(t.size()));
    total_blocks += blocks_for(static_cast<int64_t>(t.size()));
  }
  kv::KvPoolConfig config;
  config.n_layer = hp.n_layer;
  config.n_head_kv = hp.n_head_kv;
  config.head_dim = hp.head_dim;
  config.type = kv_type;
  config.n_blocks = total_blocks;
  config.max_seq_positions = longest;
  HEARTH_TRY(auto pool, kv::KvPool::create(backend_, config));
  const int32_t tb = pool->table_blocks();
  tables.assign(texts.size() * static_cast<size_t>(tb), 0);
  for (size_t s = 0; s < texts.size(); ++s) {
    const auto n = static_cast<int64_t>(texts[s].size());
    for (int64_t b = 0; b < blocks_for(n); ++b) {
      HEARTH_TRY(tables[s * static_cast<size_t>(tb) + static_cast<size_t>(b)], pool->allocate());
    }
    for (int32_t p = 0; p < n; ++p) {
      tokens.push_back(texts[s][static_cast<size_t>(p)]);
      positions.push_back(p);
      limits.push_back(key_limit(p, n));
      token_seq.push_back(static_cast<int32_t>(s));
    }
  }
  HEARTH_CHECK(
      model_->hidden_states(backend_, *pool, model::EmbedBatch{tokens, positions, limits, token_seq, tables}, hidden));
  int64_t row = 0;
  for (const auto& t : texts) {
    const auto n = static_cast<int64_t>(t.size());
    out.vectors.emplace_back();
    pool_text(hidden.data() + row * n_embd, n, out.vectors.back());
    out.token_counts.push_back(n);
    row += n;
  }
  return {};
}

void Embedder::pool_text(const float* hidden, int64_t n_tokens, std::vector<float>& out) const {
  const int64_t n_embd = dim();
  out.assign(static_cast<size_t>(n_embd), 0.0f);
  switch (pooling()) {
    case model::Pooling::Mean: {
      std::vector<double> sum(static_cast<size_t>(n_embd), 0.0);
      for (int64_t t = 0; t < n_tokens; ++t) {
        for (int64_t c = 0; c < n_embd; ++c) sum[static_cast<size_t>(c)] += hidden[t * n_embd + c];
      }
      for (int64_t c = 0; c < n_embd; ++c) {
        out[static_cast<size_t>(c)] = static_cast<float>(sum[static_cast<size_t>(c)] / static_cast<double>(n_tokens));
      }
      break;
    }
    case model::Pooling::Cls: std::copy(hidden, hidden + n_embd, out.begin()); break;
    case model::Pooling::Last: std::copy(hidden + (n_tokens - 1) * n_embd, hidden + n_tokens * n_embd, out.begin()); break;
    case model::Pooling::Unspecified:
    case model::Pooling::None: break;  // refused by create()
  }
  l2_normalize(out);
}

}  // namespace hearth::runtime
