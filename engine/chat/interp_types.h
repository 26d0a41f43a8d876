// Runtime structures of the interpreter: scopes, namespaces, callables and the
// Interpreter itself (state of one render). Internal to engine/chat.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ast.h"
#include "hearth/engine/chat/template.h"
#include "hearth/engine/chat/value.h"
#include "hearth/core/result.h"
#include "value_ops.h"

namespace hearth::chat {

struct NamespaceData {
  ObjectData attrs;
};

// One variable scope. Loops and macro calls open a child scope; "if" does not.
// Scopes hold a handful of names, so a flat list beats a hash map here.
struct Frame {
  std::vector<std::pair<std::string, Value>> vars;
  std::shared_ptr<Frame> parent;

  const Value* find(std::string_view name) const {
    for (const auto& [key, value] : vars) {
      if (key == name) return &value;
    }
    return nullptr;
  }
  void set(std::string_view name, Value value) {
    for (auto& [key, existing] : vars) {
      if (key == name) { existing = std::move(value); return; }
    }
    vars.emplace_back(std::string(name), std::move(value));
  }
};

class Interpreter;
using Args = std::vector<Value>;
using KwArgs = std::vector<std::pair<std::string, Value>>;
// A native function: a global (self undefined) or a method bound to self.
using NativeFn = Result<Value> (*)(Interpreter& in, const Value& self, Args& args, KwArgs& kwargs);

struct CallableData {
  enum class Type { Native, Macro };
  Type type = Type::Native;
  std::string name;
  NativeFn native = nullptr;
  Value self;                   // bound receiver of a method
  const Stmt* macro = nullptr;  // Macro or CallBlock statement (params + body)
  // The defining scope. Weak: a frame holds its macros, and a strong pointer
  // back would leak the cycle; an expired scope falls back to the root.
  std::weak_ptr<Frame> closure;
  Value caller;                 // the {% call %} body passed to this macro, if any
};

enum class Flow { Normal, Break, Continue };

class Interpreter {
 public:
  explicit Interpreter(const RenderConfig& config);
  ~Interpreter();
  Interpreter(const Interpreter&) = delete;
  Interpreter& operator=(const Interpreter&) = delete;

  Result<std::string> render(const TemplateAst& ast, const Value& context);

  // Statements (interpreter.cpp).
  Result<Flow> exec_body(const Body& body, const std::shared_ptr<Frame>& frame, std::string& out);
  Result<Flow> exec(const Stmt& stmt, const std::shared_ptr<Frame>& frame, std::string& out);
  Result<Value> call(const Value& fn, Args args, KwArgs kwargs);

  // Expressions (eval_expr.cpp).
  Result<Value> eval(const Expr& expr, const std::shared_ptr<Frame>& frame);
  Value lookup(const std::string& name, const Frame& frame) const;
  Result<Value> get_attr(const Value& obj, const std::string& name);
  Result<Value> get_item(const Value& obj, const Value& key);
  Result<Value> binary_op(const std::string& op, const Value& a, const Value& b);
  Result<bool> contains(const Value& container, const Value& item);
  // Lists the items a for loop or filter walks: list items, dict keys, characters.
  Result<std::vector<Value>> iterate(const Value& v);

  // Sandbox bookkeeping.
  Status count_iteration();
  Status check_time();
  Status check_string(size_t bytes) const;
  Status check_collection(size_t items, uint32_t depth) const;

  // The work budget (Limits::max_work_units). Costly steps charge what they
  // touch, before or as they do it; the clock is read every kClockUnits so a
  // single long operation (a sort, a join, a comparison of long strings)
  // cannot run past the time limit between two evaluation steps.
  static constexpr uint64_t kItemUnits = 96;   // a value made or copied: about its bytes of memory
  static constexpr uint64_t kVisitUnits = 4;   // a value looked at or compared
  static constexpr uint64_t kClockUnits = uint64_t{1} << 16;
  Status charge(uint64_t units);
  // Scanning `v` once: its string bytes, or kVisitUnits per container item.
  static uint64_t scan_units(const Value& v);
  // Having built `v`: its string bytes, or kItemUnits per container item.
  static uint64_t build_units(const Value& v);
  // str(v), bounded by max_string_bytes and charged.
  Result<std::string> str(const Value& v);
  // ==, and the ordering of <, sort, min, max, charged by what they visit.
  Result<bool> equal(const Value& a, const Value& b);
  Result<int> compare(const Value& a, const Value& b);
  WalkMeter walk_meter() const;
  Status settle(const WalkMeter& meter);  // charges a finished walk; fails if it was aborted
  Value new_namespace(ObjectData attrs);
  const RenderConfig& config() const { return config_; }
  const Limits& limits() const { return config_.limits; }

 private:
  Result<Flow> exec_for(const Stmt& stmt, const std::shared_ptr<Frame>& frame, std::string& out);
  Status assign(const Target& target, Value value, Frame& frame, int line);
  Result<Value> call_macro(const CallableData& fn, Args args, KwArgs kwargs);
  Result<Value> eval_node(const Expr& expr, const std::shared_ptr<Frame>& frame);
  Result<Value> eval_filter(const Expr& expr, const std::shared_ptr<Frame>& frame, const Value* subject);
  Result<Value> eval_call(const Expr& expr, const std::shared_ptr<Frame>& frame);

  const RenderConfig& config_;
  std::chrono::steady_clock::time_point deadline_;
  int64_t iterations_ = 0;
  uint64_t work_ = 0;
  uint64_t next_clock_check_ = kClockUnits;
  int64_t time_checks_ = 0;
  int call_depth_ = 0;
  int eval_depth_ = 0;
  std::shared_ptr<Frame> root_;
  // Every namespace made during the render; cleared at the end so reference
  // cycles through namespaces are broken.
  std::vector<std::shared_ptr<NamespaceData>> namespaces_;
};

// Adds "template line N: " unless the message already names a line.
Error at_line(Error error, int line);
Error template_error(std::string message);  // InvalidFormat, no line yet

// Builtins (builtins_*.cpp).
Result<Value> apply_filter(Interpreter& in, const std::string& name, const Value& subject, Args& args,
                           KwArgs& kwargs);
Result<bool> apply_test(Interpreter& in, const std::string& name, const Value& subject, Args& args);
// A method of a str, list or dict, bound to `self`; undefined when there is none.
Value find_method(const Value& self, const std::string& name);
// A global function (range, namespace, raise_exception, strftime_now, dict, ...).
Value find_global(const std::string& name);

// The reference's markupsafe escaping of & < > " '.
std::string html_escape(std::string_view s);

// Argument helpers for builtins: positional index or keyword name.
const Value* arg_at(const Args& args, const KwArgs& kwargs, size_t index, std::string_view name);

}  // namespace hearth::chat
