// Statement execution, macro calls, scopes and sandbox bookkeeping.
#include <fmt/format.h>

#include <algorithm>

#include "interp_types.h"
#include "lexer.h"
#include "parser.h"
#include "value_ops.h"

namespace hearth::chat {

Error at_line(Error error, int line) {
  if (error.message.rfind("template line ", 0) != 0) {
    error.message = fmt::format("template line {}: {}", line, error.message);
  }
  return error;
}

Error template_error(std::string message) { return make_error(ErrorCode::InvalidFormat, std::move(message)); }

Interpreter::Interpreter(const RenderConfig& config) : config_(config) {}

Interpreter::~Interpreter() {
  // Break cycles made by storing namespaces inside namespaces.
  for (auto& ns : namespaces_) ns->attrs = ObjectData();
}

Status Interpreter::check_time() {
  if (std::chrono::steady_clock::now() > deadline_) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("rendering took longer than {} ms", config_.limits.max_render_time.count()));
  }
  return {};
}

Status Interpreter::count_iteration() {
  if (++iterations_ > config_.limits.max_loop_iterations) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("more than {} loop iterations", config_.limits.max_loop_iterations));
  }
  if ((iterations_ & 63) == 0) return check_time();
  return {};
}

Status Interpreter::check_string(size_t bytes) const {
  if (bytes > config_.limits.max_string_bytes) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("a string of {} bytes exceeds the limit of {}", bytes,
                                  config_.limits.max_string_bytes));
  }
  return {};
}

Status Interpreter::check_collection(size_t items, uint32_t depth) const {
  if (items > config_.limits.max_collection_items) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("a collection of {} items exceeds the limit of {}",
                                                            items, config_.limits.max_collection_items));
  }
  if (depth > config_.limits.max_data_depth) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("data nested deeper than {} levels", config_.limits.max_data_depth));
  }
  return {};
}

Status Interpreter::charge(uint64_t units) {
  work_ += units;
  if (work_ > config_.limits.max_work_units) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("the template did more than {} units of work (the work budget)",
                                  config_.limits.max_work_units));
  }
  if (work_ >= next_clock_check_) {
    next_clock_check_ = work_ + kClockUnits;
    return check_time();
  }
  return {};
}

uint64_t Interpreter::scan_units(const Value& v) {
  switch (v.kind()) {
    case ValueKind::String: return v.as_string().size();
    case ValueKind::Array: return v.as_array().size() * kVisitUnits;
    case ValueKind::Object: return v.as_object().size() * kVisitUnits;
    default: return 1;
  }
}

uint64_t Interpreter::build_units(const Value& v) {
  switch (v.kind()) {
    case ValueKind::String: return v.as_string().size();
    case ValueKind::Array: return v.as_array().size() * kItemUnits;
    case ValueKind::Object: return v.as_object().size() * kItemUnits;
    default: return 1;
  }
}

Result<std::string> Interpreter::str(const Value& v) {
  HEARTH_TRY(std::string s, to_str(v, config_.limits.max_string_bytes));
  HEARTH_CHECK(charge(s.size() + 1));
  return s;
}

WalkMeter Interpreter::walk_meter() const {
  WalkMeter meter;
  const uint64_t left = config_.limits.max_work_units - std::min(work_, config_.limits.max_work_units);
  meter.cap = left / kVisitUnits + 1;
  meter.deadline = deadline_;
  return meter;
}

Status Interpreter::settle(const WalkMeter& meter) {
  HEARTH_CHECK(charge(meter.visited * kVisitUnits));
  if (meter.aborted) return check_time();  // under the budget, so the clock stopped it
  return {};
}

Result<bool> Interpreter::equal(const Value& a, const Value& b) {
  WalkMeter meter = walk_meter();
  const bool same = values_equal(a, b, &meter);
  HEARTH_CHECK(settle(meter));
  return same;
}

