#include "value_ops.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>

#include "interp_types.h"
#include "unicode_text.h"

namespace hearth::chat {
namespace {

Error too_deep() {
  return make_error(ErrorCode::LimitExceeded,
                    fmt::format("value nested deeper than {} levels", kMaxWalkDepth));
}

void append_str_repr(std::string& out, const std::string& s) {
  // Python picks single quotes unless the text has ' and no ".
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  out.push_back(quote);
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7F) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out.push_back(c);
    }
  }
  out.push_back(quote);
}

void append_json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    switch (s[i]) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else if (u >= 0x80 && ensure_ascii) {
      // Decode this code point and write UTF-16 escapes.
      size_t len = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : 2;
      auto cps = decode_utf8(std::string_view(s).substr(i, std::min(len, s.size() - i)));
      uint32_t cp = cps.empty() ? 0xFFFD : cps[0];
      if (cp >= 0x10000) {
        cp -= 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", cp);
      }
      i += len - 1;
    } else {
      out.push_back(s[i]);
    }
  }
  out.push_back('"');
}

int cmp3(double a, double b) { return a < b ? -1 : (a > b ? 1 : 0); }

}  // namespace

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Undefined: return "Undefined";
    case ValueKind::None: return "NoneType";
    default: return to_string(v.kind());
  }
}

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0.0) return std::signbit(d) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form, then laid out as Python's repr.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const size_t e_pos = sci.find('e');
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i) if (sci[i] != '.') digits.push_back(sci[i]);
  std::string out = negative ? "-" : "";
  const int n = static_cast<int>(digits.size());
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  } else if (exponent < 0) {
    out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else if (exponent + 1 >= n) {
    out += digits + std::string(static_cast<size_t>(exponent + 1 - n), '0') + ".0";
  } else {
    out += digits.substr(0, static_cast<size_t>(exponent + 1)) + "." + digits.substr(static_cast<size_t>(exponent + 1));
  }
  return out;
}

Error text_too_long(size_t max_bytes) {
  return make_error(ErrorCode::LimitExceeded,
                    fmt::format("a string of more than {} bytes exceeds the string limit", max_bytes));
}

namespace {

Status repr_walk(std::string& out, const Value& v, int depth, size_t max_bytes);

Status str_walk(std::string& out, const Value& v, int depth, size_t max_bytes) {
  switch (v.kind()) {
    case ValueKind::Undefined: return {};
    case ValueKind::None: out += "None"; break;
    case ValueKind::Bool: out += v.as_bool() ? "True" : "False"; break;
    case ValueKind::Int: out += std::to_string(v.as_int()); break;
    case ValueKind::Float: out += format_float(v.as_float()); break;
    case ValueKind::String:
      if (v.as_string().size() > max_bytes - std::min(max_bytes, out.size())) return text_too_long(max_bytes);
      out += v.as_string();
      break;
    case ValueKind::Callable: out += "<function " + v.as_callable().name + ">"; break;
    default: return repr_walk(out, v, depth, max_bytes);
  }
  if (out.size() > max_bytes) return text_too_long(max_bytes);
  return {};
}

Status repr_walk(std::string& out, const Value& v, int depth, size_t max_bytes) {
  if (depth > kMaxWalkDepth) return too_deep();
  if (out.size() > max_bytes) return text_too_long(max_bytes);
  switch (v.kind()) {
    case ValueKind::String:
      if (v.as_string().size() > max_bytes - std::min(max_bytes, out.size())) return text_too_long(max_bytes);
      append_str_repr(out, v.as_string());
      if (out.size() > max_bytes) return text_too_long(max_bytes);
      return {};
    case ValueKind::Array: {
      const bool tuple = v.is_tuple();
      out.push_back(tuple ? '(' : '[');
      bool first = true;
      for (const auto& item : v.as_array()) {
        if (!first) out += ", ";
        first = false;
        HEARTH_CHECK(repr_walk(out, item, depth + 1, max_bytes));
      }
      if (tuple && v.as_array().size() == 1) out.push_back(',');
      out.push_back(tuple ? ')' : ']');
      return {};
    }
    case ValueKind::Object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : v.as_object().items()) {
        if (!first) out += ", ";
        first = false;
        append_str_repr(out, key);
        out += ": ";
        HEARTH_CHECK(repr_walk(out, item, depth + 1, max_bytes));
      }
      out.push_back('}');
      return {};
    }
    case ValueKind::Namespace: {
      out += "<Namespace {";
      bool first = true;
      for (const auto& [key, item] : v.as_namespace().attrs.items()) {
        if (!first) out += ", ";
        first = false;
        append_str_repr(out, key);
        out += ": ";
        HEARTH_CHECK(repr_walk(out, item, depth + 1, max_bytes));
      }
      out += "}>";
      return {};
    }
    case ValueKind::Undefined: out += "Undefined"; return {};
    default: return str_walk(out, v, depth, max_bytes);
  }
}

}  // namespace

