// Drafters propose the tokens speculative decoding verifies: a small model
// with the target's vocabulary, or n-gram lookup over the context itself. A
// proposal only costs time: the target's verification decides what is kept.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/sampling/sampler.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace hearth::runtime {

class Session;

struct Draft {
  std::vector<int32_t> tokens;
  // Per token, the drafter's distribution it was drawn from (after the same
  // sampler chain as the target's); empty when the proposals are
  // deterministic (n-gram lookup, greedy drafting): q is then a point mass.
  std::vector<std::vector<sampling::Candidate>> q;
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  virtual const char* name() const = 0;
  // Up to `max` tokens that may follow `context` (everything the target
  // holds plus the token it is about to verify from). An empty draft means
  // "decode plainly this step". Errors are the drafter's own (its model's
  // context is full, ...): the caller decodes plainly and says so.
  virtual Result<Draft> propose(std::span<const int32_t> context, int32_t max,
                                const sampling::SamplerConfig& sampler) = 0;
};

// Looks the context's last n tokens (n = max_ngram down to min_ngram) up in
// the context and proposes what followed their latest earlier occurrence:
// free drafts where a reply quotes, edits or repeats what came before. The
// index grows with the context and is rebuilt when the context was rewound.
class NgramDrafter final : public Drafter {
 public:
  explicit NgramDrafter(int32_t min_ngram = 2, int32_t max_ngram = 4) : min_n_(min_ngram), max_n_(max_ngram) {}
  const char* name() const override { return "ngram"; }
  Result<Draft> propose(std::span<const int32_t> context, int32_t max, const sampling::SamplerConfig& sampler) override;

 private:
  void index_up_to(std::span<const int32_t> context);
  static uint64_t key(std::span<const int32_t> gram);

  int32_t min_n_, max_n_;
  std::vector<int32_t> indexed_;  // the context the index describes
  // Per n-gram length, n-gram -> the position just after its latest
  // occurrence that is followed by at least one token.
  std::vector<std::unordered_map<uint64_t, size_t>> latest_;
};

// Why `draft` cannot draft for `target` (the vocabularies differ: size,
// special tokens or any token's text), or nothing when it can.
Status check_draft_vocabulary(const model::Model& target, const model::Model& draft);

// Drafts with a small model in its own session (its own KV cache, on its
// own backend: CPU or GPU independently of the target). Its context follows
// the target's: before each proposal it keeps the common prefix and
// prefills the rest, so rewinds, evictions and summaries of the target's
// context are followed too.
class ModelDrafter final : public Drafter {
 public:
  static Result<std::unique_ptr<ModelDrafter>> create(const model::Model& target, const model::Model& draft,
                                                      backend::Backend& backend, int64_t n_ctx);
  ~ModelDrafter() override;
  const char* name() const override { return "draft"; }
  Result<Draft> propose(std::span<const int32_t> context, int32_t max, const sampling::SamplerConfig& sampler) override;

 private:
  explicit ModelDrafter(std::unique_ptr<Session> session);
  std::unique_ptr<Session> session_;
  std::unique_ptr<sampling::Sampler> sampler_;
  sampling::SamplerConfig sampler_config_;
};

}  // namespace hearth::runtime