Result<int> Interpreter::compare(const Value& a, const Value& b) {
  WalkMeter meter = walk_meter();
  auto order = compare_values(a, b, &meter);
  HEARTH_CHECK(settle(meter));
  return order;
}

Value Interpreter::new_namespace(ObjectData attrs) {
  auto ns = std::make_shared<NamespaceData>();
  ns->attrs = std::move(attrs);
  namespaces_.push_back(ns);
  return Value::make_namespace(std::move(ns));
}

Result<std::string> Interpreter::render(const TemplateAst& ast, const Value& context) {
  if (!context.is_object()) {
    return make_error(ErrorCode::InvalidArgument, "template context must be an object");
  }
  HEARTH_CHECK(check_collection(0, context.depth()));
  deadline_ = std::chrono::steady_clock::now() + config_.limits.max_render_time;
  root_ = std::make_shared<Frame>();
  for (const auto& [key, value] : context.as_object().items()) root_->set(key, value);
  std::string out;
  HEARTH_TRY(Flow flow, exec_body(ast.body, root_, out));
  (void)flow;
  return out;
}

Result<Flow> Interpreter::exec_body(const Body& body, const std::shared_ptr<Frame>& frame, std::string& out) {
  for (const auto& stmt : body) {
    HEARTH_TRY(Flow flow, exec(*stmt, frame, out));
    if (flow != Flow::Normal) return flow;
  }
  return Flow::Normal;
}

namespace {
struct DepthCounter {
  explicit DepthCounter(int& d) : depth(d) { ++depth; }
  ~DepthCounter() { --depth; }
  DepthCounter(const DepthCounter&) = delete;
  DepthCounter& operator=(const DepthCounter&) = delete;
  int& depth;
};
}  // namespace

