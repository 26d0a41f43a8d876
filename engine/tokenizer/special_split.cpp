#include "special_split.h"

#include <algorithm>

namespace hearth::tokenizer::detail {

std::vector<TokenId> special_tokens_by_length(const Vocabulary& vocab) {
  std::vector<TokenId> ids;
  for (size_t i = 0; i < vocab.size(); ++i) {
    if (has_any(vocab.tokens[i].attr, TokenAttr::Control | TokenAttr::UserDefined | TokenAttr::Unknown)) {
      ids.push_back(static_cast<TokenId>(i));
    }
  }
  std::stable_sort(ids.begin(), ids.end(), [&](TokenId a, TokenId b) {
    return vocab.tokens[static_cast<size_t>(a)].text.size() > vocab.tokens[static_cast<size_t>(b)].text.size();
  });
  return ids;
}

namespace {

// The reference trims with C isspace: ASCII whitespace only.
bool ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

}  // namespace

namespace {

bool overlaps_literal(std::span<const ByteRange> literal, size_t begin, size_t end) {
  // First range that ends after `begin`; it overlaps when it starts before `end`.
  const auto it = std::upper_bound(literal.begin(), literal.end(), begin,
                                   [](size_t at, const ByteRange& r) { return at < r.end; });
  return it != literal.end() && it->begin < end;
}

}  // namespace

std::vector<Fragment> split_special(const Vocabulary& vocab, const std::vector<TokenId>& specials,
                                    std::string_view text, ParseSpecial parse, std::span<const ByteRange> literal) {
  std::vector<Fragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back(Fragment{kNoToken, 0, text.size()});
  std::vector<Fragment> next;
  for (const TokenId id : specials) {
    const TokenData& data = vocab.tokens[static_cast<size_t>(id)];
    if (parse == ParseSpecial::No && has_any(data.attr, TokenAttr::Control | TokenAttr::Unknown)) continue;
    const std::string_view needle = data.text;
    // Message text may spell a control token; it must never become one.
    const bool guarded = !literal.empty() && has_any(data.attr, TokenAttr::Control | TokenAttr::Unknown);
    bool found_any = false;
    next.clear();
    for (const Fragment& f : fragments) {
      if (f.token != kNoToken || f.end - f.begin < needle.size()) {
        next.push_back(f);
        continue;
      }
      size_t begin = f.begin;
      const size_t end = f.end;
      while (begin < end) {
        size_t match = std::string_view::npos;
        for (size_t from = begin; from < end;) {
          const size_t hit = text.substr(from, end - from).find(needle);
          if (hit == std::string_view::npos) break;
          if (!guarded || !overlaps_literal(literal, from + hit, from + hit + needle.size())) {
            match = from + hit;
            break;
          }
          from += hit + 1;
        }
        if (match == std::string_view::npos) break;
        found_any = true;
        size_t left_end = match;
        if (has_any(data.attr, TokenAttr::LStrip)) {
          while (left_end > begin && ascii_space(text[left_end - 1])) --left_end;
        }
        if (left_end > begin) next.push_back(Fragment{kNoToken, begin, left_end});
        next.push_back(Fragment{id, match, match + needle.size()});
        begin = match + needle.size();
        if (has_any(data.attr, TokenAttr::RStrip)) {
          while (begin < end && ascii_space(text[begin])) ++begin;
        }
      }
      if (begin < end) next.push_back(Fragment{kNoToken, begin, end});
    }
    if (found_any) fragments.swap(next);
  }
  return fragments;
}

}  // namespace hearth::tokenizer::detail
