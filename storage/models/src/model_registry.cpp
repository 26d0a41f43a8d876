#include <hearth/models/model_registry.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <openssl/evp.h>

#include <hearth/core/file_io.h>

#include <cerrno>
#include <fstream>
#include <memory>
#include <vector>

#include <unistd.h>
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
  // RegularFile refuses FIFOs and devices, which would block or never end.
  constexpr size_t kChunk = size_t{4} << 20;
  auto file = RegularFile::open(path.string());
  if (!file.ok()) {
    return make_error(ErrorCode::Io, fmt::format("cannot open '{}' to hash it: {}", path.string(),
                                                 file.error().message));
  }
  const std::uint64_t total = file.value().size();
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return make_error(ErrorCode::Internal, "cannot set up SHA-256 (libcrypto)");
  }
  std::vector<unsigned char> buffer(kChunk);
  std::uint64_t done = 0;
  if (progress && !progress(0, total)) return make_error(ErrorCode::Cancelled, "hashing stopped");
  while (true) {
    const ssize_t n = ::read(file.value().fd(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(ErrorCode::Io, fmt::format("cannot read '{}' to hash it", path.string()));
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(n));
    done += static_cast<std::uint64_t>(n);
    if (progress && !progress(done, total)) return make_error(ErrorCode::Cancelled, "hashing stopped");
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_len = 0;
  if (EVP_DigestFinal_ex(ctx.get(), digest, &digest_len) != 1) {
    return make_error(ErrorCode::Internal, "cannot finish SHA-256 (libcrypto)");
  }
  std::string hex;
  hex.reserve(size_t{digest_len} * 2);
  for (unsigned int i = 0; i < digest_len; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
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
