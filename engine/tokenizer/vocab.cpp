#include <hearth/engine/tokenizer/vocab.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace hearth::tokenizer {

TokenAttr attr_from_gguf_type(int64_t type) {
  switch (static_cast<GgufTokenType>(type)) {
    case GgufTokenType::Normal: return TokenAttr::Normal;
    case GgufTokenType::Unknown: return TokenAttr::Unknown;
    case GgufTokenType::Control: return TokenAttr::Control;
    case GgufTokenType::UserDefined: return TokenAttr::UserDefined;
    case GgufTokenType::Unused: return TokenAttr::Unused;
    case GgufTokenType::Byte: return TokenAttr::Byte;
    case GgufTokenType::Undefined: return TokenAttr::Undefined;
  }
  return TokenAttr::Undefined;
}

const char* to_string(PreTokenizerKind kind) {
  switch (kind) {
    case PreTokenizerKind::Default: return "default";
    case PreTokenizerKind::Gpt2: return "gpt2";
    case PreTokenizerKind::Llama3: return "llama3";
    case PreTokenizerKind::Qwen2: return "qwen2";
    case PreTokenizerKind::DeepseekCoder: return "deepseek-coder";
    case PreTokenizerKind::DeepseekLlm: return "deepseek-llm";
    case PreTokenizerKind::Falcon: return "falcon";
    case PreTokenizerKind::Starcoder: return "starcoder";
  }
  return "?";
}

TokenId Vocabulary::find(std::string_view text) const {
  const auto it = text_index.find(text);
  return it == text_index.end() ? kNoToken : it->second;
}

bool Vocabulary::is_eog(TokenId id) const {
  return id != kNoToken && std::find(eog.begin(), eog.end(), id) != eog.end();
}

namespace {

// Marks a token that only makes sense as a control marker as Control, as the
// reference does for files whose converters typed them as user-defined.
void force_control(Vocabulary& v, TokenId id, const Logger& logger) {
  auto& attr = v.tokens[static_cast<size_t>(id)].attr;
  if (!has_any(attr, TokenAttr::Control)) {
    logger.debug("tokenizer: token {} '{}' looks like a control token; treating it as one", id,
                 v.tokens[static_cast<size_t>(id)].text);
    attr = TokenAttr::Control;
  }
}

// Fills `slot` with the first of `names` present in the vocabulary, unless
// the metadata already named one.
void detect(Vocabulary& v, TokenId& slot, std::initializer_list<std::string_view> names, const Logger& logger) {
  if (slot != kNoToken) return;
  for (const auto name : names) {
    const TokenId id = v.find(name);
    if (id != kNoToken) {
      slot = id;
      force_control(v, id, logger);
      return;
    }
  }
}

}  // namespace

Status Vocabulary::finalize(const Logger& logger) {
  if (tokens.empty()) {
    return make_error(ErrorCode::InvalidFormat, "tokenizer vocabulary is empty");
  }
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) {
    return make_error(ErrorCode::LimitExceeded, fmt::format("tokenizer vocabulary has {} tokens", tokens.size()));
  }
  text_index.clear();
  text_index.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i].text.empty()) {
      // An empty token could never be produced and would match everywhere.
      tokens[i].text = fmt::format("[EMPTY_{}]", i);
    }
    text_index[tokens[i].text] = static_cast<TokenId>(i);  // last duplicate wins, as in the reference
  }

  const std::array<std::pair<const char*, TokenId*>, 14> ids = {{
      {"bos", &special.bos}, {"eos", &special.eos}, {"eot", &special.eot}, {"eom", &special.eom},
      {"unknown", &special.unk}, {"separator", &special.sep}, {"padding", &special.pad}, {"mask", &special.mask},
      {"fim_pre", &special.fim_pre}, {"fim_suf", &special.fim_suf}, {"fim_mid", &special.fim_mid},
      {"fim_pad", &special.fim_pad}, {"fim_rep", &special.fim_rep}, {"fim_sep", &special.fim_sep},
  }};
  for (const auto& [name, id] : ids) {
    if (*id != kNoToken && !valid(*id)) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("tokenizer {} token id {} is outside the vocabulary of {} tokens", name, *id,
                                    tokens.size()));
    }
  }
  if (add_bos && special.bos == kNoToken) {
    return make_error(ErrorCode::InvalidFormat, "tokenizer adds a BOS token but the vocabulary names none");
  }
  if (add_eos && special.eos == kNoToken) {
    return make_error(ErrorCode::InvalidFormat, "tokenizer adds an EOS token but the vocabulary names none");
  }

  // Well-known markers the converters do not always record in metadata.
  detect(*this, special.eot,
         {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "<｜end▁of▁sentence｜>"},
         logger);
  detect(*this, special.eom, {"<|eom_id|>"}, logger);
  detect(*this, special.fim_pre, {"<|fim_prefix|>", "<fim-prefix>", "<｜fim▁begin｜>", "<PRE>"}, logger);
  detect(*this, special.fim_suf, {"<|fim_suffix|>", "<fim-suffix>", "<｜fim▁hole｜>", "<SUF>"}, logger);
  detect(*this, special.fim_mid, {"<|fim_middle|>", "<fim-middle>", "<｜fim▁end｜>", "<MID>"}, logger);
  detect(*this, special.fim_pad, {"<|fim_pad|>", "<fim-pad>", "<PAD>"}, logger);
  detect(*this, special.fim_rep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"}, logger);
  detect(*this, special.fim_sep, {"<|file_sep|>"}, logger);

  eog.clear();
  auto add_eog = [&](TokenId id) {
    if (id != kNoToken && std::find(eog.begin(), eog.end(), id) == eog.end()) eog.push_back(id);
  };
  add_eog(special.fim_pad);
  add_eog(special.fim_rep);
  add_eog(special.fim_sep);
  for (const std::string_view name :
       {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>"}) {
    const TokenId id = find(name);
    if (id == kNoToken) continue;
    add_eog(id);
    force_control(*this, id, logger);
  }
  // gpt-oss (harmony): a reply ends with <|return|> or <|call|>; <|end|>
  // closes each message (the reasoning before the answer), so it must not end
  // the reply. It stays a control token: message text never becomes it.
  const TokenId harmony_return = find("<|return|>");
  const TokenId harmony_call = find("<|call|>");
  if (harmony_return != kNoToken && harmony_call != kNoToken) {
    add_eog(harmony_return);
    add_eog(harmony_call);
    force_control(*this, harmony_return, logger);
    force_control(*this, harmony_call, logger);
    if (const TokenId end = find("<|end|>"); end != kNoToken) {
      std::erase(eog, end);
      if (special.eot == end) special.eot = kNoToken;
    }
  }
  add_eog(special.eos);
  add_eog(special.eot);
  add_eog(special.eom);
  return {};
}

}  // namespace hearth::tokenizer
