#include "hearth/core/result.h"

namespace hearth {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::InvalidFormat: return "invalid format";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::LimitExceeded: return "limit exceeded";
    case ErrorCode::Io: return "I/O error";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::NotFound: return "not found";
    case ErrorCode::Cancelled: return "cancelled";
    case ErrorCode::Corrupt: return "corrupt";
    case ErrorCode::Internal: return "internal error";
  }
  return "unknown error";
}

}  // namespace hearth
