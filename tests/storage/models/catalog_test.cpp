// The shipped catalog against its schema (the documented contract), and the
// parser's handling of broken catalogs. Mixtures of experts carry their
// active parameters: memory fits the whole file, speed follows the share a
// token reads.
#include <hearth/models/catalog.h>
#include <hearth/models/json_schema_lite.h>
#include <hearth/models/memory_fit.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace hearth::models {
namespace {

using nlohmann::json;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json load(const char* name) {
  return json::parse(read_text(std::string(HEARTH_RESOURCES_DIR) + "/" + name));
}

std::string joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += e + "\n";
  return out;
}

TEST(CatalogSchema, ShippedCatalogValidates) {
  const json schema = load("catalog.schema.json");
  const json catalog = load("catalog.json");
  const auto errors = validate_json_schema(schema, catalog);
  EXPECT_TRUE(errors.empty()) << joined(errors);
}

TEST(CatalogSchema, BrokenCatalogsAreRejectedWithThePath) {
  const json schema = load("catalog.schema.json");
  const json good = load("catalog.json");

  json missing = good;
  missing["models"][2].erase("n_head_kv");
  auto errors = validate_json_schema(schema, missing);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_NE(errors[0].find("/models/2"), std::string::npos);
  EXPECT_NE(errors[0].find("n_head_kv"), std::string::npos);

  json http = good;
  http["models"][0]["variants"][1]["url"] = "http://example.com/x.gguf";
  errors = validate_json_schema(schema, http);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_NE(errors[0].find("/models/0/variants/1/url"), std::string::npos);

  json bad_hash = good;
  bad_hash["models"][0]["variants"][0]["sha256"] = "ABC";
  EXPECT_EQ(validate_json_schema(schema, bad_hash).size(), 1u);

  json dup = good;
  dup["models"][1]["id"] = dup["models"][0]["id"];
  errors = validate_json_schema(schema, dup);
  ASSERT_EQ(errors.size(), 1u) << joined(errors);
  EXPECT_NE(errors[0].find("appears twice"), std::string::npos);

  json extra = good;
  extra["models"][0]["surprise"] = 1;
  EXPECT_EQ(validate_json_schema(schema, extra).size(), 1u);

  json zero = good;
  zero["models"][0]["n_layer"] = 0;
  EXPECT_EQ(validate_json_schema(schema, zero).size(), 1u);
}

TEST(Catalog, BuiltInResourceIsTheShippedFile) {
  EXPECT_EQ(builtin_catalog_text(), read_text(std::string(HEARTH_RESOURCES_DIR) + "/catalog.json"));
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  EXPECT_GE(catalog->models.size(), 15u);
}

TEST(Catalog, ModelsTheIssueAsksForArePresentWithTheirVariants) {
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok());
  for (const char* id : {"llama-3.2-1b-instruct", "llama-3.2-3b-instruct", "llama-3.1-8b-instruct",
                         "qwen2.5-0.5b-instruct", "qwen2.5-1.5b-instruct", "qwen2.5-3b-instruct",
                         "qwen2.5-7b-instruct", "qwen3-0.6b", "qwen3-1.7b", "qwen3-4b", "phi-3.5-mini-instruct",
                         "gemma-2-2b-it", "mistral-7b-instruct-v0.3", "smollm2-360m-instruct",
                         "smollm2-1.7b-instruct"}) {
    const auto* m = catalog->find_model(id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_NE(m->find_variant("Q4_K_M"), nullptr) << id;
    EXPECT_NE(m->find_variant("Q8_0"), nullptr) << id;
  }
}

