// SentencePiece-style tokenization as the reference engine does it for
// `tokenizer.ggml.model = llama`: start from UTF-8 characters, repeatedly
// merge the adjacent pair whose concatenation is the highest-scoring token
// (leftmost on ties), then spell anything that is not a token as byte tokens.
#pragma once

#include <hearth/engine/tokenizer/vocab.h>

#include <array>
#include <string_view>
#include <vector>

namespace hearth::tokenizer::detail {

// The byte-fallback token of each byte: `<0xNN>` when present, else the
// single-character token, else the unknown token (may be kNoToken).
std::array<TokenId, 256> spm_byte_tokens(const Vocabulary& vocab);

// `text` is already escaped (spaces replaced by U+2581).
void spm_tokenize(const Vocabulary& vocab, const std::array<TokenId, 256>& byte_tokens, std::string_view text,
                  std::vector<TokenId>& out);

}  // namespace hearth::tokenizer::detail
