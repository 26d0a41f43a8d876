#include "spm_model.h"

#include <hearth/engine/tokenizer/utf8.h>

#include <algorithm>
#include <cstdio>

namespace hearth::tokenizer::detail {

std::array<TokenId, 256> spm_byte_tokens(const Vocabulary& vocab) {
  std::array<TokenId, 256> table{};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    TokenId id = vocab.find(name);
    if (id == kNoToken) {
      const char c = static_cast<char>(b);
      id = vocab.find(std::string_view(&c, 1));
    }
    if (id == kNoToken) id = vocab.special.unk;
    table[static_cast<size_t>(b)] = id;
  }
  return table;
}

namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t begin;
  uint32_t length;  // 0 once merged into the left neighbour
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t length;  // bytes of the merged text; a mismatch marks a stale entry
};

// Max-heap order: highest score first, then the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

void spm_tokenize(const Vocabulary& vocab, const std::array<TokenId, 256>& byte_tokens, std::string_view text,
                  std::vector<TokenId>& out) {
  if (text.empty()) return;
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t offset = 0; offset < text.size();) {
    const size_t len = std::min(utf8_len_from_lead(static_cast<uint8_t>(text[offset])), text.size() - offset);
    const auto index = static_cast<int32_t>(symbols.size());
    offset += len;
    symbols.push_back(Symbol{index - 1, offset == text.size() ? -1 : index + 1,
                             static_cast<uint32_t>(offset - len), static_cast<uint32_t>(len)});
  }

  std::vector<Bigram> heap;
  auto try_pair = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const std::string_view joined = text.substr(l.begin, l.length + r.length);
    const TokenId id = vocab.find(joined);
    if (id == kNoToken) return;
    heap.push_back(Bigram{vocab.tokens[static_cast<size_t>(id)].score, left, right,
                          static_cast<uint32_t>(joined.size())});
    std::push_heap(heap.begin(), heap.end(), BigramOrder{});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(symbols.size()); ++i) try_pair(i - 1, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), BigramOrder{});
    const Bigram b = heap.back();
    heap.pop_back();
    Symbol& left = symbols[static_cast<size_t>(b.left)];
    Symbol& right = symbols[static_cast<size_t>(b.right)];
    if (left.length == 0 || right.length == 0 || left.length + right.length != b.length) continue;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = b.left;
    try_pair(left.prev, b.left);
    try_pair(b.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.begin, s.length);
    const TokenId id = vocab.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      continue;
    }
    // Merged symbols are always tokens, so this is a single character the
    // vocabulary lacks: spell it as byte tokens.
    for (const char c : piece) {
      const TokenId byte_id = byte_tokens[static_cast<uint8_t>(c)];
      if (byte_id != kNoToken) out.push_back(byte_id);
    }
  }
}

}  // namespace hearth::tokenizer::detail
