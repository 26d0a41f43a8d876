#define PCRE2_CODE_UNIT_WIDTH 8
#include <hearth/engine/tokenizer/pre_tokenizer.h>

#include <pcre2.h>

#include <fmt/format.h>

namespace hearth::tokenizer {

namespace {

// The reference engine's whitespace set (Unicode White_Space), used for \s
// everywhere. PCRE2's own \s would miss U+0085 (NEL).
constexpr const char* kWhitespaceSet =
    "\\t\\n\\x0B\\f\\r\\x20\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// Rewrites \s and \S so that they mean exactly kWhitespaceSet, inside and
// outside character classes.
std::string rewrite_whitespace(const std::string& pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char n = pattern[i + 1];
      if (n == 's') {
        out += in_class ? std::string(kWhitespaceSet) : fmt::format("[{}]", kWhitespaceSet);
      } else if (n == 'S' && !in_class) {
        out += fmt::format("[^{}]", kWhitespaceSet);
      } else {
        out += c;
        out += n;
      }
      ++i;
      continue;
    }
    if (c == '[' && !in_class) in_class = true;
    else if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

// GPT-2's split: contractions, letter runs, digit runs, other runs, each with
// an optional leading space, and whitespace not followed by a non-space.
constexpr const char* kGpt2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";

// Llama 3 (tiktoken cl100k-style): case-insensitive contractions, a letter run
// with one optional leading non-letter, digits in groups of at most three.
constexpr const char* kLlama3 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Qwen2: as Llama 3 but every digit is its own piece.
constexpr const char* kQwen2 =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}"
    "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// CJK ideographs, U+0800..U+4E00 and Hangul, as DeepSeek's tokenizers list
// them ([一-龥ࠀ-一가-퟿]). The reference hides whitespace from this class (it
// rewrites non-ASCII spaces before matching), so the spaces inside
// U+0800..U+4E00 (U+1680, U+2000..U+200A, U+2028/9, U+202F, U+205F, U+3000)
// are cut out here.
constexpr const char* kDeepseekCjk =
    "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{167F}\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}\\x{202A}-\\x{202E}"
    "\\x{2030}-\\x{205E}\\x{2060}-\\x{2FFF}\\x{3001}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";

// The reference engine's default split, for BPE files that name no (known)
// pre-tokenizer. Four passes, each over the pieces of the one before:
//  1. runs of punctuation and of the ASCII symbols $ + < = > ^ ~ | (not the
//     backtick, and no non-ASCII symbol) become pieces of their own;
//  2. the GPT-2 split inside every piece;
//  3. digit runs are cut away from what precedes them (so " 42" -> " ", "42");
//  4. ASCII digit runs are cut into groups of three from the left.
// The reference matches \p{P} and \p{N} by Unicode general category for
// non-ASCII characters and by their ASCII members otherwise (the same sets as
// PCRE2's \p{P} and \p{N}, up to the Unicode version of each side's tables),
// and [0-9] on ASCII digits only; PCRE2 in UTF mode reads these patterns the
// same way.
constexpr const char* kDefaultPunct = "[\\p{P}$+<=>^~|]+";

struct CompiledPattern {
  pcre2_code* code = nullptr;
};

}  // namespace