Result<Flow> Interpreter::exec(const Stmt& stmt, const std::shared_ptr<Frame>& frame, std::string& out) {
  DepthCounter guard(eval_depth_);
  if (eval_depth_ > config_.limits.max_eval_depth) {
    return at_line(make_error(ErrorCode::LimitExceeded,
                              fmt::format("evaluation nested deeper than {} levels", config_.limits.max_eval_depth)),
                   stmt.line);
  }
  auto append = [&](std::string_view text) -> Status {
    if (out.size() + text.size() > config_.limits.max_output_bytes) {
      return at_line(make_error(ErrorCode::LimitExceeded,
                                fmt::format("output exceeds {} bytes", config_.limits.max_output_bytes)),
                     stmt.line);
    }
    out.append(text);
    return {};
  };
  switch (stmt.kind) {
    case StmtKind::Text:
      HEARTH_CHECK(append(stmt.text));
      return Flow::Normal;
    case StmtKind::Output: {
      HEARTH_TRY(Value v, eval(*stmt.expr, frame));
      if (v.is_string()) {
        HEARTH_CHECK(append(v.as_string()));
      } else {
        std::string text;
        const size_t room = config_.limits.max_output_bytes - std::min(out.size(), config_.limits.max_output_bytes);
        auto st = append_str(text, v, room);
        if (!st.ok() && st.error().message == text_too_long(room).message) {
          return at_line(make_error(ErrorCode::LimitExceeded,
                                    fmt::format("output exceeds {} bytes", config_.limits.max_output_bytes)),
                         stmt.line);
        }
        if (st.ok()) st = charge(text.size());
        if (!st.ok()) return at_line(st.take_error(), stmt.line);
        HEARTH_CHECK(append(text));
      }
      return Flow::Normal;
    }
    case StmtKind::If:
      for (const auto& [cond, body] : stmt.branches) {
        bool take = true;
        if (cond) {
          HEARTH_TRY(Value c, eval(*cond, frame));
          take = c.truthy();
        }
        if (take) return exec_body(body, frame, out);
      }
      return Flow::Normal;
    case StmtKind::For: return exec_for(stmt, frame, out);
    case StmtKind::Set: {
      HEARTH_TRY(Value v, eval(*stmt.expr, frame));
      HEARTH_CHECK(assign(stmt.target, std::move(v), *frame, stmt.line));
      return Flow::Normal;
    }
    case StmtKind::SetBlock: {
      std::string text;
      HEARTH_TRY(Flow flow, exec_body(stmt.body, frame, text));
      (void)flow;
      HEARTH_CHECK(assign(stmt.target, Value::string(std::move(text)), *frame, stmt.line));
      return Flow::Normal;
    }
    case StmtKind::Macro: {
      auto fn = std::make_shared<CallableData>();
      fn->type = CallableData::Type::Macro;
      fn->name = stmt.name;
      fn->macro = &stmt;
      fn->closure = frame;
      frame->set(stmt.name, Value::callable(std::move(fn)));
      return Flow::Normal;
    }
    case StmtKind::CallBlock: {
      // The body becomes `caller`, a macro handed to the called macro.
      auto caller = std::make_shared<CallableData>();
      caller->type = CallableData::Type::Macro;
      caller->name = "caller";
      caller->macro = &stmt;
      caller->closure = frame;
      const Expr& call_expr = *stmt.expr;
      HEARTH_TRY(Value callee, eval(*call_expr.args[0], frame));
      if (!callee.is_callable() || callee.as_callable().type != CallableData::Type::Macro) {
        return at_line(template_error("{% call %} needs a macro"), stmt.line);
      }
      Args args;
      KwArgs kwargs;
      for (size_t i = 1; i < call_expr.args.size(); ++i) {
        HEARTH_TRY(Value a, eval(*call_expr.args[i], frame));
        args.push_back(std::move(a));
      }
      for (const auto& [key, e] : call_expr.kwargs) {
        HEARTH_TRY(Value a, eval(*e, frame));
        kwargs.emplace_back(key, std::move(a));
      }
      auto bound = std::make_shared<CallableData>(callee.as_callable());
      bound->caller = Value::callable(std::move(caller));
      auto result = call(Value::callable(std::move(bound)), std::move(args), std::move(kwargs));
      if (!result.ok()) return at_line(result.take_error(), stmt.line);
      HEARTH_CHECK(append(result->as_string()));
      return Flow::Normal;
    }
    case StmtKind::FilterBlock: {
      std::string text;
      HEARTH_TRY(Flow flow, exec_body(stmt.body, frame, text));
      (void)flow;
      const Value subject = Value::string(std::move(text));
      auto result = eval_filter(*stmt.expr, frame, &subject);
      if (!result.ok()) return at_line(result.take_error(), stmt.line);
      HEARTH_TRY(std::string s, str(*result));
      HEARTH_CHECK(append(s));
      return Flow::Normal;
    }
    case StmtKind::Break: return Flow::Break;
    case StmtKind::Continue: return Flow::Continue;
  }
  return Flow::Normal;
}

Status Interpreter::assign(const Target& target, Value value, Frame& frame, int line) {
  if (!target.attribute.empty()) {
    Value ns = lookup(target.names[0], frame);
    if (!ns.is_namespace()) {
      return at_line(template_error(fmt::format("cannot assign attribute on non-namespace object '{}'",
                                                target.names[0])),
                     line);
    }
    auto st = check_collection(0, value.depth() + 1);
    if (!st.ok()) return at_line(st.take_error(), line);
    ns.as_namespace().attrs.set(target.attribute, std::move(value));
    return {};
  }
  if (!target.is_tuple) {
    frame.set(target.names[0], std::move(value));
    return {};
  }
  auto items = iterate(value);
  if (!items.ok()) return at_line(items.take_error(), line);
  if (items->size() != target.names.size()) {
    return at_line(template_error(fmt::format("cannot unpack {} values into {} names", items->size(),
                                              target.names.size())),
                   line);
  }
  for (size_t i = 0; i < items->size(); ++i) frame.set(target.names[i], (*items)[i]);
  return {};
}

