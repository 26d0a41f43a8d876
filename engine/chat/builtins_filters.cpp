// The filters ("x | name(args)") the reference offers that chat templates use.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "interp_types.h"
#include "unicode_text.h"
#include "value_ops.h"

namespace hearth::chat {

const Value* arg_at(const Args& args, const KwArgs& kwargs, size_t index, std::string_view name) {
  if (index < args.size()) return &args[index];
  for (const auto& [key, value] : kwargs) {
    if (key == name) return &value;
  }
  return nullptr;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

namespace {

using FilterFn = Result<Value> (*)(Interpreter& in, const Value& v, Args& args, KwArgs& kwargs);

Result<std::string> str_arg(Interpreter& in, const Args& args, const KwArgs& kwargs, size_t i,
                            std::string_view name, std::string fallback) {
  const Value* v = arg_at(args, kwargs, i, name);
  if (!v || v->is_undefined()) return fallback;
  return in.str(*v);
}

bool bool_arg(const Args& args, const KwArgs& kwargs, size_t i, std::string_view name, bool fallback) {
  const Value* v = arg_at(args, kwargs, i, name);
  return v ? v->truthy() : fallback;
}

Result<Value> string_result(Interpreter& in, std::string s) {
  HEARTH_CHECK(in.check_string(s.size()));
  return Value::string(std::move(s));
}

// Attribute path "a.b.0" as selectattr/map/sort use it: item first, then attribute.
Result<Value> attr_path(Interpreter& in, const Value& v, const std::string& path) {
  Value cur = v;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    Value key = Value::string(part);
    if (!part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      key = Value::integer(std::atoll(part.c_str()));
    }
    HEARTH_TRY(cur, in.get_item(cur, key));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return cur;
}

Result<Value> f_trim(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  HEARTH_TRY(std::string s, in.str(v));
  const Value* chars = arg_at(args, kw, 0, "chars");
  if (chars && chars->is_string()) return string_result(in, strip_text(s, StripSide::Both, &chars->as_string()));
  return string_result(in, strip_text(s, StripSide::Both));
}

Result<Value> f_upper(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(std::string s, in.str(v));
  return string_result(in, upper_text(s));
}

Result<Value> f_lower(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(std::string s, in.str(v));
  return string_result(in, lower_text(s));
}

Result<Value> f_capitalize(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(std::string s, in.str(v));
  auto cps = decode_utf8(s);
  for (size_t i = 0; i < cps.size(); ++i) cps[i] = i == 0 ? to_upper_cp(cps[i]) : to_lower_cp(cps[i]);
  return string_result(in, encode_utf8(cps, 0, cps.size()));
}

Result<Value> f_title(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(std::string s, in.str(v));
  auto cps = decode_utf8(s);
  bool word_start = true;
  for (auto& cp : cps) {
    const bool sep = is_unicode_space(cp) || cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<';
    cp = sep ? cp : (word_start ? to_upper_cp(cp) : to_lower_cp(cp));
    word_start = sep;
  }
  return string_result(in, encode_utf8(cps, 0, cps.size()));
}

Result<Value> f_length(Interpreter& in, const Value& v, Args&, KwArgs&) {
  switch (v.kind()) {
    case ValueKind::String: return Value::integer(static_cast<int64_t>(count_code_points(v.as_string())));
    case ValueKind::Array: return Value::integer(static_cast<int64_t>(v.as_array().size()));
    case ValueKind::Object: return Value::integer(static_cast<int64_t>(v.as_object().size()));
    case ValueKind::Undefined: return Value::integer(0);
    default: (void)in; return template_error(fmt::format("object of type '{}' has no len()", type_name(v)));
  }
}

Result<Value> f_tojson(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  JsonStyle style;
  if (const Value* indent = arg_at(args, kw, 0, "indent"); indent && indent->is_int()) {
    style.indent = static_cast<int>(std::clamp<int64_t>(indent->as_int(), 0, 64));
  }
  style.ensure_ascii = bool_arg({}, kw, 99, "ensure_ascii", false);
  style.sort_keys = bool_arg({}, kw, 99, "sort_keys", false);
  std::string out;
  HEARTH_CHECK(append_json(out, v, style, in.limits().max_string_bytes));
  return string_result(in, std::move(out));
}

Result<Value> f_join(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  HEARTH_TRY(std::string sep, str_arg(in, args, kw, 0, "d", ""));
  const Value* attribute = arg_at(args, kw, 1, "attribute");
  HEARTH_TRY(auto items, in.iterate(v));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) {
      if (out.size() + sep.size() > in.limits().max_string_bytes) return text_too_long(in.limits().max_string_bytes);
      out += sep;
    }
    Value item = items[i];
    if (attribute && attribute->is_string()) {
      HEARTH_TRY(item, attr_path(in, item, attribute->as_string()));
    }
    const size_t before = out.size();
    HEARTH_CHECK(append_str(out, item, in.limits().max_string_bytes));
    HEARTH_CHECK(in.charge(out.size() - before + sep.size() + 1));
  }
  return Value::string(std::move(out));
}

Result<Value> f_default(Interpreter&, const Value& v, Args& args, KwArgs& kw) {
  const Value* fallback = arg_at(args, kw, 0, "default_value");
  const bool boolean = bool_arg(args, kw, 1, "boolean", false);
  if (v.is_undefined() || (boolean && !v.truthy())) return fallback ? *fallback : Value::string("");
  return v;
}

Result<Value> f_replace(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  HEARTH_TRY(std::string s, in.str(v));
  HEARTH_TRY(std::string from, str_arg(in, args, kw, 0, "old", ""));
  HEARTH_TRY(std::string to, str_arg(in, args, kw, 1, "new", ""));
  const Value* count_v = arg_at(args, kw, 2, "count");
  int64_t count = count_v && count_v->is_int() ? count_v->as_int() : -1;
  std::string out;
  if (from.empty()) {
    // Python inserts `to` between every character and at both ends.
    auto cps = decode_utf8(s);
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || static_cast<int64_t>(i) < count) out += to;
      if (i < cps.size()) append_utf8(out, cps[i]);
      HEARTH_CHECK(in.check_string(out.size()));
    }
    return Value::string(std::move(out));
  }
  size_t pos = 0;
  while (count != 0) {
    const size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out += to;
    HEARTH_CHECK(in.check_string(out.size()));
    pos = hit + from.size();
    if (count > 0) --count;
  }
  out.append(s, pos, std::string::npos);
  return string_result(in, std::move(out));
}

