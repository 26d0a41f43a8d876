// Typed records stored by Hearth. Timestamps are Unix epoch milliseconds (UTC);
// text is UTF-8.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hearth/core/result.h"
#include "hearth/storage/ids.h"

namespace hearth::storage {

using UnixMs = std::int64_t;

enum class Role { System, User, Assistant, Tool };
// complete: finished normally; streaming: still being generated (or the process died
// while generating; fixed to interrupted at the next open); interrupted: stopped by
// the user or a crash, text kept; error: generation failed, error_message says why.
enum class MessageState { Complete, Streaming, Interrupted, Error };
// What to do when a conversation reaches its context limit (see architecture.md, KV cache).
enum class OverflowPolicy { StopAtLimit, EvictOldest, Summarize };
enum class ContextEventKind { Dropped, Summarized };
enum class Pinned { No, Yes };
enum class Archived { No, Yes };
// A conversation's reasoning ("thinking") switch, passed to the chat template of a
// model that has one: Off/On for templates with an on/off switch (Qwen3
// enable_thinking, SmolLM3 /think, /no_think), Low/Medium/High for a reasoning
// effort (gpt-oss). Default leaves the template's own default; models without a
// switch ignore it.
enum class ReasoningSetting { Default, Off, On, Low, Medium, High };

const char* to_string(Role role);
const char* to_string(MessageState state);
const char* to_string(OverflowPolicy policy);
const char* to_string(ContextEventKind kind);
const char* to_string(ReasoningSetting setting);
Result<Role> parse_role(std::string_view text);
Result<MessageState> parse_message_state(std::string_view text);
Result<OverflowPolicy> parse_overflow_policy(std::string_view text);
Result<ContextEventKind> parse_context_event_kind(std::string_view text);
Result<ReasoningSetting> parse_reasoning_setting(std::string_view text);

// Per-conversation generation settings; unset fields fall back to the app's defaults.
struct ConversationSettings {
  std::optional<double> temperature;
  std::optional<std::int64_t> top_k;
  std::optional<double> top_p;
  std::optional<double> min_p;
  std::optional<double> repeat_penalty;
  std::optional<std::uint64_t> seed;
  std::optional<std::int64_t> context_length;  // tokens
  // nullopt: the conversation follows the app's global overflow setting.
  std::optional<OverflowPolicy> overflow;

  friend bool operator==(const ConversationSettings&, const ConversationSettings&) = default;
};

// The settings as the JSON object stored in conversations.settings_json (and in exports).
std::string settings_to_json(const ConversationSettings& settings);
Result<ConversationSettings> settings_from_json(std::string_view json);

// What a new conversation starts with.
struct NewConversation {
  std::string title;
  std::string model_file;  // GGUF file name or path the conversation was started with
  std::string model_quant; // e.g. "Q4_K_M"
  std::string system_prompt;
  ConversationSettings settings;
  ReasoningSetting reasoning = ReasoningSetting::Default;
};

struct Conversation {
  ConversationId id;
  std::string title;
  UnixMs created_ms = 0;
  UnixMs updated_ms = 0;
  std::string model_file;
  std::string model_quant;
  std::string system_prompt;
  ConversationSettings settings;
  Pinned pinned = Pinned::No;
  Archived archived = Archived::No;
  MessageId active_leaf;  // invalid while the conversation has no messages
  ReasoningSetting reasoning = ReasoningSetting::Default;

  friend bool operator==(const Conversation&, const Conversation&) = default;
};

// Figures reported by the engine for one generated reply.
struct GenerationStats {
  std::optional<double> ttft_ms;            // time to first token
  std::optional<double> tokens_per_second;  // decode speed
  std::string backend;                      // "vulkan:<device>", "cpu", ... empty if unknown

  friend bool operator==(const GenerationStats&, const GenerationStats&) = default;
};

struct Message {
  MessageId id;
  ConversationId conversation;
  MessageId parent;  // invalid for a root message
  Role role = Role::User;
  std::string content;
  UnixMs created_ms = 0;
  UnixMs updated_ms = 0;
  MessageState state = MessageState::Complete;
  std::string error_message;  // only for MessageState::Error
  std::int64_t token_count = 0;
  GenerationStats stats;
  // What a reasoning model thought before `content` (its answer), kept apart so the
  // app can show it folded away and leave it out of search and of later prompts.
  // Empty for other messages.
  std::string reasoning{};
  // How long the thinking took; nullopt when unknown (or still thinking).
  std::optional<double> reasoning_ms{};

  friend bool operator==(const Message&, const Message&) = default;
};

// A stretch of turns the context manager dropped or replaced by a summary.
struct ContextEvent {
  ContextEventId id;
  ConversationId conversation;
  ContextEventKind kind = ContextEventKind::Dropped;
  UnixMs created_ms = 0;
  MessageId first_message;  // first and last message of the affected stretch (inclusive)
  MessageId last_message;
  std::int64_t tokens_removed = 0;
  std::string summary;  // empty for Dropped

  friend bool operator==(const ContextEvent&, const ContextEvent&) = default;
};

struct PromptPreset {
  PresetId id;
  std::string name;  // unique
  std::string content;
  UnixMs created_ms = 0;
  UnixMs updated_ms = 0;

  friend bool operator==(const PromptPreset&, const PromptPreset&) = default;
};

// A model file the user has added or downloaded.
struct ModelEntry {
  ModelId id;
  std::string path;  // unique
  std::int64_t size_bytes = 0;
  std::string sha256;  // lowercase hex, empty until computed
  std::string source_url;
  std::string quant;
  UnixMs added_ms = 0;
  std::optional<UnixMs> last_used_ms;

  friend bool operator==(const ModelEntry&, const ModelEntry&) = default;
};

// A KV-cache prefix saved to disk (engine/kv prefix cache), keyed by the model's
// hash and the hash of the token prefix.
struct PrefixCacheEntry {
  PrefixCacheId id;
  std::string model_sha256;
  std::string prefix_hash;
  std::int64_t token_count = 0;
  std::string file_path;
  std::int64_t size_bytes = 0;
  UnixMs created_ms = 0;
  UnixMs last_used_ms = 0;

  friend bool operator==(const PrefixCacheEntry&, const PrefixCacheEntry&) = default;
};

}  // namespace hearth::storage
