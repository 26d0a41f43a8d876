#include "store/sqlite_conversation_store.h"

#include <hearth/storage/archive.h>
#include <hearth/storage/catalog.h>
#include <hearth/storage/conversations.h>
#include <hearth/storage/messages.h>
#include <hearth/storage/search.h>
#include <hearth/storage/sources.h>

namespace hearth::ui {
namespace {

// The sidebar shows this many conversations; paging in the list is future work.
constexpr int64_t kListLimit = 1000;

std::optional<StoredOverflow> to_overflow(std::optional<storage::OverflowPolicy> p) {
  if (!p) return std::nullopt;
  switch (*p) {
    case storage::OverflowPolicy::StopAtLimit: return StoredOverflow::Stop;
    case storage::OverflowPolicy::EvictOldest: return StoredOverflow::Evict;
    case storage::OverflowPolicy::Summarize: return StoredOverflow::Summarize;
  }
  return std::nullopt;
}

std::optional<storage::OverflowPolicy> from_overflow(std::optional<StoredOverflow> p) {
  if (!p) return std::nullopt;
  switch (*p) {
    case StoredOverflow::Stop: return storage::OverflowPolicy::StopAtLimit;
    case StoredOverflow::Evict: return storage::OverflowPolicy::EvictOldest;
    case StoredOverflow::Summarize: return storage::OverflowPolicy::Summarize;
  }
  return std::nullopt;
}

ConversationRecord to_record(const storage::Conversation& c) {
  ConversationRecord r;
  r.id = ConversationKey{c.id.value()};
  r.title = c.title;
  r.created_ms = c.created_ms;
  r.updated_ms = c.updated_ms;
  r.pinned = c.pinned == storage::Pinned::Yes;
  r.archived = c.archived == storage::Archived::Yes;
  r.overflow = to_overflow(c.settings.overflow);
  r.reasoning = storage::to_string(c.reasoning);
  r.model = c.model_file;
  return r;
}

StoredRole to_role(storage::Role role) {
  switch (role) {
    case storage::Role::System: return StoredRole::System;
    case storage::Role::User: return StoredRole::User;
    case storage::Role::Assistant:
    case storage::Role::Tool: return StoredRole::Assistant;
  }
  return StoredRole::User;
}

storage::Role from_role(StoredRole role) {
  switch (role) {
    case StoredRole::System: return storage::Role::System;
    case StoredRole::User: return storage::Role::User;
    case StoredRole::Assistant: return storage::Role::Assistant;
  }
  return storage::Role::User;
}

MessageState to_state(storage::MessageState s) {
  switch (s) {
    case storage::MessageState::Complete: return MessageState::Complete;
    case storage::MessageState::Streaming: return MessageState::Streaming;
    case storage::MessageState::Interrupted: return MessageState::Interrupted;
    case storage::MessageState::Error: return MessageState::Error;
  }
  return MessageState::Complete;
}

storage::MessageState from_state(MessageState s) {
  switch (s) {
    case MessageState::Complete: return storage::MessageState::Complete;
    case MessageState::Streaming: return storage::MessageState::Streaming;
    case MessageState::Interrupted: return storage::MessageState::Interrupted;
    case MessageState::Error: return storage::MessageState::Error;
  }
  return storage::MessageState::Complete;
}

MessageRecord to_record(const storage::Message& m) {
  MessageRecord r;
  r.id = MessageKey{m.id.value()};
  r.conversation = ConversationKey{m.conversation.value()};
  if (m.parent.valid()) r.parent = MessageKey{m.parent.value()};
  r.role = to_role(m.role);
  r.content = m.content;
  r.state = to_state(m.state);
  r.created_ms = m.created_ms;
  r.figures.ttft_ms = m.stats.ttft_ms.value_or(0);
  r.figures.tokens_per_second = m.stats.tokens_per_second.value_or(0);
  r.figures.tokens = static_cast<int>(m.token_count);
  r.figures.backend = m.stats.backend;
  r.figures.reasoning_ms = m.reasoning_ms;
  r.reasoning = m.reasoning;
  return r;
}

}  // namespace

Result<std::unique_ptr<SqliteConversationStore>> SqliteConversationStore::open(
    const std::filesystem::path& file) {
  HEARTH_TRY(storage::Database db, storage::Database::open(file));
  return std::unique_ptr<SqliteConversationStore>(new SqliteConversationStore(std::move(db)));
}

Result<std::unique_ptr<SqliteConversationStore>> SqliteConversationStore::open_in_memory() {
  HEARTH_TRY(storage::Database db, storage::Database::open_in_memory());
  return std::unique_ptr<SqliteConversationStore>(new SqliteConversationStore(std::move(db)));
}

Result<std::vector<ConversationRecord>> SqliteConversationStore::list_conversations(ArchiveFilter filter) {
  storage::ConversationPage page;
  page.filter = filter == ArchiveFilter::ArchivedOnly ? storage::ArchiveFilter::ArchivedOnly
                                                      : storage::ArchiveFilter::NotArchived;
  page.limit = kListLimit;
  HEARTH_TRY(auto rows, storage::Conversations(db_).list(page));
  std::vector<ConversationRecord> out;
  out.reserve(rows.size());
  for (const auto& c : rows) out.push_back(to_record(c));
  return out;
}

Result<ConversationRecord> SqliteConversationStore::create_conversation(const std::string& title) {
  storage::Conversations conversations(db_);
  storage::NewConversation n;
  n.title = title;
  HEARTH_TRY(storage::ConversationId id, conversations.create(n));
  HEARTH_TRY(storage::Conversation c, conversations.get(id));
  return to_record(c);
}

Status SqliteConversationStore::rename_conversation(ConversationKey id, const std::string& title) {
  return storage::Conversations(db_).rename(storage::ConversationId(id.value), title);
}

Result<ConversationRecord> SqliteConversationStore::get_conversation(ConversationKey id) {
  HEARTH_TRY(storage::Conversation c, storage::Conversations(db_).get(storage::ConversationId(id.value)));
  return to_record(c);
}

Status SqliteConversationStore::set_overflow_policy(ConversationKey id, std::optional<StoredOverflow> policy) {
  // Read-modify-write of the settings JSON: safe because this store is the only writer.
  storage::Conversations conversations(db_);
  HEARTH_TRY(storage::Conversation c, conversations.get(storage::ConversationId(id.value)));
  c.settings.overflow = from_overflow(policy);
  return conversations.set_settings(c.id, c.settings);
}

Status SqliteConversationStore::set_reasoning(ConversationKey id, const std::string& choice) {
  HEARTH_TRY(const storage::ReasoningSetting setting, storage::parse_reasoning_setting(choice));
  return storage::Conversations(db_).set_reasoning(storage::ConversationId(id.value), setting);
}

Status SqliteConversationStore::set_model(ConversationKey id, const std::string& model) {
  // A remote model has no quantization to name.
  return storage::Conversations(db_).set_model(storage::ConversationId(id.value), model, std::string_view());
}

Status SqliteConversationStore::set_pinned(ConversationKey id, bool pinned) {
  return storage::Conversations(db_).set_pinned(storage::ConversationId(id.value),
                                                pinned ? storage::Pinned::Yes : storage::Pinned::No);
}

Status SqliteConversationStore::set_archived(ConversationKey id, bool archived) {
  return storage::Conversations(db_).set_archived(
      storage::ConversationId(id.value), archived ? storage::Archived::Yes : storage::Archived::No);
}

Status SqliteConversationStore::delete_conversation(ConversationKey id) {
  return storage::Conversations(db_).remove(storage::ConversationId(id.value));
}

Result<MessageTree> SqliteConversationStore::load_messages(ConversationKey id) {
  const storage::ConversationId cid(id.value);
  HEARTH_TRY(storage::Conversation c, storage::Conversations(db_).get(cid));
  HEARTH_TRY(auto all, storage::Messages(db_).all(cid));
  MessageTree tree;
  tree.messages.reserve(all.size());
  storage::Sources sources(db_);
  for (const auto& m : all) {
    MessageRecord record = to_record(m);
    if (m.role == storage::Role::User) {
      HEARTH_TRY(auto stored, sources.of(m.id));
      for (const auto& src : stored) {
        record.sources.push_back(SourceRecord{static_cast<int>(src.ordinal), src.library_name, src.document_path,
                                              src.page, src.line_first, src.line_last, src.text});
      }
    }
    tree.messages.push_back(std::move(record));
  }
  if (c.active_leaf.valid()) tree.active_leaf = MessageKey{c.active_leaf.value()};
  return tree;
}

Result<MessageRecord> SqliteConversationStore::append_message(ConversationKey id,
                                                              std::optional<MessageKey> parent,
                                                              StoredRole role,
                                                              const std::string& content,
                                                              MessageState state) {
  storage::Messages messages(db_);
  const storage::ConversationId cid(id.value);
  const storage::MessageId pid = parent ? storage::MessageId(parent->value) : storage::MessageId();
  storage::MessageId mid;
  if (state == MessageState::Streaming) {
    // A reply being generated: inserted empty, filled by update_message.
    HEARTH_TRY(mid, messages.begin_reply(cid, pid, from_role(role)));
    if (!content.empty()) HEARTH_CHECK(messages.update_reply(mid, content, 0));
  } else {
    storage::NewMessage n;
    n.role = from_role(role);
    n.content = content;
    HEARTH_TRY(mid, messages.append(cid, pid, n));
  }
  HEARTH_TRY(storage::Message m, messages.get(mid));
  return to_record(m);
}

Status SqliteConversationStore::update_message(MessageKey id, const std::string& content,
                                               MessageState state, const ReplyFigures& figures,
                                               const std::string& reasoning) {
  storage::Messages messages(db_);
  const storage::MessageId mid(id.value);
  if (state == MessageState::Streaming) {
    return messages.update_reply(mid, storage::ReplyProgress{content, figures.tokens, reasoning, figures.reasoning_ms});
  }
  storage::ReplyEnd end;
  end.state = from_state(state);
  end.content = content;
  end.token_count = figures.tokens;
  end.reasoning = reasoning;
  end.reasoning_ms = figures.reasoning_ms;
  if (figures.ttft_ms > 0) end.stats.ttft_ms = figures.ttft_ms;
  if (figures.tokens_per_second > 0) end.stats.tokens_per_second = figures.tokens_per_second;
  end.stats.backend = figures.backend;
  if (state == MessageState::Error) end.error_message = "generation failed";
  return messages.finish_reply(mid, end);
}

Status SqliteConversationStore::set_active_leaf(ConversationKey, MessageKey leaf) {
  // switch_to follows the newest child down from `leaf`; for a leaf that is itself.
  return storage::Messages(db_).switch_to(storage::MessageId(leaf.value));
}

Result<std::vector<SearchHit>> SqliteConversationStore::search(const std::string& query, int limit) {
  storage::SearchOptions options;
  options.limit = limit;
  options.highlight_open = std::string(1, kHighlightOpen);
  options.highlight_close = std::string(1, kHighlightClose);
  HEARTH_TRY(auto hits, storage::Search(db_).query(query, options));
  std::vector<SearchHit> out;
  out.reserve(hits.size());
  for (const auto& h : hits) {
    SearchHit hit;
    hit.conversation = ConversationKey{h.conversation.value()};
    if (h.message.valid()) hit.message = MessageKey{h.message.value()};
    hit.title = h.title;
    hit.snippet = h.snippet;
    out.push_back(std::move(hit));
  }
  return out;
}

Status SqliteConversationStore::add_context_event(const ContextEventRecord& event) {
  storage::NewContextEvent e;
  e.kind = event.kind == ContextEventKind::Summarized ? storage::ContextEventKind::Summarized
                                                      : storage::ContextEventKind::Dropped;
  if (event.first_message) e.first_message = storage::MessageId(event.first_message->value);
  if (event.last_message) e.last_message = storage::MessageId(event.last_message->value);
  e.tokens_removed = event.tokens_removed;
  e.summary = event.summary;
  HEARTH_TRY(auto id, storage::ContextEvents(db_).add(storage::ConversationId(event.conversation.value), e));
  (void)id;
  return {};
}

Result<std::vector<ContextEventRecord>> SqliteConversationStore::context_events(ConversationKey id) {
  HEARTH_TRY(auto events, storage::ContextEvents(db_).list(storage::ConversationId(id.value)));
  std::vector<ContextEventRecord> out;
  for (const auto& e : events) {
    ContextEventRecord r;
    r.conversation = id;
    r.kind = e.kind == storage::ContextEventKind::Summarized ? ContextEventKind::Summarized : ContextEventKind::Dropped;
    if (e.first_message.valid()) r.first_message = MessageKey{e.first_message.value()};
    if (e.last_message.valid()) r.last_message = MessageKey{e.last_message.value()};
    r.tokens_removed = e.tokens_removed;
    r.summary = e.summary;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::string> SqliteConversationStore::export_conversations(ArchiveFormat format,
                                                                  const std::vector<ConversationKey>& which) {
  storage::ExportSelection selection;
  for (ConversationKey key : which) selection.conversations.emplace_back(key.value);
  return format == ArchiveFormat::Json ? storage::export_json(db_, selection)
                                       : storage::export_markdown(db_, selection);
}

Result<ImportCounts> SqliteConversationStore::preview_import(const std::string& json) {
  HEARTH_TRY(storage::ImportPreview preview, storage::preview_import(db_, json));
  return ImportCounts{preview.conversations, preview.messages, preview.existing};
}

Result<ImportOutcome> SqliteConversationStore::import_conversations(const std::string& json,
                                                                    DuplicateChoice duplicates) {
  HEARTH_TRY(storage::ImportReport report,
             storage::import_json(db_, json,
                                  duplicates == DuplicateChoice::Skip ? storage::Duplicates::Skip
                                                                      : storage::Duplicates::ImportAsCopies));
  return ImportOutcome{static_cast<int64_t>(report.conversations.size()), report.messages, report.skipped};
}

}  // namespace hearth::ui