Result<Value> f_first(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(auto items, in.iterate(v));
  if (items.empty()) return Value::undefined("No first item, sequence was empty.");
  return items.front();
}

Result<Value> f_last(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(auto items, in.iterate(v));
  if (items.empty()) return Value::undefined("No last item, sequence was empty.");
  return items.back();
}

Result<Value> f_list(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(auto items, in.iterate(v));
  return Value::array(std::move(items));
}

Result<Value> f_map(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  if (!v.truthy()) return Value::array({});  // the reference skips empty and none inputs
  HEARTH_TRY(auto items, in.iterate(v));
  std::vector<Value> out;
  out.reserve(items.size());
  if (const Value* attribute = arg_at({}, kw, 99, "attribute")) {
    HEARTH_TRY(std::string path, in.str(*attribute));
    const Value* fallback = arg_at({}, kw, 99, "default");
    for (const auto& item : items) {
      HEARTH_CHECK(in.count_iteration());
      HEARTH_TRY(Value got, attr_path(in, item, path));
      out.push_back(got.is_undefined() && fallback ? *fallback : got);
    }
    return Value::array(std::move(out));
  }
  if (args.empty() || !args[0].is_string()) return template_error("map needs a filter name or attribute=");
  const std::string name = args[0].as_string();
  Args rest(args.begin() + 1, args.end());
  for (const auto& item : items) {
    HEARTH_CHECK(in.count_iteration());
    Args call_args = rest;
    KwArgs call_kw;
    HEARTH_TRY(Value mapped, apply_filter(in, name, item, call_args, call_kw));
    out.push_back(std::move(mapped));
  }
  return Value::array(std::move(out));
}

