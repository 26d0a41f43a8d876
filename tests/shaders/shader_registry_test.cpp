// Every compiled shader variant is embedded as SPIR-V and findable by name.
#include <gtest/gtest.h>
#include <hearth/shaders/params.h>
#include <hearth/shaders/shader_registry.h>

#include <set>
#include <string>

namespace hearth::shaders {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203u;  // SPIR-V spec, section 3.1

TEST(ShaderRegistry, EveryIdHasSpirvAndAUniqueName) {
  std::set<std::string> names;
  for (uint32_t i = 0; i < static_cast<uint32_t>(ShaderId::Count); ++i) {
    const auto id = static_cast<ShaderId>(i);
    const auto& info = shader_info(id);
    ASSERT_NE(info.name, nullptr);
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    const auto words = shader_spirv(id);
    ASSERT_GT(words.size(), 5u) << info.name;  // header is 5 words
    EXPECT_EQ(words[0], kSpirvMagic) << info.name;
    EXPECT_GE(words[1], 0x00010300u) << info.name << ": SPIR-V version below 1.3";
    const auto found = shader_by_name(info.name);
    ASSERT_TRUE(found.has_value()) << info.name;
    EXPECT_EQ(*found, id);
  }
  EXPECT_FALSE(shader_by_name("no_such_shader").has_value());
}

TEST(ShaderRegistry, HasTheKernelsTheBackendNeeds) {
  for (const char* name : {"binary_add", "rms_norm", "rope_normal", "rope_neox", "unary_scale", "swiglu",
                           "attention_q8_0", "attention_f16", "kv_store_f16", "geglu", "unary_softcap", "matvec_q4_k", "matvec_q6_k", "matvec_q8_0",
                           "matvec_f16", "matmul_q4_k", "get_rows_q4_k", "matvec_iq4_xs", "matvec_bf16"}) {
    EXPECT_TRUE(shader_by_name(name).has_value()) << name;
  }
}

TEST(ShaderParams, PushConstantLayoutsAreTightlyPacked) {
  // The GLSL side reads these with std430 push-constant layout: 4-byte scalars.
  EXPECT_EQ(sizeof(MatvecParams), 5 * sizeof(uint32_t));
  EXPECT_EQ(offsetof(RopeParams, freq_base), 16u);
  EXPECT_EQ(offsetof(AttentionParams, scale), 24u);
}

}  // namespace
}  // namespace hearth::shaders
