// Helpers shared by the storage tests: temporary folders, a controllable clock and
// the file / in-memory parametrisation.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "hearth/storage/database.h"

namespace hearth::storage::testing {

// A fresh folder under the system temp directory, removed with its contents.
class TempDir {
 public:
  TempDir() : TempDir(std::filesystem::temp_directory_path()) {}
  explicit TempDir(const std::filesystem::path& parent) {
    std::string pattern = (parent / "hearth-storage-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// A clock the test moves by hand, so timestamps are known values.
class ManualClock {
 public:
  explicit ManualClock(UnixMs start) : now_(std::make_shared<std::atomic<UnixMs>>(start)) {}
  std::function<UnixMs()> function() const {
    auto now = now_;
    return [now] { return now->load(); };
  }
  void set(UnixMs ms) { now_->store(ms); }
  void advance(UnixMs ms) { now_->fetch_add(ms); }
  UnixMs now() const { return now_->load(); }

 private:
  std::shared_ptr<std::atomic<UnixMs>> now_;
};

// The error code of a failed Result/Status, nullopt when it succeeded.
template <typename R>
std::optional<ErrorCode> error_code(const R& result) {
  if (result.ok()) return std::nullopt;
  return result.error().code;
}

enum class StorageKind { File, Memory };

inline std::string kind_name(const ::testing::TestParamInfo<StorageKind>& info) {
  return info.param == StorageKind::File ? "File" : "Memory";
}

// Base fixture for tests that must pass on a file database and an in-memory one.
class StorageTest : public ::testing::TestWithParam<StorageKind> {
 protected:
  static constexpr UnixMs kStart = 1'700'000'000'000;  // 2023-11-14 22:13:20 UTC

  void SetUp() override {
    OpenOptions options;
    options.clock = clock_.function();
    auto db = GetParam() == StorageKind::File ? Database::open(dir_.file("hearth.db"), options)
                                              : Database::open_in_memory(options);
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::make_unique<Database>(std::move(db).value());
  }

  Database& db() { return *db_; }

  TempDir dir_;
  ManualClock clock_{kStart};
  std::unique_ptr<Database> db_;
};

#define HEARTH_ASSERT_OK(expr)                                       \
  do {                                                               \
    const auto& hearth_result_ = (expr);                             \
    ASSERT_TRUE(hearth_result_.ok()) << hearth_result_.error().message; \
  } while (false)

// Unwraps a Result in a test, failing the test with the error message otherwise.
#define HEARTH_ASSERT_VALUE(decl, expr)                                      \
  auto HEARTH_CONCAT(hearth_value_, __LINE__) = (expr);                      \
  ASSERT_TRUE(HEARTH_CONCAT(hearth_value_, __LINE__).ok())                   \
      << HEARTH_CONCAT(hearth_value_, __LINE__).error().message;             \
  decl = std::move(HEARTH_CONCAT(hearth_value_, __LINE__)).value()

}  // namespace hearth::storage::testing
