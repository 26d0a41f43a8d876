// Errors of a remote OpenAI-compatible endpoint as values: what went wrong
// (the kind a caller can act on: ask for a new key, wait, pick another model)
// and one line naming the endpoint and the model.
#pragma once

#include <hearth/core/result.h>

#include <string>
#include <utility>
#include <variant>

namespace hearth::remote {

enum class RemoteErrorKind {
  Insecure,       // the URL breaks the endpoint policy (plain http off loopback, bad scheme)
  Unreachable,    // connection refused, host not found, no connection within the connect timeout
  Tls,            // the TLS handshake failed (e.g. a self-signed certificate)
  Unauthorized,   // HTTP 401/403: the key is missing or wrong
  RateLimited,    // HTTP 429 after the allowed retries
  ModelNotFound,  // HTTP 404 or an error with code model_not_found
  ServerError,    // HTTP 5xx or an error object in the stream
  HttpError,      // another HTTP status
  Timeout,        // the server went silent for longer than the inactivity timeout
  StreamCut,      // the connection closed before `data: [DONE]`
  Malformed,      // the answer is not the JSON or SSE an OpenAI server sends
  Cancelled,      // the caller stopped it
};

const char* to_string(RemoteErrorKind kind);

struct RemoteError {
  RemoteErrorKind kind = RemoteErrorKind::ServerError;
  int http_status = 0;  // 0 when no HTTP status was received
  std::string message;  // one line naming the endpoint, the model and what to do
};

// The engine-wide error for the same failure (code chosen by kind).
Error to_error(const RemoteError& error);

// Either a T or a RemoteError.
template <typename T>
class [[nodiscard]] RemoteResult {
 public:
  RemoteResult(T value) : state_(std::move(value)) {}               // NOLINT(google-explicit-constructor)
  RemoteResult(RemoteError error) : state_(std::move(error)) {}     // NOLINT(google-explicit-constructor)
  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const RemoteError& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, RemoteError> state_;
};

}  // namespace hearth::remote