// select/reject/selectattr/rejectattr share this: keep items whose test
// (on the item or on item.attribute) equals `keep`.
Result<Value> select_common(Interpreter& in, const Value& v, Args& args, bool keep, bool by_attribute) {
  if (!v.truthy()) return Value::array({});  // the reference skips empty and none inputs
  HEARTH_TRY(auto items, in.iterate(v));
  size_t next_arg = 0;
  std::string attribute;
  if (by_attribute) {
    if (args.empty()) return template_error("selectattr/rejectattr need an attribute name");
    HEARTH_TRY(attribute, in.str(args[0]));
    next_arg = 1;
  }
  std::string test;
  if (next_arg < args.size()) {
    HEARTH_TRY(test, in.str(args[next_arg]));
    ++next_arg;
  }
  Args test_args(args.begin() + static_cast<std::ptrdiff_t>(std::min(next_arg, args.size())), args.end());
  std::vector<Value> out;
  for (const auto& item : items) {
    HEARTH_CHECK(in.count_iteration());
    Value subject = item;
    if (by_attribute) {
      HEARTH_TRY(subject, attr_path(in, item, attribute));
    }
    bool passed = false;
    if (test.empty()) {
      passed = subject.truthy();
    } else {
      Args a = test_args;
      HEARTH_TRY(passed, apply_test(in, test, subject, a));
    }
    if (passed == keep) out.push_back(item);
  }
  return Value::array(std::move(out));
}

Result<Value> f_select(Interpreter& in, const Value& v, Args& a, KwArgs&) { return select_common(in, v, a, true, false); }
Result<Value> f_reject(Interpreter& in, const Value& v, Args& a, KwArgs&) { return select_common(in, v, a, false, false); }
Result<Value> f_selectattr(Interpreter& in, const Value& v, Args& a, KwArgs&) { return select_common(in, v, a, true, true); }
Result<Value> f_rejectattr(Interpreter& in, const Value& v, Args& a, KwArgs&) { return select_common(in, v, a, false, true); }

Result<Value> f_items(Interpreter& in, const Value& v, Args&, KwArgs&) {
  if (v.is_undefined()) return Value::array({});
  if (!v.is_object()) return template_error("Can only get item pairs from a mapping.");
  std::vector<Value> out;
  for (const auto& [key, item] : v.as_object().items()) out.push_back(Value::tuple({Value::string(key), item}));
  Value list = Value::array(std::move(out));
  HEARTH_CHECK(in.check_collection(list.as_array().size(), list.depth()));
  return list;
}

Result<Value> f_dictsort(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  if (!v.is_object()) return template_error("dictsort needs a mapping");
  const bool case_sensitive = bool_arg(args, kw, 0, "case_sensitive", false);
  HEARTH_TRY(std::string by, str_arg(in, args, kw, 1, "by", "key"));
  const bool reverse = bool_arg(args, kw, 2, "reverse", false);
  std::vector<std::pair<Value, Value>> pairs;  // (sort key, item pair)
  for (const auto& [key, item] : v.as_object().items()) {
    Value sort_key = by == "value" ? item : Value::string(key);
    if (!case_sensitive && sort_key.is_string()) {
      HEARTH_CHECK(in.charge(sort_key.as_string().size() + Interpreter::kItemUnits));
      sort_key = Value::string(lower_text(sort_key.as_string()));
    }
    pairs.emplace_back(sort_key, Value::tuple({Value::string(key), item}));
  }
  Status failure;
  std::stable_sort(pairs.begin(), pairs.end(), [&](const auto& a, const auto& b) {
    if (!failure.ok()) return false;  // finish quickly once an error is known
    auto c = in.compare(a.first, b.first);
    if (!c.ok()) { failure = c.take_error(); return false; }
    return reverse ? *c > 0 : *c < 0;
  });
  HEARTH_CHECK(std::move(failure));
  std::vector<Value> out;
  for (auto& p : pairs) out.push_back(std::move(p.second));
  Value list = Value::array(std::move(out));
  HEARTH_CHECK(in.check_collection(list.as_array().size(), list.depth()));
  return list;
}

Result<Value> f_string(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(std::string s, in.str(v));
  return string_result(in, std::move(s));
}

