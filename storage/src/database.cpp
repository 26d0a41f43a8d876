#include "hearth/storage/database.h"

#include <system_error>
#include <utility>

#include "database_impl.h"
#include "migrations.h"

namespace hearth::storage {
namespace {

bool is_corruption(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

UnixMs system_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// Renames the damaged file and its WAL/shared-memory companions out of the way, so
// the data stays available for recovery tools and the next open starts clean.
Result<std::string> move_aside(const std::filesystem::path& path, UnixMs stamp) {
  const std::string suffix = ".corrupt-" + std::to_string(stamp);
  const std::filesystem::path target = path.string() + suffix;
  std::error_code ec;
  std::filesystem::rename(path, target, ec);
  if (ec) {
    return make_error(ErrorCode::Io, "could not move damaged database '" + path.string() + "' to '" +
                                         target.string() + "': " + ec.message());
  }
  for (const char* companion : {"-wal", "-shm", "-journal"}) {
    const std::filesystem::path from = path.string() + companion;
    if (std::filesystem::exists(from, ec)) {
      std::filesystem::rename(from, target.string() + companion, ec);
    }
  }
  return target.string();
}

// Steps of open() after sqlite3_open_v2 that read the file; any of them can be the
// first to find that it is damaged.
Status configure(DatabaseImpl& impl, Access access) {
  const int timeout = static_cast<int>(impl.options.busy_timeout.count());
  if (int rc = sqlite3_busy_timeout(impl.db, timeout); rc != SQLITE_OK) return impl.error(rc, "set busy timeout");
  HEARTH_CHECK(impl.exec("PRAGMA foreign_keys = ON", "enable foreign keys"));
  // Reading the schema is the first access to the file: it fails on a non-database.
  HEARTH_CHECK(impl.exec("SELECT count(*) FROM sqlite_schema", "read the schema"));
  // Refuse files this build must not change before switching the journal mode,
  // which rewrites the header.
  HEARTH_CHECK(check_schema(impl));
  if (access == Access::ReadWrite && impl.path != ":memory:") {
    HEARTH_TRY(auto stmt, impl.prepare("PRAGMA journal_mode = WAL"));
    HEARTH_TRY(bool row, stmt.step());
    if (!row || stmt.text(0) != "wal") {
      return make_error(ErrorCode::Io, "database '" + impl.path + "': could not switch to WAL journal mode");
    }
  }
  HEARTH_CHECK(impl.exec("PRAGMA synchronous = NORMAL", "set synchronous mode"));
  if (impl.options.integrity == IntegrityCheck::Quick) {
    HEARTH_TRY(auto stmt, impl.prepare("PRAGMA quick_check(5)"));
    HEARTH_TRY(bool row, stmt.step());
    if (row && stmt.text(0) != "ok") {
      return make_error(ErrorCode::Corrupt, "database '" + impl.path + "' failed its quick check: " + stmt.text(0));
    }
  }
  return {};
}

// A reply still `streaming` when the database is opened was cut off by a crash.
Status recover_interrupted(DatabaseImpl& impl, Database& db) {
  auto recovered = in_transaction(db, Durability::Full, [&]() -> Result<std::int64_t> {
    HEARTH_TRY(auto stmt, impl.prepare("UPDATE messages SET state = 'interrupted', updated_ms = ?1 "
                                       "WHERE state = 'streaming'"));
    stmt.bind(1, impl.now());
    HEARTH_CHECK(stmt.run());
    return impl.changes();
  });
  if (!recovered.ok()) return recovered.take_error();
  impl.report.interrupted_replies = *recovered;
  return {};
}

Result<std::unique_ptr<DatabaseImpl>> connect(const std::string& path, OpenOptions options, bool in_memory) {
  auto impl = std::make_unique<DatabaseImpl>();
  impl->path = path;
  impl->options = std::move(options);
  if (!impl->options.clock) impl->options.clock = system_now;
  const Access access = impl->options.access;
  if (in_memory && access == Access::ReadOnly) {
    return make_error(ErrorCode::InvalidArgument, "an in-memory database cannot be opened read-only");
  }

  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  flags |= access == Access::ReadOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (in_memory) flags |= SQLITE_OPEN_MEMORY;
  const char* vfs = impl->options.vfs.empty() ? nullptr : impl->options.vfs.c_str();
  if (int rc = sqlite3_open_v2(path.c_str(), &impl->db, flags, vfs); rc != SQLITE_OK) {
    return impl->error(rc, "open");
  }
  // SQLite quietly falls back to read-only when the file or disk cannot be written;
  // the writer must know now, not at the first message it fails to save.
  if (access == Access::ReadWrite && sqlite3_db_readonly(impl->db, "main") == 1) {
    return make_error(ErrorCode::Io, "database '" + path +
                                         "' cannot be written: the file, its folder or the disk is read-only; "
                                         "it can still be opened for reading");
  }

  Status configured = configure(*impl, access);
  if (configured.ok()) configured = migrate(*impl);
  if (configured.ok()) return impl;

  Error error = configured.take_error();
  const bool corrupt = error.code == ErrorCode::Corrupt || is_corruption(sqlite3_extended_errcode(impl->db));
  const UnixMs stamp = impl->now();
  const OnCorrupt on_corrupt = impl->options.on_corrupt;
  impl.reset();  // close the connection before touching the files
  if (!corrupt) return error;
  error.code = ErrorCode::Corrupt;
  if (in_memory || access != Access::ReadWrite || on_corrupt != OnCorrupt::MoveAside) {
    error.message += "; the file was left in place";
    return error;
  }
  auto moved = move_aside(path, stamp);
  if (!moved.ok()) {
    error.message += "; " + moved.error().message;
    return error;
  }
  error.message += "; the damaged file was moved to '" + *moved +
                   "' and a new, empty database will be created at the next open";
  return error;
}

}  // namespace

Database::Database(std::unique_ptr<DatabaseImpl> impl) : impl_(std::move(impl)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Result<Database> Database::open(const std::filesystem::path& path, OpenOptions options) {
  HEARTH_TRY(auto impl, connect(path.string(), std::move(options), false));
  Database db(std::move(impl));
  if (db.access() == Access::ReadWrite) HEARTH_CHECK(recover_interrupted(db.impl(), db));
  return db;
}

Result<Database> Database::open_in_memory(OpenOptions options) {
  HEARTH_TRY(auto impl, connect(":memory:", std::move(options), true));
  return Database(std::move(impl));
}

const OpenReport& Database::open_report() const { return impl_->report; }
const std::string& Database::path() const { return impl_->path; }
Access Database::access() const { return impl_->options.access; }
UnixMs Database::now() const { return impl_->now(); }

Status Database::integrity_check() {
  HEARTH_TRY(auto stmt, impl_->prepare("PRAGMA integrity_check(10)"));
  std::string findings;
  while (true) {
    HEARTH_TRY(bool row, stmt.step());
    if (!row) break;
    const std::string line = stmt.text(0);
    if (line == "ok") return {};
    if (!findings.empty()) findings += "; ";
    findings += line;
  }
  return make_error(ErrorCode::Corrupt, "database '" + impl_->path + "' failed its integrity check: " + findings);
}

Status Database::checkpoint() {
  return impl_->exec("PRAGMA wal_checkpoint(TRUNCATE)", "checkpoint");
}

// ---- DatabaseImpl ----

DatabaseImpl::~DatabaseImpl() {
  for (auto& [sql, stmt] : statements) sqlite3_finalize(stmt);
  if (db != nullptr) sqlite3_close_v2(db);
}

UnixMs DatabaseImpl::now() const { return options.clock ? options.clock() : system_now(); }

Result<Statement> DatabaseImpl::prepare(const char* sql) {
  auto it = statements.find(sql);
  if (it == statements.end()) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return error(rc, std::string("prepare \"") + sql + "\"");
    it = statements.emplace(sql, stmt).first;
  }
  return Statement(it->second, this);
}

Status DatabaseImpl::exec(const char* sql, std::string_view what) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return error(rc, what);
  return {};
}

// ---- Transaction ----

Transaction::Transaction(DatabaseImpl* impl, int depth, Durability durability)
    : impl_(impl), depth_(depth), durability_(durability) {}

Transaction::Transaction(Transaction&& other) noexcept
    : impl_(other.impl_), depth_(other.depth_), durability_(other.durability_), open_(other.open_) {
  other.open_ = false;
}

Result<Transaction> Transaction::begin(Database& db, Durability durability) {
  DatabaseImpl& impl = db.impl();
  const int depth = impl.transaction_depth;
  if (depth == 0) {
    // The synchronous level cannot change inside a transaction: set it first.
    if (durability == Durability::Full) HEARTH_CHECK(impl.exec("PRAGMA synchronous = FULL", "set synchronous"));
    Status begun = impl.exec("BEGIN IMMEDIATE", "begin transaction");
    if (!begun.ok()) {
      if (durability == Durability::Full) (void)impl.exec("PRAGMA synchronous = NORMAL", "reset synchronous");
      return begun.take_error();
    }
  } else {
    const std::string sql = "SAVEPOINT tx" + std::to_string(depth);
    HEARTH_CHECK(impl.exec(sql.c_str(), "begin savepoint"));
  }
  impl.transaction_depth = depth + 1;
  return Transaction(&impl, depth, durability);
}

Status Transaction::commit() {
  if (!open_) return make_error(ErrorCode::Internal, "transaction committed twice");
  open_ = false;
  if (depth_ > 0) {
    const std::string sql = "RELEASE tx" + std::to_string(depth_);
    Status released = impl_->exec(sql.c_str(), "release savepoint");
    if (!released.ok()) {
      open_ = true;
      rollback();
      return released;
    }
    impl_->transaction_depth = depth_;
    return {};
  }
  Status committed = impl_->exec("COMMIT", "commit");
  if (!committed.ok()) {
    // After a failed COMMIT the transaction may still be open; end it.
    if (!sqlite3_get_autocommit(impl_->db)) (void)impl_->exec("ROLLBACK", "roll back");
  }
  impl_->transaction_depth = 0;
  if (durability_ == Durability::Full) (void)impl_->exec("PRAGMA synchronous = NORMAL", "reset synchronous");
  return committed;
}

void Transaction::rollback() {
  if (!open_) return;
  open_ = false;
  if (depth_ > 0) {
    const std::string sql = "ROLLBACK TO tx" + std::to_string(depth_) + "; RELEASE tx" + std::to_string(depth_);
    (void)impl_->exec(sql.c_str(), "roll back savepoint");
    impl_->transaction_depth = depth_;
    return;
  }
  if (!sqlite3_get_autocommit(impl_->db)) (void)impl_->exec("ROLLBACK", "roll back");
  impl_->transaction_depth = 0;
  if (durability_ == Durability::Full) (void)impl_->exec("PRAGMA synchronous = NORMAL", "reset synchronous");
}

Transaction::~Transaction() { rollback(); }

}  // namespace hearth::storage
