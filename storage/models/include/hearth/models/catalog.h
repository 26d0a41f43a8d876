// The model catalog: which models Hearth offers, their quant variants, and the
// architecture numbers the memory estimate needs. Loaded from
// resources/catalog.json (contract: resources/catalog.schema.json).
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/kv/memory_estimate.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::models {

// Architecture numbers that size the KV cache and the layer split.
struct ModelShape {
  uint32_t n_layer = 0;    // transformer blocks
  uint32_t n_head = 0;     // query heads
  uint32_t n_head_kv = 0;  // key/value heads (GQA)
  uint32_t head_dim = 0;   // elements per K (and V) head
  uint32_t n_embd = 0;     // hidden size
  uint32_t n_ff = 0;       // feed-forward width; 0 when unknown (activation memory)
  uint32_t n_vocab = 0;    // vocabulary size; 0 when unknown (logits)
  kv::ProjectionLayout projections = kv::ProjectionLayout::Separate;  // Fused for phi3
  // Sliding window per layer (0: global), empty when none: the engine keeps
  // windowed layers in rings of window + one batch (kv::layer_positions).
  std::vector<int32_t> layer_windows = {};
  // Mixture of experts (0: dense): experts, used per token, and each one's
  // feed-forward width; they size the expert gather buffers of the scratch.
  uint32_t n_expert = 0;
  uint32_t n_expert_used = 0;
  uint32_t n_ff_exp = 0;
  bool expert_biases = false;  // gpt-oss: each expert's products have biases (kv::ModelDims)
};

struct CatalogVariant {
  std::string quant;  // "Q4_K_M", ...
  std::string url;    // HTTPS download URL
  uint64_t size_bytes = 0;
  bool size_is_estimate = false;
  std::optional<std::string> sha256;  // 64 lowercase hex digits when published
  std::string quality_note;
};

struct CatalogModel {
  std::string id;  // stable key: "qwen2.5-1.5b-instruct"
  std::string name;
  std::string family;
  std::string architecture;  // GGUF general.architecture
  uint64_t parameters = 0;
  // Mixture of experts: the parameters one token uses (attention, router and
  // n_expert_used experts); 0 for a dense model, which uses all of them.
  // Memory needs every parameter, decode speed follows the active ones.
  uint64_t active_parameters = 0;
  std::string license;
  std::string license_name;
  std::string license_url;
  uint32_t context_length = 0;
  ModelShape shape;
  std::string description;
  std::string source_repo;
  // Catalog id of a smaller model with the same tokenizer that drafts well
  // for this one (speculative decoding); empty when none is suggested.
  std::string draft_model;
  // An embedding model (for document libraries) is not a chat model: the picker
  // offers it to the Documents page, not to the chat.
  bool embedding = false;
  std::vector<CatalogVariant> variants;

  const CatalogVariant* find_variant(std::string_view quant) const;
  // The parameters each generated token reads: active_parameters for a
  // mixture of experts, else all of them.
  uint64_t parameters_per_token() const { return active_parameters > 0 ? active_parameters : parameters; }
};

struct QuantLevel {
  std::string quant;
  int rank = 0;  // higher is better quality
  double bits_per_weight = 0;
  std::string quality_note;
};

struct Catalog {
  std::vector<QuantLevel> quant_levels;
  std::vector<CatalogModel> models;

  const CatalogModel* find_model(std::string_view id) const;
  // Quality rank of a quant level (higher is better); 0 when unknown.
  int quant_rank(std::string_view quant) const;
};

// Parses catalog JSON text. Errors name the model id and field at fault.
// `source` names the file in messages.
Result<Catalog> parse_catalog(std::string_view json_text, std::string_view source);

// The catalog compiled into the library (resources/catalog.json).
Result<Catalog> load_builtin_catalog();

// Reads and parses a catalog file given by the user (at most kCatalogFileLimit
// bytes, a regular file).
inline constexpr uint64_t kCatalogFileLimit = uint64_t{16} << 20;
Result<Catalog> load_catalog_file(const std::string& path);
// Raw text of the built-in catalog (for schema validation and --json output).
std::string builtin_catalog_text();

// "llama-3.2-1b-instruct:Q4_K_M" -> {id, quant}; nullopt when not of that form.
struct ModelRef {
  std::string id;
  std::string quant;
};
std::optional<ModelRef> parse_model_ref(std::string_view text);

// Quality rank of the standard quant levels, independent of a catalog file.
int default_quant_rank(std::string_view quant);

}  // namespace hearth::models