namespace {
Result<Value> loop_cycle(Interpreter&, const Value& self, Args& args, KwArgs&) {
  if (args.empty()) return template_error("no items for cycling given");
  const auto index = static_cast<size_t>(self.as_int());
  return args[index % args.size()];
}
}  // namespace

Result<Flow> Interpreter::exec_for(const Stmt& stmt, const std::shared_ptr<Frame>& frame, std::string& out) {
  HEARTH_TRY(Value iterable, eval(*stmt.expr, frame));
  // Lists are walked in place (they are immutable); other iterables are listed first.
  std::vector<Value> owned;
  const std::vector<Value>* source = nullptr;
  if (iterable.is_array()) {
    source = &iterable.as_array();
  } else {
    auto listed = iterate(iterable);
    if (!listed.ok()) return at_line(listed.take_error(), stmt.line);
    owned = std::move(*listed);
    source = &owned;
  }
  if (stmt.cond) {  // "for x in xs if cond": filter first, so loop.* counts kept items
    std::vector<Value> kept;
    for (const auto& item : *source) {
      auto counted = count_iteration();
      if (!counted.ok()) return at_line(counted.take_error(), stmt.line);
      auto scope = std::make_shared<Frame>();
      scope->parent = frame;
      HEARTH_CHECK(assign(stmt.target, item, *scope, stmt.line));
      HEARTH_TRY(Value c, eval(*stmt.cond, scope));
      if (c.truthy()) kept.push_back(item);
    }
    owned = std::move(kept);
    source = &owned;
  }
  const std::vector<Value>& items = *source;
  if (items.empty()) return exec_body(stmt.else_body, frame, out);
  const auto n = static_cast<int64_t>(items.size());
  for (int64_t i = 0; i < n; ++i) {
    auto st = count_iteration();
    if (!st.ok()) return at_line(st.take_error(), stmt.line);
    auto scope = std::make_shared<Frame>();
    scope->parent = frame;
    HEARTH_CHECK(assign(stmt.target, items[static_cast<size_t>(i)], *scope, stmt.line));
    if (!stmt.uses_loop) {
      HEARTH_TRY(Flow flow, exec_body(stmt.body, scope, out));
      if (flow == Flow::Break) break;
      continue;
    }
    auto cycle = std::make_shared<CallableData>();
    cycle->name = "cycle";
    cycle->native = loop_cycle;
    cycle->self = Value::integer(i);
    ObjectData loop;
    loop.set("index", Value::integer(i + 1));
    loop.set("index0", Value::integer(i));
    loop.set("revindex", Value::integer(n - i));
    loop.set("revindex0", Value::integer(n - i - 1));
    loop.set("first", Value::boolean(i == 0));
    loop.set("last", Value::boolean(i == n - 1));
    loop.set("length", Value::integer(n));
    loop.set("depth", Value::integer(1));
    loop.set("depth0", Value::integer(0));
    loop.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)] : Value::undefined("there is no previous item"));
    loop.set("nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)] : Value::undefined("there is no next item"));
    loop.set("cycle", Value::callable(std::move(cycle)));
    scope->set("loop", Value::object(std::move(loop)));
    HEARTH_TRY(Flow flow, exec_body(stmt.body, scope, out));
    if (flow == Flow::Break) break;
  }
  return Flow::Normal;
}

Result<Value> Interpreter::call(const Value& fn, Args args, KwArgs kwargs) {
  if (!fn.is_callable()) {
    if (fn.is_undefined()) {
      return template_error(fn.undefined_hint() ? *fn.undefined_hint() : "call of an undefined value");
    }
    return template_error(fmt::format("'{}' object is not callable", type_name(fn)));
  }
  const CallableData& data = fn.as_callable();
  if (data.type == CallableData::Type::Native) {
    // A method or global scans its receiver and arguments and builds its
    // result; charging both covers split, join, strip, replace, range, ...
    uint64_t scanned = scan_units(data.self);
    for (const auto& a : args) scanned += scan_units(a);
    HEARTH_CHECK(charge(scanned));
    HEARTH_TRY(Value result, data.native(*this, data.self, args, kwargs));
    HEARTH_CHECK(charge(build_units(result)));
    return result;
  }
  return call_macro(data, std::move(args), std::move(kwargs));
}

