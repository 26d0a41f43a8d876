// Reasoning ("thinking") in replies: how a model's template marks it, the
// switch the template offers, and a streaming splitter that keeps the
// reasoning apart from the answer, so the app can show it as its own block,
// store it apart and leave it out of later turns unless the template renders
// it again.
#pragma once

#include <hearth/engine/chat/value.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::chat {

// How a model's replies mark their reasoning.
enum class ReasoningSyntax {
  None,       // no markers: the whole reply is the answer
  ThinkTags,  // <think> ... </think> before the answer (Qwen3, DeepSeek-R1 distills, SmolLM3)
  Harmony,    // gpt-oss: an `analysis` channel message, then the `final` one
};

// What the user chose for a conversation. Default leaves the template's own
// default; a choice the template cannot honour is ignored (see
// ReasoningStyle::offers).
enum class ReasoningChoice { Default, Off, On, Low, Medium, High };

const char* to_string(ReasoningSyntax syntax);
const char* to_string(ReasoningChoice choice);
// "default", "off", "on", "low", "medium", "high".
std::optional<ReasoningChoice> parse_reasoning_choice(std::string_view text);

struct ReasoningStyle {
  ReasoningSyntax syntax = ReasoningSyntax::None;
  // The template reads `enable_thinking` (Qwen3, SmolLM3: off and on).
  bool thinking_switch = false;
  // The template reads `reasoning_effort` (gpt-oss: low, medium, high).
  bool effort_levels = false;
  // The template's generation prompt opens the reasoning itself (it ends in
  // "<think>"), so the reply starts inside it.
  bool prompt_opens_reasoning = false;

  // Whether `choice` changes anything for this template.
  bool offers(ReasoningChoice choice) const;
};

// From the template's source: the markers it writes and the variables it
// reads. `prompt_opens_reasoning` is set by the caller, which renders.
ReasoningStyle detect_reasoning(std::string_view template_source);

// The template variables that carry `choice` (an object), or undefined when
// the template offers no such choice. On/Off map to enable_thinking; effort
// levels to reasoning_effort (On is "high" and Off "low" there: gpt-oss
// always reasons).
Value reasoning_variables(const ReasoningStyle& style, ReasoningChoice choice);

// Splits a streamed reply into reasoning and answer. Text arrives in pieces
// of any size (a tag may be split between pieces: a possible tag start is
// held back until it is decided); control tokens arrive apart, by their text,
// since they are never shown.
class ReasoningSplitter {
 public:
  struct Piece {
    bool reasoning = false;
    std::string text;
  };

  ReasoningSplitter(ReasoningSyntax syntax, bool starts_in_reasoning);

  void push_text(std::string_view text, std::vector<Piece>& out);
  void push_control(std::string_view token_text, std::vector<Piece>& out);
  // Whatever is still held back (the reply ended).
  void finish(std::vector<Piece>& out);

  bool in_reasoning() const { return state_ == State::Reasoning; }

 private:
  enum class State {
    Start,      // before anything visible: an opening tag may come
    Reasoning,  // inside <think> or the analysis channel
    Answer,     // the answer (after </think>, in the final channel, or no markers)
    Header,     // harmony: between <|start|> and <|message|> (role, channel name)
    Done,       // harmony: <|return|> or <|call|> came
  };

  void think_text(std::string_view text, std::vector<Piece>& out);
  void emit(bool reasoning, std::string_view text, std::vector<Piece>& out);

  ReasoningSyntax syntax_;
  State state_;
  std::string held_;     // a possible tag start, or harmony header text
  bool trim_next_ = true;  // drop the whitespace that opens a block
};

}  // namespace hearth::chat
