// The state behind Tokenizer, shared by tokenizer.cpp and detokenizer.cpp.
#pragma once

#include <hearth/engine/tokenizer/pre_tokenizer.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <array>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bpe_model.h"
#include "special_split.h"

namespace hearth::tokenizer {

struct Tokenizer::Impl {
  Vocabulary vocab;
  Logger logger;
  std::vector<TokenId> specials;  // by decreasing text length
  std::vector<std::string> pieces;  // every token's bytes, special tokens shown

  // SentencePiece
  std::array<TokenId, 256> byte_tokens{};

  // WordPiece: the longest token text, which bounds the greedy match.
  size_t wpm_max_piece_bytes = 0;

  // Byte-level BPE
  std::optional<detail::BpeModel> bpe;
  std::optional<PreTokenizer> pre;

  // Words repeat a lot in real text; their ids are cached. Bounded: cleared
  // when it grows past kMaxCachedWords.
  static constexpr size_t kMaxCachedWords = 1 << 16;
  mutable std::mutex cache_mutex;
  mutable std::unordered_map<std::string, std::vector<TokenId>, Vocabulary::TextHash, std::equal_to<>> word_cache;

  // Ids of text already cut into special tokens and raw fragments.
  std::vector<TokenId> encode_fragments(std::string_view text, AddSpecial add_special,
                                        const std::vector<detail::Fragment>& fragments) const;
  void tokenize_bpe_fragment(std::string_view fragment, std::vector<TokenId>& out) const;
  void encode_bpe_word(std::string_view word, std::vector<TokenId>& out) const;
};

// Renders one token's bytes for the piece table (special tokens shown).
std::string render_piece(const Vocabulary& vocab, TokenId id);

}  // namespace hearth::tokenizer
