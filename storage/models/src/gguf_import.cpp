#include <hearth/models/gguf_import.h>

#include <fmt/format.h>

#include <algorithm>

#if HEARTH_MODELS_HAVE_GGUF
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/quant/types.h>

#include <map>
#endif

namespace hearth::models {

#if HEARTH_MODELS_HAVE_GGUF

namespace {

// llama.cpp's general.file_type numbering for the levels the catalog uses.
std::string quant_from_file_type(uint64_t file_type) {
  switch (file_type) {
    case 0: return "F32";
    case 1: return "F16";
    case 2: return "Q4_0";
    case 7: return "Q8_0";
    case 15: return "Q4_K_M";
    case 17: return "Q5_K_M";
    case 18: return "Q6_K";
    default: return fmt::format("file_type {}", file_type);
  }
}

}  // namespace

Result<CatalogModel> describe_gguf(const std::filesystem::path& path) {
  HEARTH_TRY(gguf::GgufFile file, gguf::GgufFile::open(path));
  CatalogModel m;
  HEARTH_TRY(m.architecture, file.architecture());
  const std::string& arch = m.architecture;
  auto key = [&](const char* suffix) { return fmt::format("{}.{}", arch, suffix); };
  HEARTH_TRY(uint64_t n_layer, file.get_uint(key("block_count")));
  HEARTH_TRY(uint64_t n_head, file.get_uint(key("attention.head_count")));
  HEARTH_TRY(uint64_t n_embd, file.get_uint(key("embedding_length")));
  HEARTH_TRY(auto n_head_kv, file.find_uint(key("attention.head_count_kv")));
  HEARTH_TRY(auto head_dim, file.find_uint(key("attention.key_length")));
  HEARTH_TRY(auto ctx, file.find_uint(key("context_length")));
  if (n_head == 0 || n_layer == 0) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("'{}': {} or {} is zero", path.string(), key("block_count"),
                                  key("attention.head_count")));
  }
  m.shape.n_layer = static_cast<uint32_t>(n_layer);
  m.shape.n_head = static_cast<uint32_t>(n_head);
  m.shape.n_head_kv = static_cast<uint32_t>(n_head_kv.value_or(n_head));
  m.shape.head_dim = static_cast<uint32_t>(head_dim.value_or(n_embd / n_head));
  m.shape.n_embd = static_cast<uint32_t>(n_embd);
  // What the activation estimate needs besides: the feed-forward width, the
  // vocabulary (rows of the embedding table) and fused projections (a QKV
  // matrix, or an up matrix that holds the gate too), read as the engine's
  // loader binds them.
  HEARTH_TRY(auto n_ff, file.find_uint(key("feed_forward_length")));
  m.shape.n_ff = static_cast<uint32_t>(n_ff.value_or(0));
  if (const gguf::TensorInfo* embd = file.find_tensor("token_embd.weight")) {
    m.shape.n_vocab = static_cast<uint32_t>(embd->dims[1]);
  }
  if (file.find_tensor("blk.0.attn_qkv.weight") ||
      (file.find_tensor("blk.0.ffn_up.weight") && !file.find_tensor("blk.0.ffn_gate.weight"))) {
    m.shape.projections = kv::ProjectionLayout::Fused;
  }
  // Mixture of experts, read as the loader reads them (model/blocks.cpp):
  // the expert width defaults to n_ff / n_expert_used.
  HEARTH_TRY(auto n_expert, file.find_uint(key("expert_count")));
  HEARTH_TRY(auto n_expert_used, file.find_uint(key("expert_used_count")));
  if (n_expert.value_or(0) > 0 && n_expert_used.value_or(0) > 0) {
    HEARTH_TRY(auto n_ff_exp, file.find_uint(key("expert_feed_forward_length")));
    m.shape.n_expert = static_cast<uint32_t>(*n_expert);
    m.shape.n_expert_used = static_cast<uint32_t>(*n_expert_used);
    m.shape.n_ff_exp = static_cast<uint32_t>(
        n_ff_exp.value_or(std::max<uint64_t>(1, n_ff.value_or(0) / *n_expert_used)));
    m.shape.expert_biases = file.find_tensor("blk.0.ffn_down_exps.bias") != nullptr;
  }
  HEARTH_TRY(auto window, file.find_uint(key("attention.sliding_window")));
  m.shape.layer_windows = kv::family_layer_windows(arch, window, static_cast<int64_t>(n_layer));
  m.context_length = static_cast<uint32_t>(ctx.value_or(0));
  HEARTH_TRY(auto name, file.find_string("general.name"));
  m.name = name.value_or(path.stem().string());
  m.id = path.stem().string();
  m.family = arch;
  HEARTH_TRY(auto license, file.find_string("general.license"));
  m.license = license.value_or("unknown");
  m.license_name = m.license;
  m.description = fmt::format("Imported from {}", path.filename().string());
  uint64_t params = 0;
  std::map<DType, uint64_t> bytes_by_type;
  for (const auto& t : file.tensors()) {
    params += static_cast<uint64_t>(t.elements());
    bytes_by_type[t.type] += t.bytes;
  }
  m.parameters = params;
  CatalogVariant v;
  HEARTH_TRY(auto file_type, file.find_uint("general.file_type"));
  if (file_type) {
    v.quant = quant_from_file_type(*file_type);
  } else {
    // No file type recorded: name the type holding most bytes.
    DType main = DType::F32;
    uint64_t most = 0;
    for (const auto& [type, bytes] : bytes_by_type) {
      if (bytes > most) {
        most = bytes;
        main = type;
      }
    }
    v.quant = std::string(traits(main).name);
  }
  v.url = "file://" + std::filesystem::absolute(path).string();
  v.size_bytes = file.file_size();
  v.size_is_estimate = false;
  m.variants.push_back(std::move(v));
  return m;
}

#else

Result<CatalogModel> describe_gguf(const std::filesystem::path& path) {
  return make_error(ErrorCode::Unsupported,
                    fmt::format("'{}': this build has no GGUF reader to import local files", path.string()));
}

#endif

}  // namespace hearth::models
