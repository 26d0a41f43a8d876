// Files on Hugging Face: which URLs name one, and the SHA-256 and size its
// tree API publishes (the LFS object id is the SHA-256 of the content). Plain
// parsing; the network look-up is app/downloads/hf_resolver.h.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hearth::models {

struct HfFileRef {
  std::string repo;      // "owner/name"
  std::string revision;  // "main" or a commit
  std::string path;      // path of the file inside the repository
};

// Where Hugging Face serves files and its API. A mirror (or a test server)
// can stand in for it: the same paths under another base URL.
inline constexpr std::string_view kHfEndpoint = "https://huggingface.co";

// Parses {endpoint}/{owner}/{name}/resolve/{revision}/{path}; nullopt for
// any other URL.
std::optional<HfFileRef> parse_hf_url(std::string_view url, std::string_view endpoint = kHfEndpoint);

// URL of the tree listing of the folder that holds `ref.path`:
// {endpoint}/api/models/{repo}/tree/{revision}[/{folder}].
std::string hf_tree_api_url(const HfFileRef& ref, std::string_view endpoint = kHfEndpoint);

struct HfFileInfo {
  std::string sha256;  // lowercase hex
  uint64_t size = 0;
};

// Finds `path` in a tree API response and returns its LFS SHA-256 and size.
// NotFound when the file is absent or not stored in LFS (no published hash).
Result<HfFileInfo> parse_hf_tree(std::string_view json_text, std::string_view path);

}  // namespace hearth::models