Result<Value> f_safe(Interpreter& in, const Value& v, Args&, KwArgs&) {
  if (v.is_safe()) return v;
  HEARTH_TRY(std::string s, in.str(v));
  return Value::safe_string(std::move(s));
}

Result<Value> f_int(Interpreter&, const Value& v, Args& args, KwArgs& kw) {
  const Value* fallback = arg_at(args, kw, 0, "default");
  const Value dflt = fallback ? *fallback : Value::integer(0);
  if (v.is_int()) return v;
  if (v.is_bool()) return Value::integer(v.as_bool() ? 1 : 0);
  if (v.is_float()) {
    if (!std::isfinite(v.as_float()) || std::fabs(v.as_float()) > 9.2e18) return dflt;
    return Value::integer(static_cast<int64_t>(v.as_float()));
  }
  if (v.is_string()) {
    const std::string s = strip_text(v.as_string(), StripSide::Both);
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && end == s.c_str() + s.size() && errno == 0) return Value::integer(i);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d) && std::fabs(d) < 9.2e18) {
      return Value::integer(static_cast<int64_t>(d));
    }
  }
  return dflt;
}

Result<Value> f_float(Interpreter&, const Value& v, Args& args, KwArgs& kw) {
  const Value* fallback = arg_at(args, kw, 0, "default");
  const Value dflt = fallback ? *fallback : Value::number(0.0);
  if (v.is_number() || v.is_bool()) return Value::number(v.to_double());
  if (v.is_string()) {
    const std::string s = strip_text(v.as_string(), StripSide::Both);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && end == s.c_str() + s.size()) return Value::number(d);
  }
  return dflt;
}

// Python str.splitlines() for the separators text realistically contains.
std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || s[i] == '\r') {
      lines.push_back(cur);
      cur.clear();
      if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      cur.push_back(s[i]);
    }
  }
  if (!cur.empty()) lines.push_back(cur);
  return lines;
}

Result<Value> f_indent(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  HEARTH_TRY(std::string s, in.str(v));
  std::string pad;
  const Value* width = arg_at(args, kw, 0, "width");
  if (width && width->is_string()) pad = width->as_string();
  else pad = std::string(static_cast<size_t>(std::clamp<int64_t>(width && width->is_int() ? width->as_int() : 4, 0, 1024)), ' ');
  const bool first = bool_arg(args, kw, 1, "first", false);
  const bool blank = bool_arg(args, kw, 2, "blank", false);
  // Each line becomes a string before any padding is added: count them first.
  const auto breaks = static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return c == '\n' || c == '\r'; }));
  HEARTH_CHECK(in.check_collection(breaks + 1, 1));
  auto lines = split_lines(s + "\n");
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    if (i > 0 && (blank || !lines[i].empty())) out += pad;
    out += lines[i];
    HEARTH_CHECK(in.check_string(out.size()));
  }
  if (first) out = pad + out;
  return string_result(in, std::move(out));
}

Result<Value> f_escape(Interpreter& in, const Value& v, Args&, KwArgs&) {
  if (v.is_safe()) return v;
  HEARTH_TRY(std::string s, in.str(v));
  std::string out = html_escape(s);
  HEARTH_CHECK(in.check_string(out.size()));
  return Value::safe_string(std::move(out));
}

Result<Value> f_abs(Interpreter&, const Value& v, Args&, KwArgs&) {
  if (v.is_int()) {
    if (v.as_int() == INT64_MIN) return template_error("integer overflow");
    return Value::integer(std::llabs(v.as_int()));
  }
  if (v.is_bool()) return Value::integer(v.as_bool());
  if (v.is_float()) return Value::number(std::fabs(v.as_float()));
  return template_error(fmt::format("bad operand type for abs(): '{}'", type_name(v)));
}

