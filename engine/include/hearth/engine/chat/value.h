// The value model of the chat-template interpreter: everything a JSON document
// can hold (null, booleans, integers, floats, strings, arrays, objects with
// insertion order kept, as Python dicts do) plus the few runtime-only kinds a
// template creates (undefined, namespaces, callables).
//
// Values are cheap to copy: strings and containers are shared and immutable,
// as in the reference's immutable sandbox. Only a namespace is mutable (that is
// its purpose in Jinja: carrying state out of loop scopes).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace hearth::chat {

class Value;

enum class ValueKind {
  Undefined,  // a missing variable, key or attribute; prints as nothing
  None,
  Bool,
  Int,
  Float,
  String,
  Array,      // lists and tuples alike
  Object,     // string-keyed, insertion-ordered mapping
  Namespace,  // the mutable object made by namespace(...)
  Callable,   // macros, globals such as range(), bound methods
};

const char* to_string(ValueKind kind);

struct ArrayData {
  std::vector<Value> items;
  uint32_t depth = 1;  // nesting depth of containers, this one included
  bool tuple = false;  // prints as (a, b) and differs from a list in ==, as in Python
};

class ObjectData {
 public:
  const Value* find(std::string_view key) const;
  // Inserts or replaces, keeping the first insertion's position (Python dict order).
  void set(std::string key, Value value);
  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  uint32_t depth = 1;

 private:
  std::vector<std::pair<std::string, Value>> items_;
  std::unordered_map<std::string, size_t> index_;
};

struct NamespaceData;  // defined by the interpreter
struct CallableData;   // defined by the interpreter

class Value {
 public:
  struct UndefinedTag {
    // What was looked up, for error messages ("'x' is undefined").
    std::shared_ptr<const std::string> hint;
  };
  struct NoneTag {};

  Value() = default;  // undefined
  static Value undefined(std::string hint);
  static Value none() { return Value(Storage(NoneTag{})); }
  static Value boolean(bool b) { return Value(Storage(b)); }
  static Value integer(int64_t i) { return Value(Storage(i)); }
  static Value number(double d) { return Value(Storage(d)); }
  static Value string(std::string s);
  // A string marked safe (the reference's Markup, made by |safe and |escape):
  // adding a plain string to it HTML-escapes the plain one.
  static Value safe_string(std::string s);
  static Value array(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  static Value object(ObjectData data);
  static Value make_namespace(std::shared_ptr<NamespaceData> ns);
  static Value callable(std::shared_ptr<const CallableData> fn);

  ValueKind kind() const { return static_cast<ValueKind>(storage_.index()); }
  bool is_undefined() const { return kind() == ValueKind::Undefined; }
  bool is_none() const { return kind() == ValueKind::None; }
  bool is_bool() const { return kind() == ValueKind::Bool; }
  bool is_int() const { return kind() == ValueKind::Int; }
  bool is_float() const { return kind() == ValueKind::Float; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return kind() == ValueKind::String; }
  bool is_array() const { return kind() == ValueKind::Array; }
  bool is_object() const { return kind() == ValueKind::Object; }
  bool is_namespace() const { return kind() == ValueKind::Namespace; }
  bool is_callable() const { return kind() == ValueKind::Callable; }

  bool as_bool() const { return std::get<bool>(storage_); }
  int64_t as_int() const { return std::get<int64_t>(storage_); }
  double as_float() const { return std::get<double>(storage_); }
  // Ints, bools and floats as a double (Python's numeric tower).
  double to_double() const;
  const std::string& as_string() const { return *std::get<StrPtr>(storage_); }
  const std::vector<Value>& as_array() const { return std::get<ArrPtr>(storage_)->items; }
  bool is_tuple() const { return is_array() && std::get<ArrPtr>(storage_)->tuple; }
  const ObjectData& as_object() const { return *std::get<ObjPtr>(storage_); }
  NamespaceData& as_namespace() const { return *std::get<NsPtr>(storage_); }
  const std::shared_ptr<NamespaceData>& namespace_ptr() const { return std::get<NsPtr>(storage_); }
  const CallableData& as_callable() const { return *std::get<FnPtr>(storage_); }
  const std::string* undefined_hint() const;
  bool is_safe() const { return safe_; }

  // Container nesting depth: 0 for scalars, 1 for a flat list, ...
  uint32_t depth() const;

  // Python truthiness: empty strings/containers, 0, None and undefined are false.
  bool truthy() const;

 private:
  using StrPtr = std::shared_ptr<const std::string>;
  using ArrPtr = std::shared_ptr<const ArrayData>;
  using ObjPtr = std::shared_ptr<const ObjectData>;
  using NsPtr = std::shared_ptr<NamespaceData>;
  using FnPtr = std::shared_ptr<const CallableData>;
  using Storage = std::variant<UndefinedTag, NoneTag, bool, int64_t, double, StrPtr, ArrPtr,
                               ObjPtr, NsPtr, FnPtr>;
  explicit Value(Storage s) : storage_(std::move(s)) {}
  Storage storage_;
  bool safe_ = false;  // strings only
};

// Builds an object from key/value pairs in order (later duplicates replace earlier ones).
Value make_object(std::vector<std::pair<std::string, Value>> items);

}  // namespace hearth::chat
