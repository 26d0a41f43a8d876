#include <hearth/server/token_choice.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace hearth::server {
namespace {

// log-softmax of the model's own distribution (before penalties, temperature
// and truncation), which is what OpenAI's logprobs describe.
struct LogSoftmax {
  float max = 0;
  double log_sum = 0;
  explicit LogSoftmax(std::span<const float> logits) {
    max = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l - max));
    log_sum = std::log(sum);
  }
  float operator()(float logit) const { return static_cast<float>(static_cast<double>(logit - max) - log_sum); }
};

}  // namespace

Status check_prompt(const std::vector<int32_t>& prompt, int64_t n_ctx, int64_t n_vocab) {
  if (prompt.empty()) return make_error(ErrorCode::InvalidArgument, "the prompt has no tokens");
  if (static_cast<int64_t>(prompt.size()) >= n_ctx) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("the prompt has {} tokens but the context holds {} (one more is needed for the reply)",
                                  prompt.size(), n_ctx));
  }
  for (int32_t t : prompt) {
    if (t < 0 || t >= n_vocab) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("token id {} is outside the vocabulary", t));
    }
  }
  return {};
}

bool TokenChooser::ends_generation(int32_t token) const {
  return std::find(end_of_generation_.begin(), end_of_generation_.end(), token) != end_of_generation_.end();
}

Result<TokenChoice> TokenChooser::choose(std::span<const float> logits, sampling::Sampler& sampler,
                                         TokenConstraint* constraint, int32_t top_logprobs, bool ignore_eos) {
  TokenChoice out;
  if (constraint == nullptr && ignore_eos && end_of_generation_.size() < logits.size()) {
    // Only the end tokens are masked, and fewer of them than the vocabulary
    // leave some token to choose: no allowed set over the whole vocabulary.
    masked_.assign(logits.begin(), logits.end());
    for (int32_t t : end_of_generation_) {
      if (t >= 0 && static_cast<size_t>(t) < masked_.size()) {
        masked_[static_cast<size_t>(t)] = -std::numeric_limits<float>::infinity();
      }
    }
    out.token = sampler.sample(masked_);
  } else if (constraint != nullptr || ignore_eos) {
    allowed_.assign(logits.size(), true);
    if (constraint != nullptr) constraint->mask(allowed_, end_of_generation_);
    if (ignore_eos) {
      for (int32_t t : end_of_generation_) {
        if (t >= 0 && static_cast<size_t>(t) < allowed_.size()) allowed_[static_cast<size_t>(t)] = false;
      }
    }
    masked_.assign(logits.begin(), logits.end());
    bool any = false;
    for (size_t t = 0; t < masked_.size(); ++t) {
      if (!allowed_[t]) {
        masked_[t] = -std::numeric_limits<float>::infinity();
      } else {
        any = true;
      }
    }
    if (!any) return make_error(ErrorCode::InvalidArgument, "no token of the vocabulary can continue the required format");
    out.token = sampler.sample(masked_);
  } else {
    out.token = sampler.sample(logits);
  }
  out.end_of_generation = ends_generation(out.token);
  if (out.end_of_generation) return out;
  if (constraint != nullptr) constraint->accept(out.token);
  if (top_logprobs >= 0) {
    const LogSoftmax lsm(logits);
    out.has_logprob = true;
    out.chosen = {tokenizer_.token_to_piece(out.token), lsm(logits[static_cast<size_t>(out.token)])};
    if (top_logprobs > 0) {
      for (const auto& cand : sampling::top_candidates(logits, top_logprobs)) {
        out.top.push_back({tokenizer_.token_to_piece(cand.token), lsm(cand.logit)});
      }
    }
  }
  return out;
}

std::string ReplyText::shown(std::string text) {
  if (!first_visible_) {
    const size_t skip = text.find_first_not_of(' ');
    text = skip == std::string::npos ? std::string() : text.substr(skip);
    if (!text.empty()) first_visible_ = true;
  }
  return text;
}

std::string ReplyText::push(int32_t token) { return shown(stops_.push(decoder_.push(token)).text); }

std::string ReplyText::finish() {
  std::string tail = stops_.push(decoder_.flush()).text;
  if (!stops_.stopped()) tail += stops_.flush();
  return shown(std::move(tail));
}

}  // namespace hearth::server
