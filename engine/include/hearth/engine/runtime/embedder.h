// Sentence embeddings: one pooled, L2-normalized vector per text from a
// GGUF embedding model (BERT encoders, Qwen3-Embedding). Texts are
// tokenized as the vocabulary says (BERT: [CLS] text [SEP]), run through the
// model with each text in its own sequence (no attention across texts;
// bidirectional within a text for encoders), and pooled as the file's
// `{arch}.pooling_type` says: mean, first token (CLS) or last token.
//
// On a backend with sequence batches (the CPU, Vulkan) several texts share
// one forward pass, so every weight matrix is read once for all their
// tokens; elsewhere (a Vulkan+CPU split) each text is one pass. The results are the same.
// One call at a time per embedder (its backend runs one graph at a time).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::runtime {

// What a text is to a retrieval model, for the prefixes models are trained
// with: nomic-bert writes "search_query: " / "search_document: " before the
// text; decoder embedding models (last-token pooling, Qwen3-Embedding) write
// a query as "Instruct: {task}\nQuery: {text}" and a document as it is;
// other models take both as they are. AsIs never adds anything.
enum class TextRole { AsIs, Document, Query };

// The task a query states when none is given (Qwen3-Embedding's example for
// retrieval).
inline constexpr std::string_view kDefaultQueryTask =
    "Given a web search query, retrieve relevant passages that answer the query";

struct EmbedOptions {
  TextRole role = TextRole::AsIs;
  // The task of a query (kDefaultQueryTask when empty). With role AsIs, a
  // non-empty instruction writes every text in the instruction format.
  std::string query_instruction;
  // Texts are grouped into passes of at most this many tokens (a longer text
  // runs alone). Bounds the activation memory of one pass.
  int64_t max_batch_tokens = 2048;
};

struct Embeddings {
  int64_t dim = 0;                          // n_embd
  std::vector<std::vector<float>> vectors;  // one per text, dim values, L2 norm 1 (0 for an all-zero state)
  std::vector<int64_t> token_counts;        // tokens of each text, special tokens included
};

// Qwen3-Embedding's query format: "Instruct: {task}\nQuery: {query}".
std::string format_query(std::string_view task, std::string_view query);

class Embedder {
 public:
  // Unsupported when the model has no pooling (`{arch}.pooling_type`
  // absent or none: not an embedding model). `backend` must outlive the embedder.
  static Result<std::unique_ptr<Embedder>> create(std::unique_ptr<model::Model> model, backend::Backend& backend);
  static Result<std::unique_ptr<Embedder>> load(const std::filesystem::path& path, backend::Backend& backend,
                                                const model::LoadOptions& options = {});

  int64_t dim() const { return model_->hparams().n_embd; }
  // The most tokens one text may have (the model's training context).
  int64_t max_tokens() const { return model_->hparams().n_ctx_train; }
  model::Pooling pooling() const { return model_->hparams().pooling; }
  const model::Model& model() const { return *model_; }
  const tokenizer::Tokenizer& tokenizer() const { return tokenizer_; }

  // The text embed() tokenizes for `text` (with the role's prefix or format).
  std::string prepare(std::string_view text, const EmbedOptions& options = {}) const;
  // The ids embed() runs for one text.
  std::vector<int32_t> tokenize(std::string_view text, const EmbedOptions& options = {}) const;

  // One vector per text, in order. A text longer than max_tokens() is
  // LimitExceeded naming its index and both lengths; an empty list gives
  // an empty result.
  Result<Embeddings> embed(std::span<const std::string> texts, const EmbedOptions& options = {}) const;
  // The same from token ids (each list one text, special tokens included).
  Result<Embeddings> embed_tokens(std::span<const std::vector<int32_t>> texts, const EmbedOptions& options = {}) const;

 private:
  Embedder(std::unique_ptr<model::Model> model, backend::Backend& backend, tokenizer::Tokenizer tokenizer)
      : model_(std::move(model)), backend_(backend), tokenizer_(std::move(tokenizer)) {}
  // Hidden states of `texts` in one pass (or one pass per text where the
  // backend has no sequence batches), pooled and appended to `out`.
  Status run_pass(std::span<const std::vector<int32_t>> texts, Embeddings& out) const;
  void pool_text(const float* hidden, int64_t n_tokens, std::vector<float>& out) const;

  std::unique_ptr<model::Model> model_;
  backend::Backend& backend_;
  tokenizer::Tokenizer tokenizer_;
};

}  // namespace hearth::runtime
