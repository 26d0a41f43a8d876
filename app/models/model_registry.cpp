#include "models/model_registry.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <QCryptographicHash>
#include <QFile>

#include <hearth/core/file_io.h>

#include <fstream>
#include <sstream>

namespace hearth::models {
namespace {

constexpr uint64_t kSidecarLimit = uint64_t{1} << 20;

std::filesystem::path sidecar(const std::filesystem::path& model) {
  return model.string() + ".hearth.json";
}

}  // namespace

Result<std::string> sha256_of_file(const std::filesystem::path& path, const HashProgress& progress) {
  // Read in pieces so a multi-gigabyte model can report progress and be stopped.
  constexpr qint64 kChunk = qint64{4} << 20;
  QFile file(QString::fromStdString(path.string()));
  if (!file.open(QIODevice::ReadOnly)) {
    return make_error(ErrorCode::Io, fmt::format("cannot open '{}' to hash it", path.string()));
  }
  const auto total = static_cast<std::uint64_t>(file.size());
  QCryptographicHash hash(QCryptographicHash::Sha256);
  QByteArray buffer(kChunk, Qt::Uninitialized);
  std::uint64_t done = 0;
  if (progress && !progress(0, total)) return make_error(ErrorCode::Cancelled, "hashing stopped");
  while (true) {
    const qint64 n = file.read(buffer.data(), kChunk);
    if (n < 0) return make_error(ErrorCode::Io, fmt::format("cannot read '{}' to hash it", path.string()));
    if (n == 0) break;
    hash.addData(QByteArrayView(buffer.constData(), n));
    done += static_cast<std::uint64_t>(n);
    if (progress && !progress(done, total)) return make_error(ErrorCode::Cancelled, "hashing stopped");
  }
  return hash.result().toHex().toStdString();
}

ModelRegistry::ModelRegistry(std::filesystem::path folder) : folder_(std::move(folder)) {}

std::vector<InstalledModel> ModelRegistry::scan() const {
  std::vector<InstalledModel> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder_, ec)) {
    if (!entry.is_regular_file(ec) || entry.path().extension() != ".gguf") continue;
    InstalledModel m;
    m.path = entry.path();
    m.size_bytes = entry.file_size(ec);
    // A sidecar that is missing, oversized or not a regular file is ignored
    // like one that is not valid JSON: the model is listed without its origin.
    auto text = read_regular_file(sidecar(m.path).string(), kSidecarLimit, "model sidecar files");
    if (text.ok()) {
      auto meta = nlohmann::json::parse(*text, nullptr, false);
      if (meta.is_object()) {
        m.catalog_id = meta.value("catalog_id", "");
        m.quant = meta.value("quant", "");
        m.source_url = meta.value("source_url", "");
        m.sha256 = meta.value("sha256", "");
      }
    }
    out.push_back(std::move(m));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

std::optional<InstalledModel> ModelRegistry::find(const std::string& catalog_id, const std::string& quant) const {
  for (auto& m : scan()) {
    if (m.catalog_id == catalog_id && m.quant == quant) return m;
  }
  return std::nullopt;
}

Status ModelRegistry::record(const InstalledModel& model) const {
  nlohmann::json meta = {{"catalog_id", model.catalog_id},
                         {"quant", model.quant},
                         {"source_url", model.source_url},
                         {"sha256", model.sha256}};
  return write_file_atomically(sidecar(model.path).string(), meta.dump(2) + "\n");
}

Result<VerifyResult> ModelRegistry::verify(const std::filesystem::path& path, const HashProgress& progress) const {
  HEARTH_TRY(std::string actual, sha256_of_file(path, progress));
  VerifyResult result;
  result.actual_sha256 = actual;
  std::string recorded;
  for (const auto& m : scan()) {
    if (m.path == path) recorded = m.sha256;
  }
  if (recorded.empty()) {
    result.outcome = VerifyOutcome::NoRecordedHash;
  } else {
    result.outcome = recorded == actual ? VerifyOutcome::Match : VerifyOutcome::Mismatch;
  }
  return result;
}

Status ModelRegistry::remove(const std::filesystem::path& path) const {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  if (ec) return make_error(ErrorCode::Io, fmt::format("cannot delete '{}': {}", path.string(), ec.message()));
  std::filesystem::remove(sidecar(path), ec);
  return {};
}

std::string ModelRegistry::file_name_for_url(const std::string& url) {
  std::string path = url.substr(0, url.find_first_of("?#"));
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace hearth::models
