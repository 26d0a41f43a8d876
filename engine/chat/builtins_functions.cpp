// Tests ("x is name"), methods of str/list/dict values and the global
// functions a template may call. Nothing here reaches files, the environment
// or the host: the only outside input is the injected clock of strftime_now.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "interp_types.h"
#include "unicode_text.h"
#include "value_ops.h"

namespace hearth::chat {
namespace {

Result<const Value*> need_arg(const Args& args, size_t i, std::string_view test) {
  if (i >= args.size()) return template_error(fmt::format("'{}' needs an argument", test));
  return &args[i];
}

}  // namespace

Result<bool> apply_test(Interpreter& in, const std::string& name, const Value& v, Args& args) {
  HEARTH_CHECK(in.charge(Interpreter::scan_units(v)));
  const ValueKind k = v.kind();
  if (name == "defined") return k != ValueKind::Undefined;
  if (name == "undefined") return k == ValueKind::Undefined;
  if (name == "none") return k == ValueKind::None;
  if (name == "boolean") return k == ValueKind::Bool;
  if (name == "true") return k == ValueKind::Bool && v.as_bool();
  if (name == "false") return k == ValueKind::Bool && !v.as_bool();
  if (name == "integer") return k == ValueKind::Int;
  if (name == "float") return k == ValueKind::Float;
  if (name == "number") return k == ValueKind::Int || k == ValueKind::Float || k == ValueKind::Bool;
  if (name == "string") return k == ValueKind::String;
  if (name == "mapping") return k == ValueKind::Object;
  if (name == "iterable") {
    return k == ValueKind::String || k == ValueKind::Array || k == ValueKind::Object || k == ValueKind::Undefined;
  }
  if (name == "sequence") return k == ValueKind::String || k == ValueKind::Array || k == ValueKind::Object;
  if (name == "callable") return k == ValueKind::Callable;
  if (name == "escaped") return false;
  if (name == "odd" || name == "even") {
    if (k != ValueKind::Int && k != ValueKind::Bool) return template_error(fmt::format("'{}' needs an integer", name));
    const int64_t x = k == ValueKind::Int ? v.as_int() : v.as_bool();
    return (x % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    HEARTH_TRY(const Value* d, need_arg(args, 0, name));
    if (!v.is_int() || !d->is_int() || d->as_int() == 0) return template_error("divisibleby needs non-zero integers");
    return v.as_int() % d->as_int() == 0;
  }
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    const std::string& s = v.as_string();
    return name == "lower" ? lower_text(s) == s : upper_text(s) == s;
  }
  if (name == "eq" || name == "equalto" || name == "==") {
    HEARTH_TRY(const Value* o, need_arg(args, 0, name));
    return in.equal(v, *o);
  }
  if (name == "ne" || name == "!=") {
    HEARTH_TRY(const Value* o, need_arg(args, 0, name));
    HEARTH_TRY(bool same, in.equal(v, *o));
    return !same;
  }
  if (name == "sameas") {
    HEARTH_TRY(const Value* o, need_arg(args, 0, name));
    if (v.kind() != o->kind()) return false;
    if (v.is_none() || v.is_undefined()) return true;
    if (v.is_bool()) return v.as_bool() == o->as_bool();
    return values_equal(v, *o);
  }
  if (name == "in") {
    HEARTH_TRY(const Value* o, need_arg(args, 0, name));
    return in.contains(*o, v);
  }
  struct Cmp { std::string_view a, b; int want_sign; bool or_equal; };
  static constexpr Cmp kCmps[] = {{"lt", "lessthan", -1, false}, {"le", "<=", -1, true},
                                  {"gt", "greaterthan", 1, false}, {"ge", ">=", 1, true},
                                  {"<", "<", -1, false}, {">", ">", 1, false}};
  for (const auto& c : kCmps) {
    if (name != c.a && name != c.b) continue;
    HEARTH_TRY(const Value* o, need_arg(args, 0, name));
    HEARTH_TRY(int r, in.compare(v, *o));
    return r == c.want_sign || (c.or_equal && r == 0);
  }
  return template_error(fmt::format("no test named '{}'", name));
}

// ---- methods ----
namespace {

Result<std::string> opt_str(const Args& args, const KwArgs& kw, size_t i, std::string_view name,
                            const std::string* fallback, bool* given) {
  const Value* v = arg_at(args, kw, i, name);
  *given = v && !v->is_none() && !v->is_undefined();
  if (!*given) return fallback ? *fallback : std::string();
  if (!v->is_string()) return template_error(fmt::format("{} must be a string", name));
  return v->as_string();
}

Result<Value> m_strip_side(const Value& self, Args& args, KwArgs& kw, StripSide side) {
  bool given = false;
  HEARTH_TRY(std::string chars, opt_str(args, kw, 0, "chars", nullptr, &given));
  return Value::string(strip_text(self.as_string(), side, given ? &chars : nullptr));
}
Result<Value> m_strip(Interpreter&, const Value& s, Args& a, KwArgs& k) { return m_strip_side(s, a, k, StripSide::Both); }
Result<Value> m_lstrip(Interpreter&, const Value& s, Args& a, KwArgs& k) { return m_strip_side(s, a, k, StripSide::Left); }
Result<Value> m_rstrip(Interpreter&, const Value& s, Args& a, KwArgs& k) { return m_strip_side(s, a, k, StripSide::Right); }

Result<Value> m_split(Interpreter& in, const Value& self, Args& args, KwArgs& kw) {
  bool has_sep = false;
  HEARTH_TRY(std::string sep, opt_str(args, kw, 0, "sep", nullptr, &has_sep));
  const Value* max_v = arg_at(args, kw, 1, "maxsplit");
  int64_t maxsplit = max_v && max_v->is_int() ? max_v->as_int() : -1;
  const std::string& s = self.as_string();
  std::vector<Value> out;
  if (has_sep) {
    if (sep.empty()) return template_error("empty separator");
    size_t pos = 0;
    while (maxsplit != 0) {
      const size_t hit = s.find(sep, pos);
      if (hit == std::string::npos) break;
      HEARTH_CHECK(in.check_collection(out.size() + 1, 1));  // before building past the cap
      out.push_back(Value::string(s.substr(pos, hit - pos)));
      pos = hit + sep.size();
      if (maxsplit > 0) --maxsplit;
    }
    out.push_back(Value::string(s.substr(pos)));
  } else {
    // Runs of whitespace separate; leading/trailing whitespace yields nothing.
    auto cps = decode_utf8(s);
    size_t i = 0;
    while (i < cps.size()) {
      while (i < cps.size() && is_unicode_space(cps[i])) ++i;
      if (i >= cps.size()) break;
      if (maxsplit == 0) {
        size_t end = cps.size();
        while (end > i && is_unicode_space(cps[end - 1])) --end;
        out.push_back(Value::string(encode_utf8(cps, i, end)));
        break;
      }
      HEARTH_CHECK(in.check_collection(out.size() + 1, 1));
      size_t j = i;
      while (j < cps.size() && !is_unicode_space(cps[j])) ++j;
      out.push_back(Value::string(encode_utf8(cps, i, j)));
      if (maxsplit > 0) --maxsplit;
      i = j;
    }
  }
  HEARTH_CHECK(in.check_collection(out.size(), 1));
  return Value::array(std::move(out));
}

Result<Value> affix_test(const Value& self, Args& args, bool prefix) {
  if (args.empty()) return template_error("startswith/endswith need an argument");
  std::vector<std::string> options;
  if (args[0].is_string()) options.push_back(args[0].as_string());
  else if (args[0].is_array()) {
    for (const auto& o : args[0].as_array()) if (o.is_string()) options.push_back(o.as_string());
  } else {
    return template_error("startswith/endswith need a string or a tuple of strings");
  }
  const std::string& s = self.as_string();
  for (const auto& o : options) {
    if (o.size() > s.size()) continue;
    if (prefix ? s.compare(0, o.size(), o) == 0 : s.compare(s.size() - o.size(), o.size(), o) == 0) {
      return Value::boolean(true);
    }
  }
  return Value::boolean(false);
}
Result<Value> m_startswith(Interpreter&, const Value& s, Args& a, KwArgs&) { return affix_test(s, a, true); }
Result<Value> m_endswith(Interpreter&, const Value& s, Args& a, KwArgs&) { return affix_test(s, a, false); }

Result<Value> m_upper(Interpreter&, const Value& s, Args&, KwArgs&) { return Value::string(upper_text(s.as_string())); }
Result<Value> m_lower(Interpreter&, const Value& s, Args&, KwArgs&) { return Value::string(lower_text(s.as_string())); }

Result<Value> m_replace(Interpreter& in, const Value& s, Args& a, KwArgs& k) {
  return apply_filter(in, "replace", s, a, k);
}
Result<Value> m_title(Interpreter& in, const Value& s, Args& a, KwArgs& k) { return apply_filter(in, "title", s, a, k); }
Result<Value> m_capitalize(Interpreter& in, const Value& s, Args& a, KwArgs& k) {
  return apply_filter(in, "capitalize", s, a, k);
}

Result<Value> m_find(Interpreter&, const Value& self, Args& args, KwArgs&) {
  if (args.empty() || !args[0].is_string()) return template_error("find needs a string");
  const std::string& s = self.as_string();
  const size_t hit = s.find(args[0].as_string());
  if (hit == std::string::npos) return Value::integer(-1);
  return Value::integer(static_cast<int64_t>(count_code_points(std::string_view(s).substr(0, hit))));
}

Result<Value> m_str_count(Interpreter&, const Value& self, Args& args, KwArgs&) {
  if (args.empty() || !args[0].is_string()) return template_error("count needs a string");
  const std::string& s = self.as_string();
  const std::string& sub = args[0].as_string();
  if (sub.empty()) return Value::integer(static_cast<int64_t>(count_code_points(s) + 1));
  int64_t n = 0;
  for (size_t pos = s.find(sub); pos != std::string::npos; pos = s.find(sub, pos + sub.size())) ++n;
  return Value::integer(n);
}

Result<Value> m_join(Interpreter& in, const Value& self, Args& args, KwArgs&) {
  if (args.empty()) return template_error("join needs an iterable");
  HEARTH_TRY(auto items, in.iterate(args[0]));
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].is_string()) return template_error("sequence item: expected str instance");
    if (i) out += self.as_string();
    out += items[i].as_string();
    HEARTH_CHECK(in.check_string(out.size()));
  }
  return Value::string(std::move(out));
}

