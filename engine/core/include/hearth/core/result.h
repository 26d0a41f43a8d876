// Errors as values: every fallible engine function returns Result<T>.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace hearth {

enum class ErrorCode {
  InvalidArgument,  // the caller passed something unusable
  InvalidFormat,    // a file or blob is malformed (GGUF, template, cache file, ...)
  Unsupported,      // well-formed, but Hearth does not handle it (type, architecture)
  LimitExceeded,    // a sanity or sandbox limit was hit (sizes, recursion, time)
  Io,               // the operating system refused a read, write, mmap, ...
  OutOfMemory,      // the machine or the budget cannot hold it
  NotFound,         // a key, tensor, file or device is missing
  Cancelled,        // the user or the caller stopped the work
  Corrupt,          // data failed a checksum or integrity check
  Internal,         // a bug in Hearth; should never reach a user
};

const char* to_string(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::Internal;
  // One line that names the file, key, tensor or value at fault and the numbers.
  std::string message;
};

inline Error make_error(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

// An expected-like type: holds either a T or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(state_); }
  Error&& take_error() { assert(!ok()); return std::get<1>(std::move(state_)); }

  T value_or(T fallback) const& { return ok() ? value() : std::move(fallback); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return error_; }
  Error&& take_error() { assert(!ok_); return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace hearth

// Propagates an error from a Result-returning expression.
//   HEARTH_TRY(auto header, read_header(file));
#define HEARTH_CONCAT_INNER(a, b) a##b
#define HEARTH_CONCAT(a, b) HEARTH_CONCAT_INNER(a, b)
#define HEARTH_TRY_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                     \
  if (!tmp.ok()) return tmp.take_error(); \
  decl = std::move(tmp).value()
#define HEARTH_TRY(decl, expr) HEARTH_TRY_IMPL(HEARTH_CONCAT(hearth_try_, __LINE__), decl, expr)

// Propagates an error from a Status-returning expression.
#define HEARTH_CHECK(expr)                               \
  do {                                                   \
    auto hearth_status_ = (expr);                        \
    if (!hearth_status_.ok()) return hearth_status_.take_error(); \
  } while (false)
