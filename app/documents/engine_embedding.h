// The document libraries' embedding model on the engine: a GGUF embedding model
// (BERT family, nomic-bert, Qwen3-Embedding) run by runtime::Embedder on its own
// CPU backend. Passages are embedded as documents and questions as queries,
// with the prefixes or instruction the model was trained with. Used on the
// storage thread only (ui::PassageEmbedding).
#pragma once

#include <hearth/core/log.h>
#include <hearth/core/result.h>

#include <QString>

#include <memory>

#include "documents/passage_embedding.h"

namespace hearth::app {

// Loads `path`; an error (not an embedding model, unreadable file) names it.
Result<std::shared_ptr<ui::PassageEmbedding>> load_engine_embedding(const QString& path, const Logger& logger = {});

}  // namespace hearth::app
