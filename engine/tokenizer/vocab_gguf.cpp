// Vocabulary::from_gguf: the `tokenizer.ggml.*` keys, with the reference
// engine's defaults for whatever a file leaves out.
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/pre_tokenizer.h>
#include <hearth/engine/tokenizer/tokenizer.h>
#include <hearth/engine/tokenizer/vocab.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace hearth::tokenizer {

namespace {

std::string where(const gguf::GgufFile& file, std::string_view key) {
  return fmt::format("{}: key '{}'", file.path().string(), key);
}

Error with_context(const gguf::GgufFile& file, std::string_view key, const Error& e) {
  // The reader's own errors already name the file and the key.
  if (e.message.rfind(file.path().string() + ": ", 0) == 0) return e;
  return make_error(e.code, fmt::format("{}: {}", where(file, key), e.message));
}

// A token id key. Absent: keep `id` (a default) when it fits the vocabulary.
// Present: must be inside the vocabulary; a negative value means "none".
Status read_id(const gguf::GgufFile& file, std::string_view key, size_t n_vocab, TokenId& id) {
  if (file.find(key) == nullptr) {
    if (id != kNoToken && static_cast<size_t>(id) >= n_vocab) id = kNoToken;
    return {};
  }
  auto value = file.get_int(key);
  if (!value.ok()) return with_context(file, key, value.error());
  // Converters write -1, or its uint32 pattern 0xFFFFFFFF, for "no such token".
  if (*value < 0 || *value == 0xFFFFFFFFll) {
    id = kNoToken;
    return {};
  }
  if (static_cast<uint64_t>(*value) >= n_vocab) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: token id {} is outside the vocabulary of {} tokens", where(file, key), *value,
                                  n_vocab));
  }
  id = static_cast<TokenId>(*value);
  return {};
}

Status read_flag(const gguf::GgufFile& file, std::string_view key, bool& flag) {
  auto value = file.find_bool(key);
  if (!value.ok()) return with_context(file, key, value.error());
  if (value->has_value()) flag = **value;
  return {};
}

// Per-model pre-tokenizer settings the reference applies by name.
void apply_pre_defaults(std::string_view pre, Vocabulary& v) {
  v.clean_spaces = true;
  v.add_space_prefix = false;
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3" || pre == "falcon3") {
    v.ignore_merges = true;
    v.add_bos = true;
  }
  static constexpr std::string_view kNoClean[] = {"deepseek-llm", "deepseek-coder", "command-r", "qwen2",
                                                  "deepseek-r1-qwen", "poro-chat", "viking", "smollm",
                                                  "codeshell", "chameleon"};
  if (std::find(std::begin(kNoClean), std::end(kNoClean), pre) != std::end(kNoClean)) v.clean_spaces = false;
}

}  // namespace

