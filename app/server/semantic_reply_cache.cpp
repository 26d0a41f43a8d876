#include <fmt/format.h>
#include <hearth/documents/indexer.h>
#include <hearth/server/semantic_reply_cache.h>
#include <hearth/storage/database.h>
#include <hearth/storage/semantic_cache.h>

#include <mutex>

namespace hearth::server {
namespace {

// "path|size:mtime" for each file: a file that changed is another identity.
Result<std::string> identity_of(const std::vector<std::filesystem::path>& files) {
  std::string out;
  for (const auto& f : files) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(f, ec);
    if (ec) return make_error(ErrorCode::Io, fmt::format("semantic cache: cannot read {}: {}", f.string(), ec.message()));
    const auto time = std::filesystem::last_write_time(f, ec).time_since_epoch().count();
    out += fmt::format("{}{}|{}:{}", out.empty() ? "" : ";", std::filesystem::absolute(f).string(), size, time);
  }
  return out;
}

// Adds a length-prefixed field, so no two different contexts hash alike.
void field(std::string& s, std::string_view value) {
  s += std::to_string(value.size());
  s += ':';
  s += value;
}

}  // namespace

struct SemanticReplyCache::State {
  SemanticCacheConfig config;
  EmbedFn embed;
  std::string identity;
  std::string identity_prefix;  // the first file's path: earlier versions share it
  std::mutex mutex;             // one connection, used from the handler and backend threads
  std::optional<storage::Database> db;
  std::optional<storage::SemanticCache> cache;
};

SemanticReplyCache::SemanticReplyCache(std::unique_ptr<State> state) : state_(std::move(state)) {}
SemanticReplyCache::~SemanticReplyCache() = default;

Result<std::unique_ptr<SemanticReplyCache>> SemanticReplyCache::open(const SemanticCacheConfig& config, EmbedFn embed) {
  if (config.models.empty()) return make_error(ErrorCode::InvalidArgument, "semantic cache: no model file");
  if (!(config.min_similarity > 0 && config.min_similarity <= 1)) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("semantic cache: the similarity threshold must be in (0, 1], not {}",
                                  config.min_similarity));
  }
  auto state = std::make_unique<State>();
  state->config = config;
  state->embed = std::move(embed);
  HEARTH_TRY(state->identity, identity_of(config.models));
  state->identity_prefix = std::filesystem::absolute(config.models.front()).string() + "|";
  HEARTH_TRY(storage::Database db, storage::Database::open(config.file));
  state->db.emplace(std::move(db));
  state->cache.emplace(*state->db, config.capacity_bytes);
  // Replies of an earlier version of the model files never answer again.
  HEARTH_CHECK(state->cache->drop_other_versions(state->identity_prefix, state->identity));
  return std::unique_ptr<SemanticReplyCache>(new SemanticReplyCache(std::move(state)));
}

double SemanticReplyCache::min_similarity() const { return state_->config.min_similarity; }

Result<std::optional<SemanticKey>> SemanticReplyCache::key_of(const ParsedRequest& p) {
  if (p.endpoint != Endpoint::ChatCompletions || p.sampler.temperature > 0 || p.top_logprobs >= 0) {
    return std::optional<SemanticKey>();
  }
  size_t last_user = p.messages.size();
  for (size_t i = p.messages.size(); i-- > 0;) {
    if (p.messages[i].role == "user") {
      last_user = i;
      break;
    }
  }
  if (last_user == p.messages.size()) return std::optional<SemanticKey>();
  std::string context;
  field(context, p.model);
  for (size_t i = 0; i < p.messages.size(); ++i) {
    if (i == last_user) {
      field(context, "<question>");
      continue;
    }
    field(context, p.messages[i].role);
    field(context, p.messages[i].content);
  }
  const sampling::SamplerConfig& sc = p.sampler;
  field(context, fmt::format("{}/{}/{}/{}/{}/{}/{}", sc.top_k, sc.top_p, sc.min_p, sc.repeat_penalty,
                             sc.presence_penalty, sc.frequency_penalty, p.max_tokens.value_or(-1)));
  for (const auto& stop : p.stop) field(context, stop);
  field(context, fmt::format("{}/{}/{}", static_cast<int>(p.format), p.schema.dump(), p.ignore_eos));
  SemanticKey key;
  key.context = documents::sha256_hex(context);
  key.question = p.messages[last_user].content;
  HEARTH_TRY(key.embedding, state_->embed(key.question));
  return std::optional<SemanticKey>(std::move(key));
}

Result<std::optional<SemanticReply>> SemanticReplyCache::find(const SemanticKey& key) {
  std::lock_guard lock(state_->mutex);
  HEARTH_TRY(auto hit, state_->cache->nearest(state_->identity, key.context, key.embedding,
                                              state_->config.min_similarity));
  if (!hit) return std::optional<SemanticReply>();
  return std::optional<SemanticReply>(SemanticReply{hit->question, hit->reply, hit->token_count, hit->similarity});
}

Status SemanticReplyCache::store(const SemanticKey& key, const std::string& reply, int64_t tokens) {
  std::lock_guard lock(state_->mutex);
  return state_->cache->put({state_->identity, key.context, key.question, key.embedding, reply, tokens});
}

}  // namespace hearth::server