Result<Value> f_round(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  if (!v.is_number() && !v.is_bool()) return template_error("round needs a number");
  const Value* prec_v = arg_at(args, kw, 0, "precision");
  const int precision = prec_v && prec_v->is_int() ? static_cast<int>(std::clamp<int64_t>(prec_v->as_int(), 0, 30)) : 0;
  HEARTH_TRY(std::string method, str_arg(in, args, kw, 1, "method", "common"));
  const double x = v.to_double();
  const double scale = std::pow(10.0, precision);
  if (method == "floor") return Value::number(std::floor(x * scale) / scale);
  if (method == "ceil") return Value::number(std::ceil(x * scale) / scale);
  if (method != "common") return template_error("method must be 'common', 'ceil' or 'floor'");
  if (v.is_int() || v.is_bool()) return Value::integer(v.is_int() ? v.as_int() : v.as_bool());
  // Python's round(): correctly rounded decimal, ties to even.
  return Value::number(std::strtod(fmt::format("{:.{}f}", x, precision).c_str(), nullptr));
}

Result<Value> f_unique(Interpreter& in, const Value& v, Args&, KwArgs&) {
  HEARTH_TRY(auto items, in.iterate(v));
  std::vector<Value> out;
  for (const auto& item : items) {
    HEARTH_CHECK(in.count_iteration());
    bool seen = false;
    for (const auto& o : out) {  // quadratic, so every comparison is charged
      HEARTH_TRY(seen, in.equal(o, item));
      if (seen) break;
    }
    if (!seen) out.push_back(item);
  }
  return Value::array(std::move(out));
}

Result<Value> f_sort(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  HEARTH_TRY(auto items, in.iterate(v));
  // About n log2 n comparisons, charged up front so a sort too big for the
  // budget never starts; each comparison also charges what it reads.
  uint64_t log_n = 1;
  while ((uint64_t{1} << log_n) < items.size()) ++log_n;
  HEARTH_CHECK(in.charge(items.size() * log_n * Interpreter::kVisitUnits));
  const bool reverse = bool_arg(args, kw, 0, "reverse", false);
  const bool case_sensitive = bool_arg(args, kw, 1, "case_sensitive", false);
  const Value* attribute = arg_at(args, kw, 2, "attribute");
  std::vector<std::pair<Value, Value>> keyed;
  for (const auto& item : items) {
    Value key = item;
    if (attribute && attribute->is_string()) {
      HEARTH_TRY(key, attr_path(in, item, attribute->as_string()));
    }
    if (!case_sensitive && key.is_string()) {
      HEARTH_CHECK(in.charge(key.as_string().size() + Interpreter::kItemUnits));
      key = Value::string(lower_text(key.as_string()));
    }
    keyed.emplace_back(std::move(key), item);
  }
  Status failure;
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (!failure.ok()) return false;  // finish quickly once an error is known
    auto c = in.compare(a.first, b.first);
    if (!c.ok()) { failure = c.take_error(); return false; }
    return reverse ? *c > 0 : *c < 0;
  });
  HEARTH_CHECK(std::move(failure));
  std::vector<Value> out;
  for (auto& k : keyed) out.push_back(std::move(k.second));
  return Value::array(std::move(out));
}

Result<Value> f_reverse(Interpreter& in, const Value& v, Args&, KwArgs&) {
  if (v.is_string()) {
    auto cps = decode_utf8(v.as_string());
    std::reverse(cps.begin(), cps.end());
    return Value::string(encode_utf8(cps, 0, cps.size()));
  }
  HEARTH_TRY(auto items, in.iterate(v));
  std::reverse(items.begin(), items.end());
  return Value::array(std::move(items));
}

Result<Value> f_sum(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  HEARTH_TRY(auto items, in.iterate(v));
  const Value* attribute = arg_at(args, kw, 0, "attribute");
  const Value* start = arg_at(args, kw, 1, "start");
  Value total = start ? *start : Value::integer(0);
  for (const auto& item : items) {
    Value x = item;
    if (attribute && attribute->is_string()) {
      HEARTH_TRY(x, attr_path(in, item, attribute->as_string()));
    }
    HEARTH_TRY(total, in.binary_op("+", total, x));
  }
  return total;
}

Result<Value> min_max(Interpreter& in, const Value& v, bool want_max) {
  HEARTH_TRY(auto items, in.iterate(v));
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  Value best = items[0];
  for (size_t i = 1; i < items.size(); ++i) {
    HEARTH_TRY(int c, in.compare(items[i], best));
    if (want_max ? c > 0 : c < 0) best = items[i];
  }
  return best;
}
Result<Value> f_min(Interpreter& in, const Value& v, Args&, KwArgs&) { return min_max(in, v, false); }
Result<Value> f_max(Interpreter& in, const Value& v, Args&, KwArgs&) { return min_max(in, v, true); }