Result<Value> char_class(const Value& self, bool (*pred)(uint32_t)) {
  auto cps = decode_utf8(self.as_string());
  if (cps.empty()) return Value::boolean(false);
  return Value::boolean(std::all_of(cps.begin(), cps.end(), pred));
}
Result<Value> m_isdigit(Interpreter&, const Value& s, Args&, KwArgs&) {
  return char_class(s, [](uint32_t c) { return c >= '0' && c <= '9'; });
}
Result<Value> m_isspace(Interpreter&, const Value& s, Args&, KwArgs&) { return char_class(s, is_unicode_space); }
Result<Value> m_isalnum(Interpreter&, const Value& s, Args&, KwArgs&) { return char_class(s, is_alnum_cp); }
Result<Value> m_isalpha(Interpreter&, const Value& s, Args&, KwArgs&) {
  return char_class(s, [](uint32_t c) { return is_alnum_cp(c) && !(c >= '0' && c <= '9'); });
}

Result<Value> m_removeprefix(Interpreter&, const Value& self, Args& args, KwArgs&) {
  if (args.empty() || !args[0].is_string()) return template_error("removeprefix needs a string");
  const std::string& s = self.as_string();
  const std::string& p = args[0].as_string();
  return Value::string(s.rfind(p, 0) == 0 ? s.substr(p.size()) : s);
}

