#include <fmt/format.h>
#include <hearth/engine/tokenizer/vocab.h>
#include <hearth/engine/tokenizer/vocab_match.h>

#include <algorithm>

namespace hearth::tokenizer {
namespace {

// Vocabularies of one family differ in the padding rows a model appends to
// its embedding (Qwen2.5 0.5B and 7B: 151936 and 152064 rows) but never in
// a real token; the reference engine tolerates a gap of this size too.
constexpr size_t kMaxVocabGap = 128;

}  // namespace

Status check_draft_tokens(const gguf::GgufFile& target, const gguf::GgufFile& draft) {
  auto tv = Vocabulary::from_gguf(target);
  if (!tv.ok()) return make_error(tv.error().code, "the target model's vocabulary: " + tv.error().message);
  auto dv = Vocabulary::from_gguf(draft);
  if (!dv.ok()) return make_error(dv.error().code, "the draft model's vocabulary: " + dv.error().message);
  const size_t nt = tv->size(), nd = dv->size();
  if ((nt > nd ? nt - nd : nd - nt) > kMaxVocabGap) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("the draft model's vocabulary has {} tokens and the target's {}: not the same "
                                  "tokenizer",
                                  nd, nt));
  }
  if (tv->kind != dv->kind) {
    return make_error(ErrorCode::Unsupported, "the draft model's tokenizer is of another kind than the target's");
  }
  const auto& ts = tv->special;
  const auto& ds = dv->special;
  if (ts.bos != ds.bos || ts.eos != ds.eos || tv->add_bos != dv->add_bos) {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("the draft model's start/end tokens ({}/{}) differ from the target's ({}/{})",
                                  ds.bos, ds.eos, ts.bos, ts.eos));
  }
  for (size_t i = 0; i < std::min(nt, nd); ++i) {
    if (tv->tokens[i].text != dv->tokens[i].text) {
      return make_error(ErrorCode::Unsupported,
                        fmt::format("the draft model's vocabulary differs from the target's: token {} is \"{}\" in "
                                    "the draft model and \"{}\" in the target",
                                    i,
                                    dv->tokens[i].text, tv->tokens[i].text));
    }
  }
  return {};
}

Status check_draft_token_files(const std::filesystem::path& target, const std::filesystem::path& draft) {
  HEARTH_TRY(auto t, gguf::GgufFile::open(target, gguf::LoadMode::Mmap));
  HEARTH_TRY(auto d, gguf::GgufFile::open(draft, gguf::LoadMode::Mmap));
  return check_draft_tokens(t, d);
}

}  // namespace hearth::tokenizer
