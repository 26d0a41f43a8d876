#include <hearth/models/hf_files.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

namespace hearth::models {

std::optional<HfFileRef> parse_hf_url(std::string_view url, std::string_view endpoint) {
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.remove_suffix(1);
  if (endpoint.empty() || url.substr(0, endpoint.size()) != endpoint || url.substr(endpoint.size(), 1) != "/") {
    return std::nullopt;
  }
  std::string_view rest = url.substr(endpoint.size() + 1);
  if (auto q = rest.find_first_of("?#"); q != std::string_view::npos) rest = rest.substr(0, q);
  // owner / name / "resolve" / revision / path...
  std::string_view parts[4];
  for (auto& part : parts) {
    const auto slash = rest.find('/');
    if (slash == std::string_view::npos || slash == 0) return std::nullopt;
    part = rest.substr(0, slash);
    rest.remove_prefix(slash + 1);
  }
  if (parts[2] != "resolve" || rest.empty()) return std::nullopt;
  return HfFileRef{std::string(parts[0]) + "/" + std::string(parts[1]), std::string(parts[3]), std::string(rest)};
}

std::string hf_tree_api_url(const HfFileRef& ref, std::string_view endpoint) {
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.remove_suffix(1);
  std::string url = fmt::format("{}/api/models/{}/tree/{}", endpoint, ref.repo, ref.revision);
  if (auto slash = ref.path.rfind('/'); slash != std::string::npos) url += "/" + ref.path.substr(0, slash);
  return url;
}

Result<HfFileInfo> parse_hf_tree(std::string_view json_text, std::string_view path) {
  auto root = nlohmann::json::parse(json_text.begin(), json_text.end(), nullptr, false);
  if (root.is_discarded() || !root.is_array()) {
    return make_error(ErrorCode::InvalidFormat, "Hugging Face tree listing is not a JSON array");
  }
  for (const auto& entry : root) {
    if (!entry.is_object() || entry.value("path", std::string()) != path) continue;
    auto lfs = entry.find("lfs");
    if (lfs == entry.end() || !lfs->is_object() || !lfs->contains("oid")) {
      return make_error(ErrorCode::NotFound, fmt::format("'{}' is not an LFS file: no published SHA-256", path));
    }
    HfFileInfo info;
    info.sha256 = (*lfs)["oid"].is_string() ? (*lfs)["oid"].get<std::string>() : "";
    std::transform(info.sha256.begin(), info.sha256.end(), info.sha256.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool hex = info.sha256.size() == 64 &&
                     std::all_of(info.sha256.begin(), info.sha256.end(), [](char c) {
                       return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                     });
    if (!hex) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("'{}': LFS oid is not a SHA-256", path));
    }
    const auto& size = lfs->contains("size") ? (*lfs)["size"] : entry.value("size", nlohmann::json());
    if (!size.is_number_unsigned()) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("'{}': size missing in the listing", path));
    }
    info.size = size.get<uint64_t>();
    return info;
  }
  return make_error(ErrorCode::NotFound, fmt::format("'{}' is not in the repository listing", path));
}

}  // namespace hearth::models
