// A sandboxed interpreter for the Jinja subset that models' chat templates use.
//
// Parse once, render many times. Rendering matches the reference engine
// (Jinja2 configured as Hugging Face's apply_chat_template configures it:
// trim_blocks, lstrip_blocks, loop controls, tojson keeping non-ASCII, the
// globals raise_exception and strftime_now). A template can only read the
// context it is given: no files, environment, host or clock other than the
// injected one; every resource it can consume is bounded by Limits.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "hearth/engine/chat/value.h"
#include "hearth/core/result.h"

namespace hearth::chat {

// Sandbox bounds. Exceeding one ends the render with ErrorCode::LimitExceeded.
struct Limits {
  int64_t max_range_size = 100'000;          // range() length, as the reference sandbox
  int64_t max_loop_iterations = 1'000'000;   // all loops of one render together
  int max_call_depth = 100;                  // nested macro calls (recursion)
  size_t max_template_bytes = 4u << 20;      // template source (real ones are < 100 KiB)
  int max_nesting_depth = 256;               // blocks and expressions while parsing; comparison chain length
  int max_eval_depth = 600;                  // nested evaluation steps at run time (stack guard)
  uint32_t max_data_depth = 256;             // nesting of lists and dicts
  size_t max_string_bytes = 8u << 20;        // any single string the template builds
  size_t max_collection_items = 1'000'000;   // any single list or dict the template builds
  size_t max_output_bytes = 16u << 20;       // the rendered text
  std::chrono::milliseconds max_render_time{500};  // one render; also one parse
  // Work of one render in units of bytes and items touched (sorting, mapping,
  // joining, converting, comparing, copying). It bounds what a single costly
  // operation may do between two clock checks, and -- since values are only
  // made by work -- the memory a render can build up. Real templates use well
  // under 1% of it.
  uint64_t max_work_units = uint64_t{1} << 30;
  // The conversation handed to render_chat: number of messages, and bytes of
  // all its strings (messages and extra context) together.
  size_t max_messages = 20'000;
  size_t max_context_bytes = 32u << 20;
};

// Supplies "now" as broken-down local time for strftime_now().
using LocalTimeFn = std::function<std::tm()>;
// The real clock: the machine's local time.
std::tm system_local_time();

struct RenderConfig {
  Limits limits;
  LocalTimeFn local_time;  // empty: the system clock
};

class Template {
 public:
  // Errors: InvalidFormat (syntax, naming the line), LimitExceeded (size,
  // nesting, parse time), Unsupported (include/import/extends).
  static Result<Template> parse(std::string_view source, const Limits& limits = {});

  // `context` must be an object; its keys become the template's variables.
  // Errors name the template line: "template line 12: ...". A template's own
  // raise_exception("msg") fails with InvalidArgument and message
  // "template line N: msg".
  Result<std::string> render(const Value& context, const RenderConfig& config = {}) const;

  const std::string& source() const;

  // Copies are cheap and share the immutable syntax tree; renders from
  // several threads at once are safe (each render has its own state).
  Template(const Template&);
  Template& operator=(const Template&);
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  ~Template();

 private:
  struct Impl;
  explicit Template(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// Parses and renders in one step.
Result<std::string> render_template(std::string_view source, const Value& context,
                                    const RenderConfig& config = {});

// The message a template passed to raise_exception(), when `error` came from
// one; empty otherwise.
std::string raised_message(const Error& error);

}  // namespace hearth::chat
