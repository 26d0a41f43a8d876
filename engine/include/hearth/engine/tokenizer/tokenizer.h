// Text <-> token ids for SentencePiece-style and byte-level BPE vocabularies,
// matching the reference GGUF engine token for token.
#pragma once

#include <hearth/core/log.h>
#include <hearth/core/result.h>
#include <hearth/engine/tokenizer/vocab.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::tokenizer {

// Whether BOS/EOS are added as the vocabulary says (add_bos/add_eos).
enum class AddSpecial { No, AsVocab };
// Whether control/unknown token text in the input becomes those tokens.
// User-defined tokens are always matched, as the reference does.
enum class ParseSpecial { No, Yes };
// Whether control and unknown tokens are rendered as their text.
enum class ShowSpecial { No, Yes };
// Whether the detokenizer drops a leading BOS / trailing EOS the vocabulary adds.
enum class RemoveSpecial { No, Yes };
// Detokenizer post-processing: `AsVocab` applies the vocabulary's
// clean_spaces rule (" ." -> "."), `None` returns the raw concatenation.
enum class SpaceCleanup { AsVocab, None };

// Bytes [begin, end) of a text.
struct ByteRange {
  size_t begin = 0;
  size_t end = 0;
};

struct DetokenizeOptions {
  RemoveSpecial remove_special = RemoveSpecial::No;
  ShowSpecial show_special = ShowSpecial::No;
  SpaceCleanup cleanup = SpaceCleanup::AsVocab;
};

class Tokenizer {
 public:
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;
  ~Tokenizer();

  // Builds the tokenizer (BPE merge table, compiled pre-tokenizer regexes).
  static Result<Tokenizer> create(Vocabulary vocab, const Logger& logger = {});
  // Reads the vocabulary from a GGUF file and builds the tokenizer.
  static Result<Tokenizer> from_gguf(const gguf::GgufFile& file, const Logger& logger = {});

  const Vocabulary& vocab() const;

  // Never fails: any byte string (valid UTF-8 or not) yields ids.
  // Thread-safe; BPE words are cached internally.
  std::vector<TokenId> tokenize(std::string_view text, AddSpecial add_special = AddSpecial::AsVocab,
                                ParseSpecial parse_special = ParseSpecial::No) const;

  // As tokenize with ParseSpecial::Yes, except that control and unknown
  // token text overlapping a `literal` range (sorted, non-overlapping: the
  // messages inside a rendered chat prompt) stays plain text. Fragments are
  // cut exactly where tokenize would cut them otherwise, so a text without
  // such spellings inside those ranges tokenizes exactly as tokenize does.
  std::vector<TokenId> tokenize_guarded(std::string_view text, AddSpecial add_special,
                                        std::span<const ByteRange> literal) const;

  // Drops the cached BPE words (memory, or cold-cache measurements).
  void clear_cache() const;

  // The bytes one token stands for (may be a partial UTF-8 sequence).
  // `lstrip` removes up to that many leading spaces (the reference uses it
  // to drop the SentencePiece space prefix of the first token).
  std::string token_to_piece(TokenId id, ShowSpecial show = ShowSpecial::No, int lstrip = 0) const;

  // Whole-sequence decoding as the reference does it: the space prefix of
  // the first token is dropped when the vocabulary adds one (SentencePiece),
  // unless a BOS comes first. Invalid ids render as nothing.
  std::string detokenize(std::span<const TokenId> ids, const DetokenizeOptions& options = {}) const;

 private:
  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::tokenizer
