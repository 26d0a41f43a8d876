#include <hearth/models/catalog.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <hearth/core/file_io.h>

#include <algorithm>
#include <utility>

namespace hearth::models {
namespace {

using nlohmann::json;

// Reads one required field; the error names the model and the key.
template <typename T>
Result<T> field(const json& object, const char* key, const std::string& where) {
  auto it = object.find(key);
  if (it == object.end()) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: missing '{}'", where, key));
  }
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: '{}' has the wrong type ({})", where, key, it->type_name()));
  }
}

template <typename T>
T optional_field(const json& object, const char* key, T fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

Result<uint32_t> positive_u32(const json& object, const char* key, const std::string& where) {
  HEARTH_TRY(int64_t value, field<int64_t>(object, key, where));
  if (value <= 0 || value > 0xffffffffLL) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: '{}' = {} is not a positive 32-bit count", where, key, value));
  }
  return static_cast<uint32_t>(value);
}

Result<CatalogVariant> parse_variant(const json& object, const std::string& where_model) {
  CatalogVariant v;
  HEARTH_TRY(v.quant, field<std::string>(object, "quant", where_model + " variant"));
  const std::string where = fmt::format("{} variant {}", where_model, v.quant);
  HEARTH_TRY(v.url, field<std::string>(object, "url", where));
  if (v.url.rfind("https://", 0) != 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: url '{}' is not HTTPS", where, v.url));
  }
  HEARTH_TRY(int64_t size, field<int64_t>(object, "size_bytes", where));
  if (size <= 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: size_bytes {} is not positive", where, size));
  }
  v.size_bytes = static_cast<uint64_t>(size);
  v.size_is_estimate = optional_field<bool>(object, "size_is_estimate", false);
  auto sha = object.find("sha256");
  if (sha != object.end() && !sha->is_null()) {
    if (!sha->is_string()) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: sha256 is not a string", where));
    }
    std::string hex = sha->get<std::string>();
    const bool valid = hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
                         return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                       });
    if (!valid) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: sha256 '{}' is not 64 lowercase hex digits", where, hex));
    }
    v.sha256 = std::move(hex);
  }
  v.quality_note = optional_field<std::string>(object, "quality_note", "");
  return v;
}

Result<CatalogModel> parse_model(const json& object, std::string_view source, size_t index) {
  CatalogModel m;
  HEARTH_TRY(m.id, field<std::string>(object, "id", fmt::format("{}: models[{}]", source, index)));
  const std::string where = fmt::format("{}: model '{}'", source, m.id);
  HEARTH_TRY(m.name, field<std::string>(object, "name", where));
  HEARTH_TRY(m.family, field<std::string>(object, "family", where));
  HEARTH_TRY(m.architecture, field<std::string>(object, "architecture", where));
  HEARTH_TRY(int64_t params, field<int64_t>(object, "parameters", where));
  if (params <= 0) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: parameters {} is not positive", where, params));
  }
  m.parameters = static_cast<uint64_t>(params);
  HEARTH_TRY(m.license, field<std::string>(object, "license", where));
  m.license_name = optional_field<std::string>(object, "license_name", m.license);
  m.license_url = optional_field<std::string>(object, "license_url", "");
  HEARTH_TRY(m.context_length, positive_u32(object, "context_length", where));
  HEARTH_TRY(m.shape.n_layer, positive_u32(object, "n_layer", where));
  HEARTH_TRY(m.shape.n_head, positive_u32(object, "n_head", where));
  HEARTH_TRY(m.shape.n_head_kv, positive_u32(object, "n_head_kv", where));
  HEARTH_TRY(m.shape.head_dim, positive_u32(object, "head_dim", where));
  HEARTH_TRY(m.shape.n_embd, positive_u32(object, "n_embd", where));
  // Optional: without them the activation estimate assumes n_ff = 4 n_embd
  // and leaves out the logits.
  for (auto [key, out] : {std::pair{"n_ff", &m.shape.n_ff}, std::pair{"n_vocab", &m.shape.n_vocab}}) {
    if (object.contains(key)) {
      HEARTH_TRY(*out, positive_u32(object, key, where));
    }
  }
  if (m.architecture == "phi3") m.shape.projections = kv::ProjectionLayout::Fused;
  if (m.architecture == "gpt-oss") m.shape.expert_biases = true;
  // The window is the GGUF's "<arch>.attention.sliding_window"; an entry
  // may state it, else the family's rule applies (gemma2: 4096).
  std::optional<uint64_t> window;
  if (object.contains("sliding_window")) {
    HEARTH_TRY(const uint32_t w, positive_u32(object, "sliding_window", where));
    window = w;
  }
  m.shape.layer_windows = kv::family_layer_windows(m.architecture, window, m.shape.n_layer);
  // A mixture of experts states its experts and its active parameters together.
  const bool moe = object.contains("n_expert");
  for (const char* key : {"n_expert_used", "n_ff_exp", "active_parameters"}) {
    if (object.contains(key) != moe) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: '{}' and 'n_expert' must be given together (a mixture of experts "
                                    "states n_expert, n_expert_used, n_ff_exp and active_parameters)",
                                    where, key));
    }
  }
  if (moe) {
    HEARTH_TRY(m.shape.n_expert, positive_u32(object, "n_expert", where));
    HEARTH_TRY(m.shape.n_expert_used, positive_u32(object, "n_expert_used", where));
    HEARTH_TRY(m.shape.n_ff_exp, positive_u32(object, "n_ff_exp", where));
    HEARTH_TRY(const int64_t active, field<int64_t>(object, "active_parameters", where));
    if (m.shape.n_expert_used > m.shape.n_expert) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: n_expert_used {} exceeds n_expert {}", where,
                                                              m.shape.n_expert_used, m.shape.n_expert));
    }
    if (active <= 0 || static_cast<uint64_t>(active) > m.parameters) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: active_parameters {} is not between 1 and parameters {}", where, active,
                                    m.parameters));
    }
    m.active_parameters = static_cast<uint64_t>(active);
  }
  if (m.shape.n_head % m.shape.n_head_kv != 0) {
    return make_error(ErrorCode::InvalidFormat,
                      fmt::format("{}: n_head {} is not a multiple of n_head_kv {}", where,
                                  m.shape.n_head, m.shape.n_head_kv));
  }
  HEARTH_TRY(m.description, field<std::string>(object, "description", where));
  m.source_repo = optional_field<std::string>(object, "source_repo", "");
  m.draft_model = optional_field<std::string>(object, "draft_model", "");
  {
    const std::string kind = optional_field<std::string>(object, "kind", "chat");
    if (kind != "chat" && kind != "embedding") {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: 'kind' is '{}', expected 'chat' or 'embedding'", where, kind));
    }
    m.embedding = kind == "embedding";
  }
  auto variants = object.find("variants");
  if (variants == object.end() || !variants->is_array() || variants->empty()) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: 'variants' must be a non-empty array", where));
  }
  for (const auto& item : *variants) {
    HEARTH_TRY(CatalogVariant v, parse_variant(item, where));
    if (m.find_variant(v.quant)) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: variant {} listed twice", where, v.quant));
    }
    m.variants.push_back(std::move(v));
  }
  return m;
}

}  // namespace

