// Token -> bytes, and whole-sequence detokenization with the reference's
// leading-space and clean-up rules.
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tokenizer/utf8.h>

#include "tokenizer_impl.h"

namespace hearth::tokenizer {

namespace {

constexpr TokenAttr kHiddenUnlessShown = TokenAttr::Control | TokenAttr::Unknown;

// SentencePiece writes spaces as U+2581.
std::string unescape_spm(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 3, "\xE2\x96\x81") == 0) {
      out += ' ';
      i += 3;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// `<0xNN>` -> the byte; -1 when the text is not of that form.
int parse_byte_token(const std::string& text) {
  if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return -1;
  int value = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = text[i];
    int digit;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else return -1;
    value = value * 16 + digit;
  }
  return value;
}

// Byte-level BPE text -> bytes. A character outside the 256 byte symbols
// (possible in hand-made vocabularies) is kept as its own UTF-8.
std::string decode_bpe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const uint32_t cp : decode_utf8_lenient(text)) {
    const int byte = gpt2_codepoint_to_byte(cp);
    if (byte >= 0) {
      out += static_cast<char>(byte);
    } else {
      append_utf8(cp, out);
    }
  }
  return out;
}

// The reference's clean-up of tokenization spaces, three passes over bytes:
// " ?", " !", " .", " ," lose the space; " ' " becomes "'"; " 's", " 'm",
// " 're", " 've" lose the space.
void clean_spaces(std::string& text) {
  if (text.empty()) return;
  size_t total = 1;
  for (size_t i = 1; i < text.size(); ++i) {
    const char x = text[i];
    if (text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
    text[total++] = x;
  }
  text.resize(total);

  const size_t n2 = text.size();
  total = 1;
  for (size_t i = 1; i < n2; ++i) {
    const char x = text[i];
    if (x == '\'' && i + 1 < n2 && text[i - 1] == ' ' && text[i + 1] == ' ') {
      --total;           // drop the space before
      text[++i] = '\0';  // and the one after; the marker also stops the next check
    }
    text[total++] = x;
  }
  text.resize(total);

  const size_t n3 = text.size();
  total = 1;
  for (size_t i = 1; i < n3; ++i) {
    const char x = text[i];
    if (text[i - 1] == ' ' && x == '\'' && i + 1 < n3) {
      const char x1 = text[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --total;
      } else if (i + 2 < n3 && ((x1 == 'r' && text[i + 2] == 'e') || (x1 == 'v' && text[i + 2] == 'e'))) {
        --total;
      }
    }
    text[total++] = x;
  }
  text.resize(total);
}

}  // namespace

std::string render_piece(const Vocabulary& vocab, TokenId id) {
  const TokenData& t = vocab.tokens[static_cast<size_t>(id)];
  if (has_any(t.attr, kHiddenUnlessShown | TokenAttr::UserDefined)) return t.text;
  if (vocab.kind == VocabKind::WordPiece) {
    // "▁play" starts a word (a space before it), "ing" continues one.
    return has_any(t.attr, TokenAttr::Normal) ? unescape_spm(t.text) : std::string();
  }
  if (vocab.kind == VocabKind::SentencePiece) {
    if (has_any(t.attr, TokenAttr::Normal)) return unescape_spm(t.text);
    if (has_any(t.attr, TokenAttr::Byte)) {
      const int byte = parse_byte_token(t.text);
      return byte < 0 ? std::string() : std::string(1, static_cast<char>(byte));
    }
    return {};
  }
  if (has_any(t.attr, TokenAttr::Normal)) return decode_bpe(t.text);
  return {};  // unused and undefined tokens render as nothing
}

std::string Tokenizer::token_to_piece(TokenId id, ShowSpecial show, int lstrip) const {
  const Impl& im = *impl_;
  if (!im.vocab.valid(id)) return {};
  if (show == ShowSpecial::No && has_any(im.vocab.tokens[static_cast<size_t>(id)].attr, kHiddenUnlessShown)) {
    return {};
  }
  const std::string& piece = im.pieces[static_cast<size_t>(id)];
  size_t skip = 0;
  while (skip < piece.size() && static_cast<int>(skip) < lstrip && piece[skip] == ' ') ++skip;
  return piece.substr(skip);
}

std::string Tokenizer::detokenize(std::span<const TokenId> ids, const DetokenizeOptions& options) const {
  const Vocabulary& v = impl_->vocab;
  bool remove_space = v.add_space_prefix;
  if (options.remove_special == RemoveSpecial::Yes && v.add_bos && !ids.empty() && ids.front() == v.special.bos) {
    // The reference keeps the space prefix of the token after a removed BOS.
    remove_space = false;
    ids = ids.subspan(1);
  }
  if (options.remove_special == RemoveSpecial::Yes && v.add_eos && !ids.empty() && ids.back() == v.special.eos) {
    ids = ids.first(ids.size() - 1);
  }
  std::string text;
  for (const TokenId id : ids) {
    text += token_to_piece(id, options.show_special, remove_space ? 1 : 0);
    remove_space = false;
  }
  if (options.cleanup == SpaceCleanup::AsVocab && v.clean_spaces) clean_spaces(text);
  return text;
}

}  // namespace hearth::tokenizer
