#include "hearth/engine/chat/value.h"

#include <algorithm>

#include "interp_types.h"

namespace hearth::chat {

const char* to_string(ValueKind kind) {
  switch (kind) {
    case ValueKind::Undefined: return "undefined";
    case ValueKind::None: return "none";
    case ValueKind::Bool: return "bool";
    case ValueKind::Int: return "int";
    case ValueKind::Float: return "float";
    case ValueKind::String: return "str";
    case ValueKind::Array: return "list";
    case ValueKind::Object: return "dict";
    case ValueKind::Namespace: return "namespace";
    case ValueKind::Callable: return "function";
  }
  return "value";
}

// Small objects (chat messages, loop info) are scanned linearly; the hash
// index is only built once an object grows past kIndexThreshold entries.
constexpr size_t kIndexThreshold = 16;

const Value* ObjectData::find(std::string_view key) const {
  if (index_.empty()) {
    for (const auto& entry : items_) {
      if (entry.first == key) return &entry.second;
    }
    return nullptr;
  }
  auto it = index_.find(std::string(key));
  return it == index_.end() ? nullptr : &items_[it->second].second;
}

void ObjectData::set(std::string key, Value value) {
  depth = std::max(depth, value.depth() + 1);
  if (const Value* existing = find(key)) {
    *const_cast<Value*>(existing) = std::move(value);
    return;
  }
  if (!index_.empty()) {
    index_.emplace(key, items_.size());
  } else if (items_.size() + 1 > kIndexThreshold) {
    for (size_t i = 0; i < items_.size(); ++i) index_.emplace(items_[i].first, i);
    index_.emplace(key, items_.size());
  }
  items_.emplace_back(std::move(key), std::move(value));
}

Value Value::undefined(std::string hint) {
  return Value(Storage(UndefinedTag{std::make_shared<const std::string>(std::move(hint))}));
}

Value Value::string(std::string s) {
  return Value(Storage(std::make_shared<const std::string>(std::move(s))));
}

Value Value::safe_string(std::string s) {
  Value v = string(std::move(s));
  v.safe_ = true;
  return v;
}

Value Value::array(std::vector<Value> items) {
  auto data = std::make_shared<ArrayData>();
  uint32_t depth = 0;
  for (const auto& item : items) depth = std::max(depth, item.depth());
  data->depth = depth + 1;
  data->items = std::move(items);
  return Value(Storage(ArrPtr(std::move(data))));
}

Value Value::tuple(std::vector<Value> items) {
  Value v = array(std::move(items));
  std::const_pointer_cast<ArrayData>(std::get<ArrPtr>(v.storage_))->tuple = true;
  return v;
}

Value Value::object(ObjectData data) {
  return Value(Storage(std::make_shared<const ObjectData>(std::move(data))));
}

Value Value::make_namespace(std::shared_ptr<NamespaceData> ns) { return Value(Storage(std::move(ns))); }

Value Value::callable(std::shared_ptr<const CallableData> fn) { return Value(Storage(std::move(fn))); }

const std::string* Value::undefined_hint() const {
  const auto* tag = std::get_if<UndefinedTag>(&storage_);
  return tag && tag->hint ? tag->hint.get() : nullptr;
}

double Value::to_double() const {
  switch (kind()) {
    case ValueKind::Bool: return as_bool() ? 1.0 : 0.0;
    case ValueKind::Int: return static_cast<double>(as_int());
    case ValueKind::Float: return as_float();
    default: return 0.0;
  }
}

uint32_t Value::depth() const {
  switch (kind()) {
    case ValueKind::Array: return std::get<ArrPtr>(storage_)->depth;
    case ValueKind::Object: return std::get<ObjPtr>(storage_)->depth;
    case ValueKind::Namespace: return 1;
    default: return 0;
  }
}

bool Value::truthy() const {
  switch (kind()) {
    case ValueKind::Undefined:
    case ValueKind::None: return false;
    case ValueKind::Bool: return as_bool();
    case ValueKind::Int: return as_int() != 0;
    case ValueKind::Float: return as_float() != 0.0;
    case ValueKind::String: return !as_string().empty();
    case ValueKind::Array: return !as_array().empty();
    case ValueKind::Object: return as_object().size() != 0;
    case ValueKind::Namespace:
    case ValueKind::Callable: return true;
  }
  return false;
}

Value make_object(std::vector<std::pair<std::string, Value>> items) {
  ObjectData data;
  for (auto& [key, value] : items) data.set(std::move(key), std::move(value));
  return Value::object(std::move(data));
}

}  // namespace hearth::chat