TEST(Catalog, UrlsFollowTheRepositoryNamingAndEstimatesAreMarked) {
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok());
  for (const auto& m : catalog->models) {
    for (const auto& v : m.variants) {
      // https://huggingface.co/{source_repo}/resolve/main/{stem}-{QUANT}.gguf, or
      // {stem}.{QUANT}.gguf where the repository names its files so (nomic-ai's).
      const std::string prefix = "https://huggingface.co/" + m.source_repo + "/resolve/main/";
      EXPECT_EQ(v.url.rfind(prefix, 0), 0u) << v.url;
      const std::string suffix = v.quant + ".gguf";
      ASSERT_GT(v.url.size(), suffix.size());
      EXPECT_EQ(v.url.substr(v.url.size() - suffix.size()), suffix) << v.url;
      const char separator = v.url[v.url.size() - suffix.size() - 1];
      EXPECT_TRUE(separator == '-' || separator == '.') << v.url;
      // No hash without a published source: unknown hashes must be null.
      if (v.size_is_estimate) {
        EXPECT_FALSE(v.sha256.has_value()) << v.url;
      }
      EXPECT_FALSE(v.quality_note.empty());
    }
    // The KV width cannot exceed the query width.
    EXPECT_LE(m.shape.n_head_kv, m.shape.n_head) << m.id;
    EXPECT_EQ(m.shape.n_head % m.shape.n_head_kv, 0u) << m.id;
  }
}

TEST(Catalog, ParserNamesTheModelAndFieldAtFault) {
  const std::string text = R"({"models": [{"id": "m1", "name": "M", "family": "f", "architecture": "llama",
      "parameters": 10, "license": "mit", "context_length": 128, "n_layer": 2, "n_head": 4,
      "n_head_kv": 3, "head_dim": 8, "n_embd": 32, "description": "d",
      "variants": [{"quant": "Q8_0", "url": "https://x/y.gguf", "size_bytes": 5, "sha256": null}]}]})";
  auto result = parse_catalog(text, "test.json");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("model 'm1'"), std::string::npos) << result.error().message;
  EXPECT_NE(result.error().message.find("n_head_kv"), std::string::npos) << result.error().message;

  auto not_json = parse_catalog("{", "broken.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.error().message.find("broken.json"), std::string::npos);
}

TEST(Catalog, RefreshedModelsArePresentWithTheirVariants) {
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok());
  const std::pair<const char*, std::vector<const char*>> wanted[] = {
      {"gemma-3-1b-it", {"Q4_K_M", "Q8_0"}},
      {"gemma-3-4b-it", {"Q4_K_M", "Q8_0"}},
      {"gemma-3-12b-it", {"Q4_K_M", "Q8_0"}},
      {"gemma-3-1b-it-qat", {"Q4_0"}},
      {"gemma-3-4b-it-qat", {"Q4_0"}},
      {"gemma-3-12b-it-qat", {"Q4_0"}},
      {"qwen3-8b", {"Q4_K_M", "Q8_0"}},
      {"qwen3-30b-a3b", {"Q4_K_M", "Q8_0"}},
      {"gpt-oss-20b", {"MXFP4"}},
      {"smollm3-3b", {"Q4_K_M", "Q8_0"}},
      {"deepseek-r1-distill-qwen-1.5b", {"Q4_K_M", "Q8_0"}},
      {"deepseek-r1-distill-qwen-7b", {"Q4_K_M", "Q8_0"}},
      {"qwen2.5-coder-1.5b-instruct", {"Q4_K_M", "Q8_0"}},
      {"qwen2.5-coder-7b-instruct", {"Q4_K_M", "Q8_0"}},
  };
  for (const auto& [id, quants] : wanted) {
    const auto* m = catalog->find_model(id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_FALSE(m->license.empty()) << id;
    EXPECT_GT(m->context_length, 0u) << id;
    for (const char* quant : quants) EXPECT_NE(m->find_variant(quant), nullptr) << id << " " << quant;
    // Gemma 3 keeps most layers in sliding windows: the estimate sizes them as rings.
    if (m->architecture == "gemma3") {
      EXPECT_EQ(m->shape.layer_windows.size(), m->shape.n_layer) << id;
    }
  }
  EXPECT_GT(catalog->quant_rank("MXFP4"), 0);
}

