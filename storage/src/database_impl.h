// Internal: the connection state shared by the repositories, and a prepared
// statement handle. Every SQL text used by the library is a string literal; values
// are always bound, never spliced into SQL.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "hearth/core/result.h"
#include "hearth/storage/database.h"

namespace hearth::storage {

// Maps an SQLite result code to an Error naming the database and the operation.
Error sqlite_error(sqlite3* db, int rc, const std::string& path, std::string_view what);
ErrorCode error_code_for(int rc);

// A cached prepared statement, borrowed for one use: reset and unbound on release.
class Statement {
 public:
  Statement(sqlite3_stmt* stmt, DatabaseImpl* impl) : stmt_(stmt), impl_(impl) {}
  Statement(Statement&& other) noexcept : stmt_(other.stmt_), impl_(other.impl_) { other.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement& operator=(Statement&&) = delete;
  ~Statement();

  // Parameters are 1-based like SQLite's.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::optional<double> value);
  Statement& bind(int index, std::optional<std::int64_t> value);
  template <typename Tag>
  Statement& bind(int index, Id<Tag> id) {  // an invalid id binds NULL
    return id.valid() ? bind(index, id.value()) : bind_null(index);
  }
  Statement& bind_null(int index);
  Statement& bind_blob(int index, const void* data, std::size_t size);

  // Ready to bind and run again (bindings are kept until rebound).
  void reset() {
    sqlite3_reset(stmt_);
    bind_error_ = SQLITE_OK;
  }
  // true: a row is available; false: done.
  Result<bool> step();
  // Runs a statement that returns no rows.
  Status run();

  std::int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string text(int column) const;
  // The column's bytes, valid until the next step or reset.
  std::string_view blob(int column) const {
    const void* data = sqlite3_column_blob(stmt_, column);
    const int size = sqlite3_column_bytes(stmt_, column);
    return data == nullptr ? std::string_view() : std::string_view(static_cast<const char*>(data), static_cast<std::size_t>(size));
  }
  std::optional<double> optional_real(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;
  template <typename IdType>
  IdType id(int column) const { return is_null(column) ? IdType{} : IdType{int64(column)}; }

 private:
  sqlite3_stmt* stmt_;
  DatabaseImpl* impl_;
  int bind_error_ = SQLITE_OK;
};

struct DatabaseImpl {
  sqlite3* db = nullptr;
  std::string path;
  OpenOptions options;
  OpenReport report;
  int transaction_depth = 0;
  std::unordered_map<std::string, sqlite3_stmt*> statements;

  DatabaseImpl() = default;
  DatabaseImpl(const DatabaseImpl&) = delete;
  DatabaseImpl& operator=(const DatabaseImpl&) = delete;
  ~DatabaseImpl();

  // Prepares `sql` once per connection and hands out the cached statement.
  Result<Statement> prepare(const char* sql);
  // Runs constant SQL (pragmas, DDL, transaction control); never user input.
  Status exec(const char* sql, std::string_view what);
  Error error(int rc, std::string_view what) const { return sqlite_error(db, rc, path, what); }
  std::int64_t changes() const { return sqlite3_changes64(db); }
  std::int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db); }
  UnixMs now() const;
};

// Runs `body` inside a transaction of the given durability (or a savepoint when one
// is already open) and commits; rolls back on error.
template <typename Body>
auto in_transaction(Database& db, Durability durability, Body&& body) -> decltype(body()) {
  auto tx = Transaction::begin(db, durability);
  if (!tx.ok()) return tx.take_error();
  auto result = body();
  if (!result.ok()) return result;
  auto committed = tx->commit();
  if (!committed.ok()) return committed.take_error();
  return result;
}

// "conversation 12" style labels for error messages.
template <typename Tag>
std::string describe(const char* kind, Id<Tag> id) {
  return std::string(kind) + " " + std::to_string(id.value());
}

}  // namespace hearth::storage
