// The local API's optional semantic cache (off unless `serve --semantic-cache`
// names a file): a chat request whose last user message is close enough in
// meaning to one answered before, in the same context, gets the stored reply
// without running the model. The context is everything else the reply depends
// on: the model asked for, the system prompt and earlier turns, the sampling
// settings, max_tokens, stops and the response format (their SHA-256), so a
// reply never crosses system prompts. Only deterministic requests (temperature
// 0, no logprobs) are cached. Entries of a model file that changed (size or
// time) are dropped when the cache opens and never match.
#pragma once

#include <hearth/core/result.h>
#include <hearth/server/openai_request.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hearth::server {

// The embedding of a text (L2-normalised), from the cache's embedding model.
using EmbedFn = std::function<Result<std::vector<float>>(const std::string& text)>;

struct SemanticCacheConfig {
  std::filesystem::path file;             // the SQLite file (created when missing)
  std::vector<std::filesystem::path> models;  // the served model files: their identity keys the entries
  double min_similarity = 0.95;           // cosine of the two questions' embeddings
  int64_t capacity_bytes = 64ll << 20;
};

// A cacheable request's key: where to look, and what to store after a miss.
struct SemanticKey {
  std::string context;   // SHA-256 of the context
  std::string question;  // the last user message
  std::vector<float> embedding;
};

struct SemanticReply {
  std::string question;  // the stored question that matched
  std::string reply;
  int64_t tokens = 0;
  double similarity = 0;
};

class SemanticReplyCache {
 public:
  static Result<std::unique_ptr<SemanticReplyCache>> open(const SemanticCacheConfig& config, EmbedFn embed);
  ~SemanticReplyCache();

  // The key of a request, or nullopt when it is not cached (not chat, sampled,
  // with logprobs, no user message).
  Result<std::optional<SemanticKey>> key_of(const ParsedRequest& request);
  Result<std::optional<SemanticReply>> find(const SemanticKey& key);
  Status store(const SemanticKey& key, const std::string& reply, int64_t tokens);
  double min_similarity() const;

 private:
  struct State;
  explicit SemanticReplyCache(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace hearth::server