TEST(Catalog, MixturesOfExpertsFitByTotalSizeAndReadTheirActiveShare) {
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok());
  int moe = 0;
  for (const auto& m : catalog->models) {
    const auto fits = fit_variants(*catalog, m, KvSettings{}, MachineBudget{64ull << 30, 0});
    ASSERT_EQ(fits.size(), m.variants.size());
    for (size_t i = 0; i < fits.size(); ++i) {
      // Memory: the whole file, every expert included.
      EXPECT_EQ(fits[i].fit.estimate.weights_bytes, m.variants[i].size_bytes) << m.id;
      if (m.shape.n_expert == 0) {
        EXPECT_EQ(m.active_parameters, 0u) << m.id;
        EXPECT_EQ(fits[i].bytes_per_token, m.variants[i].size_bytes) << m.id;
        continue;
      }
      // Speed: the active share of it, as a fraction of the file no larger
      // than the active fraction of the parameters.
      const double share = double(fits[i].bytes_per_token) / double(m.variants[i].size_bytes);
      EXPECT_NEAR(share, double(m.active_parameters) / double(m.parameters), 1e-6) << m.id;
      EXPECT_LT(fits[i].bytes_per_token, m.variants[i].size_bytes / 4) << m.id;
    }
    if (m.shape.n_expert == 0) continue;
    ++moe;
    EXPECT_GT(m.active_parameters, 0u) << m.id;
    EXPECT_LT(m.active_parameters, m.parameters) << m.id;
    EXPECT_EQ(m.parameters_per_token(), m.active_parameters) << m.id;
    EXPECT_LE(m.shape.n_expert_used, m.shape.n_expert) << m.id;
    EXPECT_GT(m.shape.n_ff_exp, 0u) << m.id;
  }
  EXPECT_GE(moe, 2);  // Qwen3-30B-A3B and gpt-oss-20b
}

TEST(Catalog, AMixtureOfExpertsStatesAllItsFigures) {
  auto with = [](const std::string& moe_fields) {
    return R"({"models": [{"id": "m1", "name": "M", "family": "f", "architecture": "qwen3moe",
        "parameters": 1000, "license": "mit", "context_length": 128, "n_layer": 2, "n_head": 4,
        "n_head_kv": 2, "head_dim": 8, "n_embd": 32, "description": "d", )" +
           moe_fields + R"(
        "variants": [{"quant": "Q8_0", "url": "https://x/y.gguf", "size_bytes": 5, "size_is_estimate": true,
                      "sha256": null, "quality_note": "q"}]}]})";
  };
  auto ok = parse_catalog(with(R"("n_expert": 8, "n_expert_used": 2, "n_ff_exp": 16, "active_parameters": 300,)"),
                          "moe.json");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->models[0].active_parameters, 300u);
  EXPECT_EQ(ok->models[0].shape.n_expert_used, 2u);

  auto half = parse_catalog(with(R"("n_expert": 8, "n_expert_used": 2, "n_ff_exp": 16,)"), "moe.json");
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.error().message.find("active_parameters"), std::string::npos) << half.error().message;
  EXPECT_NE(half.error().message.find("model 'm1'"), std::string::npos) << half.error().message;

  auto more = parse_catalog(
      with(R"("n_expert": 8, "n_expert_used": 2, "n_ff_exp": 16, "active_parameters": 2000,)"), "moe.json");
  ASSERT_FALSE(more.ok());
  EXPECT_NE(more.error().message.find("active_parameters 2000"), std::string::npos) << more.error().message;

  auto used = parse_catalog(
      with(R"("n_expert": 2, "n_expert_used": 4, "n_ff_exp": 16, "active_parameters": 300,)"), "moe.json");
  ASSERT_FALSE(used.ok());
  EXPECT_NE(used.error().message.find("n_expert_used 4"), std::string::npos) << used.error().message;
}

