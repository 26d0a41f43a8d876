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

// CJK ideographs, the block below them and Hangul, as DeepSeek's tokenizers list them.
constexpr const char* kDeepseekCjk = "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+";

struct CompiledPattern {
  pcre2_code* code = nullptr;
};

}  // namespace

std::vector<std::string> pre_tokenizer_patterns(PreTokenizerKind kind) {
  switch (kind) {
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
          // The letters of DeepSeek LLM's tokenizer.json, written out as ranges.
          "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-ώᾀ-ᾴᾶ-ᾼιῂ-ῄῆ-ῌῐ-ΐῖ-Ίῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤΩℨK-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",
          "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
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
      {"default", PreTokenizerKind::Gpt2},          {"gpt-2", PreTokenizerKind::Gpt2},
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
