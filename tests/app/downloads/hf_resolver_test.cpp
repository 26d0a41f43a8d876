// Hugging Face URL handling and the tree API's LFS fields.
#include "downloads/hf_resolver.h"

#include <gtest/gtest.h>

namespace hearth::models {
namespace {

TEST(HfResolver, ParsesResolveUrls) {
  auto ref = parse_hf_url("https://huggingface.co/bartowski/Qwen_Qwen3-4B-GGUF/resolve/main/Qwen_Qwen3-4B-Q4_K_M.gguf");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->repo, "bartowski/Qwen_Qwen3-4B-GGUF");
  EXPECT_EQ(ref->revision, "main");
  EXPECT_EQ(ref->path, "Qwen_Qwen3-4B-Q4_K_M.gguf");
  EXPECT_EQ(hf_tree_api_url(*ref), "https://huggingface.co/api/models/bartowski/Qwen_Qwen3-4B-GGUF/tree/main");

  auto nested = parse_hf_url("https://huggingface.co/o/r/resolve/abc123/sub/dir/f.gguf?download=true");
  ASSERT_TRUE(nested.has_value());
  EXPECT_EQ(nested->path, "sub/dir/f.gguf");
  EXPECT_EQ(hf_tree_api_url(*nested), "https://huggingface.co/api/models/o/r/tree/abc123/sub/dir");

  EXPECT_FALSE(parse_hf_url("https://huggingface.co/o/r/blob/main/f.gguf").has_value());
  EXPECT_FALSE(parse_hf_url("http://huggingface.co/o/r/resolve/main/f.gguf").has_value());
  EXPECT_FALSE(parse_hf_url("https://example.com/o/r/resolve/main/f.gguf").has_value());
  EXPECT_FALSE(parse_hf_url("https://huggingface.co.example.com/o/r/resolve/main/f.gguf").has_value());
}

TEST(HfResolver, AMirrorEndpointServesTheSamePaths) {
  constexpr std::string_view kMirror = "http://127.0.0.1:8080/";
  auto ref = parse_hf_url("http://127.0.0.1:8080/o/r/resolve/main/sub/f.gguf", kMirror);
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->repo, "o/r");
  EXPECT_EQ(ref->path, "sub/f.gguf");
  EXPECT_EQ(hf_tree_api_url(*ref, kMirror), "http://127.0.0.1:8080/api/models/o/r/tree/main/sub");
  EXPECT_FALSE(parse_hf_url("https://huggingface.co/o/r/resolve/main/f.gguf", kMirror).has_value());
  EXPECT_FALSE(parse_hf_url("http://127.0.0.1:8080/o/r/resolve/main/f.gguf").has_value());
}

// Shaped like the documented tree API answer: one LFS file, one small Git file.
constexpr const char* kTree = R"([
  {"type": "file", "oid": "0123456789abcdef0123456789abcdef01234567", "size": 1519, "path": "README.md"},
  {"type": "file", "oid": "89abcdef0123456789abcdef0123456789abcdef", "size": 807694464,
   "lfs": {"oid": "6F1D5D9D2B4C0E7A8B3C2D1E0F9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D3E2F1A", "size": 807694464,
           "pointerSize": 135},
   "path": "Model-Q4_K_M.gguf"}
])";

TEST(HfResolver, ReadsTheLfsObjectIdAsSha256) {
  auto info = parse_hf_tree(kTree, "Model-Q4_K_M.gguf");
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->sha256, "6f1d5d9d2b4c0e7a8b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a");
  EXPECT_EQ(info->size, 807694464u);
  auto not_lfs = parse_hf_tree(kTree, "README.md");
  ASSERT_FALSE(not_lfs.ok());
  EXPECT_EQ(not_lfs.error().code, ErrorCode::NotFound);
  EXPECT_FALSE(parse_hf_tree(kTree, "absent.gguf").ok());
  EXPECT_FALSE(parse_hf_tree("{}", "x").ok());
}

}  // namespace
}  // namespace hearth::models
