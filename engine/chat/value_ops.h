// Python semantics over Values: str(), repr(), ==, ordering, float formatting
// and json.dumps() as the reference's tojson calls it. Recursive walks are
// bounded by a depth so a self-referencing namespace cannot overflow the stack.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "hearth/engine/chat/value.h"
#include "hearth/core/result.h"

namespace hearth::chat {

constexpr int kMaxWalkDepth = 512;

// Python repr(float): shortest round-trip digits, "1e+16", "1e-05", "2.0".
std::string format_float(double d);

// The text walks below stop with LimitExceeded as soon as `out` would grow
// past max_bytes, so printing a small list that shares one huge string a
// million times fails early instead of building terabytes.
constexpr size_t kNoByteLimit = static_cast<size_t>(-1);

// str(value) as the template prints it: None -> "None", True -> "True",
// lists and dicts in Python repr form, undefined -> "".
Status append_str(std::string& out, const Value& v, size_t max_bytes = kNoByteLimit);
Result<std::string> to_str(const Value& v, size_t max_bytes = kNoByteLimit);
Status append_repr(std::string& out, const Value& v, size_t max_bytes = kNoByteLimit);

// Meters a comparison walk for the interpreter's budgets: counts the values
// visited plus the string bytes compared, and aborts the walk past `cap` or
// past `deadline` (read every few thousand units). Lists that share items
// can make one comparison visit far more values than exist, so it is metered
// while it runs, not afterwards.
struct WalkMeter {
  uint64_t visited = 0;
  uint64_t cap = UINT64_MAX;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  bool aborted = false;
  bool tick(uint64_t units);  // false once aborted
};

// Python ==: 1 == 1.0 == True, containers element-wise, namespaces by identity.
// An aborted walk answers false; the caller checks meter->aborted.
bool values_equal(const Value& a, const Value& b, WalkMeter* meter = nullptr);

// Python ordering for <, <=, >, >= and sort(): numbers with numbers, strings
// with strings (by code point, which UTF-8 byte order preserves), lists
// lexicographically. Returns <0, 0, >0, or an error naming both types. An
// aborted walk answers 0; the caller checks meter->aborted.
Result<int> compare_values(const Value& a, const Value& b, WalkMeter* meter = nullptr);

struct JsonStyle {
  int indent = -1;              // < 0: one line with ", " and ": " separators
  bool ensure_ascii = false;    // escape non-ASCII as \uXXXX
  bool sort_keys = false;
};
// json.dumps(value, ensure_ascii=False, indent=...) with Python's separators.
Status append_json(std::string& out, const Value& v, const JsonStyle& style, size_t max_bytes = kNoByteLimit);

// The error the walks above return when max_bytes is passed.
Error text_too_long(size_t max_bytes);

// Python's type name for error messages: "str", "list", "dict", ...
std::string type_name(const Value& v);

}  // namespace hearth::chat
