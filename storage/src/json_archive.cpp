// JSON export/import; the format is documented in docs/storage-json-format.md.
#include <hearth/core/text_position.h>
#include <nlohmann/json.hpp>

#include <unordered_map>

#include "database_impl.h"
#include "hearth/storage/archive.h"
#include "hearth/storage/catalog.h"
#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "row_readers.h"

namespace hearth::storage {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kFormatName = "hearth-conversations";
constexpr int kFormatVersion = 1;

Json optional_number(const std::optional<double>& value) { return value ? Json(*value) : Json(nullptr); }
Json optional_id(std::int64_t value) { return value > 0 ? Json(value) : Json(nullptr); }

Result<std::vector<ConversationId>> all_conversations(DatabaseImpl& impl) {
  HEARTH_TRY(auto stmt, impl.prepare("SELECT id FROM conversations ORDER BY id"));
  std::vector<ConversationId> out;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) return out;
    out.push_back(stmt.id<ConversationId>(0));
  }
}

Result<Json> conversation_to_json(Database& db, ConversationId id) {
  HEARTH_TRY(Conversation c, Conversations(db).get(id));
  HEARTH_TRY(auto messages, Messages(db).all(id));
  HEARTH_TRY(auto events, ContextEvents(db).list(id));
  Json j;
  j["id"] = c.id.value();
  j["title"] = c.title;
  j["created_ms"] = c.created_ms;
  j["updated_ms"] = c.updated_ms;
  j["model_file"] = c.model_file;
  j["model_quant"] = c.model_quant;
  j["system_prompt"] = c.system_prompt;
  j["settings"] = Json::parse(settings_to_json(c.settings));
  j["reasoning"] = to_string(c.reasoning);
  j["pinned"] = c.pinned == Pinned::Yes;
  j["archived"] = c.archived == Archived::Yes;
  j["active_leaf"] = optional_id(c.active_leaf.value());
  Json list = Json::array();
  for (const Message& m : messages) {
    Json jm;
    jm["id"] = m.id.value();
    jm["parent"] = optional_id(m.parent.value());
    jm["role"] = to_string(m.role);
    jm["content"] = m.content;
    jm["created_ms"] = m.created_ms;
    jm["updated_ms"] = m.updated_ms;
    jm["state"] = to_string(m.state);
    jm["error_message"] = m.error_message;
    jm["token_count"] = m.token_count;
    jm["ttft_ms"] = optional_number(m.stats.ttft_ms);
    jm["tokens_per_second"] = optional_number(m.stats.tokens_per_second);
    jm["backend"] = m.stats.backend;
    jm["reasoning"] = m.reasoning;
    jm["reasoning_ms"] = optional_number(m.reasoning_ms);
    list.push_back(std::move(jm));
  }
  j["messages"] = std::move(list);
  Json event_list = Json::array();
  for (const ContextEvent& e : events) {
    Json je;
    je["kind"] = to_string(e.kind);
    je["created_ms"] = e.created_ms;
    je["first_message"] = optional_id(e.first_message.value());
    je["last_message"] = optional_id(e.last_message.value());
    je["tokens_removed"] = e.tokens_removed;
    je["summary"] = e.summary;
    event_list.push_back(std::move(je));
  }
  j["context_events"] = std::move(event_list);
  return j;
}