Result<Value> m_removesuffix(Interpreter&, const Value& self, Args& args, KwArgs&) {
  if (args.empty() || !args[0].is_string()) return template_error("removesuffix needs a string");
  const std::string& s = self.as_string();
  const std::string& p = args[0].as_string();
  const bool ends = s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
  return Value::string(ends && !p.empty() ? s.substr(0, s.size() - p.size()) : s);
}

Result<Value> m_items(Interpreter& in, const Value& self, Args& a, KwArgs& k) { return apply_filter(in, "items", self, a, k); }

Result<Value> m_keys(Interpreter&, const Value& self, Args&, KwArgs&) {
  std::vector<Value> out;
  for (const auto& [key, v] : self.as_object().items()) out.push_back(Value::string(key));
  return Value::array(std::move(out));
}

Result<Value> m_values(Interpreter&, const Value& self, Args&, KwArgs&) {
  std::vector<Value> out;
  for (const auto& [key, v] : self.as_object().items()) out.push_back(v);
  return Value::array(std::move(out));
}

Result<Value> m_get(Interpreter&, const Value& self, Args& args, KwArgs& kw) {
  if (args.empty()) return template_error("get needs a key");
  const Value* fallback = arg_at(args, kw, 1, "default");
  if (args[0].is_string()) {
    if (const Value* v = self.as_object().find(args[0].as_string())) return *v;
  }
  return fallback ? *fallback : Value::none();
}

