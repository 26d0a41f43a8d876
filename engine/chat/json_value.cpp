#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "hearth/engine/chat/json.h"
#include "hearth/core/text_position.h"
#include "value_ops.h"

namespace hearth::chat {
namespace {

Result<Value> convert(const nlohmann::ordered_json& j, uint32_t depth, uint32_t max_depth, std::string_view source) {
  if (depth > max_depth) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("{}: nested deeper than {} levels", source, max_depth));
  }
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: return Value::none();
    case nlohmann::ordered_json::value_t::boolean: return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(INT64_MAX)) return Value::number(static_cast<double>(u));
      return Value::integer(static_cast<int64_t>(u));
    }
    case nlohmann::ordered_json::value_t::number_float: return Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string: return Value::string(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(j.size());
      for (const auto& item : j) {
        HEARTH_TRY(Value v, convert(item, depth + 1, max_depth, source));
        items.push_back(std::move(v));
      }
      return Value::array(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      ObjectData obj;
      for (const auto& [key, item] : j.items()) {
        HEARTH_TRY(Value v, convert(item, depth + 1, max_depth, source));
        obj.set(key, std::move(v));
      }
      return Value::object(std::move(obj));
    }
    default:
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: unsupported JSON value", source));
  }
}

}  // namespace

Result<Value> parse_json(std::string_view text, std::string_view source_name, uint32_t max_depth) {
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte counts from 1 and points at the character that did not fit.
    const uint64_t offset = e.byte > 0 ? static_cast<uint64_t>(e.byte) - 1 : 0;
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: not valid JSON at {}: {}", source_name,
                                                            text_position(text, offset), json_error_reason(e.what())));
  }
  return convert(j, 1, max_depth, source_name);
}

Result<std::string> to_json(const Value& value, int indent) {
  JsonStyle style;
  style.indent = indent;
  std::string out;
  HEARTH_CHECK(append_json(out, value, style));
  return out;
}

}  // namespace hearth::chat
