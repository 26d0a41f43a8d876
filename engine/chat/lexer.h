// Splits a template into text and tag tokens the way the reference lexer does
// with trim_blocks and lstrip_blocks on: newlines normalized to "\n", one
// trailing newline dropped, "{%-"/"-%}" whitespace control, "{%+" opting out
// of lstrip, comments removed, "{% raw %}" kept verbatim.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hearth/core/result.h"

namespace hearth::chat {

enum class TokenType {
  Text,
  VarBegin,    // {{
  VarEnd,      // }}
  BlockBegin,  // {%
  BlockEnd,    // %}
  Name,
  String,      // text holds the unescaped value
  Integer,     // int_value
  Float,       // float_value
  Operator,    // text holds the operator: "+", "//", "(", ...
  End,         // end of the template
};

struct Token {
  TokenType type = TokenType::End;
  std::string text;
  int64_t int_value = 0;
  double float_value = 0.0;
  int line = 1;
};

// The time budget of one parse (lexing and parsing together): linear as both
// are, they still answer to the clock so no input can make them hang.
struct ParseClock {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::chrono::milliseconds limit{0};  // for the message
};

// Errors name the template line: "template line 3: unterminated string";
// LimitExceeded once clock.deadline passes.
Result<std::vector<Token>> tokenize_template(std::string_view source, const ParseClock& clock = {});

}  // namespace hearth::chat
