#include "remote/remote_error.h"

namespace hearth::remote {

const char* to_string(RemoteErrorKind kind) {
  switch (kind) {
    case RemoteErrorKind::Insecure: return "insecure";
    case RemoteErrorKind::Unreachable: return "unreachable";
    case RemoteErrorKind::Tls: return "tls";
    case RemoteErrorKind::Unauthorized: return "unauthorized";
    case RemoteErrorKind::RateLimited: return "rate_limited";
    case RemoteErrorKind::ModelNotFound: return "model_not_found";
    case RemoteErrorKind::ServerError: return "server_error";
    case RemoteErrorKind::HttpError: return "http_error";
    case RemoteErrorKind::Timeout: return "timeout";
    case RemoteErrorKind::StreamCut: return "stream_cut";
    case RemoteErrorKind::Malformed: return "malformed";
    case RemoteErrorKind::Cancelled: return "cancelled";
  }
  return "unknown";
}

Error to_error(const RemoteError& error) {
  ErrorCode code = ErrorCode::Io;
  switch (error.kind) {
    case RemoteErrorKind::Insecure: code = ErrorCode::InvalidArgument; break;
    case RemoteErrorKind::Unauthorized: code = ErrorCode::InvalidArgument; break;
    case RemoteErrorKind::RateLimited: code = ErrorCode::LimitExceeded; break;
    case RemoteErrorKind::ModelNotFound: code = ErrorCode::NotFound; break;
    case RemoteErrorKind::Timeout: code = ErrorCode::LimitExceeded; break;
    case RemoteErrorKind::Malformed: code = ErrorCode::InvalidFormat; break;
    case RemoteErrorKind::Cancelled: code = ErrorCode::Cancelled; break;
    case RemoteErrorKind::Unreachable:
    case RemoteErrorKind::Tls:
    case RemoteErrorKind::ServerError:
    case RemoteErrorKind::HttpError:
    case RemoteErrorKind::StreamCut: code = ErrorCode::Io; break;
  }
  return Error{code, error.message};
}

}  // namespace hearth::remote
