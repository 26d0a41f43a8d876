// A tokenizer vocabulary as GGUF metadata describes it (`tokenizer.ggml.*`):
// token texts, scores, attributes, BPE merges, special token ids and the
// flags that steer tokenization. Every id is validated against the
// vocabulary size when it is built.
#pragma once

#include <hearth/core/log.h>
#include <hearth/core/result.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hearth::gguf {
class GgufFile;
}

namespace hearth::tokenizer {

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

// Per-token attributes (a bit set). GGUF stores a token *type*
// (`tokenizer.ggml.token_type`); the loader turns it into one of the first
// seven attributes and adds LStrip/RStrip where the model needs them.
enum class TokenAttr : uint32_t {
  None = 0,
  Undefined = 1u << 0,
  Unknown = 1u << 1,
  Unused = 1u << 2,
  Normal = 1u << 3,
  Control = 1u << 4,
  UserDefined = 1u << 5,
  Byte = 1u << 6,
  LStrip = 1u << 7,  // swallow whitespace left of the token when matched in text
  RStrip = 1u << 8,  // swallow whitespace right of the token when matched in text
};

constexpr TokenAttr operator|(TokenAttr a, TokenAttr b) {
  return static_cast<TokenAttr>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
}
constexpr TokenAttr operator&(TokenAttr a, TokenAttr b) {
  return static_cast<TokenAttr>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
}
constexpr TokenAttr operator~(TokenAttr a) { return static_cast<TokenAttr>(~static_cast<uint32_t>(a)); }
constexpr bool has_any(TokenAttr set, TokenAttr bits) { return (set & bits) != TokenAttr::None; }

// GGUF token type values (`tokenizer.ggml.token_type`).
enum class GgufTokenType : int32_t {
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

TokenAttr attr_from_gguf_type(int64_t type);

enum class VocabKind {
  SentencePiece,  // tokenizer.ggml.model = "llama": score-driven merges, byte fallback
  BytePairBpe,    // tokenizer.ggml.model = "gpt2": ranked merges over GPT-2 byte symbols
  WordPiece,      // tokenizer.ggml.model = "bert": BERT's basic tokenizer, then greedy longest pieces
};

// The regex split applied before BPE merges, named by `tokenizer.ggml.pre`.
enum class PreTokenizerKind {
  Default,        // "default", and a BPE file without (or with an unknown) `tokenizer.ggml.pre`
  Gpt2,           // "gpt-2", "mpt", "gpt-neox", "phi-2", "olmo", ...
  Llama3,         // "llama-bpe", "llama3", "llama-v3", "falcon3", ...
  Qwen2,          // "qwen2", "deepseek-r1-qwen", "stablelm2", "megrez"
  DeepseekCoder,  // "deepseek-coder"
  DeepseekLlm,    // "deepseek-llm"
  Falcon,         // "falcon"
  Starcoder,      // "starcoder", "refact", "command-r", "smollm", "codeshell", ...
};

const char* to_string(PreTokenizerKind kind);

struct TokenData {
  std::string text;
  float score = 0.0f;
  TokenAttr attr = TokenAttr::Normal;
};

// Special token ids; kNoToken when the vocabulary has none.
struct SpecialTokens {
  TokenId bos = kNoToken;
  TokenId eos = kNoToken;
  TokenId eot = kNoToken;
  TokenId eom = kNoToken;
  TokenId unk = kNoToken;
  TokenId sep = kNoToken;
  TokenId pad = kNoToken;
  TokenId mask = kNoToken;
  TokenId fim_pre = kNoToken;
  TokenId fim_suf = kNoToken;
  TokenId fim_mid = kNoToken;
  TokenId fim_pad = kNoToken;
  TokenId fim_rep = kNoToken;
  TokenId fim_sep = kNoToken;
};

struct Vocabulary {
  VocabKind kind = VocabKind::SentencePiece;
  PreTokenizerKind pre = PreTokenizerKind::Default;
  std::string pre_name;  // `tokenizer.ggml.pre` as written in the file

  std::vector<TokenData> tokens;  // indexed by TokenId
  // BPE merges in rank order (rank = index): the two halves of each
  // `tokenizer.ggml.merges` entry "left right". Empty for SentencePiece.
  std::vector<std::pair<std::string, std::string>> merges;

  SpecialTokens special;
  // Tokens that end a generation (EOS, EOT, EOM and well-known end markers).
  std::vector<TokenId> eog;

  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SentencePiece: prefix raw text with a space
  bool clean_spaces = false;      // detokenizer: drop spaces before punctuation
  bool ignore_merges = false;     // BPE: a word that is itself a token is not merged

  size_t size() const { return tokens.size(); }
  bool valid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < tokens.size(); }
  TokenAttr attr(TokenId id) const { return valid(id) ? tokens[static_cast<size_t>(id)].attr : TokenAttr::Undefined; }
  bool is_eog(TokenId id) const;

  // Exact text lookup over every token (the last one wins on duplicates).
  TokenId find(std::string_view text) const;

  // Builds the text index and derived attributes (end-of-generation list,
  // well-known control markers) and validates every id. Call after filling
  // the fields above; `from_gguf` does it for you.
  Status finalize(const Logger& logger = {});

  // Reads `tokenizer.ggml.*` from a GGUF file. Errors name the file and key.
  static Result<Vocabulary> from_gguf(const gguf::GgufFile& file, const Logger& logger = {});

  // Heterogeneous lookup so find() takes a string_view without copying.
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Internal index; use find().
  std::unordered_map<std::string, TokenId, TextHash, std::equal_to<>> text_index;
};

}  // namespace hearth::tokenizer
