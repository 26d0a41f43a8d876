// The per-tensor type rules, checked against the reference quantizer's
// published rules written out by hand here (layer lists for use_more_bits,
// fallbacks for rows that are not whole K-quant blocks).
#include <gtest/gtest.h>
#include <hearth/engine/tools/quant_mix.h>

namespace hearth::tools {
namespace {

TensorContext matrix(std::string name, int64_t n_layer, int64_t row_length = 256) {
  return TensorContext{name, 2, row_length, layer_of(name), n_layer, 1, true};
}

TEST(QuantMix, UseMoreBitsForThirtyTwoLayers) {
  // n = 32: n/8 = 4, 7n/8 = 28: layers 0-3, 28-31, and 4 + 3k + 2 = 6, 9, ..., 27.
  std::vector<int64_t> want = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
  std::vector<int64_t> got;
  for (int64_t i = 0; i < 32; ++i) {
    if (use_more_bits(i, 32)) got.push_back(i);
  }
  EXPECT_EQ(got, want);
  EXPECT_FALSE(use_more_bits(0, 2));  // the two-layer fixture: only the last layer
  EXPECT_TRUE(use_more_bits(1, 2));
}

TEST(QuantMix, LayerOfName) {
  EXPECT_EQ(layer_of("blk.12.attn_v.weight"), 12);
  EXPECT_EQ(layer_of("output.weight"), -1);
  EXPECT_EQ(layer_of("blk.x.attn_v.weight"), -1);
  EXPECT_EQ(layer_of("blk.3"), -1);
}

TEST(QuantMix, TargetsParseAndCarryTheReferenceFileType) {
  EXPECT_EQ(*quant_target_from_name("q4_k_m"), QuantTarget::Q4_K_M);
  EXPECT_FALSE(quant_target_from_name("Q4_K").ok());
  // llama_ftype values: Q4_0 2, Q8_0 7, Q4_K_M 15, Q6_K 18, IQ4_XS 30, BF16 32, MXFP4_MOE 38.
  EXPECT_EQ(file_type_id(QuantTarget::Q4_0), 2u);
  EXPECT_EQ(file_type_id(QuantTarget::Q8_0), 7u);
  EXPECT_EQ(file_type_id(QuantTarget::Q4_K_M), 15u);
  EXPECT_EQ(file_type_id(QuantTarget::Q6_K), 18u);
  EXPECT_EQ(file_type_id(QuantTarget::IQ4_XS), 30u);
  EXPECT_EQ(file_type_id(QuantTarget::BF16), 32u);
  EXPECT_EQ(*quant_target_from_name("mxfp4_moe"), QuantTarget::MXFP4_MOE);
  EXPECT_EQ(file_type_id(QuantTarget::MXFP4_MOE), 38u);
  EXPECT_EQ(all_quant_targets().size(), 15u);
}

TEST(QuantMix, Q4KMixKeepsOutputAndSomeLayersAtQ6K) {
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("output.weight", 32)), DType::Q6_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("token_embd.weight", 32)), DType::Q4_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("blk.6.attn_v.weight", 32)), DType::Q6_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("blk.7.attn_v.weight", 32)), DType::Q4_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("blk.31.ffn_down.weight", 32)), DType::Q6_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("blk.5.ffn_down.weight", 32)), DType::Q4_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("blk.6.attn_q.weight", 32)), DType::Q4_K);
  // Tied output: the embedding takes the output's rule.
  TensorContext tied = matrix("token_embd.weight", 32);
  tied.has_output = false;
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, tied), DType::Q6_K);
}

TEST(QuantMix, Q3AndQ5Mixes) {
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q3_K_M, matrix("blk.0.attn_v.weight", 32)), DType::Q5_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q3_K_M, matrix("blk.2.attn_v.weight", 32)), DType::Q4_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q3_K_M, matrix("blk.1.ffn_down.weight", 32)), DType::Q5_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q3_K_M, matrix("blk.2.ffn_down.weight", 32)), DType::Q4_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q3_K_M, matrix("blk.2.attn_output.weight", 32)), DType::Q4_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q3_K_M, matrix("blk.2.ffn_up.weight", 32)), DType::Q3_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q5_K_M, matrix("blk.0.attn_v.weight", 32)), DType::Q6_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q5_K_M, matrix("blk.7.ffn_down.weight", 32)), DType::Q5_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q2_K, matrix("blk.7.ffn_down.weight", 32)), DType::Q3_K);
}

// The reference's rules that depend on an importance matrix: IQ4 keeps the
// first eighth of the layers' ffn_down in IQ4 with one (Q5_K without), and
// Q4_0/Q5_0 move it to Q4_1/Q5_1 only with one.
TEST(QuantMix, ImportanceMatrixRulesForFfnDown) {
  auto with = matrix("blk.1.ffn_down.weight", 32);
  with.has_imatrix = true;
  const auto without = matrix("blk.1.ffn_down.weight", 32);
  EXPECT_EQ(choose_tensor_type(QuantTarget::IQ4_XS, without), DType::Q5_K);
  EXPECT_EQ(choose_tensor_type(QuantTarget::IQ4_XS, with), DType::IQ4_XS);
  EXPECT_EQ(choose_tensor_type(QuantTarget::IQ4_NL, with), DType::IQ4_NL);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_0, without), DType::Q4_0);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_0, with), DType::Q4_1);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q5_0, with), DType::Q5_1);
  auto later = matrix("blk.4.ffn_down.weight", 32);
  later.has_imatrix = true;
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_0, later), DType::Q4_0);
}

TEST(QuantMix, OneDimensionalTensorsStayF32) {
  TensorContext norm{"blk.0.attn_norm.weight", 1, 256, 0, 2, 1, true};
  for (QuantTarget t : all_quant_targets()) EXPECT_EQ(choose_tensor_type(t, norm), DType::F32);
}

TEST(QuantMix, RowsThatAreNotWholeKBlocksFallBack) {
  // 896 = 3.5 * 256 (Qwen2.5 0.5B's width): the reference's fallbacks.
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("blk.3.attn_q.weight", 24, 896)), DType::Q5_0);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q5_K_M, matrix("blk.3.attn_q.weight", 24, 896)), DType::Q5_1);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q6_K, matrix("blk.3.attn_q.weight", 24, 896)), DType::Q8_0);
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q2_K, matrix("blk.3.attn_q.weight", 24, 896)), DType::IQ4_NL);
  EXPECT_EQ(choose_tensor_type(QuantTarget::IQ4_XS, matrix("blk.3.attn_q.weight", 24, 896)), DType::IQ4_NL);
  // The output matrix with such rows goes to Q8_0 directly.
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_K_M, matrix("output.weight", 24, 896)), DType::Q8_0);
  // Not even whole 32-blocks: F16.
  EXPECT_EQ(choose_tensor_type(QuantTarget::Q4_0, matrix("blk.0.attn_q.weight", 2, 100)), DType::F16);
}

}  // namespace
}  // namespace hearth::tools
