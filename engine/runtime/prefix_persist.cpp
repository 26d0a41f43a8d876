#include "hearth/engine/runtime/prefix_persist.h"

#include <hearth/engine/kv/kv_rows.h>

#include <fmt/format.h>

namespace hearth::runtime {

kv::KvLayout layout_of(const kv::KvCache& cache) {
  const auto& c = cache.config();
  return kv::KvLayout{c.type, c.n_layer, c.n_head_kv, c.head_dim};
}

Status save_prefix(kv::PrefixDiskCache& disk, const kv::ModelIdentity& model, Session& session,
                   int64_t n_tokens) {
  const auto& ctx = session.context();
  if (n_tokens <= 0 || n_tokens > static_cast<int64_t>(ctx.size())) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("save_prefix: {} tokens requested, the session holds {}", n_tokens, ctx.size()));
  }
  // Sliding-window rings no longer hold the start of the prompt, and a
  // restore into them is not trusted anyway (kv_rows.h): nothing to save.
  if (session.cache().has_rings()) return {};
  auto& cache = session.cache();
  HEARTH_TRY(auto payload, kv::read_positions(cache, 0, n_tokens));
  return disk.save(model, layout_of(cache), std::span<const int32_t>(ctx.data(), static_cast<size_t>(n_tokens)),
                   payload);
}

Result<int64_t> restore_prefix(kv::PrefixDiskCache& disk, const kv::ModelIdentity& model, Session& session,
                               std::span<const int32_t> tokens) {
  if (tokens.size() < 2 || session.cache().has_rings()) return int64_t{0};  // as in save_prefix
  HEARTH_TRY(auto found, disk.load_longest_prefix(model, layout_of(session.cache()), tokens.first(tokens.size() - 1)));
  if (!found) return int64_t{0};
  const auto n = static_cast<int64_t>(found->tokens.size());
  if (n > session.n_ctx() || kv::position_span_bytes(session.cache(), n) != found->payload.size()) return int64_t{0};
  HEARTH_CHECK(kv::write_positions(session.cache(), 0, found->payload));
  HEARTH_CHECK(session.adopt_context(std::move(found->tokens)));
  return n;
}

}  // namespace hearth::runtime