Result<Value> f_attr(Interpreter& in, const Value& v, Args& args, KwArgs& kw) {
  HEARTH_TRY(std::string name, str_arg(in, args, kw, 0, "name", ""));
  return in.get_attr(v, name);
}

// printf-style "%s %d %f %r %%", which "x" | format(...) applies.
Result<Value> f_format(Interpreter& in, const Value& v, Args& args, KwArgs&) {
  HEARTH_TRY(std::string fmt_text, in.str(v));
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt_text.size(); ++i) {
    if (fmt_text[i] != '%') { out.push_back(fmt_text[i]); continue; }
    size_t j = i + 1;
    int precision = -1;
    if (j < fmt_text.size() && fmt_text[j] == '.') {
      precision = 0;
      for (++j; j < fmt_text.size() && std::isdigit(static_cast<unsigned char>(fmt_text[j])); ++j) {
        precision = std::min(precision * 10 + (fmt_text[j] - '0'), 60);
      }
    }
    if (j >= fmt_text.size()) return template_error("incomplete format");
    const char conv = fmt_text[j];
    i = j;
    if (conv == '%') { out.push_back('%'); continue; }
    if (next >= args.size()) return template_error("not enough arguments for format string");
    const Value& a = args[next++];
    if (conv == 's') HEARTH_CHECK(append_str(out, a, in.limits().max_string_bytes));
    else if (conv == 'r') HEARTH_CHECK(append_repr(out, a, in.limits().max_string_bytes));
    else if (conv == 'd' || conv == 'i') {
      if (!a.is_number() && !a.is_bool()) return template_error("%d format: a number is required");
      out += std::to_string(a.is_float() ? static_cast<int64_t>(a.as_float()) : (a.is_int() ? a.as_int() : a.as_bool()));
    } else if (conv == 'f') {
      if (!a.is_number() && !a.is_bool()) return template_error("%f format: a number is required");
      out += fmt::format("{:.{}f}", a.to_double(), precision < 0 ? 6 : precision);
    } else {
      return template_error(fmt::format("unsupported format character '{}'", conv));
    }
    HEARTH_CHECK(in.check_string(out.size()));
  }
  return Value::string(std::move(out));
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"trim", f_trim},         {"upper", f_upper},           {"lower", f_lower},
    {"capitalize", f_capitalize}, {"title", f_title},       {"length", f_length},
    {"count", f_length},      {"tojson", f_tojson},         {"join", f_join},
    {"default", f_default},   {"d", f_default},             {"replace", f_replace},
    {"first", f_first},       {"last", f_last},             {"list", f_list},
    {"map", f_map},           {"select", f_select},         {"reject", f_reject},
    {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr}, {"items", f_items},
    {"dictsort", f_dictsort}, {"string", f_string},         {"safe", f_safe},
    {"int", f_int},           {"float", f_float},           {"indent", f_indent},
    {"escape", f_escape},     {"e", f_escape},              {"forceescape", f_escape},
    {"abs", f_abs},           {"round", f_round},           {"unique", f_unique},
    {"sort", f_sort},         {"reverse", f_reverse},       {"sum", f_sum},
    {"min", f_min},           {"max", f_max},               {"attr", f_attr},
    {"format", f_format},
};

}  // namespace

Result<Value> apply_filter(Interpreter& in, const std::string& name, const Value& subject, Args& args,
                           KwArgs& kwargs) {
  for (const auto& entry : kFilters) {
    if (entry.name != name) continue;
    // Every filter scans its subject at least once and pays for what it
    // builds; filters that do more (sort, unique, join) charge the rest.
    HEARTH_CHECK(in.charge(Interpreter::scan_units(subject)));
    HEARTH_TRY(Value result, entry.fn(in, subject, args, kwargs));
    HEARTH_CHECK(in.charge(Interpreter::build_units(result)));
    return result;
  }
  return template_error(fmt::format("no filter named '{}'", name));
}

}  // namespace hearth::chat
