// Markdown export: the branch the user sees, for reading and sharing. Not imported
// back (JSON is the lossless format).
#include <ctime>

#include "database_impl.h"
#include "hearth/storage/archive.h"
#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"

namespace hearth::storage {
namespace {

std::string utc_time(UnixMs ms) {
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M UTC", &tm);
  return buffer;
}

const char* heading(Role role) {
  switch (role) {
    case Role::System: return "System";
    case Role::User: return "User";
    case Role::Assistant: return "Assistant";
    case Role::Tool: return "Tool";
  }
  return "?";
}

// Quotes every line so multi-line text stays one block.
std::string blockquote(const std::string& text) {
  std::string out = "> ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "> ";
  }
  return out;
}

Result<std::string> conversation_markdown(Database& db, ConversationId id) {
  HEARTH_TRY(Conversation c, Conversations(db).get(id));
  HEARTH_TRY(auto path, Messages(db).active_path(id));
  std::string md = "# " + (c.title.empty() ? std::string("Untitled conversation") : c.title) + "\n\n";
  md += "- Created: " + utc_time(c.created_ms) + "\n";
  md += "- Updated: " + utc_time(c.updated_ms) + "\n";
  if (!c.model_file.empty()) {
    md += "- Model: " + c.model_file + (c.model_quant.empty() ? "" : " (" + c.model_quant + ")") + "\n";
  }
  md += "\n";
  if (!c.system_prompt.empty()) md += "**System prompt**\n\n" + blockquote(c.system_prompt) + "\n\n";
  for (const Message& m : path) {
    md += std::string("## ") + heading(m.role) + "\n\n" + m.content + "\n\n";
    if (m.state == MessageState::Interrupted) md += "*(reply interrupted)*\n\n";
    if (m.state == MessageState::Streaming) md += "*(reply still being written)*\n\n";
    if (m.state == MessageState::Error) md += "*(generation failed: " + m.error_message + ")*\n\n";
  }
  return md;
}

}  // namespace

Result<std::string> export_markdown(Database& db, const ExportSelection& selection) {
  std::vector<ConversationId> ids = selection.conversations;
  if (ids.empty()) {
    HEARTH_TRY(auto stmt, db.impl().prepare("SELECT id FROM conversations ORDER BY id"));
    while (true) {
      HEARTH_TRY(bool row, stmt.step());
      if (!row) break;
      ids.push_back(stmt.id<ConversationId>(0));
    }
  }
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += "---\n\n";
    HEARTH_TRY(std::string md, conversation_markdown(db, ids[i]));
    out += md;
  }
  return out;
}

}  // namespace hearth::storage
