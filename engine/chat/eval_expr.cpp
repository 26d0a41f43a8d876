// Expression evaluation: names, literals, operators, attribute/item access,
// slicing, calls, filters and tests, with Python's semantics.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <limits>

#include "interp_types.h"
#include "unicode_text.h"
#include "value_ops.h"

namespace hearth::chat {
namespace {

Error undefined_error(const Value& v) {
  const std::string* hint = v.undefined_hint();
  return template_error(hint && !hint->empty() ? *hint : "value is undefined");
}

Error overflow() { return template_error("integer overflow"); }

int64_t py_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t py_mod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Python slice semantics over n elements; returns the selected indices.
Result<std::vector<size_t>> slice_indices(int64_t n, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto as_index = [](const Value& v, const char* what) -> Result<std::optional<int64_t>> {
    if (v.is_undefined() || v.is_none()) return std::optional<int64_t>();
    if (v.is_int()) return std::optional<int64_t>(v.as_int());
    if (v.is_bool()) return std::optional<int64_t>(v.as_bool() ? 1 : 0);
    return template_error(fmt::format("slice {} must be an integer or none", what));
  };
  HEARTH_TRY(auto start, as_index(start_v, "start"));
  HEARTH_TRY(auto stop, as_index(stop_v, "stop"));
  HEARTH_TRY(auto step_opt, as_index(step_v, "step"));
  const int64_t step = step_opt.value_or(1);
  if (step == 0) return template_error("slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) x += n;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t b = clamp(start, step > 0 ? 0 : n - 1);
  const int64_t e = clamp(stop, step > 0 ? n : -1);
  std::vector<size_t> out;
  for (int64_t i = b; step > 0 ? i < e : i > e; i += step) out.push_back(static_cast<size_t>(i));
  return out;
}

}  // namespace

Value Interpreter::lookup(const std::string& name, const Frame& frame) const {
  for (const Frame* f = &frame; f; f = f->parent.get()) {
    if (const Value* v = f->find(name)) return *v;
  }
  Value global = find_global(name);
  if (!global.is_undefined()) return global;
  return Value::undefined(fmt::format("'{}' is undefined", name));
}

Result<Value> Interpreter::eval(const Expr& expr, const std::shared_ptr<Frame>& frame) {
  ++eval_depth_;
  if ((++time_checks_ & 1023) == 0) {
    auto st = check_time();
    if (!st.ok()) { --eval_depth_; return at_line(st.take_error(), expr.line); }
  }
  if (eval_depth_ > config_.limits.max_eval_depth) {
    --eval_depth_;
    return at_line(make_error(ErrorCode::LimitExceeded,
                              fmt::format("evaluation nested deeper than {} levels", config_.limits.max_eval_depth)),
                   expr.line);
  }
  auto result = eval_node(expr, frame);
  --eval_depth_;
  if (!result.ok()) return at_line(result.take_error(), expr.line);
  return result;
}

Result<Value> Interpreter::eval_node(const Expr& expr, const std::shared_ptr<Frame>& frame) {
  switch (expr.kind) {
    case ExprKind::Literal: return expr.literal;
    case ExprKind::Name: return lookup(expr.name, *frame);
    case ExprKind::List:
    case ExprKind::Tuple: {
      std::vector<Value> items;
      items.reserve(expr.args.size());
      for (const auto& e : expr.args) {
        HEARTH_TRY(Value v, eval(*e, frame));
        items.push_back(std::move(v));
      }
      Value list = expr.kind == ExprKind::Tuple ? Value::tuple(std::move(items)) : Value::array(std::move(items));
      HEARTH_CHECK(check_collection(list.as_array().size(), list.depth()));
      HEARTH_CHECK(charge(build_units(list)));
      return list;
    }
    case ExprKind::Dict: {
      ObjectData obj;
      for (size_t i = 0; i + 1 < expr.args.size(); i += 2) {
        HEARTH_TRY(Value k, eval(*expr.args[i], frame));
        HEARTH_TRY(Value v, eval(*expr.args[i + 1], frame));
        HEARTH_TRY(std::string key, str(k));
        obj.set(std::move(key), std::move(v));
      }
      HEARTH_CHECK(check_collection(obj.size(), obj.depth));
      HEARTH_CHECK(charge(obj.size() * kItemUnits));
      return Value::object(std::move(obj));
    }
    case ExprKind::Attr: {
      HEARTH_TRY(Value obj, eval(*expr.args[0], frame));
      return get_attr(obj, expr.name);
    }
    case ExprKind::Item: {
      HEARTH_TRY(Value obj, eval(*expr.args[0], frame));
      HEARTH_TRY(Value key, eval(*expr.args[1], frame));
      return get_item(obj, key);
    }
    case ExprKind::Slice: {
      HEARTH_TRY(Value obj, eval(*expr.args[0], frame));
      Value parts[3];
      for (int i = 0; i < 3; ++i) {
        if (expr.args[static_cast<size_t>(i) + 1]) {
          HEARTH_TRY(parts[i], eval(*expr.args[static_cast<size_t>(i) + 1], frame));
        }
      }
      HEARTH_CHECK(charge(scan_units(obj)));
      if (obj.is_array()) {
        const auto& items = obj.as_array();
        HEARTH_TRY(auto idx, slice_indices(static_cast<int64_t>(items.size()), parts[0], parts[1], parts[2]));
        HEARTH_CHECK(charge(idx.size() * kItemUnits));
        std::vector<Value> out;
        out.reserve(idx.size());
        for (size_t i : idx) out.push_back(items[i]);
        return Value::array(std::move(out));
      }
      if (obj.is_string()) {
        const std::string& s = obj.as_string();
        if (is_ascii(s)) {
          HEARTH_TRY(auto idx, slice_indices(static_cast<int64_t>(s.size()), parts[0], parts[1], parts[2]));
          std::string out;
          for (size_t i : idx) out.push_back(s[i]);
          return Value::string(std::move(out));
        }
        auto cps = decode_utf8(s);
        HEARTH_TRY(auto idx, slice_indices(static_cast<int64_t>(cps.size()), parts[0], parts[1], parts[2]));
        std::string out;
        for (size_t i : idx) append_utf8(out, cps[i]);
        return Value::string(std::move(out));
      }
      if (obj.is_undefined()) return undefined_error(obj);
      return template_error(fmt::format("'{}' object is not subscriptable", type_name(obj)));
    }
    case ExprKind::Call: return eval_call(expr, frame);
    case ExprKind::Filter: return eval_filter(expr, frame, nullptr);
    case ExprKind::Test: {
      HEARTH_TRY(Value subject, eval(*expr.args[0], frame));
      Args args;
      for (size_t i = 1; i < expr.args.size(); ++i) {
        HEARTH_TRY(Value a, eval(*expr.args[i], frame));
        args.push_back(std::move(a));
      }
      HEARTH_TRY(bool r, apply_test(*this, expr.name, subject, args));
      return Value::boolean(r != expr.negated);
    }
    case ExprKind::Not: {
      HEARTH_TRY(Value v, eval(*expr.args[0], frame));
      return Value::boolean(!v.truthy());
    }
    case ExprKind::Neg:
    case ExprKind::Pos: {
      HEARTH_TRY(Value v, eval(*expr.args[0], frame));
      if (v.is_bool()) v = Value::integer(v.as_bool() ? 1 : 0);
      if (expr.kind == ExprKind::Pos && v.is_number()) return v;
      if (v.is_int()) {
        if (v.as_int() == std::numeric_limits<int64_t>::min()) return template_error("integer overflow");
        return Value::integer(-v.as_int());
      }
      if (v.is_float()) return Value::number(-v.as_float());
      if (v.is_undefined()) return undefined_error(v);
      return template_error(fmt::format("bad operand type for unary -: '{}'", type_name(v)));
    }
    case ExprKind::Binary: {
      HEARTH_TRY(Value a, eval(*expr.args[0], frame));
      HEARTH_TRY(Value b, eval(*expr.args[1], frame));
      return binary_op(expr.name, a, b);
    }
    case ExprKind::Compare: {
      HEARTH_TRY(Value left, eval(*expr.args[0], frame));
      for (size_t i = 0; i < expr.ops.size(); ++i) {
        HEARTH_TRY(Value right, eval(*expr.args[i + 1], frame));
        const std::string& op = expr.ops[i];
        bool r = false;
        if (op == "==" || op == "!=") {
          HEARTH_TRY(bool same, equal(left, right));
          r = same == (op == "==");
        } else if (op == "in" || op == "notin") {
          HEARTH_TRY(bool c, contains(right, left));
          r = (op == "in") == c;
        } else {
          HEARTH_TRY(int c, compare(left, right));
          r = op == "<" ? c < 0 : op == "<=" ? c <= 0 : op == ">" ? c > 0 : c >= 0;
        }
        if (!r) return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case ExprKind::And: {
      HEARTH_TRY(Value a, eval(*expr.args[0], frame));
      if (!a.truthy()) return a;
      return eval(*expr.args[1], frame);
    }
    case ExprKind::Or: {
      HEARTH_TRY(Value a, eval(*expr.args[0], frame));
      if (a.truthy()) return a;
      return eval(*expr.args[1], frame);
    }
    case ExprKind::Cond: {
      HEARTH_TRY(Value c, eval(*expr.args[1], frame));
      if (c.truthy()) return eval(*expr.args[0], frame);
      if (expr.args[2]) return eval(*expr.args[2], frame);
      return Value::undefined("the inline if-expression evaluated to false and no else section was defined");
    }
  }
  return template_error("unknown expression");
}

Result<Value> Interpreter::eval_call(const Expr& expr, const std::shared_ptr<Frame>& frame) {
  HEARTH_TRY(Value fn, eval(*expr.args[0], frame));
  Args args;
  args.reserve(expr.args.size());
  for (size_t i = 1; i < expr.args.size(); ++i) {
    HEARTH_TRY(Value a, eval(*expr.args[i], frame));
    args.push_back(std::move(a));
  }
  KwArgs kwargs;
  for (const auto& [key, e] : expr.kwargs) {
    HEARTH_TRY(Value a, eval(*e, frame));
    kwargs.emplace_back(key, std::move(a));
  }
  return call(fn, std::move(args), std::move(kwargs));
}

Result<Value> Interpreter::eval_filter(const Expr& expr, const std::shared_ptr<Frame>& frame, const Value* subject) {
  struct Guard {
    explicit Guard(int& d) : depth(d) { ++depth; }
    ~Guard() { --depth; }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;
    int& depth;
  } guard(eval_depth_);
  if (eval_depth_ > config_.limits.max_eval_depth) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("evaluation nested deeper than {} levels", config_.limits.max_eval_depth));
  }
  Value input;
  if (expr.args[0]) {
    if (expr.args[0]->kind == ExprKind::Filter) {
      HEARTH_TRY(input, eval_filter(*expr.args[0], frame, subject));
    } else {
      HEARTH_TRY(input, eval(*expr.args[0], frame));
    }
  } else if (subject) {
    input = *subject;
  }
  Args args;
  for (size_t i = 1; i < expr.args.size(); ++i) {
    HEARTH_TRY(Value a, eval(*expr.args[i], frame));
    args.push_back(std::move(a));
  }
  KwArgs kwargs;
  for (const auto& [key, e] : expr.kwargs) {
    HEARTH_TRY(Value a, eval(*e, frame));
    kwargs.emplace_back(key, std::move(a));
  }
  auto result = apply_filter(*this, expr.name, input, args, kwargs);
  if (!result.ok()) return at_line(result.take_error(), expr.line);
  return result;
}

Result<Value> Interpreter::get_attr(const Value& obj, const std::string& name) {
  switch (obj.kind()) {
    case ValueKind::Undefined: return undefined_error(obj);
    case ValueKind::Object: {
      Value method = find_method(obj, name);
      if (!method.is_undefined()) return method;
      if (const Value* v = obj.as_object().find(name)) return *v;
      return Value::undefined(fmt::format("'dict object' has no attribute '{}'", name));
    }
    case ValueKind::Namespace:
      if (const Value* v = obj.as_namespace().attrs.find(name)) return *v;
      return Value::undefined(fmt::format("'Namespace' object has no attribute '{}'", name));
    default: {
      Value method = find_method(obj, name);
      if (!method.is_undefined()) return method;
      return Value::undefined(fmt::format("'{} object' has no attribute '{}'", type_name(obj), name));
    }
  }
}

Result<Value> Interpreter::get_item(const Value& obj, const Value& key) {
  switch (obj.kind()) {
    case ValueKind::Undefined: return undefined_error(obj);
    case ValueKind::Array: {
      if (!key.is_int() && !key.is_bool()) break;
      const auto& items = obj.as_array();
      int64_t i = key.is_int() ? key.as_int() : key.as_bool();
      if (i < 0) i += static_cast<int64_t>(items.size());
      if (i < 0 || i >= static_cast<int64_t>(items.size())) {
        return Value::undefined("list index out of range");
      }
      return items[static_cast<size_t>(i)];
    }
    case ValueKind::String: {
      if (!key.is_int()) break;
      const std::string& s = obj.as_string();
      HEARTH_CHECK(charge(s.size()));
      auto cps = decode_utf8(s);
      int64_t i = key.as_int();
      if (i < 0) i += static_cast<int64_t>(cps.size());
      if (i < 0 || i >= static_cast<int64_t>(cps.size())) return Value::undefined("string index out of range");
      std::string out;
      append_utf8(out, cps[static_cast<size_t>(i)]);
      return Value::string(std::move(out));
    }
    case ValueKind::Object: {
      if (key.is_string()) {
        if (const Value* v = obj.as_object().find(key.as_string())) return *v;
      } else {
        HEARTH_TRY(std::string k, str(key));
        if (const Value* v = obj.as_object().find(k)) return *v;
      }
      break;
    }
    case ValueKind::Namespace:
      if (key.is_string()) {
        if (const Value* v = obj.as_namespace().attrs.find(key.as_string())) return *v;
      }
      break;
    default: break;
  }
  // obj[name] falls back to obj.name, as the reference's getitem does.
  if (key.is_string()) {
    Value method = find_method(obj, key.as_string());
    if (!method.is_undefined()) return method;
  }
  std::string key_text;
  (void)append_repr(key_text, key);
  return Value::undefined(fmt::format("'{} object' has no attribute {}", type_name(obj), key_text));
}

Result<bool> Interpreter::contains(const Value& container, const Value& item) {
  HEARTH_CHECK(charge(scan_units(container)));
  switch (container.kind()) {
    case ValueKind::String:
      if (!item.is_string()) {
        return template_error(fmt::format("'in <string>' requires string as left operand, not {}", type_name(item)));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case ValueKind::Array:
      for (const auto& v : container.as_array()) {
        HEARTH_TRY(bool same, equal(v, item));
        if (same) return true;
      }
      return false;
    case ValueKind::Object:
      if (!item.is_string()) return false;
      return container.as_object().find(item.as_string()) != nullptr;
    case ValueKind::Namespace:
      if (!item.is_string()) return false;
      return container.as_namespace().attrs.find(item.as_string()) != nullptr;
    case ValueKind::Undefined: return false;
    default:
      return template_error(fmt::format("argument of type '{}' is not iterable", type_name(container)));
  }
}

Result<std::vector<Value>> Interpreter::iterate(const Value& v) {
  // Listing copies every item: the size is checked and charged before the
  // copy is made (an 8 MiB string would otherwise become 8M one-character
  // strings, about 800 MiB).
  switch (v.kind()) {
    case ValueKind::Undefined: return std::vector<Value>{};
    case ValueKind::Array:
      HEARTH_CHECK(check_collection(v.as_array().size(), 0));
      HEARTH_CHECK(charge(v.as_array().size() * kItemUnits));
      return v.as_array();
    case ValueKind::Object: {
      HEARTH_CHECK(check_collection(v.as_object().size(), 0));
      HEARTH_CHECK(charge(v.as_object().size() * kItemUnits));
      std::vector<Value> keys;
      keys.reserve(v.as_object().size());
      for (const auto& [key, item] : v.as_object().items()) keys.push_back(Value::string(key));
      return keys;
    }
    case ValueKind::String: {
      const size_t n = count_code_points(v.as_string());
      HEARTH_CHECK(check_collection(n, 0));
      HEARTH_CHECK(charge(n * kItemUnits + v.as_string().size()));
      std::vector<Value> chars;
      chars.reserve(n);
      for (uint32_t cp : decode_utf8(v.as_string())) {
        std::string s;
        append_utf8(s, cp);
        chars.push_back(Value::string(std::move(s)));
      }
      return chars;
    }
    default: return template_error(fmt::format("'{}' object is not iterable", type_name(v)));
  }
}

Result<Value> Interpreter::binary_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    HEARTH_TRY(std::string left, str(a));
    HEARTH_TRY(std::string right, str(b));
    HEARTH_CHECK(check_string(left.size() + right.size()));
    HEARTH_CHECK(charge(left.size() + right.size()));
    return Value::string(left + right);
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  const bool a_num = a.is_number() || a.is_bool();
  const bool b_num = b.is_number() || b.is_bool();
  if (a_num && b_num) {
    const bool use_int = !a.is_float() && !b.is_float();
    const int64_t x = a.is_int() ? a.as_int() : (a.is_bool() ? a.as_bool() : 0);
    const int64_t y = b.is_int() ? b.as_int() : (b.is_bool() ? b.as_bool() : 0);
    const double dx = a.to_double(), dy = b.to_double();
    int64_t r = 0;
    if (op == "+") {
      if (use_int) { if (__builtin_add_overflow(x, y, &r)) return overflow(); return Value::integer(r); }
      return Value::number(dx + dy);
    }
    if (op == "-") {
      if (use_int) { if (__builtin_sub_overflow(x, y, &r)) return overflow(); return Value::integer(r); }
      return Value::number(dx - dy);
    }
    if (op == "*") {
      if (use_int) { if (__builtin_mul_overflow(x, y, &r)) return overflow(); return Value::integer(r); }
      return Value::number(dx * dy);
    }
    if (op == "/") {
      if (dy == 0.0) return template_error("division by zero");
      return Value::number(dx / dy);
    }
    if (op == "//" || op == "%") {
      if (dy == 0.0) return template_error(op == "%" ? "modulo by zero" : "integer division or modulo by zero");
      if (use_int) {
        if (x == std::numeric_limits<int64_t>::min() && y == -1) return template_error("integer overflow");
        return Value::integer(op == "//" ? py_floordiv(x, y) : py_mod(x, y));
      }
      if (op == "//") return Value::number(std::floor(dx / dy));
      double m = std::fmod(dx, dy);
      if (m != 0.0 && ((m < 0) != (dy < 0))) m += dy;
      return Value::number(m);
    }
    if (op == "**") {
      if (use_int && y >= 0) {
        int64_t result = 1, base = x, e = y;
        while (e > 0) {
          if ((e & 1) && __builtin_mul_overflow(result, base, &result)) return overflow();
          e >>= 1;
          if (e > 0 && __builtin_mul_overflow(base, base, &base)) return overflow();
        }
        return Value::integer(result);
      }
      return Value::number(std::pow(dx, dy));
    }
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      if (a.is_safe() || b.is_safe()) {
        // Markup + str escapes the plain side, as the reference does.
        std::string left = a.is_safe() ? a.as_string() : html_escape(a.as_string());
        std::string right = b.is_safe() ? b.as_string() : html_escape(b.as_string());
        HEARTH_CHECK(check_string(left.size() + right.size()));
        HEARTH_CHECK(charge(left.size() + right.size()));
        return Value::safe_string(left + right);
      }
      HEARTH_CHECK(check_string(a.as_string().size() + b.as_string().size()));
      HEARTH_CHECK(charge(a.as_string().size() + b.as_string().size()));
      return Value::string(a.as_string() + b.as_string());
    }
    if (a.is_array() && b.is_array()) {
      const size_t total = a.as_array().size() + b.as_array().size();
      HEARTH_CHECK(check_collection(total, 0));
      HEARTH_CHECK(charge(total * kItemUnits));
      std::vector<Value> items = a.as_array();
      items.insert(items.end(), b.as_array().begin(), b.as_array().end());
      Value list = Value::array(std::move(items));
      HEARTH_CHECK(check_collection(list.as_array().size(), list.depth()));
      return list;
    }
  }
  const bool a_seq = a.is_string() || a.is_array();
  const bool b_seq = b.is_string() || b.is_array();
  if (op == "*" && a_seq != b_seq && (a_num || b_num)) {
    const Value& seq = a_seq ? a : b;
    const Value& times = a_seq ? b : a;
    // The size is checked before anything is built, and before the type check,
    // so "x" * 1e9 reports the size it asks for rather than building it.
    const long double count = std::max<long double>(0, static_cast<long double>(times.to_double()));
    const size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_array().size();
    const long double total = count * static_cast<long double>(unit);
    if (seq.is_string() && total > static_cast<long double>(config_.limits.max_string_bytes)) {
      return make_error(ErrorCode::LimitExceeded, fmt::format("a string of {:.0f} bytes exceeds the limit of {}",
                                                              static_cast<double>(total), config_.limits.max_string_bytes));
    }
    if (seq.is_array() && total > static_cast<long double>(config_.limits.max_collection_items)) {
      return make_error(ErrorCode::LimitExceeded, fmt::format("a collection of {:.0f} items exceeds the limit of {}",
                                                              static_cast<double>(total), config_.limits.max_collection_items));
    }
    if (times.is_float()) {
      return template_error(fmt::format("can't multiply sequence by non-int of type '{}'", type_name(times)));
    }
    const auto n = static_cast<size_t>(count);
    if (seq.is_string()) {
      HEARTH_CHECK(charge(n * unit + 1));
      std::string out;
      out.reserve(n * unit);
      if (unit == 1) out.append(n, seq.as_string()[0]);
      else for (size_t i = 0; i < n && unit != 0; ++i) out += seq.as_string();
      return Value::string(std::move(out));
    }
    HEARTH_CHECK(check_collection(0, seq.depth()));
    HEARTH_CHECK(charge(n * unit * kItemUnits + 1));
    std::vector<Value> out;
    out.reserve(n * unit);
    for (size_t i = 0; i < n && unit != 0; ++i) out.insert(out.end(), seq.as_array().begin(), seq.as_array().end());
    return Value::array(std::move(out));
  }
  return template_error(fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, type_name(a), type_name(b)));
}

}  // namespace hearth::chat
