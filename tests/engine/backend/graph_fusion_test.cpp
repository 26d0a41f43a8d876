// backend::fuse_residual_adds on graphs built here: a layer's two residual
// adds join the products before them, and each case that must keep its add
// keeps it (a second reader of the product, the product as the graph's
// output, an add that is not next, a product the backend refuses).
#include <gtest/gtest.h>
#include <hearth/engine/backend/graph_fusion.h>

namespace hearth::backend {
namespace {

struct Layer {
  Graph g;
  Tensor* weight_o = nullptr;
  Tensor* weight_down = nullptr;
  Tensor* x = nullptr;
};

// x -> h = x + W_o x -> y = h + W_down h, with placeholder weights (nothing is computed).
void build(Layer& l, bool swap_add_operands) {
  Graph& g = l.g;
  l.x = g.input(DType::F32, {8, 1, 1, 1}, nullptr);
  l.weight_o = g.input(DType::F32, {8, 8, 1, 1}, nullptr);
  l.weight_down = g.input(DType::F32, {8, 8, 1, 1}, nullptr);
  Tensor* attn = g.matmul(l.weight_o, l.x);
  Tensor* h = swap_add_operands ? g.add(attn, l.x) : g.add(l.x, attn);
  Tensor* ffn = g.matmul(l.weight_down, h);
  g.output = g.add(h, ffn);
}

const auto any_product = [](const Node&) { return true; };

TEST(FuseResidualAdds, BothAddsOfALayerJoinTheirProducts) {
  for (const bool swap : {false, true}) {
    Layer l;
    build(l, swap);
    Tensor* h = l.g.nodes()[1].dst;
    Tensor* y = l.g.output;
    ASSERT_EQ(fuse_residual_adds(l.g, any_product), 2);
    const auto& nodes = l.g.nodes();
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0].op, Op::MatMul);
    EXPECT_EQ(nodes[0].src[0], l.weight_o);
    EXPECT_EQ(nodes[0].src[1], l.x);
    EXPECT_EQ(nodes[0].src[3], l.x);  // the residual
    EXPECT_EQ(nodes[0].dst, h);       // writes the add's output
    EXPECT_EQ(nodes[1].src[1], h);
    EXPECT_EQ(nodes[1].src[3], h);
    EXPECT_EQ(nodes[1].dst, y);
  }
}

TEST(FuseResidualAdds, AProductWithAnotherReaderKeepsItsAdd) {
  Layer l;
  build(l, false);
  Tensor* attn = l.g.nodes()[0].dst;
  l.g.output = l.g.add(l.g.output, attn);  // attn read again later
  EXPECT_EQ(fuse_residual_adds(l.g, any_product), 1);
  ASSERT_EQ(l.g.nodes().size(), 4u);
  EXPECT_EQ(l.g.nodes()[0].dst, attn);
  EXPECT_EQ(l.g.nodes()[0].src[3], nullptr);
  EXPECT_EQ(l.g.nodes()[1].op, Op::Add);
}

TEST(FuseResidualAdds, TheOutputAndRefusedProductsAreLeftAlone) {
  Graph g;
  Tensor* x = g.input(DType::F32, {8, 1, 1, 1}, nullptr);
  Tensor* w = g.input(DType::F32, {8, 8, 1, 1}, nullptr);
  g.output = g.matmul(w, x);
  g.add(x, g.output);
  EXPECT_EQ(fuse_residual_adds(g, any_product), 0);  // the product is what the caller reads
  Layer l;
  build(l, false);
  EXPECT_EQ(fuse_residual_adds(l.g, [](const Node&) { return false; }), 0);
  EXPECT_EQ(l.g.nodes().size(), 4u);
}

TEST(FuseResidualAdds, OnlyAnAddRightAfterTheProduct) {
  Graph g;
  Tensor* x = g.input(DType::F32, {8, 1, 1, 1}, nullptr);
  Tensor* w = g.input(DType::F32, {8, 8, 1, 1}, nullptr);
  Tensor* p = g.matmul(w, x);
  Tensor* s = g.scale(x, 2.0f);  // a node between the product and its add
  g.output = g.add(s, p);
  EXPECT_EQ(fuse_residual_adds(g, any_product), 0);
  EXPECT_EQ(g.nodes().size(), 3u);
}

}  // namespace
}  // namespace hearth::backend
