// Splits raw text into words before BPE merges, with the regexes the
// model's tokenizer was trained with (PCRE2, UTF mode, JIT-compiled).
// A kind is a sequence of regexes: each one splits every piece produced by
// the previous one into its matches and the unmatched text between them.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/tokenizer/vocab.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::tokenizer {

struct Span {
  size_t begin = 0;  // byte offset
  size_t end = 0;    // one past the last byte
};

class PreTokenizer {
 public:
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  static Result<PreTokenizer> create(PreTokenizerKind kind);
  // Compiles an arbitrary sequence (tests). Patterns use PCRE2 syntax;
  // \s and \S are rewritten to the reference's whitespace set.
  static Result<PreTokenizer> from_patterns(const std::vector<std::string>& patterns);

  // `text` must be valid UTF-8 (callers sanitize first). Returns the
  // non-empty pieces covering `text` in order.
  std::vector<Span> split(std::string_view text) const;

 private:
  struct Impl;
  explicit PreTokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The regex sequence of a kind, in PCRE2 syntax (before \s rewriting).
std::vector<std::string> pre_tokenizer_patterns(PreTokenizerKind kind);

// Maps a `tokenizer.ggml.pre` name to its kind; false when unknown.
bool pre_tokenizer_from_name(std::string_view name, PreTokenizerKind& kind);

}  // namespace hearth::tokenizer
