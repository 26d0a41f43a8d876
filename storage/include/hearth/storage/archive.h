// Export and import. JSON is the lossless format (all branches, settings, figures,
// context events; see docs/storage-json-format.md); Markdown is for reading.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/engine/core/result.h"
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
};

// Imports every conversation of a JSON export as new conversations (new ids), in one
// transaction: either all of them or none. Errors name the JSON path at fault.
Result<ImportReport> import_json(Database& db, std::string_view json);

// The active branch of each selected conversation as Markdown.
Result<std::string> export_markdown(Database& db, const ExportSelection& selection = {});

}  // namespace hearth::storage
