// Grounding a user message in the conversation's documents: retrieves passages
// from the attached libraries (hybrid BM25 + vectors when the libraries' vectors
// came from the loaded embedding model, BM25 otherwise), stores them with the
// message as its numbered sources, and builds the user turn the model sees with
// chat::ground_question. A single attached file that fits the budget goes in
// whole. A message that already has sources (a regenerated reply) reuses them,
// so the model sees what it saw before.
//
// Lives on the storage thread: every call runs inside a storage job.
#pragma once

#include <hearth/core/result.h>
#include <hearth/documents/extract.h>
#include <hearth/documents/retriever.h>
#include <hearth/storage/database.h>
#include <hearth/storage/libraries.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "documents/passage_embedding.h"
#include "store/conversation_store.h"

namespace hearth::ui {

struct Grounding {
  std::string turn_text;  // the user turn with its sources
  std::vector<SourceRecord> sources;
  std::int64_t source_tokens = 0;  // estimated: the prompt budget's share the sources use
  bool keyword_only = false;       // no matching embedding model: BM25 alone
};

class DocumentGrounder {
 public:
  // `embedding` may be null (no embedding model chosen): keyword retrieval only.
  explicit DocumentGrounder(std::shared_ptr<PassageEmbedding> embedding = nullptr)
      : embedding_(std::move(embedding)) {}

  // nullopt when the conversation has no library attached.
  Result<std::optional<Grounding>> ground(storage::Database& db, ConversationKey conversation, MessageKey message,
                                          const std::string& question, std::int64_t budget_tokens);

  PassageEmbedding* embedding() const { return embedding_.get(); }
  // The formats a whole file is read back with (the indexer's, PDF and DOCX included).
  void set_extractors(documents::Extractors extractors) { extractors_ = std::move(extractors); }
  void set_embedding(std::shared_ptr<PassageEmbedding> embedding);

  // Tokens a text costs, estimated at four bytes a token: the storage thread has
  // no tokenizer, and the engine's overflow policy still guards the real count.
  static std::int64_t estimate_tokens(std::string_view text) {
    return static_cast<std::int64_t>((text.size() + 3) / 4);
  }

 private:
  storage::Libraries& libraries(storage::Database& db);
  Result<std::vector<SourceRecord>> retrieve(storage::Database& db, const std::vector<storage::LibraryId>& attached,
                                             const std::string& question, std::int64_t budget_tokens,
                                             bool* keyword_only);

  std::shared_ptr<PassageEmbedding> embedding_;
  documents::Extractors extractors_ = documents::Extractors::builtin();
  storage::Database* bound_ = nullptr;
  std::unique_ptr<storage::Libraries> libraries_;
  std::unique_ptr<documents::Retriever> retriever_;
};

}  // namespace hearth::ui
