#include "hearth/engine/runtime/prefix_reuse.h"

#include <algorithm>
#include <vector>

namespace hearth::runtime {

Result<ReuseResult> prefill_reusing(Session& session, kv::PrefixIndex* index, std::span<const int32_t> tokens,
                                    const Cancellation& cancel) {
  if (tokens.empty()) return make_error(ErrorCode::InvalidArgument, "prefill_reusing: empty request");
  // Keep one token to prefill so the request ends with fresh logits.
  const int64_t max_reuse = static_cast<int64_t>(tokens.size()) - 1;
  const auto& held = session.context();
  const auto mismatch = std::mismatch(held.begin(), held.end(), tokens.begin(), tokens.end());
  const int64_t common = std::min<int64_t>(mismatch.first - held.begin(), max_reuse);

  int64_t reused = common;
  // Rows restored into sliding-window rings are not trusted (kv_rows.h), and
  // rows read from them are stale: windowed caches only reuse the session's
  // own prefix.
  if (session.cache().has_rings()) index = nullptr;
  if (index != nullptr && common < max_reuse) {
    // The index may hold more than what the session shares. Restoring
    // overwrites positions from 0, which equal the common prefix anyway.
    HEARTH_TRY(const int64_t restored, index->restore(session.cache(), tokens, max_reuse));
    reused = std::max(common, restored);
  }
  HEARTH_CHECK(session.adopt_context(std::vector<int32_t>(tokens.begin(), tokens.begin() + reused)));
  HEARTH_CHECK(session.prefill(tokens.subspan(static_cast<size_t>(reused)), cancel));
  if (index != nullptr) HEARTH_CHECK(index->store(session.cache(), tokens));
  return ReuseResult{reused, static_cast<int64_t>(tokens.size()) - reused};
}

}  // namespace hearth::runtime