Result<Value> m_index(Interpreter& in, const Value& self, Args& args, KwArgs&) {
  if (args.empty()) return template_error("index needs a value");
  const auto& items = self.as_array();
  for (size_t i = 0; i < items.size(); ++i) {
    HEARTH_TRY(bool same, in.equal(items[i], args[0]));
    if (same) return Value::integer(static_cast<int64_t>(i));
  }
  return template_error("value is not in list");
}

Result<Value> m_list_count(Interpreter& in, const Value& self, Args& args, KwArgs&) {
  if (args.empty()) return template_error("count needs a value");
  int64_t n = 0;
  for (const auto& item : self.as_array()) {
    HEARTH_TRY(bool same, in.equal(item, args[0]));
    n += same ? 1 : 0;
  }
  return Value::integer(n);
}

struct MethodEntry {
  ValueKind kind;
  std::string_view name;
  NativeFn fn;
};

constexpr MethodEntry kMethods[] = {
    {ValueKind::String, "strip", m_strip},         {ValueKind::String, "lstrip", m_lstrip},
    {ValueKind::String, "rstrip", m_rstrip},       {ValueKind::String, "split", m_split},
    {ValueKind::String, "startswith", m_startswith}, {ValueKind::String, "endswith", m_endswith},
    {ValueKind::String, "upper", m_upper},         {ValueKind::String, "lower", m_lower},
    {ValueKind::String, "replace", m_replace},     {ValueKind::String, "title", m_title},
    {ValueKind::String, "capitalize", m_capitalize}, {ValueKind::String, "find", m_find},
    {ValueKind::String, "count", m_str_count},     {ValueKind::String, "join", m_join},
    {ValueKind::String, "isdigit", m_isdigit},     {ValueKind::String, "isspace", m_isspace},
    {ValueKind::String, "isalnum", m_isalnum},     {ValueKind::String, "isalpha", m_isalpha},
    {ValueKind::String, "removeprefix", m_removeprefix}, {ValueKind::String, "removesuffix", m_removesuffix},
    {ValueKind::Object, "items", m_items},         {ValueKind::Object, "keys", m_keys},
    {ValueKind::Object, "values", m_values},       {ValueKind::Object, "get", m_get},
    {ValueKind::Array, "index", m_index},          {ValueKind::Array, "count", m_list_count},
};

// ---- globals ----

