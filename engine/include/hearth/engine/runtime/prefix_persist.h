// Persistent prefixes: the K/V rows of a prefix (a system prompt, or a whole
// conversation on close) saved through PrefixDiskCache and restored into a
// session after an engine restart. The disk cache validates the model
// identity, layout and checksum; anything stale is ignored and deleted.
#pragma once

#include <hearth/engine/kv/prefix_disk_cache.h>
#include <hearth/engine/runtime/session.h>

#include <cstdint>
#include <span>

namespace hearth::runtime {

kv::KvLayout layout_of(const kv::KvCache& cache);

// Saves the first `n_tokens` positions of the session's context. Sessions
// whose cache has sliding-window rings save and restore nothing.
Status save_prefix(kv::PrefixDiskCache& disk, const kv::ModelIdentity& model, Session& session,
                   int64_t n_tokens);

// Restores the longest saved prefix of `tokens` (at most tokens.size() - 1, so
// the caller's prefill of the rest yields fresh logits) as the session's
// context; returns its length (0 when none applies).
Result<int64_t> restore_prefix(kv::PrefixDiskCache& disk, const kv::ModelIdentity& model, Session& session,
                               std::span<const int32_t> tokens);

}  // namespace hearth::runtime