Status append_repr(std::string& out, const Value& v, size_t max_bytes) { return repr_walk(out, v, 0, max_bytes); }

Status append_str(std::string& out, const Value& v, size_t max_bytes) { return str_walk(out, v, 0, max_bytes); }

Result<std::string> to_str(const Value& v, size_t max_bytes) {
  if (v.is_string()) {
    if (v.as_string().size() > max_bytes) return text_too_long(max_bytes);
    return v.as_string();
  }
  std::string out;
  HEARTH_CHECK(append_str(out, v, max_bytes));
  return out;
}

namespace {

bool eq_walk(const Value& a, const Value& b, int depth, WalkMeter* work) {
  if (depth > kMaxWalkDepth) return false;
  if (work && !work->tick(1)) return false;
  const bool a_num = a.is_number() || a.is_bool();
  const bool b_num = b.is_number() || b.is_bool();
  if (a_num && b_num) {
    if (a.is_float() || b.is_float()) return a.to_double() == b.to_double();
    const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
    const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
    return x == y;
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::Undefined:
    case ValueKind::None: return true;
    case ValueKind::String:
      if (work && !work->tick(std::min(a.as_string().size(), b.as_string().size()))) return false;
      return a.as_string() == b.as_string();
    case ValueKind::Array: {
      const auto& x = a.as_array();
      const auto& y = b.as_array();
      if (x.size() != y.size() || a.is_tuple() != b.is_tuple()) return false;
      for (size_t i = 0; i < x.size(); ++i) if (!eq_walk(x[i], y[i], depth + 1, work)) return false;
      return true;
    }
    case ValueKind::Object: {
      const auto& x = a.as_object();
      const auto& y = b.as_object();
      if (x.size() != y.size()) return false;
      for (const auto& [key, item] : x.items()) {
        const Value* other = y.find(key);
        if (!other || !eq_walk(item, *other, depth + 1, work)) return false;
      }
      return true;
    }
    case ValueKind::Namespace: return a.namespace_ptr() == b.namespace_ptr();
    case ValueKind::Callable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

Result<int> cmp_walk(const Value& a, const Value& b, int depth, WalkMeter* work) {
  if (depth > kMaxWalkDepth) return too_deep();
  if (work && !work->tick(1)) return 0;
  const bool a_num = a.is_number() || a.is_bool();
  const bool b_num = b.is_number() || b.is_bool();
  if (a_num && b_num) {
    if (a.is_float() || b.is_float()) return cmp3(a.to_double(), b.to_double());
    const int64_t x = a.is_bool() ? a.as_bool() : a.as_int();
    const int64_t y = b.is_bool() ? b.as_bool() : b.as_int();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    if (work && !work->tick(std::min(a.as_string().size(), b.as_string().size()))) return 0;
    const int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.is_array() && b.is_array()) {
    const auto& x = a.as_array();
    const auto& y = b.as_array();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (eq_walk(x[i], y[i], depth + 1, work)) continue;
      if (work && work->aborted) return 0;
      return cmp_walk(x[i], y[i], depth + 1, work);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return make_error(ErrorCode::InvalidFormat,
                    fmt::format("'<' not supported between instances of '{}' and '{}'", type_name(a), type_name(b)));
}

}  // namespace

bool WalkMeter::tick(uint64_t units) {
  if (aborted) return false;
  const uint64_t before = visited;
  visited += units;
  if (visited > cap) aborted = true;
  else if ((visited >> 12) != (before >> 12) && std::chrono::steady_clock::now() > deadline) aborted = true;
  return !aborted;
}

bool values_equal(const Value& a, const Value& b, WalkMeter* meter) { return eq_walk(a, b, 0, meter); }

Result<int> compare_values(const Value& a, const Value& b, WalkMeter* meter) { return cmp_walk(a, b, 0, meter); }

namespace {

Status json_walk(std::string& out, const Value& v, const JsonStyle& style, int depth, size_t max_bytes) {
  if (depth > kMaxWalkDepth) return too_deep();
  if (out.size() > max_bytes) return text_too_long(max_bytes);
  auto newline = [&](int level) {
    out.push_back('\n');
    out.append(static_cast<size_t>(style.indent * level), ' ');
  };
  const char* item_sep = style.indent >= 0 ? "," : ", ";
  switch (v.kind()) {
    case ValueKind::None: out += "null"; return {};
    case ValueKind::Bool: out += v.as_bool() ? "true" : "false"; return {};
    case ValueKind::Int: out += std::to_string(v.as_int()); return {};
    case ValueKind::Float: {
      const double d = v.as_float();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d > 0 ? "Infinity" : "-Infinity";
      else out += format_float(d);
      return {};
    }
    case ValueKind::String:
      if (v.as_string().size() > max_bytes - std::min(max_bytes, out.size())) return text_too_long(max_bytes);
      append_json_string(out, v.as_string(), style.ensure_ascii);
      if (out.size() > max_bytes) return text_too_long(max_bytes);
      return {};
    case ValueKind::Array: {
      const auto& items = v.as_array();
      if (items.empty()) { out += "[]"; return {}; }
      out.push_back('[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_sep;
        if (style.indent >= 0) newline(depth + 1);
        HEARTH_CHECK(json_walk(out, items[i], style, depth + 1, max_bytes));
      }
      if (style.indent >= 0) newline(depth);
      out.push_back(']');
      return {};
    }
    case ValueKind::Object:
    case ValueKind::Namespace: {
      const ObjectData& obj = v.is_object() ? v.as_object() : v.as_namespace().attrs;
      if (v.is_namespace()) {
        return make_error(ErrorCode::InvalidFormat, "Object of type Namespace is not JSON serializable");
      }
      if (obj.size() == 0) { out += "{}"; return {}; }
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& entry : obj.items()) entries.push_back(&entry);
      if (style.sort_keys) {
        std::sort(entries.begin(), entries.end(), [](auto* x, auto* y) { return x->first < y->first; });
      }
      out.push_back('{');
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) out += item_sep;
        if (style.indent >= 0) newline(depth + 1);
        append_json_string(out, entries[i]->first, style.ensure_ascii);
        out += ": ";
        HEARTH_CHECK(json_walk(out, entries[i]->second, style, depth + 1, max_bytes));
      }
      if (style.indent >= 0) newline(depth);
      out.push_back('}');
      return {};
    }
    case ValueKind::Undefined:
      return make_error(ErrorCode::InvalidFormat, "Object of type Undefined is not JSON serializable");
    case ValueKind::Callable:
      return make_error(ErrorCode::InvalidFormat, "Object of type function is not JSON serializable");
  }
  return {};
}

}  // namespace

Status append_json(std::string& out, const Value& v, const JsonStyle& style, size_t max_bytes) {
  return json_walk(out, v, style, 0, max_bytes);
}

}  // namespace hearth::chat