// Speculative decoding: a suggested draft shares the family's tokenizer
// (vocabularies of one size, up to padding rows) and is smaller.
TEST(Catalog, SuggestedDraftsAreSmallerModelsOfTheSameFamily) {
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  int suggested = 0;
  for (const auto& m : catalog->models) {
    if (m.draft_model.empty()) continue;
    ++suggested;
    const CatalogModel* d = catalog->find_model(m.draft_model);
    ASSERT_NE(d, nullptr) << m.id;
    EXPECT_LT(d->parameters * 3, m.parameters * 2) << m.id << " drafted by " << d->id;
    // Padding rows may differ (Qwen2.5 7B: 152064, 0.5B: 151936), never by
    // more than the drafter's check allows.
    const int64_t gap = static_cast<int64_t>(d->shape.n_vocab) - static_cast<int64_t>(m.shape.n_vocab);
    EXPECT_LE(std::abs(gap), 128) << m.id << " drafted by " << d->id;
  }
  EXPECT_GE(suggested, 8);
  const auto* big = catalog->find_model("qwen2.5-7b-instruct");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->draft_model, "qwen2.5-0.5b-instruct");

  auto with = [](const std::string& draft) {
    return R"({"models": [{"id": "small", "name": "S", "family": "f", "architecture": "llama", "parameters": 10,
        "license": "mit", "context_length": 128, "n_layer": 2, "n_head": 4, "n_head_kv": 2, "head_dim": 8,
        "n_embd": 32, "description": "d", "variants": [{"quant": "Q8_0", "url": "https://x/s.gguf",
        "size_bytes": 5, "size_is_estimate": true, "sha256": null, "quality_note": "q"}]},
        {"id": "big", "name": "B", "family": "f", "architecture": "llama", "parameters": 1000,
        "license": "mit", "context_length": 128, "n_layer": 2, "n_head": 4, "n_head_kv": 2, "head_dim": 8,
        "n_embd": 32, "description": "d", "draft_model": ")" + draft + R"(", "variants": [{"quant": "Q8_0",
        "url": "https://x/b.gguf", "size_bytes": 5, "size_is_estimate": true, "sha256": null,
        "quality_note": "q"}]}]})";
  };
  EXPECT_TRUE(parse_catalog(with("small"), "d.json").ok());
  for (const char* bad : {"nowhere", "big"}) {
    auto r = parse_catalog(with(bad), "d.json");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(std::string("draft_model '") + bad + "'"), std::string::npos) << r.error().message;
  }
}

TEST(Catalog, EmbeddingModelsAreMarkedAndOtherKindsRefused) {
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  int embedding = 0;
  for (const CatalogModel& m : catalog->models) {
    if (!m.embedding) continue;
    ++embedding;
    EXPECT_TRUE(m.architecture == "bert" || m.architecture == "nomic-bert" || m.architecture == "qwen3") << m.id;
  }
  EXPECT_EQ(embedding, 2);  // nomic-embed-text and Qwen3-Embedding
  const auto* chat = catalog->find_model("qwen2.5-7b-instruct");
  ASSERT_NE(chat, nullptr);
  EXPECT_FALSE(chat->embedding);
  const std::string odd = R"({"models": [{"id": "x", "name": "X", "family": "f", "architecture": "llama",
      "parameters": 10, "license": "mit", "context_length": 128, "n_layer": 2, "n_head": 4, "n_head_kv": 2,
      "head_dim": 8, "n_embd": 32, "description": "d", "kind": "rerank", "variants": [{"quant": "Q8_0",
      "url": "https://x/s.gguf", "size_bytes": 5, "size_is_estimate": true, "sha256": null, "quality_note": "q"}]}]})";
  auto r = parse_catalog(odd, "d.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("'kind' is 'rerank'"), std::string::npos) << r.error().message;
}

TEST(Catalog, ModelRefs) {
  auto ref = parse_model_ref("qwen3-4b:Q4_K_M");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->id, "qwen3-4b");
  EXPECT_EQ(ref->quant, "Q4_K_M");
  EXPECT_FALSE(parse_model_ref("https://huggingface.co/a/b/resolve/main/c.gguf").has_value());
  EXPECT_FALSE(parse_model_ref("noquant").has_value());
  EXPECT_FALSE(parse_model_ref("trailing:").has_value());
}

}  // namespace
}  // namespace hearth::models
