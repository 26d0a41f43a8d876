// GGUF metadata values: every type the format defines, including nested arrays.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace hearth::gguf {

// Value type ids as stored in the file.
enum class ValueType : uint32_t {
  UInt8 = 0,
  Int8 = 1,
  UInt16 = 2,
  Int16 = 3,
  UInt32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  UInt64 = 10,
  Int64 = 11,
  Float64 = 12,
};

std::string_view to_string(ValueType type);
bool is_integer(ValueType type);
bool is_float(ValueType type);

struct Value;

// An array holds elements of one type; arrays of arrays are allowed.
struct Array {
  ValueType element_type = ValueType::UInt8;
  std::vector<Value> items;
};

// One metadata value. Integers are widened to 64 bits (signed types to
// int64_t, unsigned to uint64_t) and floats to double; `type` keeps the type
// the file declared so accessors can reject, e.g., a string where a count is due.
struct Value {
  ValueType type = ValueType::UInt8;
  std::variant<uint64_t, int64_t, double, bool, std::string, Array> data;
};

struct KeyValue {
  std::string key;
  Value value;
};

}  // namespace hearth::gguf
