// WordPiece tokenization (`tokenizer.ggml.model = bert`) as the reference
// engine does it for GGUF vocabularies: BERT's basic tokenizer (Unicode
// decomposition with accents dropped, lowercasing, splitting at whitespace,
// punctuation and CJK characters), then greedy longest-match pieces per word.
// GGUF spells a word-start piece with a U+2581 prefix ("▁play") and a
// continuation piece bare ("ing"), so the word is matched as "▁" + word.
#pragma once

#include <hearth/engine/tokenizer/vocab.h>

#include <string>
#include <string_view>
#include <vector>

namespace hearth::tokenizer::detail {

// The words of `text` after BERT's basic tokenizer, lowercased and without
// accents. Invalid UTF-8 becomes U+FFFD, which is dropped like a control
// character. Case folding and accent removal cover Latin (Latin-1 and
// Latin Extended-A), Greek and Cyrillic; other scripts pass through as they are.
std::vector<std::string> wpm_words(std::string_view text);

// Appends the pieces of each word; a word with a position no piece matches
// becomes the unknown token as a whole (none when the vocabulary has none).
void wpm_tokenize(const Vocabulary& vocab, size_t max_piece_bytes, std::string_view text, std::vector<TokenId>& out);

// The longest token text in bytes (bounds the greedy match).
size_t wpm_max_piece_bytes(const Vocabulary& vocab);

}  // namespace hearth::tokenizer::detail
