#include "documents/engine_embedding.h"

#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/runtime/embedder.h>

#include <QFileInfo>

#include <algorithm>

namespace hearth::app {
namespace {

// Indexing shares the machine with chat: two threads keep a reply's decode
// (which waits for indexing to pause anyway) from competing with a long pass.
constexpr int kEmbeddingThreads = 2;

class EngineEmbedding final : public ui::PassageEmbedding {
 public:
  EngineEmbedding(std::unique_ptr<backend::Backend> backend, std::unique_ptr<runtime::Embedder> embedder,
                  std::string identity)
      : backend_(std::move(backend)), embedder_(std::move(embedder)), identity_(std::move(identity)) {}

  std::string identity() const override { return identity_; }
  std::int64_t dim() const override { return embedder_->dim(); }

  Result<std::vector<std::vector<float>>> embed_passages(std::span<const std::string> texts) override {
    runtime::EmbedOptions options;
    options.role = runtime::TextRole::Document;
    HEARTH_TRY(runtime::Embeddings out, embed_fitted(texts, options));
    return std::move(out.vectors);
  }

  Result<std::vector<float>> embed_query(std::string_view text) override {
    runtime::EmbedOptions options;
    options.role = runtime::TextRole::Query;
    const std::string one(text);
    HEARTH_TRY(runtime::Embeddings out, embed_fitted(std::span<const std::string>(&one, 1), options));
    return std::move(out.vectors.front());
  }

 private:
  // A passage longer than the model's context keeps its beginning (and its last,
  // closing token, [SEP] for encoders): a vector of most of it beats an error
  // that stops the library's indexing.
  Result<runtime::Embeddings> embed_fitted(std::span<const std::string> texts, const runtime::EmbedOptions& options) {
    std::vector<std::vector<int32_t>> ids;
    ids.reserve(texts.size());
    const auto limit = static_cast<std::size_t>(std::max<int64_t>(embedder_->max_tokens(), 2));
    for (const std::string& t : texts) {
      std::vector<int32_t> tokens = embedder_->tokenize(t, options);
      if (tokens.size() > limit) {
        const int32_t last = tokens.back();
        tokens.resize(limit);
        tokens.back() = last;
      }
      ids.push_back(std::move(tokens));
    }
    return embedder_->embed_tokens(ids, options);
  }

  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<runtime::Embedder> embedder_;
  std::string identity_;
};

}  // namespace

Result<std::shared_ptr<ui::PassageEmbedding>> load_engine_embedding(const QString& path, const Logger& logger) {
  backend::CpuBackendOptions cpu;
  cpu.threads = kEmbeddingThreads;
  auto backend = backend::make_cpu_backend(cpu);
  auto embedder = runtime::Embedder::load(path.toStdString(), *backend);
  if (!embedder.ok()) {
    Error error = embedder.take_error();
    error.message = "embedding model '" + path.toStdString() + "': " + error.message;
    return error;
  }
  const QFileInfo info(path);
  // The file's name, size and time: re-downloading or re-quantizing it makes
  // the libraries built with it keyword-only until they are re-indexed.
  const std::string identity = info.fileName().toStdString() + ":" + std::to_string(info.size()) + ":" +
                               std::to_string(info.lastModified().toMSecsSinceEpoch());
  logger.info("documents: embedding model {} ({} dimensions)", path.toStdString(), (*embedder)->dim());
  return std::shared_ptr<ui::PassageEmbedding>(
      std::make_shared<EngineEmbedding>(std::move(backend), std::move(embedder).value(), identity));
}

}  // namespace hearth::app