// Typed access to a JSON object whose errors name the path ("conversations[3].title").
class Fields {
 public:
  Fields(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

  const std::string& path() const { return path_; }

  Result<const Json*> get(const char* key, Json::value_t type) const {
    auto it = object_.find(key);
    if (it == object_.end()) return fail(key, "is missing");
    const bool matches = type == Json::value_t::number_integer ? it->is_number_integer()
                         : type == Json::value_t::number_float ? it->is_number()
                                                               : it->type() == type;
    if (!matches) return fail(key, std::string("has type ") + it->type_name());
    return &*it;
  }
  Result<std::string> string(const char* key) const {
    HEARTH_TRY(const Json* v, get(key, Json::value_t::string));
    return v->get<std::string>();
  }
  Result<std::int64_t> integer(const char* key) const {
    HEARTH_TRY(const Json* v, get(key, Json::value_t::number_integer));
    return v->get<std::int64_t>();
  }
  Result<bool> boolean(const char* key) const {
    HEARTH_TRY(const Json* v, get(key, Json::value_t::boolean));
    return v->get<bool>();
  }
  // An integer or null (ids, optional references).
  Result<std::optional<std::int64_t>> optional_integer(const char* key) const {
    auto it = object_.find(key);
    if (it != object_.end() && it->is_null()) return std::optional<std::int64_t>{};
    HEARTH_TRY(std::int64_t v, integer(key));
    return std::optional<std::int64_t>{v};
  }
  // Keys added to the format later: an export written before them lacks them.
  bool has(const char* key) const { return object_.contains(key); }
  Result<std::string> string_or(const char* key, std::string fallback) const {
    if (!has(key)) return fallback;
    return string(key);
  }
  Result<std::optional<double>> optional_real(const char* key) const {
    auto it = object_.find(key);
    if (it != object_.end() && it->is_null()) return std::optional<double>{};
    HEARTH_TRY(const Json* v, get(key, Json::value_t::number_float));
    return std::optional<double>{v->get<double>()};
  }
  Error fail(const char* key, const std::string& problem) const {
    return make_error(ErrorCode::InvalidFormat, path_ + "." + key + " " + problem);
  }

 private:
  const Json& object_;
  std::string path_;
};

template <typename T>
Result<T> at_path(Result<T> parsed, const Fields& fields, const char* key) {
  if (parsed.ok()) return parsed;
  return fields.fail(key, "is invalid: " + parsed.error().message);
}

// Whether the database already holds this conversation (see `Duplicates`). Messages
// the comparison cannot read make it "not a duplicate"; the import then reports them.
Result<bool> already_exists(DatabaseImpl& impl, const std::string& title, std::int64_t created,
                            const Json& messages) {
  HEARTH_TRY(auto candidates, impl.prepare("SELECT id FROM conversations WHERE title = ?1 AND created_ms = ?2"));
  candidates.bind(1, title).bind(2, created);
  while (true) {
    HEARTH_TRY(bool row, candidates.step());
    if (!row) return false;
    HEARTH_TRY(auto stored, impl.prepare("SELECT role, content, created_ms FROM messages "
                                         "WHERE conversation_id = ?1 ORDER BY id"));
    stored.bind(1, candidates.int64(0));
    bool same = true;
    std::size_t i = 0;
    while (same) {
      HEARTH_TRY(bool message, stored.step());
      if (!message) break;
      if (i >= messages.size()) {
        same = false;
        break;
      }
      const Json& jm = messages[i++];
      const auto role = jm.is_object() ? jm.find("role") : jm.end();
      const auto content = jm.is_object() ? jm.find("content") : jm.end();
      const auto m_created = jm.is_object() ? jm.find("created_ms") : jm.end();
      same = role != jm.end() && role->is_string() && role->get<std::string>() == stored.text(0) &&
             content != jm.end() && content->is_string() && content->get<std::string>() == stored.text(1) &&
             m_created != jm.end() && m_created->is_number_integer() &&
             m_created->get<std::int64_t>() == stored.int64(2);
    }
    if (same && i == messages.size()) return true;
  }
}

// What one pass over a document found and did.
struct ImportTally {
  ImportReport report;
  std::int64_t document_messages = 0;
  std::int64_t existing = 0;
};

Status import_conversation(DatabaseImpl& impl, const Json& jc, const std::string& path, Duplicates duplicates,
                           ImportTally& tally) {
  ImportReport& report = tally.report;
  if (!jc.is_object()) return make_error(ErrorCode::InvalidFormat, path + " is not an object");
  const Fields f(jc, path);
  HEARTH_TRY(const Json* settings_json, f.get("settings", Json::value_t::object));
  HEARTH_TRY(ConversationSettings settings, at_path(settings_from_json(settings_json->dump()), f, "settings"));
  HEARTH_TRY(std::string title, f.string("title"));
  HEARTH_TRY(std::int64_t created, f.integer("created_ms"));
  HEARTH_TRY(std::int64_t updated, f.integer("updated_ms"));
  HEARTH_TRY(std::string model_file, f.string("model_file"));
  HEARTH_TRY(std::string model_quant, f.string("model_quant"));
  HEARTH_TRY(std::string system_prompt, f.string("system_prompt"));
  HEARTH_TRY(std::string reasoning_text, f.string_or("reasoning", to_string(ReasoningSetting::Default)));
  HEARTH_TRY(ReasoningSetting reasoning, at_path(parse_reasoning_setting(reasoning_text), f, "reasoning"));
  HEARTH_TRY(bool pinned, f.boolean("pinned"));
  HEARTH_TRY(bool archived, f.boolean("archived"));
  HEARTH_TRY(auto active_leaf, f.optional_integer("active_leaf"));
  HEARTH_TRY(const Json* messages, f.get("messages", Json::value_t::array));
  HEARTH_TRY(const Json* events, f.get("context_events", Json::value_t::array));

  tally.document_messages += static_cast<std::int64_t>(messages->size());
  HEARTH_TRY(bool exists, already_exists(impl, title, created, *messages));
  if (exists) {
    ++tally.existing;
    if (duplicates == Duplicates::Skip) {
      ++report.skipped;
      return {};
    }
  }

  HEARTH_TRY(auto insert, impl.prepare("INSERT INTO conversations (title, created_ms, updated_ms, model_file, "
                                       "model_quant, system_prompt, settings_json, pinned, archived, reasoning) "
                                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"));
  insert.bind(1, title).bind(2, created).bind(3, updated).bind(4, model_file).bind(5, model_quant);
  insert.bind(6, system_prompt).bind(7, settings_to_json(settings)).bind(8, std::int64_t{pinned});
  insert.bind(9, std::int64_t{archived}).bind(10, to_string(reasoning));
  HEARTH_CHECK(insert.run());
  const ConversationId conversation{impl.last_insert_id()};

  // Exported ids are only labels inside the document; parents must come first.
  std::unordered_map<std::int64_t, MessageId> new_ids;
  auto resolve = [&](const Fields& fields, const char* key,
                     const std::optional<std::int64_t>& old) -> Result<MessageId> {
    if (!old) return MessageId{};
    auto it = new_ids.find(*old);
    if (it == new_ids.end()) {
      return fields.fail(key, "refers to message " + std::to_string(*old) + ", not listed before it in this conversation");
    }
    return it->second;
  };
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const Json& jm = (*messages)[i];
    const std::string mpath = path + ".messages[" + std::to_string(i) + "]";
    if (!jm.is_object()) return make_error(ErrorCode::InvalidFormat, mpath + " is not an object");
    const Fields m(jm, mpath);
    HEARTH_TRY(std::int64_t old_id, m.integer("id"));
    HEARTH_TRY(auto old_parent, m.optional_integer("parent"));
    HEARTH_TRY(MessageId parent, resolve(m, "parent", old_parent));
    HEARTH_TRY(std::string role_text, m.string("role"));
    HEARTH_TRY(Role role, at_path(parse_role(role_text), m, "role"));
    HEARTH_TRY(std::string state_text, m.string("state"));
    HEARTH_TRY(MessageState state, at_path(parse_message_state(state_text), m, "state"));
    HEARTH_TRY(std::string content, m.string("content"));
    HEARTH_TRY(std::int64_t m_created, m.integer("created_ms"));
    HEARTH_TRY(std::int64_t m_updated, m.integer("updated_ms"));
    HEARTH_TRY(std::string error_message, m.string("error_message"));
    HEARTH_TRY(std::int64_t token_count, m.integer("token_count"));
    HEARTH_TRY(auto ttft, m.optional_real("ttft_ms"));
    HEARTH_TRY(auto tps, m.optional_real("tokens_per_second"));
    HEARTH_TRY(std::string backend, m.string("backend"));
    HEARTH_TRY(std::string reasoning_of_message, m.string_or("reasoning", ""));
    std::optional<double> reasoning_ms;
    if (m.has("reasoning_ms")) {
      HEARTH_TRY(reasoning_ms, m.optional_real("reasoning_ms"));
    }
    if (new_ids.count(old_id) != 0) return m.fail("id", "repeats message " + std::to_string(old_id));

    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO messages (conversation_id, parent_id, role, content, created_ms, "
                                       "updated_ms, state, error_message, token_count, ttft_ms, tokens_per_second, "
                                       "backend, reasoning, reasoning_ms) "
                                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"));
    stmt.bind(1, conversation).bind(2, parent).bind(3, to_string(role)).bind(4, content).bind(5, m_created);
    stmt.bind(6, m_updated).bind(7, to_string(state)).bind(8, error_message).bind(9, token_count);
    stmt.bind(10, ttft).bind(11, tps).bind(12, backend).bind(13, reasoning_of_message).bind(14, reasoning_ms);
    HEARTH_CHECK(stmt.run());
    new_ids.emplace(old_id, MessageId{impl.last_insert_id()});
    ++report.messages;
  }

  for (std::size_t i = 0; i < events->size(); ++i) {
    const Json& je = (*events)[i];
    const std::string epath = path + ".context_events[" + std::to_string(i) + "]";
    if (!je.is_object()) return make_error(ErrorCode::InvalidFormat, epath + " is not an object");
    const Fields e(je, epath);
    HEARTH_TRY(std::string kind_text, e.string("kind"));
    HEARTH_TRY(ContextEventKind kind, at_path(parse_context_event_kind(kind_text), e, "kind"));
    HEARTH_TRY(std::int64_t e_created, e.integer("created_ms"));
    HEARTH_TRY(auto old_first, e.optional_integer("first_message"));
    HEARTH_TRY(auto old_last, e.optional_integer("last_message"));
    HEARTH_TRY(MessageId first, resolve(e, "first_message", old_first));
    HEARTH_TRY(MessageId last, resolve(e, "last_message", old_last));
    HEARTH_TRY(std::int64_t tokens_removed, e.integer("tokens_removed"));
    HEARTH_TRY(std::string summary, e.string("summary"));
    HEARTH_TRY(auto stmt, impl.prepare("INSERT INTO context_events (conversation_id, kind, created_ms, "
                                       "first_message_id, last_message_id, tokens_removed, summary) "
                                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"));
    stmt.bind(1, conversation).bind(2, to_string(kind)).bind(3, e_created).bind(4, first).bind(5, last);
    stmt.bind(6, tokens_removed).bind(7, summary);
    HEARTH_CHECK(stmt.run());
  }

  HEARTH_TRY(MessageId leaf, resolve(f, "active_leaf", active_leaf));
  HEARTH_TRY(auto set_leaf, impl.prepare("UPDATE conversations SET active_leaf_id = ?2 WHERE id = ?1"));
  set_leaf.bind(1, conversation).bind(2, leaf);
  HEARTH_CHECK(set_leaf.run());
  report.conversations.push_back(conversation);
  return {};
}

}  // namespace

Result<std::string> export_json(Database& db, const ExportSelection& selection) {
  std::vector<ConversationId> ids = selection.conversations;
  if (ids.empty()) {
    HEARTH_TRY(ids, all_conversations(db.impl()));
  }
  // One read transaction, so the export is a consistent snapshot (unless the
  // caller already holds one).
  const bool own_snapshot = sqlite3_get_autocommit(db.impl().db) != 0;
  if (own_snapshot) HEARTH_CHECK(db.impl().exec("BEGIN", "begin export"));
  Json root;
  root["format"] = kFormatName;
  root["version"] = kFormatVersion;
  root["exported_ms"] = db.now();
  Json list = Json::array();
  for (ConversationId id : ids) {
    auto conversation = conversation_to_json(db, id);
    if (!conversation.ok()) {
      if (own_snapshot) (void)db.impl().exec("ROLLBACK", "end export");
      return conversation.take_error();
    }
    list.push_back(std::move(conversation).value());
  }
  if (own_snapshot) (void)db.impl().exec("COMMIT", "end export");
  root["conversations"] = std::move(list);
  // Text stays UTF-8; invalid sequences (which SQLite can hold) become U+FFFD
  // instead of failing the whole export.
  return root.dump(1, '\t', false, Json::error_handler_t::replace);
}

namespace {

// Validates the document's envelope and returns its conversation list.
Result<Json> parse_document(std::string_view text) {
  Json root;
  try {
    root = Json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    const uint64_t offset = e.byte > 0 ? static_cast<uint64_t>(e.byte) - 1 : 0;
    return make_error(ErrorCode::InvalidFormat, fmt::format("import: the document is not valid JSON at {}: {}",
                                                            text_position(text, offset), json_error_reason(e.what())));
  }
  if (!root.is_object()) return make_error(ErrorCode::InvalidFormat, "import: the document is not a JSON object");
  const Fields top(root, "$");
  HEARTH_TRY(std::string format, top.string("format"));
  if (format != kFormatName) return top.fail("format", "is '" + format + "', expected '" + kFormatName + "'");
  HEARTH_TRY(std::int64_t version, top.integer("version"));
  if (version != kFormatVersion) {
    return make_error(ErrorCode::Unsupported, "import: format version " + std::to_string(version) +
                                                  " is not supported (this Hearth reads version " +
                                                  std::to_string(kFormatVersion) + ")");
  }
  HEARTH_TRY(const Json* conversations, top.get("conversations", Json::value_t::array));
  // Moved out rather than copied: an export can be large. It points into `root`,
  // which is not const.
  return std::move(const_cast<Json&>(*conversations));
}

Status import_all(Database& db, const Json& conversations, Duplicates duplicates, ImportTally& tally) {
  for (std::size_t i = 0; i < conversations.size(); ++i) {
    HEARTH_CHECK(import_conversation(db.impl(), conversations[i], "$.conversations[" + std::to_string(i) + "]",
                                     duplicates, tally));
  }
  return {};
}

}  // namespace

Result<ImportPreview> preview_import(Database& db, std::string_view text) {
  HEARTH_TRY(const Json conversations, parse_document(text));
  // The real import, rolled back: every check the import makes, the preview makes,
  // and "existing" counts exactly what Duplicates::Skip would leave out.
  HEARTH_TRY(auto tx, Transaction::begin(db, Durability::Normal));
  ImportTally tally;
  HEARTH_CHECK(import_all(db, conversations, Duplicates::ImportAsCopies, tally));
  ImportPreview preview;
  preview.conversations = static_cast<std::int64_t>(conversations.size());
  preview.messages = tally.document_messages;
  preview.existing = tally.existing;
  return preview;  // `tx` rolls back
}

Result<ImportReport> import_json(Database& db, std::string_view text, Duplicates duplicates) {
  HEARTH_TRY(const Json conversations, parse_document(text));
  return in_transaction(db, Durability::Full, [&]() -> Result<ImportReport> {
    ImportTally tally;
    HEARTH_CHECK(import_all(db, conversations, duplicates, tally));
    return std::move(tally.report);
  });
}

}  // namespace hearth::storage
