// Markdown export: the branch the user sees, for reading and sharing. Not imported
// back (JSON is the lossless format).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>
#include <string_view>

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

// "12 s", "3.5 s", "2 min 5 s": the precision a reader cares about.
std::string duration(double ms) {
  const double seconds = std::max(ms, 0.0) / 1000.0;
  if (seconds < 9.95) return fmt::format("{:.1f} s", seconds);
  const long long whole = std::llround(seconds);
  if (whole < 60) return fmt::format("{} s", whole);
  return fmt::format("{} min {} s", whole / 60, whole % 60);
}

// The reasoning goes inside an HTML <details> block, which renderers show folded.
// Like content it is Markdown and is written as it is, except that a closing
// </details> in it would end the block early: its '<' becomes "&lt;", which renders
// as the same text.
bool closes_details(std::string_view text) {
  constexpr std::string_view kClose = "</details";
  if (text.size() < kClose.size()) return false;
  for (std::size_t i = 0; i < kClose.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) != kClose[i]) return false;
  }
  return true;
}

std::string thinking_block(const Message& m) {
  std::string body;
  body.reserve(m.reasoning.size());
  for (std::size_t i = 0; i < m.reasoning.size(); ++i) {
    if (closes_details(std::string_view(m.reasoning).substr(i))) {
      body += "&lt;";
    } else {
      body += m.reasoning[i];
    }
  }
  const std::string summary = m.reasoning_ms ? "Thinking (" + duration(*m.reasoning_ms) + ")" : "Thinking";
  return "<details><summary>" + summary + "</summary>\n\n" + body + "\n\n</details>\n\n";
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
    md += std::string("## ") + heading(m.role) + "\n\n";
    if (!m.reasoning.empty()) md += thinking_block(m);
    md += m.content + "\n\n";
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
