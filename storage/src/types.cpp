#include "hearth/storage/types.h"

#include <nlohmann/json.hpp>

#include <array>
#include <utility>

namespace hearth::storage {
namespace {

template <typename Enum, std::size_t N>
Result<Enum> parse_enum(std::string_view text, const std::array<std::pair<Enum, const char*>, N>& names,
                        const char* what) {
  for (const auto& [value, name] : names) {
    if (text == name) return value;
  }
  return make_error(ErrorCode::InvalidFormat, "unknown " + std::string(what) + " '" + std::string(text) + "'");
}

template <typename Enum, std::size_t N>
const char* enum_name(Enum value, const std::array<std::pair<Enum, const char*>, N>& names) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "?";
}

// These strings are stored in the database and in exports: never rename them.
constexpr std::array<std::pair<Role, const char*>, 4> kRoles{{
    {Role::System, "system"}, {Role::User, "user"}, {Role::Assistant, "assistant"}, {Role::Tool, "tool"}}};
constexpr std::array<std::pair<MessageState, const char*>, 4> kStates{{{MessageState::Complete, "complete"},
                                                                       {MessageState::Streaming, "streaming"},
                                                                       {MessageState::Interrupted, "interrupted"},
                                                                       {MessageState::Error, "error"}}};
constexpr std::array<std::pair<OverflowPolicy, const char*>, 3> kPolicies{{{OverflowPolicy::StopAtLimit, "stop"},
                                                                          {OverflowPolicy::EvictOldest, "evict_oldest"},
                                                                          {OverflowPolicy::Summarize, "summarize"}}};
constexpr std::array<std::pair<ContextEventKind, const char*>, 2> kEventKinds{
    {{ContextEventKind::Dropped, "dropped"}, {ContextEventKind::Summarized, "summarized"}}};
// Also spelled out in the CHECK constraint of conversations.reasoning (migration 3).
constexpr std::array<std::pair<ReasoningSetting, const char*>, 6> kReasoningSettings{
    {{ReasoningSetting::Default, "default"},
     {ReasoningSetting::Off, "off"},
     {ReasoningSetting::On, "on"},
     {ReasoningSetting::Low, "low"},
     {ReasoningSetting::Medium, "medium"},
     {ReasoningSetting::High, "high"}}};

// The per-conversation overflow policy, written only when the conversation has one.
constexpr const char* kOverflowKey = "overflow_policy";
// Earlier versions wrote this key for every conversation, with "stop" as the value of
// conversations nobody had chosen a policy for; the app never applied it.
constexpr const char* kLegacyOverflowKey = "overflow";

Result<OverflowPolicy> read_policy(const nlohmann::json& j, const char* key) {
  if (!j[key].is_string()) return make_error(ErrorCode::InvalidFormat, std::string("settings.") + key + " is not a string");
  auto policy = parse_overflow_policy(j[key].get<std::string>());
  if (!policy.ok()) return make_error(ErrorCode::InvalidFormat, std::string("settings.") + key + ": " + policy.error().message);
  return policy;
}

// The current key wins. A legacy "stop" cannot be told apart from "never chosen"
// (it was the default every conversation was written with), so it reads as unset and
// old conversations keep following the global setting as they always did; the other
// legacy values could only have been set on purpose and keep their meaning.
Result<std::optional<OverflowPolicy>> read_overflow(const nlohmann::json& j) {
  if (j.contains(kOverflowKey)) {
    HEARTH_TRY(OverflowPolicy policy, read_policy(j, kOverflowKey));
    return std::optional<OverflowPolicy>(policy);
  }
  if (j.contains(kLegacyOverflowKey)) {
    HEARTH_TRY(OverflowPolicy policy, read_policy(j, kLegacyOverflowKey));
    if (policy == OverflowPolicy::StopAtLimit) return std::optional<OverflowPolicy>();
    return std::optional<OverflowPolicy>(policy);
  }
  return std::optional<OverflowPolicy>();
}

}  // namespace

const char* to_string(Role role) { return enum_name(role, kRoles); }
const char* to_string(MessageState state) { return enum_name(state, kStates); }
const char* to_string(OverflowPolicy policy) { return enum_name(policy, kPolicies); }
const char* to_string(ContextEventKind kind) { return enum_name(kind, kEventKinds); }
const char* to_string(ReasoningSetting setting) { return enum_name(setting, kReasoningSettings); }
Result<Role> parse_role(std::string_view text) { return parse_enum(text, kRoles, "role"); }
Result<MessageState> parse_message_state(std::string_view text) { return parse_enum(text, kStates, "message state"); }
Result<OverflowPolicy> parse_overflow_policy(std::string_view text) {
  return parse_enum(text, kPolicies, "overflow policy");
}
Result<ContextEventKind> parse_context_event_kind(std::string_view text) {
  return parse_enum(text, kEventKinds, "context event kind");
}
Result<ReasoningSetting> parse_reasoning_setting(std::string_view text) {
  return parse_enum(text, kReasoningSettings, "reasoning setting");
}

std::string settings_to_json(const ConversationSettings& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (s.temperature) j["temperature"] = *s.temperature;
  if (s.top_k) j["top_k"] = *s.top_k;
  if (s.top_p) j["top_p"] = *s.top_p;
  if (s.min_p) j["min_p"] = *s.min_p;
  if (s.repeat_penalty) j["repeat_penalty"] = *s.repeat_penalty;
  if (s.seed) j["seed"] = *s.seed;
  if (s.context_length) j["context_length"] = *s.context_length;
  if (s.overflow) j[kOverflowKey] = to_string(*s.overflow);
  return j.dump();
}

Result<ConversationSettings> settings_from_json(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return make_error(ErrorCode::InvalidFormat, "settings are not a JSON object: '" + std::string(text) + "'");
  }
  ConversationSettings s;
  auto number = [&](const char* key, std::optional<double>& out) -> Status {
    if (!j.contains(key)) return {};
    if (!j[key].is_number()) return make_error(ErrorCode::InvalidFormat, std::string("settings.") + key + " is not a number");
    out = j[key].get<double>();
    return {};
  };
  auto integer = [&](const char* key, std::optional<std::int64_t>& out) -> Status {
    if (!j.contains(key)) return {};
    if (!j[key].is_number_integer()) {
      return make_error(ErrorCode::InvalidFormat, std::string("settings.") + key + " is not an integer");
    }
    out = j[key].get<std::int64_t>();
    return {};
  };
  HEARTH_CHECK(number("temperature", s.temperature));
  HEARTH_CHECK(integer("top_k", s.top_k));
  HEARTH_CHECK(number("top_p", s.top_p));
  HEARTH_CHECK(number("min_p", s.min_p));
  HEARTH_CHECK(number("repeat_penalty", s.repeat_penalty));
  HEARTH_CHECK(integer("context_length", s.context_length));
  if (j.contains("seed")) {
    if (!j["seed"].is_number_unsigned()) return make_error(ErrorCode::InvalidFormat, "settings.seed is not an unsigned integer");
    s.seed = j["seed"].get<std::uint64_t>();
  }
  HEARTH_TRY(s.overflow, read_overflow(j));
  return s;
}

}  // namespace hearth::storage
