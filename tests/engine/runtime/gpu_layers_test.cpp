// The --gpu-layers setting: parsing, and how N|auto|all becomes a layer count
// for a model (auto through kv::split_layers with the device's free memory).
#include <gtest/gtest.h>
#include <hearth/engine/runtime/backend_choice.h>

namespace hearth::runtime {
namespace {

constexpr uint64_t MiB = 1ull << 20;

TEST(GpuLayers, Parses) {
  auto all = parse_gpu_layers("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->mode, GpuLayersMode::All);
  auto autom = parse_gpu_layers("auto");
  ASSERT_TRUE(autom.ok());
  EXPECT_EQ(autom->mode, GpuLayersMode::Auto);
  auto n = parse_gpu_layers("12");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->mode, GpuLayersMode::Count);
  EXPECT_EQ(n->count, 12);
  for (const char* bad : {"", "-1", "3x", "ALL", " 2"}) {
    auto r = parse_gpu_layers(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find(std::string("'") + bad + "'"), std::string::npos) << r.error().message;
  }
}

// 8 layers of 100 MiB weights + 25 MiB KV, 100 MiB embedding/output, 75 MiB scratch.
ModelFootprint footprint() {
  ModelFootprint f;
  f.n_layer = 8;
  f.estimate.weights_bytes = 900 * MiB;
  f.estimate.kv_bytes = 200 * MiB;
  f.estimate.scratch_bytes = 75 * MiB;
  f.estimate.total_bytes = 1175 * MiB;
  return f;
}

TEST(GpuLayers, Resolves) {
  const auto f = footprint();
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::All, 0}, f, 0), 8);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Count, 3}, f, 0), 3);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Count, 0}, f, 64ull << 30), 0);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Count, 99}, f, 0), 8);
  // Auto: budget = free - 256 MiB reserve; (budget - 75) / 125 layers.
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Auto, 0}, f, 0), 0);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Auto, 0}, f, (256 + 75 + 124) * MiB), 0);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Auto, 0}, f, (256 + 75 + 125) * MiB), 1);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Auto, 0}, f, (256 + 75 + 500) * MiB), 4);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Auto, 0}, f, (256 + 1174) * MiB), 7);
  EXPECT_EQ(resolve_gpu_layers({GpuLayersMode::Auto, 0}, f, (256 + 1175) * MiB), 8);
}

TEST(GpuLayers, CpuPreferenceIgnoresTheGpu) {
  BackendRequest request;
  request.preference = BackendPreference::Cpu;
  request.gpu_layers = {GpuLayersMode::All, 0};
  request.model = footprint();
  const auto choice = choose_backend(request);
  ASSERT_TRUE(choice.backend);
  EXPECT_STREQ(choice.backend->name(), "cpu");
  EXPECT_EQ(choice.gpu_layers, 0);
  EXPECT_FALSE(probe_gpu(request).has_value());
}

}  // namespace
}  // namespace hearth::runtime
