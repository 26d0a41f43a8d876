#include "hearth/engine/chat/reasoning.h"

#include <algorithm>

namespace hearth::chat {
namespace {

constexpr std::string_view kThinkOpen = "<think>";
constexpr std::string_view kThinkClose = "</think>";
constexpr std::string_view kWhitespace = " \t\n\r";

std::string_view trim_front(std::string_view s) {
  const size_t b = s.find_first_not_of(kWhitespace);
  return b == std::string_view::npos ? std::string_view{} : s.substr(b);
}

// The longest tail of `text` that is a proper start of `tag`: it may become
// the tag when the next piece arrives.
size_t partial_tag_tail(std::string_view text, std::string_view tag) {
  for (size_t n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (tag.substr(0, n) == text.substr(text.size() - n)) return n;
  }
  return 0;
}

}  // namespace

const char* to_string(ReasoningSyntax syntax) {
  switch (syntax) {
    case ReasoningSyntax::None: return "none";
    case ReasoningSyntax::ThinkTags: return "think-tags";
    case ReasoningSyntax::Harmony: return "harmony";
  }
  return "none";
}

const char* to_string(ReasoningChoice choice) {
  switch (choice) {
    case ReasoningChoice::Default: return "default";
    case ReasoningChoice::Off: return "off";
    case ReasoningChoice::On: return "on";
    case ReasoningChoice::Low: return "low";
    case ReasoningChoice::Medium: return "medium";
    case ReasoningChoice::High: return "high";
  }
  return "default";
}

std::optional<ReasoningChoice> parse_reasoning_choice(std::string_view text) {
  for (ReasoningChoice c : {ReasoningChoice::Default, ReasoningChoice::Off, ReasoningChoice::On, ReasoningChoice::Low,
                            ReasoningChoice::Medium, ReasoningChoice::High}) {
    if (text == to_string(c)) return c;
  }
  return std::nullopt;
}

bool ReasoningStyle::offers(ReasoningChoice choice) const {
  switch (choice) {
    case ReasoningChoice::Default: return false;
    case ReasoningChoice::Off:
    case ReasoningChoice::On: return thinking_switch || effort_levels;
    case ReasoningChoice::Low:
    case ReasoningChoice::Medium:
    case ReasoningChoice::High: return effort_levels;
  }
  return false;
}

ReasoningStyle detect_reasoning(std::string_view source) {
  ReasoningStyle style;
  if (source.find("<|channel|>") != std::string_view::npos) {
    style.syntax = ReasoningSyntax::Harmony;
  } else if (source.find(kThinkOpen) != std::string_view::npos || source.find(kThinkClose) != std::string_view::npos) {
    style.syntax = ReasoningSyntax::ThinkTags;
  }
  style.thinking_switch = source.find("enable_thinking") != std::string_view::npos;
  style.effort_levels = source.find("reasoning_effort") != std::string_view::npos;
  return style;
}

Value reasoning_variables(const ReasoningStyle& style, ReasoningChoice choice) {
  if (!style.offers(choice)) return Value{};
  if (style.effort_levels) {
    const char* effort = "medium";
    switch (choice) {
      case ReasoningChoice::Off:
      case ReasoningChoice::Low: effort = "low"; break;
      case ReasoningChoice::High: effort = "high"; break;
      default: break;
    }
    return make_object({{"reasoning_effort", Value::string(effort)}});
  }
  return make_object({{"enable_thinking", Value::boolean(choice == ReasoningChoice::On)}});
}

ReasoningSplitter::ReasoningSplitter(ReasoningSyntax syntax, bool starts_in_reasoning)
    : syntax_(syntax), state_(starts_in_reasoning ? State::Reasoning : State::Start) {
  if (syntax_ == ReasoningSyntax::None) state_ = State::Answer;
}

void ReasoningSplitter::emit(bool reasoning, std::string_view text, std::vector<Piece>& out) {
  if (trim_next_) {
    text = trim_front(text);
    if (text.empty()) return;
    trim_next_ = false;
  }
  if (text.empty()) return;
  if (!out.empty() && out.back().reasoning == reasoning) {
    out.back().text.append(text);
  } else {
    out.push_back({reasoning, std::string(text)});
  }
}

void ReasoningSplitter::think_text(std::string_view text, std::vector<Piece>& out) {
  held_.append(text);
  while (true) {
    switch (state_) {
      case State::Start: {
        const std::string_view rest = trim_front(held_);
        if (rest.empty()) return;
        if (rest.substr(0, kThinkOpen.size()) == kThinkOpen) {
          held_ = std::string(rest.substr(kThinkOpen.size()));
          state_ = State::Reasoning;
          trim_next_ = true;
          continue;
        }
        if (rest.size() < kThinkOpen.size() && kThinkOpen.substr(0, rest.size()) == rest) return;
        state_ = State::Answer;
        continue;
      }
      case State::Reasoning: {
        const size_t close = held_.find(kThinkClose);
        if (close != std::string::npos) {
          emit(true, std::string_view(held_).substr(0, close), out);
          held_.erase(0, close + kThinkClose.size());
          state_ = State::Answer;
          trim_next_ = true;
          continue;
        }
        const size_t keep = partial_tag_tail(held_, kThinkClose);
        emit(true, std::string_view(held_).substr(0, held_.size() - keep), out);
        held_.erase(0, held_.size() - keep);
        return;
      }
      default:
        emit(false, held_, out);
        held_.clear();
        return;
    }
  }
}

void ReasoningSplitter::push_text(std::string_view text, std::vector<Piece>& out) {
  switch (syntax_) {
    case ReasoningSyntax::None: emit(false, text, out); return;
    case ReasoningSyntax::ThinkTags: think_text(text, out); return;
    case ReasoningSyntax::Harmony:
      switch (state_) {
        case State::Header: held_.append(text); return;  // role and channel name
        case State::Done: return;
        case State::Reasoning: emit(true, text, out); return;
        default:
          // Text before any channel (a model that ignores the format) is
          // shown as the answer rather than lost.
          state_ = State::Answer;
          emit(false, text, out);
          return;
      }
  }
}

void ReasoningSplitter::push_control(std::string_view token, std::vector<Piece>& out) {
  if (syntax_ == ReasoningSyntax::ThinkTags) {
    // Some vocabularies make the tags tokens of their own.
    if (token == kThinkOpen || token == kThinkClose) think_text(token, out);
    return;
  }
  if (syntax_ != ReasoningSyntax::Harmony || state_ == State::Done) return;
  if (token == "<|start|>" || token == "<|end|>" || token == "<|channel|>") {
    state_ = State::Header;
    held_.clear();
  } else if (token == "<|message|>") {
    // The channel name may carry a recipient or a constraint after a space.
    const std::string_view header = trim_front(held_);
    const std::string_view channel = header.substr(0, header.find_first_of(" <"));
    const bool reasoning = channel == "analysis";
    state_ = reasoning ? State::Reasoning : State::Answer;
    held_.clear();
    trim_next_ = true;
  } else if (token == "<|return|>" || token == "<|call|>") {
    state_ = State::Done;
  }
}

void ReasoningSplitter::finish(std::vector<Piece>& out) {
  if (held_.empty()) return;
  switch (state_) {
    case State::Start: emit(false, held_, out); break;
    case State::Reasoning: emit(true, held_, out); break;
    case State::Answer: emit(false, held_, out); break;
    default: break;  // an unfinished header shows nothing
  }
  held_.clear();
}

}  // namespace hearth::chat
