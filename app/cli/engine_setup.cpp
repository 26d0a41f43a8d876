#include "engine_setup.h"

#include <fmt/format.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/sizing.h>

#include <unistd.h>

#include <cstdio>
#include <sstream>

namespace hearth::cli {

std::vector<FlagSpec> engine_flags() {
  return {
      {"backend", FlagKind::Value, "cpu or vulkan (default cpu)", "", "NAME"},
      {"threads", FlagKind::Value, "CPU threads (default 2)", "t", "N"},
      {"kv-type", FlagKind::Value, "KV cache type: f16 or q8_0 (default f16)", "", "TYPE"},
      {"gpu-layers", FlagKind::Value, "layers to offload to the GPU (vulkan)", "", "N"},
  };
}

Result<EngineSetup> setup_engine(const ParsedArgs& args, int64_t n_ctx) {
  EngineSetup s;
  HEARTH_TRY(const int64_t threads, args.get_int("threads", 2, 1, 256));
  s.threads = static_cast<int>(threads);
  const std::string kv = args.get_or("kv-type", "f16");
  const auto kv_type = dtype_from_name(kv);
  if (!kv_type || !kv::is_supported_kv_type(*kv_type)) {
    return make_error(ErrorCode::InvalidArgument, fmt::format("--kv-type '{}' is not one of f16, q8_0", kv));
  }
  s.kv_type = *kv_type;
  const std::string backend = args.get_or("backend", "cpu");
  if (backend != "cpu" && backend != "vulkan") {
    return make_error(ErrorCode::InvalidArgument, fmt::format("--backend '{}' is not one of cpu, vulkan", backend));
  }
  if (backend == "vulkan") {
    std::fprintf(stderr, "Vulkan: backend not available in this build; running on CPU\n");
  }
  s.backend = backend::make_cpu_backend({s.threads});

  const auto path = args.get("model");
  if (!path) return make_error(ErrorCode::InvalidArgument, "--model is required");
  // KV bytes for the memory check; the hyperparameters are read by the load
  // itself, so estimate from the file once it is open (see below).
  model::LoadOptions opts;
  if (isatty(2)) opts.progress = [last = -1](const model::LoadProgress& p) mutable {
    const int pct = p.total_bytes ? static_cast<int>(100 * p.done_bytes / p.total_bytes) : 100;
    if (pct / 10 != last / 10) {
      std::fprintf(stderr, "\rloading %3d%%", pct);
      if (pct == 100) std::fputc('\n', stderr);
      last = pct;
    }
  };
  {
    // Read the shapes first (a cheap header parse) to include the KV cache in
    // the memory check made before the weights are touched.
    auto header = gguf::GgufFile::open(*path, gguf::LoadMode::Mmap);
    if (!header.ok()) return header.take_error();
    auto arch = header->architecture();
    if (arch.ok()) {
      auto layers = header->find_uint(*arch + ".block_count");
      auto heads = header->find_uint(*arch + ".attention.head_count");
      auto heads_kv = header->find_uint(*arch + ".attention.head_count_kv");
      auto embd = header->find_uint(*arch + ".embedding_length");
      if (layers.ok() && *layers && heads.ok() && *heads && embd.ok() && *embd) {
        const uint64_t hkv = heads_kv.ok() && *heads_kv ? **heads_kv : **heads;
        auto bytes = kv::kv_cache_bytes(static_cast<int64_t>(**layers), static_cast<int64_t>(hkv),
                                        static_cast<int64_t>(**embd / **heads), n_ctx, s.kv_type);
        if (bytes.ok()) opts.extra_bytes = *bytes;
      }
    }
  }
  HEARTH_TRY(s.model, model::Model::load(*path, opts));
  return s;
}

Result<std::vector<int32_t>> tokenize_prompt(const model::Model&, const std::string&, PromptMode) {
  return make_error(ErrorCode::Unsupported, "text prompts need the tokenizer, which this build lacks; pass --tokens");
}

Result<std::vector<int32_t>> parse_ids(const std::string& text) {
  std::string t = text;
  for (char& c : t) {
    if (c == ',') c = ' ';
  }
  std::istringstream in(t);
  std::vector<int32_t> ids;
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    const long v = std::strtol(word.c_str(), &end, 10);
    if (*end != '\0' || v < 0 || v > INT32_MAX) {
      return make_error(ErrorCode::InvalidArgument, fmt::format("'{}' is not a token id", word));
    }
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) return make_error(ErrorCode::InvalidArgument, "no token ids given");
  return ids;
}

