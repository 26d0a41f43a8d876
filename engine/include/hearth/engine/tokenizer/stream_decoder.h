// Incremental detokenization for streaming generation: feed token ids one
// at a time and get back only complete UTF-8 text. A character whose bytes
// are spread over several tokens (byte-fallback or byte-level BPE pieces)
// is held back until its last byte arrives.
#pragma once

#include <hearth/engine/tokenizer/tokenizer.h>

#include <string>

namespace hearth::tokenizer {

// What to do with the SentencePiece space prefix of the first text token.
enum class LeadingSpace {
  Keep,        // continuation of a prompt: every piece as is (the reference's per-token decoding)
  StripFirst,  // a fresh text: drop the space prefix when the vocabulary adds one
};

class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer, ShowSpecial show = ShowSpecial::No,
                         LeadingSpace leading = LeadingSpace::Keep);

  // Appends the token's bytes and returns the newly completed text (possibly empty).
  std::string push(TokenId id);
  // Returns whatever is still held back; invalid trailing bytes become U+FFFD.
  std::string flush();
  // Bytes currently held back (an incomplete UTF-8 sequence).
  size_t pending() const { return pending_.size(); }
  void reset();

 private:
  const Tokenizer* tokenizer_;
  ShowSpecial show_;
  LeadingSpace leading_;
  bool first_ = true;
  std::string pending_;
};

}  // namespace hearth::tokenizer
