// Byte-level BPE over one pre-tokenized word: the reference's merge loop
// (lowest rank first, leftmost on ties) on integer symbol ids.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/tokenizer/vocab.h>

#include <array>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pair_table.h"

namespace hearth::tokenizer::detail {

class BpeModel {
 public:
  static Result<BpeModel> build(const Vocabulary& vocab);

  // Appends the ids of one word given as raw bytes (before the GPT-2 byte
  // mapping).
  void encode_word(const Vocabulary& vocab, std::string_view word, std::vector<TokenId>& out) const;

 private:
  // Symbol ids: [0, n_vocab) are tokens; above that, strings that occur in
  // merges but are not tokens themselves (the reference still merges them).
  int32_t intern(const Vocabulary& vocab, const std::string& text);
  void emit_symbol(const Vocabulary& vocab, std::string_view word, uint32_t begin, uint32_t length, int32_t id,
                   std::vector<TokenId>& out) const;

  int32_t n_vocab_ = 0;
  std::unordered_map<std::string, int32_t> extra_ids_;
  std::array<int32_t, 256> byte_symbol_{};  // symbol of each byte's GPT-2 character, -1 if none
  std::array<std::string, 256> byte_text_;  // each byte's GPT-2 character, UTF-8
  PairTable pairs_;
  bool ignore_merges_ = false;
};

}  // namespace hearth::tokenizer::detail
