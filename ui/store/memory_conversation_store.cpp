#include "store/memory_conversation_store.h"

#include <algorithm>
#include <cctype>

namespace hearth::ui {
namespace {

Error not_found(const char* what, int64_t id) {
  return make_error(ErrorCode::NotFound, std::string(what) + " " + std::to_string(id) + " does not exist");
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A window of text around the first match with the match marked; ASCII
// case-insensitive, which is enough for a double.
std::string snippet_around(const std::string& text, size_t at, size_t length) {
  constexpr size_t kContext = 32;
  const size_t begin = at > kContext ? at - kContext : 0;
  const size_t end = std::min(text.size(), at + length + kContext);
  std::string out;
  if (begin > 0) out += "…";
  out += text.substr(begin, at - begin);
  out += kHighlightOpen;
  out += text.substr(at, length);
  out += kHighlightClose;
  out += text.substr(at + length, end - at - length);
  if (end < text.size()) out += "…";
  return out;
}

}  // namespace

MemoryConversationStore::Conversation* MemoryConversationStore::find(ConversationKey id) {
  auto it = conversations_.find(id.value);
  return it == conversations_.end() ? nullptr : &it->second;
}

Result<std::vector<ConversationRecord>> MemoryConversationStore::list_conversations(ArchiveFilter filter) {
  std::vector<ConversationRecord> out;
  for (const auto& [id, c] : conversations_) {
    if (c.record.archived == (filter == ArchiveFilter::ArchivedOnly)) out.push_back(c.record);
  }
  return out;
}

Result<ConversationRecord> MemoryConversationStore::create_conversation(const std::string& title) {
  Conversation c;
  c.record.id = ConversationKey{next_conversation_++};
  c.record.title = title;
  c.record.created_ms = c.record.updated_ms = tick();
  conversations_[c.record.id.value] = c;
  return c.record;
}

Status MemoryConversationStore::rename_conversation(ConversationKey id, const std::string& title) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  c->record.title = title;
  return {};
}

Result<ConversationRecord> MemoryConversationStore::get_conversation(ConversationKey id) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  return c->record;
}

Status MemoryConversationStore::set_overflow_policy(ConversationKey id, std::optional<StoredOverflow> policy) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  c->record.overflow = policy;
  return {};
}

Status MemoryConversationStore::set_model(ConversationKey id, const std::string& model) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  c->record.model = model;
  return {};
}

Status MemoryConversationStore::set_reasoning(ConversationKey id, const std::string& choice) {
  static constexpr const char* kChoices[] = {"default", "off", "on", "low", "medium", "high"};
  if (std::find(std::begin(kChoices), std::end(kChoices), choice) == std::end(kChoices)) {
    return make_error(ErrorCode::InvalidArgument, "unknown reasoning setting '" + choice + "'");
  }
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  c->record.reasoning = choice;
  return {};
}

Status MemoryConversationStore::set_pinned(ConversationKey id, bool pinned) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  c->record.pinned = pinned;
  return {};
}

Status MemoryConversationStore::set_archived(ConversationKey id, bool archived) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  c->record.archived = archived;
  return {};
}

Status MemoryConversationStore::delete_conversation(ConversationKey id) {
  if (!conversations_.erase(id.value)) return not_found("conversation", id.value);
  std::erase_if(messages_, [&](const auto& kv) { return kv.second.conversation == id; });
  return {};
}

Result<MessageTree> MemoryConversationStore::load_messages(ConversationKey id) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  MessageTree tree;
  for (const auto& [key, m] : messages_) {
    if (m.conversation == id) tree.messages.push_back(m);
  }
  tree.active_leaf = c->active_leaf;
  return tree;
}

Result<MessageRecord> MemoryConversationStore::append_message(ConversationKey id,
                                                              std::optional<MessageKey> parent,
                                                              StoredRole role,
                                                              const std::string& content,
                                                              MessageState state) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  if (parent) {
    auto p = messages_.find(parent->value);
    if (p == messages_.end() || !(p->second.conversation == id)) {
      return not_found("parent message", parent->value);
    }
  }
  MessageRecord m;
  m.id = MessageKey{next_message_++};
  m.conversation = id;
  m.parent = parent;
  m.role = role;
  m.content = content;
  m.state = state;
  m.created_ms = tick();
  messages_[m.id.value] = m;
  c->active_leaf = m.id;
  c->record.updated_ms = m.created_ms;
  return m;
}

Status MemoryConversationStore::update_message(MessageKey id, const std::string& content,
                                               MessageState state, const ReplyFigures& figures,
                                               const std::string& reasoning) {
  auto it = messages_.find(id.value);
  if (it == messages_.end()) return not_found("message", id.value);
  it->second.content = content;
  it->second.reasoning = reasoning;
  it->second.state = state;
  it->second.figures = figures;
  return {};
}

Status MemoryConversationStore::set_active_leaf(ConversationKey id, MessageKey leaf) {
  Conversation* c = find(id);
  if (!c) return not_found("conversation", id.value);
  if (!messages_.count(leaf.value)) return not_found("message", leaf.value);
  c->active_leaf = leaf;
  return {};
}

Result<std::vector<SearchHit>> MemoryConversationStore::search(const std::string& query, int limit) {
  std::vector<SearchHit> hits;
  const std::string needle = lower(query);
  if (needle.empty()) return hits;
  for (const auto& [id, c] : conversations_) {
    const std::string title = lower(c.record.title);
    if (auto at = title.find(needle); at != std::string::npos) {
      hits.push_back({c.record.id, std::nullopt, c.record.title,
                      snippet_around(c.record.title, at, needle.size())});
    }
  }
  for (const auto& [id, m] : messages_) {
    if (static_cast<int>(hits.size()) >= limit) break;
    const std::string text = lower(m.content);
    if (auto at = text.find(needle); at != std::string::npos) {
      Conversation* c = find(m.conversation);
      hits.push_back({m.conversation, m.id, c ? c->record.title : std::string(),
                      snippet_around(m.content, at, needle.size())});
    }
  }
  if (static_cast<int>(hits.size()) > limit) hits.resize(static_cast<size_t>(limit));
  return hits;
}

Status MemoryConversationStore::add_context_event(const ContextEventRecord& event) {
  if (!find(event.conversation)) return not_found("conversation", event.conversation.value);
  for (const auto& m : {event.first_message, event.last_message}) {
    if (m && (!messages_.count(m->value) || messages_.at(m->value).conversation != event.conversation)) {
      return not_found("message", m->value);
    }
  }
  context_events_.push_back(event);
  return {};
}

Result<std::vector<ContextEventRecord>> MemoryConversationStore::context_events(ConversationKey id) {
  std::vector<ContextEventRecord> out;
  for (const auto& e : context_events_) {
    if (e.conversation == id) out.push_back(e);
  }
  return out;
}

// Export and import read and write the storage library's document format, which
// only the SQLite store speaks; the in-memory store says so instead of pretending.
Result<std::string> MemoryConversationStore::export_conversations(ArchiveFormat,
                                                                  const std::vector<ConversationKey>&) {
  return make_error(ErrorCode::Unsupported, "export needs the conversation database (conversations are in memory only)");
}

Result<ImportCounts> MemoryConversationStore::preview_import(const std::string&) {
  return make_error(ErrorCode::Unsupported, "import needs the conversation database (conversations are in memory only)");
}

Result<ImportOutcome> MemoryConversationStore::import_conversations(const std::string&, DuplicateChoice) {
  return make_error(ErrorCode::Unsupported, "import needs the conversation database (conversations are in memory only)");
}

}  // namespace hearth::ui
