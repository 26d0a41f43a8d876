// Export and import. JSON is the lossless format (all branches, settings, figures,
// context events; see docs/storage-json-format.md); Markdown is for reading.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"
#include "hearth/storage/ids.h"

namespace hearth::storage {

// Which conversations to export; empty means all of them, oldest first.
struct ExportSelection {
  std::vector<ConversationId> conversations;
};

Result<std::string> export_json(Database& db, const ExportSelection& selection = {});

struct ImportReport {
  std::vector<ConversationId> conversations;  // new ids, in document order
  std::int64_t messages = 0;
  std::int64_t skipped = 0;  // conversations left out as duplicates
};

// What an import would do, read before asking the user how to treat duplicates.
struct ImportPreview {
  std::int64_t conversations = 0;  // in the document
  std::int64_t messages = 0;       // in the document
  std::int64_t existing = 0;       // of its conversations, already in the database
};

// A conversation of the document "already exists" when the database holds one with
// the same title and creation time whose messages have, in order, the same roles,
// contents and creation times (what an earlier import of the same export left).
enum class Duplicates { Skip, ImportAsCopies };

// Parses and validates the whole document and counts, changing nothing.
Result<ImportPreview> preview_import(Database& db, std::string_view json);

// Imports the conversations of a JSON export as new conversations (new ids), in one
// transaction: either all of them or none. Errors name the JSON path at fault.
Result<ImportReport> import_json(Database& db, std::string_view json,
                                 Duplicates duplicates = Duplicates::ImportAsCopies);

// The active branch of each selected conversation as Markdown.
Result<std::string> export_markdown(Database& db, const ExportSelection& selection = {});

}  // namespace hearth::storage
