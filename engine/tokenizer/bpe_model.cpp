#include "bpe_model.h"

#include <hearth/engine/tokenizer/utf8.h>

#include <fmt/format.h>

#include <algorithm>

namespace hearth::tokenizer::detail {

int32_t BpeModel::intern(const Vocabulary& vocab, const std::string& text) {
  const TokenId id = vocab.find(text);
  if (id != kNoToken) return id;
  auto [it, inserted] = extra_ids_.try_emplace(text, n_vocab_ + static_cast<int32_t>(extra_ids_.size()));
  return it->second;
}

Result<BpeModel> BpeModel::build(const Vocabulary& vocab) {
  BpeModel model;
  model.n_vocab_ = static_cast<int32_t>(vocab.size());
  model.ignore_merges_ = vocab.ignore_merges;
  const auto& byte_cp = gpt2_byte_to_codepoint();
  for (size_t b = 0; b < 256; ++b) {
    append_utf8(byte_cp[b], model.byte_text_[b]);
  }
  model.pairs_.reserve(vocab.merges.size());
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    const auto& [left, right] = vocab.merges[rank];
    if (left.empty() || right.empty()) continue;  // the reference cannot match an empty half either
    const int32_t l = model.intern(vocab, left);
    const int32_t r = model.intern(vocab, right);
    const int32_t m = model.intern(vocab, left + right);
    model.pairs_.insert(l, r, Merge{static_cast<int32_t>(rank), m});
  }
  for (size_t b = 0; b < 256; ++b) {
    const TokenId id = vocab.find(model.byte_text_[b]);
    if (id != kNoToken) {
      model.byte_symbol_[b] = id;
    } else {
      const auto it = model.extra_ids_.find(model.byte_text_[b]);
      model.byte_symbol_[b] = it == model.extra_ids_.end() ? -1 : it->second;
    }
  }
  return model;
}

void BpeModel::emit_symbol(const Vocabulary& vocab, std::string_view word, uint32_t begin, uint32_t length,
                           int32_t id, std::vector<TokenId>& out) const {
  if (id >= 0 && id < n_vocab_) {
    out.push_back(id);
    return;
  }
  // Not a token: like the reference, look up each byte of the symbol's
  // mapped text as a one-byte token and drop the bytes that are none.
  for (uint32_t k = begin; k < begin + length; ++k) {
    for (const char c : byte_text_[static_cast<uint8_t>(word[k])]) {
      const TokenId single = vocab.find(std::string_view(&c, 1));
      if (single != kNoToken) out.push_back(single);
    }
  }
}

namespace {

struct Symbol {
  int32_t id;      // symbol id, -1 when the text is unknown to the merge table
  int32_t prev;    // index of the previous live symbol, -1 at the start
  int32_t next;    // index of the next live symbol, -1 at the end
  uint32_t begin;  // first byte in the word
  uint32_t length; // bytes covered; 0 once merged into its left neighbour
};

struct Bigram {
  int32_t rank;
  int32_t left;  // symbol index
  int32_t right;
  int32_t left_id;
  int32_t right_id;
  int32_t merged;
};

// std heap helpers build a max-heap: "less" means "popped later".
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

void BpeModel::encode_word(const Vocabulary& vocab, std::string_view word, std::vector<TokenId>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    std::string mapped;
    mapped.reserve(word.size() * 2);
    for (const char c : word) mapped += byte_text_[static_cast<uint8_t>(c)];
    const TokenId whole = vocab.find(mapped);
    if (whole != kNoToken) {
      out.push_back(whole);
      return;
    }
  }

  const auto n = static_cast<int32_t>(word.size());
  std::vector<Symbol> symbols(static_cast<size_t>(n));
  for (int32_t i = 0; i < n; ++i) {
    symbols[static_cast<size_t>(i)] =
        Symbol{byte_symbol_[static_cast<uint8_t>(word[static_cast<size_t>(i)])], i - 1, i + 1 < n ? i + 1 : -1,
               static_cast<uint32_t>(i), 1};
  }

  std::vector<Bigram> heap;
  heap.reserve(static_cast<size_t>(n));
  auto try_pair = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const int32_t l = symbols[static_cast<size_t>(left)].id;
    const int32_t r = symbols[static_cast<size_t>(right)].id;
    if (l < 0 || r < 0) return;
    const Merge* m = pairs_.find(l, r);
    if (m == nullptr) return;
    heap.push_back(Bigram{m->rank, left, right, l, r, m->merged});
    std::push_heap(heap.begin(), heap.end(), BigramOrder{});
  };
  for (int32_t i = 1; i < n; ++i) try_pair(i - 1, i);

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), BigramOrder{});
    const Bigram b = heap.back();
    heap.pop_back();
    Symbol& left = symbols[static_cast<size_t>(b.left)];
    Symbol& right = symbols[static_cast<size_t>(b.right)];
    // Stale entry: one side has been merged away or has changed since.
    if (left.length == 0 || right.length == 0 || left.id != b.left_id || right.id != b.right_id) continue;
    left.id = b.merged;
    left.length += right.length;
    right.length = 0;
    left.next = right.next;
    if (right.next >= 0) symbols[static_cast<size_t>(right.next)].prev = b.left;
    try_pair(left.prev, b.left);
    try_pair(b.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    emit_symbol(vocab, word, s.begin, s.length, s.id, out);
  }
}

}  // namespace hearth::tokenizer::detail
