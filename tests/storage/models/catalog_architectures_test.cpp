// Every catalog model's architecture is one the engine loads: the picker must
// not offer a download the engine then refuses. Each architecture is in the
// engine's registry, and those with a conformance fixture in tests/data (the
// 2026 families among them) are loaded from it, so the check is a real load,
// not a name lookup.
#include <hearth/engine/model/model.h>
#include <hearth/models/catalog.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace hearth::models {
namespace {

// A fixture model of each architecture that has one.
const std::map<std::string, std::string> kFixtureOf = {
    {"llama", "tiny-llama-q4_k_m.gguf"},      {"qwen2", "tiny-qwen2-q4_k_m.gguf"},
    {"gemma3", "tiny-gemma3-q4_k_m.gguf"},    {"qwen3moe", "tiny-qwen3moe-q4_k_m.gguf"},
    {"gpt-oss", "tiny-gpt-oss-mxfp4_moe.gguf"}, {"smollm3", "tiny-smollm3-q4_k_m.gguf"},
};

TEST(CatalogArchitectures, EveryModelIsOneTheEngineLoads) {
  auto catalog = load_builtin_catalog();
  ASSERT_TRUE(catalog.ok()) << catalog.error().message;
  const std::vector<std::string> known = model::supported_architectures();
  std::set<std::string> loaded;
  for (const auto& m : catalog->models) {
    EXPECT_NE(std::find(known.begin(), known.end(), m.architecture), known.end())
        << m.id << ": the engine does not know architecture '" << m.architecture << "'";
    auto fixture = kFixtureOf.find(m.architecture);
    if (fixture == kFixtureOf.end() || loaded.count(m.architecture)) continue;
    auto model = model::Model::load(std::string(HEARTH_TEST_DATA_DIR) + "/models/" + fixture->second);
    ASSERT_TRUE(model.ok()) << m.id << " (" << m.architecture << "): " << model.error().message;
    EXPECT_EQ((*model)->hparams().architecture, m.architecture);
    loaded.insert(m.architecture);
  }
  // The 2026 families of the catalog refresh are among those really loaded.
  for (const char* arch : {"gemma3", "qwen3moe", "gpt-oss", "smollm3"}) {
    EXPECT_TRUE(loaded.count(arch)) << arch << " has no catalog entry or no fixture";
  }
}

}  // namespace
}  // namespace hearth::models