Result<Vocabulary> Vocabulary::from_gguf(const gguf::GgufFile& file, const Logger& logger) {
  Vocabulary v;
  auto model = file.get_string("tokenizer.ggml.model");
  if (!model.ok()) return with_context(file, "tokenizer.ggml.model", model.error());

  auto tokens = file.get_string_array("tokenizer.ggml.tokens");
  if (!tokens.ok()) return with_context(file, "tokenizer.ggml.tokens", tokens.error());
  const size_t n = tokens->size();
  if (n == 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: the vocabulary is empty",
                                                            where(file, "tokenizer.ggml.tokens")));
  }
  if (n > static_cast<size_t>(INT32_MAX)) {
    return make_error(ErrorCode::LimitExceeded,
                      fmt::format("{}: {} tokens is too many", where(file, "tokenizer.ggml.tokens"), n));
  }
  v.tokens.resize(n);
  for (size_t i = 0; i < n; ++i) v.tokens[i].text = std::move((*tokens)[i]);

  if (file.find("tokenizer.ggml.scores") != nullptr) {
    auto scores = file.get_float_array("tokenizer.ggml.scores");
    if (!scores.ok()) return with_context(file, "tokenizer.ggml.scores", scores.error());
    if (scores->size() != n) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: {} scores for {} tokens",
                                                              where(file, "tokenizer.ggml.scores"), scores->size(), n));
    }
    for (size_t i = 0; i < n; ++i) v.tokens[i].score = static_cast<float>((*scores)[i]);
  }
  if (file.find("tokenizer.ggml.token_type") != nullptr) {
    auto types = file.get_int_array("tokenizer.ggml.token_type");
    if (!types.ok()) return with_context(file, "tokenizer.ggml.token_type", types.error());
    if (types->size() != n) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: {} token types for {} tokens", where(file, "tokenizer.ggml.token_type"),
                                    types->size(), n));
    }
    for (size_t i = 0; i < n; ++i) v.tokens[i].attr = attr_from_gguf_type((*types)[i]);
  }

  auto pre_name = file.find_string("tokenizer.ggml.pre");
  if (!pre_name.ok()) return with_context(file, "tokenizer.ggml.pre", pre_name.error());
  v.pre_name = pre_name->value_or("");

  if (*model == "llama") {
    v.kind = VocabKind::SentencePiece;
    v.special.bos = 1;
    v.special.eos = 2;
    v.special.unk = 0;
    v.add_space_prefix = true;
    v.add_bos = true;
  } else if (*model == "gpt2") {
    v.kind = VocabKind::BytePairBpe;
    v.special.bos = 11;
    v.special.eos = 11;
    auto merges = file.get_string_array("tokenizer.ggml.merges");
    if (!merges.ok()) return with_context(file, "tokenizer.ggml.merges", merges.error());
    v.merges.reserve(merges->size());
    for (const auto& merge : *merges) {
      // The separator is the first space after the first character, so a
      // half that is itself a space character survives.
      const size_t sep = merge.empty() ? std::string::npos : merge.find(' ', 1);
      if (sep == std::string::npos) {
        v.merges.emplace_back();
      } else {
        v.merges.emplace_back(merge.substr(0, sep), merge.substr(sep + 1));
      }
    }
    apply_pre_defaults(v.pre_name, v);
    // The reference engine splits a BPE vocabulary that names no
    // pre-tokenizer with its default rules (not GPT-2's); an unknown name
    // gets the same rules here rather than an error, so older or unusual
    // files still load, but never without saying so.
    if (v.pre_name.empty()) {
      logger.warn("{}: no (or an empty) tokenizer.ggml.pre; using the default pre-tokenizer (tokenization "
                  "may differ from the model's training)",
                  file.path().string());
      v.pre = PreTokenizerKind::Default;
    } else if (!pre_tokenizer_from_name(v.pre_name, v.pre)) {
      logger.warn("{}: unknown pre-tokenizer '{}' in tokenizer.ggml.pre; using the default pre-tokenizer",
                  file.path().string(), v.pre_name);
      v.pre = PreTokenizerKind::Default;
    }
  } else if (*model == "bert") {
    // [CLS] text [SEP] unless the file says otherwise; pieces are spelled
    // with a U+2581 word-start marker, which the detokenizer turns into a
    // space and drops before the first word.
    v.kind = VocabKind::WordPiece;
    auto named = [&](std::string_view text) {
      for (size_t i = 0; i < v.tokens.size(); ++i) {
        if (v.tokens[i].text == text) return static_cast<TokenId>(i);
      }
      return kNoToken;
    };
    v.special.bos = named("[CLS]");
    v.special.eos = named("[SEP]");
    v.special.sep = v.special.eos;
    v.special.unk = named("[UNK]");
    v.add_space_prefix = true;
    v.add_bos = v.special.bos != kNoToken;
    v.add_eos = v.special.eos != kNoToken;
  } else {
    return make_error(ErrorCode::Unsupported,
                      fmt::format("{}: tokenizer model '{}' is not supported (llama, gpt2, bert)",
                                  where(file, "tokenizer.ggml.model"), *model));
  }

  HEARTH_CHECK(read_flag(file, "tokenizer.ggml.add_space_prefix", v.add_space_prefix));

  struct IdKey {
    const char* key;
    TokenId* id;
  };
  const IdKey id_keys[] = {
      {"tokenizer.ggml.bos_token_id", &v.special.bos},       {"tokenizer.ggml.eos_token_id", &v.special.eos},
      {"tokenizer.ggml.eot_token_id", &v.special.eot},       {"tokenizer.ggml.eom_token_id", &v.special.eom},
      {"tokenizer.ggml.unknown_token_id", &v.special.unk},   {"tokenizer.ggml.seperator_token_id", &v.special.sep},
      {"tokenizer.ggml.padding_token_id", &v.special.pad},   {"tokenizer.ggml.mask_token_id", &v.special.mask},
      {"tokenizer.ggml.fim_pre_token_id", &v.special.fim_pre}, {"tokenizer.ggml.fim_suf_token_id", &v.special.fim_suf},
      {"tokenizer.ggml.fim_mid_token_id", &v.special.fim_mid}, {"tokenizer.ggml.fim_pad_token_id", &v.special.fim_pad},
      {"tokenizer.ggml.fim_rep_token_id", &v.special.fim_rep}, {"tokenizer.ggml.fim_sep_token_id", &v.special.fim_sep},
  };
  for (const auto& k : id_keys) HEARTH_CHECK(read_id(file, k.key, n, *k.id));

  HEARTH_CHECK(read_flag(file, "tokenizer.ggml.add_bos_token", v.add_bos));
  HEARTH_CHECK(read_flag(file, "tokenizer.ggml.add_eos_token", v.add_eos));
  // WordPiece ends a text with the separator; newer files say so with add_sep_token.
  if (v.kind == VocabKind::WordPiece) {
    HEARTH_CHECK(read_flag(file, "tokenizer.ggml.add_sep_token", v.add_eos));
    if (v.special.eos == kNoToken) v.special.eos = v.special.sep;
  }

  if (auto status = v.finalize(logger); !status.ok()) {
    return make_error(status.error().code, fmt::format("{}: {}", file.path().string(), status.error().message));
  }

  // Phi-3's tokenizer swallows whitespace after its special tokens; the
  // files do not say so, the reference recognises the model by name.
  auto name = file.find_string("general.name");
  if (name.ok() && name->has_value()) {
    std::string lower = **name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("phi-3") != std::string::npos || lower.find("phi3") != std::string::npos) {
      for (auto& t : v.tokens) {
        if (has_any(t.attr, TokenAttr::Control | TokenAttr::UserDefined | TokenAttr::Unknown)) {
          t.attr = t.attr | TokenAttr::RStrip;
        }
      }
      if (const TokenId id = v.find("</s>"); id != kNoToken) {
        v.tokens[static_cast<size_t>(id)].attr = v.tokens[static_cast<size_t>(id)].attr | TokenAttr::RStrip;
      }
      for (const std::string_view plain : {"<unk>", "<s>", "<|endoftext|>"}) {
        if (const TokenId id = v.find(plain); id != kNoToken) {
          auto& attr = v.tokens[static_cast<size_t>(id)].attr;
          attr = attr & ~TokenAttr::RStrip;
        }
      }
    }
  }
  return v;
}

Result<Tokenizer> Tokenizer::from_gguf(const gguf::GgufFile& file, const Logger& logger) {
  HEARTH_TRY(auto vocab, Vocabulary::from_gguf(file, logger));
  return create(std::move(vocab), logger);
}

}  // namespace hearth::tokenizer
