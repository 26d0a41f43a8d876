// One SQLite connection to a Hearth database, plus the transaction guard.
//
// Threading: a Database is one connection and must be used by one thread at a time.
// The app opens one Access::ReadWrite database on its storage thread (the only
// writer) and any number of Access::ReadOnly databases for readers, each on its own
// thread. WAL mode lets readers run while the writer commits.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "hearth/core/result.h"
#include "hearth/storage/types.h"

namespace hearth::storage {

enum class Access { ReadWrite, ReadOnly };
// What open() does with a file SQLite reports as corrupt or not a database.
enum class OnCorrupt { MoveAside, Fail };
// Quick runs PRAGMA quick_check at open (cost grows with the file); None relies on
// SQLite reporting damage when a damaged page is read.
enum class IntegrityCheck { None, Quick };
// Full fsyncs the write-ahead log at commit, so the commit survives a power loss;
// Normal survives a crash of the process (the OS still holds the data).
enum class Durability { Normal, Full };

struct OpenOptions {
  Access access = Access::ReadWrite;
  OnCorrupt on_corrupt = OnCorrupt::MoveAside;
  IntegrityCheck integrity = IntegrityCheck::None;
  std::chrono::milliseconds busy_timeout{5000};
  // Name of a registered sqlite3_vfs; empty for SQLite's default. Tests use a
  // fault-injecting shim.
  std::string vfs;
  // Source of timestamps; defaults to the system clock.
  std::function<UnixMs()> clock;
};

// What open() found and repaired.
struct OpenReport {
  int schema_version_found = 0;  // user_version before migrations
  int schema_version = 0;        // user_version now
  // Replies left `streaming` by a crash, now marked `interrupted` (text kept).
  std::int64_t interrupted_replies = 0;
};

struct DatabaseImpl;

class Database {
 public:
  // The schema version this build creates and reads.
  static constexpr int kSchemaVersion = 5;

  // Opens (creating if needed, for ReadWrite) the database at `path`, applies
  // pending migrations in one transaction and marks interrupted replies.
  // A file SQLite reports as corrupt is renamed to "<path>.corrupt-<unix ms>" (with
  // its -wal/-shm files) under OnCorrupt::MoveAside and the error says where it went;
  // it is never truncated or recreated in place.
  static Result<Database> open(const std::filesystem::path& path, OpenOptions options = {});
  // A private in-memory database (ReadWrite only; no readers can share it).
  static Result<Database> open_in_memory(OpenOptions options = {});

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  const OpenReport& open_report() const;
  const std::string& path() const;  // ":memory:" for in-memory databases
  Access access() const;
  UnixMs now() const;

  // Runs PRAGMA integrity_check; Corrupt with SQLite's first findings otherwise.
  Status integrity_check();
  // Copies WAL content into the main file (PRAGMA wal_checkpoint(TRUNCATE)).
  Status checkpoint();

  // For the repositories in this library; not part of the app-facing API.
  DatabaseImpl& impl() { return *impl_; }

 private:
  explicit Database(std::unique_ptr<DatabaseImpl> impl);
  std::unique_ptr<DatabaseImpl> impl_;
};

// A transaction (or a savepoint inside an outer one). Rolls back unless committed.
// The outermost transaction decides durability for everything inside it.
class Transaction {
 public:
  static Result<Transaction> begin(Database& db, Durability durability = Durability::Normal);

  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  ~Transaction();

  Status commit();

 private:
  Transaction(DatabaseImpl* impl, int depth, Durability durability);
  void rollback();

  DatabaseImpl* impl_;
  int depth_;
  Durability durability_;
  bool open_ = true;
};

}  // namespace hearth::storage
