// Splits input text around special-token text before tokenization, as the
// reference does: longest special tokens first, each one cut out of every
// remaining raw fragment. Control and unknown tokens take part only when the
// caller asks to parse special tokens; user-defined tokens always do.
#pragma once

#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tokenizer/vocab.h>

#include <span>
#include <string_view>
#include <vector>

namespace hearth::tokenizer::detail {

struct Fragment {
  TokenId token = kNoToken;  // a special token, or kNoToken for raw text
  size_t begin = 0;          // raw text byte range
  size_t end = 0;
};

// Special tokens (control, user-defined, unknown) by decreasing text length.
std::vector<TokenId> special_tokens_by_length(const Vocabulary& vocab);

// `literal` (sorted, non-overlapping byte ranges of `text`): with parse Yes,
// control and unknown token text that overlaps one of them stays raw text.
std::vector<Fragment> split_special(const Vocabulary& vocab, const std::vector<TokenId>& specials,
                                    std::string_view text, ParseSpecial parse,
                                    std::span<const ByteRange> literal = {});

}  // namespace hearth::tokenizer::detail