const CatalogVariant* CatalogModel::find_variant(std::string_view quant) const {
  for (const auto& v : variants) {
    if (v.quant == quant) return &v;
  }
  return nullptr;
}

const CatalogModel* Catalog::find_model(std::string_view id) const {
  for (const auto& m : models) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

int Catalog::quant_rank(std::string_view quant) const {
  for (const auto& level : quant_levels) {
    if (level.quant == quant) return level.rank;
  }
  return default_quant_rank(quant);
}

int default_quant_rank(std::string_view quant) {
  static constexpr std::string_view kOrder[] = {"Q4_0", "Q4_K_M", "Q5_K_M", "Q6_K", "Q8_0"};
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    if (kOrder[i] == quant) return static_cast<int>(i) + 1;
  }
  return 0;
}

Result<Catalog> parse_catalog(std::string_view json_text, std::string_view source) {
  json root = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: not valid JSON", source));
  }
  if (!root.is_object()) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: top level is not an object", source));
  }
  Catalog catalog;
  if (auto levels = root.find("quant_levels"); levels != root.end() && levels->is_array()) {
    for (const auto& item : *levels) {
      const std::string where = fmt::format("{}: quant_levels", source);
      QuantLevel level;
      HEARTH_TRY(level.quant, field<std::string>(item, "quant", where));
      HEARTH_TRY(level.rank, field<int>(item, "rank", where));
      level.bits_per_weight = optional_field<double>(item, "bits_per_weight", 0.0);
      level.quality_note = optional_field<std::string>(item, "quality_note", "");
      catalog.quant_levels.push_back(std::move(level));
    }
  }
  auto models = root.find("models");
  if (models == root.end() || !models->is_array()) {
    return make_error(ErrorCode::InvalidFormat, fmt::format("{}: 'models' must be an array", source));
  }
  for (size_t i = 0; i < models->size(); ++i) {
    HEARTH_TRY(CatalogModel m, parse_model((*models)[i], source, i));
    if (catalog.find_model(m.id)) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: model id '{}' listed twice", source, m.id));
    }
    catalog.models.push_back(std::move(m));
  }
  // A suggested draft is another entry of the same catalog, and smaller.
  for (const auto& m : catalog.models) {
    if (m.draft_model.empty()) continue;
    const CatalogModel* d = catalog.find_model(m.draft_model);
    if (!d || d == &m || d->parameters >= m.parameters) {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: model '{}': draft_model '{}' is not a smaller model of this catalog", source,
                                    m.id, m.draft_model));
    }
  }
  return catalog;
}

Result<Catalog> load_catalog_file(const std::string& path) {
  HEARTH_TRY(std::string text, read_regular_file(path, kCatalogFileLimit, "catalog files"));
  return parse_catalog(text, path);
}

Result<Catalog> load_builtin_catalog() {
  const std::string text = builtin_catalog_text();
  if (text.empty()) {
    return make_error(ErrorCode::NotFound, "the built-in catalog (resources/catalog.json) is empty");
  }
  return parse_catalog(text, "catalog.json (built in)");
}

std::optional<ModelRef> parse_model_ref(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return std::nullopt;
  if (text.find("://") != std::string_view::npos) return std::nullopt;  // a URL, not a ref
  return ModelRef{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

}  // namespace hearth::models
