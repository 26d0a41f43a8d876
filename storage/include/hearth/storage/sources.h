// What a conversation reads from: the libraries attached to it, and the passages
// each reply was given (its numbered sources), stored exactly as the model saw
// them so a reload shows the same citations after the files changed or the
// library was removed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/libraries.h"

namespace hearth::storage {

struct MessageSource {
  std::int64_t ordinal = 1;  // the citation number the reply uses: [1], [2], ...
  ChunkId chunk;             // none once the chunk was re-indexed or removed
  std::string library_name;
  std::string document_path;
  std::optional<std::int64_t> page;
  std::int64_t line_first = 1;
  std::int64_t line_last = 1;
  std::string text;  // the passage as it went into the prompt
  double score = 0;  // the retrieval score that chose it (higher is better)

  friend bool operator==(const MessageSource&, const MessageSource&) = default;
};

class Sources {
 public:
  explicit Sources(Database& db) : db_(db) {}

  Status attach(ConversationId conversation, LibraryId library);
  Status detach(ConversationId conversation, LibraryId library);
  Result<std::vector<LibraryId>> attached(ConversationId conversation);

  // Stores the sources of `message` (a user message or the reply), replacing any
  // stored before. Ordinals must be distinct and at least 1.
  Status put(MessageId message, std::span<const MessageSource> sources);
  Result<std::vector<MessageSource>> of(MessageId message);

 private:
  Database& db_;
};

}  // namespace hearth::storage
