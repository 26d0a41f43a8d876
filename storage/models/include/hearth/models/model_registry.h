// Installed models: the .gguf files in the models folder, each with a small
// sidecar "<file>.hearth.json" saying where it came from (catalog id, quant,
// URL) and the SHA-256 it was verified against, so it can be re-verified on
// demand and matched to the catalog.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hearth::models {

struct InstalledModel {
  std::filesystem::path path;
  uint64_t size_bytes = 0;
  std::string catalog_id;  // empty for imported files
  std::string quant;
  std::string source_url;
  std::string sha256;      // recorded at download; empty when never verified
};

enum class VerifyOutcome { Match, Mismatch, NoRecordedHash };

struct VerifyResult {
  VerifyOutcome outcome = VerifyOutcome::NoRecordedHash;
  std::string actual_sha256;
};

// Called as hashing proceeds with the bytes hashed so far and the file's size;
// returning false stops the hash (the result is then ErrorCode::Cancelled).
using HashProgress = std::function<bool(std::uint64_t done, std::uint64_t total)>;

// SHA-256 of a file's contents, lowercase hex.
Result<std::string> sha256_of_file(const std::filesystem::path& path, const HashProgress& progress = {});

class ModelRegistry {
 public:
  explicit ModelRegistry(std::filesystem::path folder);

  const std::filesystem::path& folder() const { return folder_; }
  // Every .gguf in the folder (no .part files), with its sidecar when present.
  std::vector<InstalledModel> scan() const;
  std::optional<InstalledModel> find(const std::string& catalog_id, const std::string& quant) const;
  // Writes the sidecar of `model.path`.
  Status record(const InstalledModel& model) const;
  // Re-hashes the file and compares with the recorded SHA-256.
  Result<VerifyResult> verify(const std::filesystem::path& path, const HashProgress& progress = {}) const;
  // Deletes the file and its sidecar.
  Status remove(const std::filesystem::path& path) const;

  // File name a catalog variant is stored under: the URL's last segment.
  static std::string file_name_for_url(const std::string& url);

 private:
  std::filesystem::path folder_;
};

}  // namespace hearth::models