std::vector<std::string> pre_tokenizer_patterns(PreTokenizerKind kind) {
  switch (kind) {
    case PreTokenizerKind::Default:
      return {kDefaultPunct, kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"};
    case PreTokenizerKind::Gpt2:
      return {kGpt2};
    case PreTokenizerKind::Llama3:
      return {kLlama3};
    case PreTokenizerKind::Qwen2:
      return {kQwen2};
    case PreTokenizerKind::DeepseekCoder:
      return {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, "\\p{N}"};
    case PreTokenizerKind::DeepseekLlm:
      return {
          "[\\r\\n]",
          // The cased letters DeepSeek LLM's tokenizer.json lists (as code point
          // ranges: literal characters would be at the mercy of normalization).
          "\\s?[A-Za-z\\x{00B5}\\x{00C0}-\\x{00D6}\\x{00D8}-\\x{00F6}\\x{00F8}-\\x{01BA}\\x{01BC}-\\x{01BF}"
          "\\x{01C4}-\\x{0293}\\x{0295}-\\x{02AF}\\x{0370}-\\x{0373}\\x{0376}-\\x{0377}\\x{037B}-\\x{037D}"
          "\\x{037F}\\x{0386}\\x{0388}-\\x{038A}\\x{038C}\\x{038E}-\\x{03A1}\\x{03A3}-\\x{03F5}"
          "\\x{03F7}-\\x{0481}\\x{048A}-\\x{052F}\\x{0531}-\\x{0556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
          "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}"
          "\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}"
          "\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}"
          "\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}"
          "\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
          "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}\\x{212A}-\\x{212D}"
          "\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}\\x{214E}\\x{2183}-\\x{2184}"
          "\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}\\x{2CF2}-\\x{2CF3}\\x{A640}-\\x{A66D}"
          "\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}"
          "\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
          "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}"
          "\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
          // ASCII and fullwidth punctuation, quotes, 、。 ([!-/:-~！-／：-～‘-‟　-。]
          // without U+3000, which the reference sees as whitespace only).
          "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3001}-\\x{3002}]+",
          "\\s+$",
          kDeepseekCjk,
          "\\p{N}+",
      };
    case PreTokenizerKind::Falcon:
      return {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"};
    case PreTokenizerKind::Starcoder:
      return {"\\p{N}", kGpt2};
  }
  return {kGpt2};
}

bool pre_tokenizer_from_name(std::string_view name, PreTokenizerKind& kind) {
  struct Entry {
    std::string_view name;
    PreTokenizerKind kind;
  };
  static constexpr Entry kTable[] = {
      {"default", PreTokenizerKind::Default},       {"gpt-2", PreTokenizerKind::Gpt2},
      {"gpt2", PreTokenizerKind::Gpt2},             {"mpt", PreTokenizerKind::Gpt2},
      {"gpt-neox", PreTokenizerKind::Gpt2},         {"olmo", PreTokenizerKind::Gpt2},
      {"jais", PreTokenizerKind::Gpt2},             {"phi-2", PreTokenizerKind::Gpt2},
      {"roberta-bpe", PreTokenizerKind::Gpt2},      {"llama-bpe", PreTokenizerKind::Llama3},
      {"llama3", PreTokenizerKind::Llama3},         {"llama-v3", PreTokenizerKind::Llama3},
      {"falcon3", PreTokenizerKind::Llama3},        {"dbrx", PreTokenizerKind::Llama3},
      {"smaug-bpe", PreTokenizerKind::Llama3},      {"qwen2", PreTokenizerKind::Qwen2},
      {"deepseek-r1-qwen", PreTokenizerKind::Qwen2}, {"stablelm2", PreTokenizerKind::Qwen2},
      {"megrez", PreTokenizerKind::Qwen2},          {"deepseek-coder", PreTokenizerKind::DeepseekCoder},
      {"deepseek-llm", PreTokenizerKind::DeepseekLlm}, {"falcon", PreTokenizerKind::Falcon},
      {"starcoder", PreTokenizerKind::Starcoder},   {"refact", PreTokenizerKind::Starcoder},
      {"command-r", PreTokenizerKind::Starcoder},   {"smollm", PreTokenizerKind::Starcoder},
      {"codeshell", PreTokenizerKind::Starcoder},   {"exaone", PreTokenizerKind::Starcoder},
      {"minerva-7b", PreTokenizerKind::Starcoder},
  };
  for (const auto& e : kTable) {
    if (e.name == name) {
      kind = e.kind;
      return true;
    }
  }
  return false;
}

struct PreTokenizer::Impl {
  std::vector<CompiledPattern> patterns;
  ~Impl() {
    for (auto& p : patterns) pcre2_code_free(p.code);
  }
};

PreTokenizer::PreTokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

Result<PreTokenizer> PreTokenizer::create(PreTokenizerKind kind) {
  return from_patterns(pre_tokenizer_patterns(kind));
}

Result<PreTokenizer> PreTokenizer::from_patterns(const std::vector<std::string>& patterns) {
  auto impl = std::make_unique<Impl>();
  for (const auto& source : patterns) {
    const std::string pattern = rewrite_whitespace(source);
    int error_code = 0;
    PCRE2_SIZE error_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_DOLLAR_ENDONLY, &error_code, &error_offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error_code, message, sizeof(message));
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("pre-tokenizer regex '{}' does not compile at offset {}: {}", source,
                                    error_offset, reinterpret_cast<const char*>(message)));
    }
    // JIT is an optimisation only: without it pcre2_match interprets.
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    impl->patterns.push_back(CompiledPattern{code});
  }
  return PreTokenizer(std::move(impl));
}

std::vector<Span> PreTokenizer::split(std::string_view text) const {
  std::vector<Span> pieces;
  if (text.empty()) return pieces;
  pieces.push_back(Span{0, text.size()});
  std::vector<Span> next;
  for (const auto& pattern : impl_->patterns) {
    pcre2_match_data* match = pcre2_match_data_create_from_pattern(pattern.code, nullptr);
    next.clear();
    next.reserve(pieces.size() * 2);
    for (const Span piece : pieces) {
      // Each piece is matched as its own subject, so lookarounds and `$`
      // stop at the piece's edges, as in the reference.
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + piece.begin);
      const size_t length = piece.end - piece.begin;
      size_t offset = 0;
      size_t emitted = 0;  // end of the last piece pushed, relative to the subject
      while (offset < length) {
        const int rc = pcre2_match(pattern.code, subject, length, offset, PCRE2_NO_UTF_CHECK, match, nullptr);
        if (rc < 0) break;  // no match (or a matching error): the rest is one unmatched piece
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
        const size_t start = ov[0];
        const size_t end = ov[1];
        if (end <= start) {
          // An empty match: step over one character to make progress.
          offset = start + 1;
          while (offset < length && (static_cast<uint8_t>(subject[offset]) & 0xC0) == 0x80) ++offset;
          continue;
        }
        if (start > emitted) next.push_back(Span{piece.begin + emitted, piece.begin + start});
        next.push_back(Span{piece.begin + start, piece.begin + end});
        emitted = end;
        offset = end;
      }
      if (emitted < length) next.push_back(Span{piece.begin + emitted, piece.end});
    }
    pcre2_match_data_free(match);
    pieces.swap(next);
  }
  return pieces;
}

}  // namespace hearth::tokenizer