Result<Value> Interpreter::call_macro(const CallableData& fn, Args args, KwArgs kwargs) {
  DepthCounter guard(call_depth_);
  if (call_depth_ > config_.limits.max_call_depth) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("macro calls nested deeper than {} (runaway recursion in '{}'?)",
                                  config_.limits.max_call_depth, fn.name));
  }
  HEARTH_CHECK(check_time());
  const Stmt& def = *fn.macro;
  auto scope = std::make_shared<Frame>();
  scope->parent = fn.closure.lock();
  if (!scope->parent) scope->parent = root_;
  std::vector<Value> varargs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < def.params.size()) {
      scope->set(def.params[i].name, std::move(args[i]));
    } else {
      varargs.push_back(std::move(args[i]));
    }
  }
  ObjectData extra;
  for (auto& [key, value] : kwargs) {
    auto it = std::find_if(def.params.begin(), def.params.end(), [&](const Param& p) { return p.name == key; });
    if (it == def.params.end()) {
      extra.set(key, std::move(value));
    } else if (static_cast<size_t>(it - def.params.begin()) < args.size()) {
      return template_error(fmt::format("macro '{}' got multiple values for argument '{}'", fn.name, key));
    } else {
      scope->set(key, std::move(value));
    }
  }
  for (const auto& p : def.params) {
    if (scope->find(p.name)) continue;
    if (p.default_value) {
      HEARTH_TRY(Value d, eval(*p.default_value, scope));
      scope->set(p.name, std::move(d));
    } else {
      scope->set(p.name, Value::undefined(fmt::format("parameter '{}' was not provided", p.name)));
    }
  }
  scope->set("varargs", Value::tuple(std::move(varargs)));
  scope->set("kwargs", Value::object(std::move(extra)));
  if (!fn.caller.is_undefined()) scope->set("caller", fn.caller);
  std::string text;
  HEARTH_TRY(Flow flow, exec_body(def.body, scope, text));
  (void)flow;
  return Value::string(std::move(text));
}

// ---- Template ----

struct Template::Impl {
  std::string source;
  TemplateAst ast;
};

Template::Template(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::~Template() = default;

const std::string& Template::source() const { return impl_->source; }

Result<Template> Template::parse(std::string_view source, const Limits& limits) {
  if (source.size() > limits.max_template_bytes) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("template of {} bytes exceeds the limit of {}",
                                                            source.size(), limits.max_template_bytes));
  }
  // Parsing shares the render's time budget; real templates parse in a few ms.
  const ParseClock clock{std::chrono::steady_clock::now() + limits.max_render_time, limits.max_render_time};
  HEARTH_TRY(std::vector<Token> tokens, tokenize_template(source, clock));
  auto impl = std::make_shared<Impl>();
  impl->source = std::string(source);
  HEARTH_TRY(impl->ast, parse_template(std::move(tokens), limits.max_nesting_depth, clock));
  return Template(std::move(impl));
}

Result<std::string> Template::render(const Value& context, const RenderConfig& config) const {
  Interpreter interpreter(config);
  return interpreter.render(impl_->ast, context);
}

Result<std::string> render_template(std::string_view source, const Value& context, const RenderConfig& config) {
  HEARTH_TRY(Template t, Template::parse(source, config.limits));
  return t.render(context, config);
}

std::string raised_message(const Error& error) {
  if (error.code != ErrorCode::InvalidArgument) return {};
  const std::string prefix = "template line ";
  if (error.message.rfind(prefix, 0) != 0) return {};
  const size_t colon = error.message.find(": ");
  return colon == std::string::npos ? std::string() : error.message.substr(colon + 2);
}

std::tm system_local_time() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  return local;
}

}  // namespace hearth::chat