Result<Value> g_range(Interpreter& in, const Value&, Args& args, KwArgs&) {
  int64_t bounds[3] = {0, 0, 1};
  if (args.empty() || args.size() > 3) return template_error("range expects 1 to 3 integer arguments");
  for (const auto& a : args) {
    if (!a.is_int() && !a.is_bool()) return template_error("range arguments must be integers");
  }
  auto as_i = [](const Value& a) { return a.is_int() ? a.as_int() : static_cast<int64_t>(a.as_bool()); };
  if (args.size() == 1) bounds[1] = as_i(args[0]);
  else { bounds[0] = as_i(args[0]); bounds[1] = as_i(args[1]); }
  if (args.size() == 3) bounds[2] = as_i(args[2]);
  const int64_t start = bounds[0], stop = bounds[1], step = bounds[2];
  if (step == 0) return template_error("range() arg 3 must not be zero");
  // Length computed in long double so extreme bounds cannot overflow.
  long double span = step > 0 ? static_cast<long double>(stop) - start : static_cast<long double>(start) - stop;
  long double len = span <= 0 ? 0 : (span + std::abs(static_cast<long double>(step)) - 1) / std::abs(static_cast<long double>(step));
  if (len > static_cast<long double>(in.limits().max_range_size)) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("range of {:.0f} items is larger than the sandbox allows ({})",
                                  static_cast<double>(len), in.limits().max_range_size));
  }
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(len));
  for (int64_t i = 0, x = start; i < static_cast<int64_t>(len); ++i, x += step) out.push_back(Value::integer(x));
  return Value::array(std::move(out));
}

Result<Value> g_namespace(Interpreter& in, const Value&, Args& args, KwArgs& kwargs) {
  ObjectData attrs;
  for (const auto& a : args) {
    if (!a.is_object()) return template_error("namespace() takes a mapping or keyword arguments");
    for (const auto& [key, v] : a.as_object().items()) attrs.set(key, v);
  }
  for (auto& [key, v] : kwargs) attrs.set(key, std::move(v));
  HEARTH_CHECK(in.check_collection(attrs.size(), attrs.depth));
  return in.new_namespace(std::move(attrs));
}

Result<Value> g_dict(Interpreter& in, const Value&, Args& args, KwArgs& kwargs) {
  ObjectData obj;
  for (const auto& a : args) {
    if (!a.is_object()) return template_error("dict() takes a mapping or keyword arguments");
    for (const auto& [key, v] : a.as_object().items()) obj.set(key, v);
  }
  for (auto& [key, v] : kwargs) obj.set(key, std::move(v));
  HEARTH_CHECK(in.check_collection(obj.size(), obj.depth));
  return Value::object(std::move(obj));
}

Result<Value> g_raise_exception(Interpreter& in, const Value&, Args& args, KwArgs&) {
  std::string message = "template raised an exception";
  if (!args.empty()) {
    HEARTH_TRY(message, in.str(args[0]));
  }
  // InvalidArgument marks "the template refused these messages" (see raised_message()).
  return make_error(ErrorCode::InvalidArgument, std::move(message));
}

Result<Value> g_strftime_now(Interpreter& in, const Value&, Args& args, KwArgs&) {
  if (args.empty() || !args[0].is_string()) return template_error("strftime_now needs a format string");
  const std::tm now = in.config().local_time ? in.config().local_time() : system_local_time();
  const std::string& format = args[0].as_string();
  if (format.size() > 1024) return template_error("strftime_now format is too long");
  std::string out(format.size() * 8 + 64, '\0');
  const size_t n = std::strftime(out.data(), out.size(), format.c_str(), &now);
  if (n == 0 && !format.empty()) return template_error("strftime_now could not format the date");
  out.resize(n);
  return Value::string(std::move(out));
}

struct GlobalEntry {
  std::string_view name;
  NativeFn fn;
};

constexpr GlobalEntry kGlobals[] = {
    {"range", g_range}, {"namespace", g_namespace}, {"dict", g_dict},
    {"raise_exception", g_raise_exception}, {"strftime_now", g_strftime_now},
};

}  // namespace

Value find_method(const Value& self, const std::string& name) {
  for (const auto& m : kMethods) {
    if (m.kind == self.kind() && m.name == name) {
      auto fn = std::make_shared<CallableData>();
      fn->name = std::string(name);
      fn->native = m.fn;
      fn->self = self;
      return Value::callable(std::move(fn));
    }
  }
  return Value();
}

Value find_global(const std::string& name) {
  for (const auto& g : kGlobals) {
    if (g.name == name) {
      auto fn = std::make_shared<CallableData>();
      fn->name = std::string(name);
      fn->native = g.fn;
      return Value::callable(std::move(fn));
    }
  }
  return Value();
}

}  // namespace hearth::chat
