// Prefilling a request while reusing what is already computed: the longest
// common prefix with what the session holds (a regenerated reply, an edited
// last message) or, when longer, the longest prefix the in-memory prefix index
// holds (a new conversation with the same system prompt). Only the rest is
// prefilled, and the request's whole blocks are stored back in the index.
#pragma once

#include <hearth/engine/kv/prefix_index.h>
#include <hearth/engine/runtime/session.h>

#include <cstdint>
#include <span>

namespace hearth::runtime {

struct ReuseResult {
  int64_t reused_tokens = 0;     // positions not recomputed
  int64_t prefilled_tokens = 0;  // positions computed by this call
};

// Replaces the session's context by `tokens` (at least one is always
// prefilled, so last_logits() belongs to the last token). `index` may be null;
// it is not used when the session's cache has sliding-window rings.
Result<ReuseResult> prefill_reusing(Session& session, kv::PrefixIndex* index, std::span<const int32_t> tokens,
                                    const Cancellation& cancel = {});

}  // namespace hearth::runtime
