#include <hearth/engine/tokenizer/stream_decoder.h>
#include <hearth/engine/tokenizer/utf8.h>

namespace hearth::tokenizer {

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, ShowSpecial show, LeadingSpace leading)
    : tokenizer_(&tokenizer), show_(show), leading_(leading) {}

std::string StreamDecoder::push(TokenId id) {
  const bool strip = first_ && leading_ == LeadingSpace::StripFirst && tokenizer_->vocab().add_space_prefix;
  first_ = false;
  pending_ += tokenizer_->token_to_piece(id, show_, strip ? 1 : 0);
  const size_t complete = utf8_complete_prefix(pending_);
  if (complete == 0) return {};
  // Bytes that can never form a character are replaced so callers always
  // receive valid UTF-8.
  std::string out = utf8_sanitize(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out = utf8_sanitize(pending_);
  pending_.clear();
  return out;
}

void StreamDecoder::reset() {
  first_ = true;
  pending_.clear();
}

}  // namespace hearth::tokenizer
