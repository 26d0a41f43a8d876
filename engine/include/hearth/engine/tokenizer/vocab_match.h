// Whether a second model tokenizes exactly as a first one: a draft model for
// speculative decoding proposes token ids the target verifies, so every id
// must stand for the same text in both (padding rows past the real tokens
// may differ).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/gguf/reader.h>

#include <filesystem>

namespace hearth::tokenizer {

// Why `draft`'s tokens differ from `target`'s (size, kind, start/end tokens,
// the first token whose text differs), or nothing when they match.
Status check_draft_tokens(const gguf::GgufFile& target, const gguf::GgufFile& draft);
// The same from the files' headers (no weights are read): what a
// draft-model chooser lists.
Status check_draft_token_files(const std::filesystem::path& target, const std::filesystem::path& draft);

}  // namespace hearth::tokenizer
