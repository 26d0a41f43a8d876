#include <limits>

#include "database_impl.h"

namespace hearth::storage {

ErrorCode error_code_for(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return ErrorCode::Corrupt;
    case SQLITE_NOMEM:
      return ErrorCode::OutOfMemory;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return ErrorCode::InvalidArgument;
    case SQLITE_NOTFOUND:
      return ErrorCode::NotFound;
    case SQLITE_INTERRUPT:
      return ErrorCode::Cancelled;
    case SQLITE_ERROR:
    case SQLITE_MISUSE:
    case SQLITE_INTERNAL:
      return ErrorCode::Internal;
    default:  // IOERR, FULL, READONLY, CANTOPEN, BUSY, LOCKED, PERM, PROTOCOL, ...
      return ErrorCode::Io;
  }
}

namespace {

// A sentence a user can act on, for the failures that are about the machine rather
// than about Hearth.
const char* plain_cause(int rc) {
  switch (rc & 0xff) {
    case SQLITE_FULL: return "the disk is full";
    case SQLITE_IOERR: return "the disk reported an I/O error";
    case SQLITE_READONLY: return "the database file or its folder is read-only";
    case SQLITE_CANTOPEN: return "the file cannot be opened";
    case SQLITE_PERM: return "permission denied";
    case SQLITE_CORRUPT: return "the database file is corrupt";
    case SQLITE_NOTADB: return "the file is not a database";
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return "the database is locked by another process";
    default: return nullptr;
  }
}

}  // namespace

Error sqlite_error(sqlite3* db, int rc, const std::string& path, std::string_view what) {
  std::string message = "database '" + path + "': " + std::string(what) + " failed: ";
  if (const char* cause = plain_cause(rc)) {
    message += cause;
    message += " (";
  }
  message += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  message += ", SQLite code " + std::to_string(rc);
  if (plain_cause(rc) != nullptr) message += ")";
  return make_error(error_code_for(rc), std::move(message));
}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Statement& Statement::bind(int index, std::int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::bind(int index, double value) {
  const int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    if (bind_error_ == SQLITE_OK) bind_error_ = SQLITE_TOOBIG;
    return *this;
  }
  // Empty views may carry a null data pointer, which SQLite would store as NULL.
  const char* data = text.data() != nullptr ? text.data() : "";
  const int rc = sqlite3_bind_text(stmt_, index, data, static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::bind_blob(int index, const void* data, std::size_t size) {
  if (size > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    if (bind_error_ == SQLITE_OK) bind_error_ = SQLITE_TOOBIG;
    return *this;
  }
  // A zero-length blob with a null pointer would bind NULL; the schema wants bytes.
  static const char kEmpty = 0;
  const int rc = sqlite3_bind_blob(stmt_, index, data != nullptr ? data : &kEmpty, static_cast<int>(size),
                                   SQLITE_TRANSIENT);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, std::optional<std::int64_t> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  const int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Result<bool> Statement::step() {
  if (bind_error_ != SQLITE_OK) {
    return impl_->error(bind_error_, std::string("bind parameters of \"") + sqlite3_sql(stmt_) + "\"");
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return impl_->error(rc, std::string("run \"") + sqlite3_sql(stmt_) + "\"");
}

Status Statement::run() {
  while (true) {
    HEARTH_TRY(bool row, step());
    if (!row) return {};
  }
}

std::string Statement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int size = sqlite3_column_bytes(stmt_, column);
  return data != nullptr ? std::string(data, static_cast<std::size_t>(size)) : std::string();
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

}  // namespace hearth::storage
