// JSON text to template values (for messages, tools and extra context read
// from files or settings), with a nesting bound so hostile input cannot
// exhaust the stack later.
#pragma once

#include <cstdint>
#include <string_view>

#include "hearth/engine/chat/value.h"
#include "hearth/core/result.h"

namespace hearth::chat {

// Errors: InvalidFormat naming `source_name` and the parser's message;
// LimitExceeded past max_depth levels of arrays/objects.
Result<Value> parse_json(std::string_view text, std::string_view source_name = "JSON",
                         uint32_t max_depth = 256);

// json.dumps(value, ensure_ascii=False) with an optional indent (< 0: one line).
Result<std::string> to_json(const Value& value, int indent = -1);

}  // namespace hearth::chat
