// The app's view of conversation storage: plain C++, called only on the
// storage thread (see storage_executor.h). The SQLite implementation adapts
// the storage library; tests use an in-memory double.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hearth::storage {
class Database;
}

namespace hearth::ui {

struct ConversationKey {
  int64_t value = 0;
  friend bool operator==(ConversationKey, ConversationKey) = default;
};
struct MessageKey {
  int64_t value = 0;
  friend bool operator==(MessageKey, MessageKey) = default;
};

enum class StoredRole { System, User, Assistant };
// What a conversation does when its context is full, when it has its own choice.
enum class StoredOverflow { Stop, Evict, Summarize };
enum class MessageState { Complete, Streaming, Interrupted, Error };

struct ConversationRecord {
  ConversationKey id;
  std::string title;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  bool pinned = false;
  bool archived = false;
  std::optional<StoredOverflow> overflow;  // nullopt: follows the app's global setting
  // The reasoning switch passed to a template that offers one: "default",
  // "off", "on", "low", "medium" or "high".
  std::string reasoning = "default";
  // The remote model the conversation last replied with (ui/engine/remote_model_path.h,
  // "remote:<endpoint id>/<model id>", kept in the model_file column); empty for
  // this computer's models. Opening the conversation switches back to it.
  std::string model{};
};

// Figures stored with an assistant reply.
struct ReplyFigures {
  double ttft_ms = 0;
  double tokens_per_second = 0;
  int tokens = 0;
  std::string backend;
  // How long the reply's reasoning took (first to last thinking token); nullopt
  // when it had none or the thinking has not ended.
  std::optional<double> reasoning_ms{};
};

// A passage a user message was given from the conversation's documents, numbered
// as the reply cites it, with its text exactly as the model saw it.
struct SourceRecord {
  int number = 1;
  std::string library;
  std::string path;
  std::optional<int64_t> page;
  int64_t line_first = 1;
  int64_t line_last = 1;
  std::string text;
  friend bool operator==(const SourceRecord&, const SourceRecord&) = default;
};

struct MessageRecord {
  MessageKey id;
  ConversationKey conversation;
  std::optional<MessageKey> parent;  // nullopt for the first message
  StoredRole role = StoredRole::User;
  std::string content;
  MessageState state = MessageState::Complete;
  int64_t created_ms = 0;
  ReplyFigures figures;
  // A reasoning model's thinking before `content` (its answer), kept apart.
  std::string reasoning{};
  // A user message: the passages retrieved for it from attached documents.
  std::vector<SourceRecord> sources{};
};

// One conversation's message tree and the leaf the user last looked at.
struct MessageTree {
  std::vector<MessageRecord> messages;  // in creation order
  std::optional<MessageKey> active_leaf;
};

enum class ArchiveFilter { ActiveOnly, ArchivedOnly };

// What the engine's overflow policy did to a conversation's context.
enum class ContextEventKind { Dropped, Summarized };
struct ContextEventRecord {
  ConversationKey conversation;
  ContextEventKind kind = ContextEventKind::Dropped;
  std::optional<MessageKey> first_message;  // the messages dropped or summarised
  std::optional<MessageKey> last_message;
  int64_t tokens_removed = 0;
  std::string summary;  // Summarized: the note's text
  friend bool operator==(const ContextEventRecord&, const ContextEventRecord&) = default;
};

struct SearchHit {
  ConversationKey conversation;
  std::optional<MessageKey> message;  // nullopt when the title matched
  std::string title;
  // Snippet with the matched words between kHighlightOpen and kHighlightClose.
  std::string snippet;
};
inline constexpr char kHighlightOpen = '\x02';
inline constexpr char kHighlightClose = '\x03';

// Export formats: JSON is lossless (branches, settings, figures) and can be imported
// back; Markdown is the visible branch, for reading.
enum class ArchiveFormat { Json, Markdown };
// What an import does with a conversation the database already holds.
enum class DuplicateChoice { Skip, ImportAsCopies };

struct ImportCounts {
  int64_t conversations = 0;  // in the document
  int64_t messages = 0;       // in the document
  int64_t existing = 0;       // of its conversations, already stored
};
struct ImportOutcome {
  int64_t conversations = 0;  // added
  int64_t messages = 0;       // added
  int64_t skipped = 0;        // duplicates left out
};

class ConversationStore {
 public:
  virtual ~ConversationStore() = default;

  virtual Result<std::vector<ConversationRecord>> list_conversations(ArchiveFilter filter) = 0;
  virtual Result<ConversationRecord> create_conversation(const std::string& title) = 0;
  virtual Status rename_conversation(ConversationKey id, const std::string& title) = 0;
  virtual Status set_pinned(ConversationKey id, bool pinned) = 0;
  virtual Status set_archived(ConversationKey id, bool archived) = 0;
  virtual Status delete_conversation(ConversationKey id) = 0;
  virtual Result<ConversationRecord> get_conversation(ConversationKey id) = 0;
  // nullopt clears the conversation's own choice (it follows the global setting again).
  virtual Status set_overflow_policy(ConversationKey id, std::optional<StoredOverflow> policy) = 0;
  // "default", "off", "on", "low", "medium" or "high"; anything else is an error.
  virtual Status set_reasoning(ConversationKey id, const std::string& choice) = 0;
  // The model the conversation replies with (ConversationRecord::model).
  virtual Status set_model(ConversationKey id, const std::string& model) = 0;

  virtual Result<MessageTree> load_messages(ConversationKey id) = 0;
  // Appends a message under `parent` and makes it the active leaf.
  virtual Result<MessageRecord> append_message(ConversationKey id, std::optional<MessageKey> parent,
                                               StoredRole role, const std::string& content,
                                               MessageState state) = 0;
  // Replaces a message's answer, reasoning and state (a streaming reply as it grows).
  virtual Status update_message(MessageKey id, const std::string& content, MessageState state,
                                const ReplyFigures& figures, const std::string& reasoning) = 0;
  virtual Status set_active_leaf(ConversationKey id, MessageKey leaf) = 0;

  virtual Result<std::vector<SearchHit>> search(const std::string& query, int limit) = 0;

  virtual Status add_context_event(const ContextEventRecord& event) = 0;
  // In the order they happened.
  virtual Result<std::vector<ContextEventRecord>> context_events(ConversationKey id) = 0;

  // The selected conversations (all of them, oldest first, when empty) as one document.
  virtual Result<std::string> export_conversations(ArchiveFormat format,
                                                   const std::vector<ConversationKey>& which) = 0;
  // Validates a JSON export and counts what importing it would add; changes nothing.
  virtual Result<ImportCounts> preview_import(const std::string& json) = 0;
  // Imports a JSON export in one transaction (all or nothing).
  virtual Result<ImportOutcome> import_conversations(const std::string& json, DuplicateChoice duplicates) = 0;

  // The SQLite database behind the store, for document libraries (which live in
  // it); nullptr for a store without one, where documents are unavailable.
  virtual storage::Database* database() { return nullptr; }
};

}  // namespace hearth::ui