namespace {

// Byte-level BPE maps each byte to a printable code point; this inverts it.
int byte_of_codepoint(uint32_t cp) {
  if ((cp >= 33 && cp <= 126) || (cp >= 161 && cp <= 172) || (cp >= 174 && cp <= 255)) return static_cast<int>(cp);
  // The remaining bytes were mapped to 256.. in increasing byte order.
  int n = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    if (printable) continue;
    if (static_cast<uint32_t>(256 + n) == cp) return b;
    ++n;
  }
  return -1;
}

}  // namespace

Result<PieceDecoder> PieceDecoder::from_model(const model::Model& model) {
  PieceDecoder d;
  const auto& f = model.file();
  HEARTH_TRY(d.pieces_, f.get_string_array("tokenizer.ggml.tokens"));
  auto types = f.get_int_array("tokenizer.ggml.token_type");
  if (types.ok()) {
    for (int64_t t : *types) d.types_.push_back(static_cast<int32_t>(t));
  }
  auto kind = f.find_string("tokenizer.ggml.model");
  d.byte_level_ = kind.ok() && *kind && **kind == "gpt2";
  auto bos = f.find_uint("tokenizer.ggml.bos_token_id");
  auto eos = f.find_uint("tokenizer.ggml.eos_token_id");
  if (bos.ok() && *bos) d.bos_ = static_cast<int32_t>(**bos);
  if (eos.ok() && *eos) d.eos_ = static_cast<int32_t>(**eos);
  if (d.eos_ >= 0) d.eog_.push_back(d.eos_);
  auto eot = f.find_uint("tokenizer.ggml.eot_token_id");
  if (eot.ok() && *eot) d.eog_.push_back(static_cast<int32_t>(**eot));
  for (size_t i = 0; i < d.pieces_.size(); ++i) {
    const auto& p = d.pieces_[i];
    if (p == "<|im_end|>" || p == "<|eot_id|>" || p == "<|end|>" || p == "<end_of_turn>" || p == "<|endoftext|>") {
      d.eog_.push_back(static_cast<int32_t>(i));
    }
  }
  return d;
}

bool PieceDecoder::is_control(int32_t token) const {
  const auto i = static_cast<size_t>(token);
  return i < types_.size() && types_[i] == 3;  // GGUF token type 3: control
}

std::string PieceDecoder::piece(int32_t token) const {
  if (token < 0 || static_cast<size_t>(token) >= pieces_.size() || is_control(token)) return {};
  const std::string& p = pieces_[static_cast<size_t>(token)];
  std::string out;
  if (byte_level_) {
    for (size_t i = 0; i < p.size();) {
      const auto c = static_cast<unsigned char>(p[i]);
      uint32_t cp;
      size_t len;
      if (c < 0x80) { cp = c; len = 1; }
      else if ((c >> 5) == 6 && i + 1 < p.size()) { cp = ((c & 0x1fu) << 6) | (static_cast<unsigned char>(p[i + 1]) & 0x3fu); len = 2; }
      else { out += p[i]; ++i; continue; }
      const int b = byte_of_codepoint(cp);
      if (b >= 0) out += static_cast<char>(b); else out.append(p, i, len);
      i += len;
    }
    return out;
  }
  if (p.size() == 6 && p.rfind("<0x", 0) == 0 && p.back() == '>') {
    return std::string(1, static_cast<char>(std::stoi(p.substr(3, 2), nullptr, 16)));
  }
  for (size_t i = 0; i < p.size(); ++i) {
    if (p.compare(i, 3, "\xE2\x96\x81") == 0) {
      out += ' ';
      i += 2;
    } else {
      out += p[i];
    }
  }
  return out;
}

}  // namespace hearth::cli
