#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tokenizer/utf8.h>

#include "special_split.h"
#include "spm_model.h"
#include "wpm_model.h"
#include "tokenizer_impl.h"

namespace hearth::tokenizer {

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

const Vocabulary& Tokenizer::vocab() const { return impl_->vocab; }

Result<Tokenizer> Tokenizer::create(Vocabulary vocab, const Logger& logger) {
  auto impl = std::make_unique<Impl>();
  if (vocab.text_index.size() == 0) HEARTH_CHECK(vocab.finalize(logger));
  impl->vocab = std::move(vocab);
  impl->logger = logger;
  const Vocabulary& v = impl->vocab;
  impl->specials = detail::special_tokens_by_length(v);
  impl->pieces.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) impl->pieces[i] = render_piece(v, static_cast<TokenId>(i));
  if (v.kind == VocabKind::SentencePiece) {
    impl->byte_tokens = detail::spm_byte_tokens(v);
  } else if (v.kind == VocabKind::WordPiece) {
    impl->wpm_max_piece_bytes = detail::wpm_max_piece_bytes(v);
  } else {
    HEARTH_TRY(auto bpe, detail::BpeModel::build(v));
    impl->bpe.emplace(std::move(bpe));
    HEARTH_TRY(auto pre, PreTokenizer::create(v.pre));
    impl->pre.emplace(std::move(pre));
  }
  return Tokenizer(std::move(impl));
}

void Tokenizer::clear_cache() const {
  std::lock_guard lock(impl_->cache_mutex);
  impl_->word_cache.clear();
}

void Tokenizer::Impl::encode_bpe_word(std::string_view word, std::vector<TokenId>& out) const {
  {
    std::lock_guard lock(cache_mutex);
    const auto it = word_cache.find(word);
    if (it != word_cache.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t first = out.size();
  bpe->encode_word(vocab, word, out);
  std::lock_guard lock(cache_mutex);
  if (word_cache.size() >= kMaxCachedWords) word_cache.clear();
  word_cache.emplace(std::string(word), std::vector<TokenId>(out.begin() + static_cast<ptrdiff_t>(first), out.end()));
}

void Tokenizer::Impl::tokenize_bpe_fragment(std::string_view fragment, std::vector<TokenId>& out) const {
  if (utf8_valid(fragment)) {
    for (const Span s : pre->split(fragment)) encode_bpe_word(fragment.substr(s.begin, s.end - s.begin), out);
    return;
  }
  // The reference decodes leniently (bad bytes become U+FFFD) and re-encodes
  // before splitting. Surrogates it lets through are re-encoded as their
  // three raw bytes; the regex sees U+FFFD there, which is in the same
  // classes and has the same length, so the offsets agree.
  std::string words;
  std::string subject;
  for (const uint32_t cp : decode_utf8_lenient(fragment)) {
    const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    if (surrogate) {
      words.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      words.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      words.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      append_utf8(kReplacementChar, subject);
    } else {
      append_utf8(cp, words);
      append_utf8(cp, subject);
    }
  }
  const std::string_view w = words;
  for (const Span s : pre->split(subject)) encode_bpe_word(w.substr(s.begin, s.end - s.begin), out);
}

std::vector<TokenId> Tokenizer::tokenize(std::string_view text, AddSpecial add_special,
                                         ParseSpecial parse_special) const {
  return impl_->encode_fragments(text, add_special,
                                 detail::split_special(impl_->vocab, impl_->specials, text, parse_special));
}

std::vector<TokenId> Tokenizer::tokenize_guarded(std::string_view text, AddSpecial add_special,
                                                 std::span<const ByteRange> literal) const {
  return impl_->encode_fragments(
      text, add_special, detail::split_special(impl_->vocab, impl_->specials, text, ParseSpecial::Yes, literal));
}

std::vector<TokenId> Tokenizer::Impl::encode_fragments(std::string_view text, AddSpecial add_special,
                                                       const std::vector<detail::Fragment>& fragments) const {
  const Impl& im = *this;
  const Vocabulary& v = im.vocab;
  std::vector<TokenId> out;
  out.reserve(text.size() / 3 + 2);
  const bool add = add_special == AddSpecial::AsVocab;

  if (v.kind == VocabKind::SentencePiece) {
    if (add && v.add_bos) out.push_back(v.special.bos);
    bool previous_special = true;  // the first text fragment gets the space prefix
    std::string escaped;
    for (const auto& f : fragments) {
      if (f.token != kNoToken) {
        out.push_back(f.token);
        previous_special = true;
        continue;
      }
      escaped.clear();
      if (v.add_space_prefix && previous_special) escaped += "\xE2\x96\x81";
      for (size_t i = f.begin; i < f.end; ++i) {
        if (text[i] == ' ') {
          escaped += "\xE2\x96\x81";  // U+2581, SentencePiece's visible space
        } else {
          escaped += text[i];
        }
      }
      detail::spm_tokenize(v, im.byte_tokens, escaped, out);
      previous_special = false;
    }
    if (add && v.add_eos) out.push_back(v.special.eos);
    return out;
  }

  if (v.kind == VocabKind::WordPiece) {
    if (add && v.add_bos) out.push_back(v.special.bos);
    for (const auto& f : fragments) {
      if (f.token != kNoToken) {
        out.push_back(f.token);
      } else {
        detail::wpm_tokenize(v, im.wpm_max_piece_bytes, text.substr(f.begin, f.end - f.begin), out);
      }
    }
    if (add && v.add_eos) out.push_back(v.special.sep != kNoToken ? v.special.sep : v.special.eos);
    return out;
  }

  if (add && v.add_bos) out.push_back(v.special.bos);
  for (const auto& f : fragments) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
    } else {
      im.tokenize_bpe_fragment(text.substr(f.begin, f.end - f.begin), out);
    }
  }
  if (add && v.add_eos) out.push_back(v.special.eos);
  return out;
}

}  // namespace hearth::tokenizer
