// KvStore and Attention over several sequences in one op (per-sequence block
// tables in a shared kv::KvPool, KvView::token_seq) against a naive
// computation: each query sees only its own sequence's keys, causally (and
// within its window), whatever pool blocks the sequence's table names.
#include <gtest/gtest.h>
#include <hearth/engine/backend/cpu_backend.h>
#include <hearth/engine/kv/kv_pool.h>
#include <hearth/engine/quant/reference.h>

#include <cmath>
#include <random>
#include <string>

#include "test_kernel_level.h"
#include "random_values.h"

namespace hearth::backend {
namespace {

using testing::random_vec;

std::vector<float> as_cached(const std::vector<float>& x, int hd, DType type) {
  if (type == DType::F32) return x;
  std::vector<float> out(x.size());
  std::vector<uint8_t> row(*row_bytes(type, hd));
  for (size_t r = 0; r * static_cast<size_t>(hd) < x.size(); ++r) {
    EXPECT_TRUE(quant::quantize_row(type, x.data() + r * hd, row.data(), hd).ok());
    EXPECT_TRUE(quant::dequantize_row(type, row.data(), out.data() + r * hd, hd).ok());
  }
  return out;
}

struct SeqAttentionCase {
  const char* name;
  DType cache;
  KernelChoice kernels;
  int hd, nh, nkv, window;
  float cap;
};

class SequenceAttentionTest : public ::testing::TestWithParam<SeqAttentionCase> {};

TEST_P(SequenceAttentionTest, EachQuerySeesOnlyItsOwnSequence) {
  const SeqAttentionCase c = GetParam();
  const int hd = c.hd, nh = c.nh, nkv = c.nkv;
  auto be = make_cpu_backend(testing::cpu_options(2, c.kernels));
  ASSERT_TRUE(be->supports_sequence_batches());
  auto pool = kv::KvPool::create(*be, kv::KvPoolConfig{1, nkv, hd, c.cache, 12, 96});
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  const int tb = (*pool)->table_blocks();
  ASSERT_EQ(tb, 3);
  // Three sequences of 70, 5 and 40 positions; blocks taken in turns, so
  // every table is scattered over the pool.
  const std::vector<int> lens = {70, 5, 40};
  std::vector<int32_t> tables(3 * static_cast<size_t>(tb), 0);
  for (int b = 0; b < tb; ++b) {
    for (int s = 0; s < 3; ++s) {
      if (b * 32 < lens[static_cast<size_t>(s)]) {
        auto blk = (*pool)->allocate();
        ASSERT_TRUE(blk.ok());
        tables[static_cast<size_t>(s * tb + b)] = *blk;
      }
    }
  }
  // K/V of every position of every sequence, stored in one op with the
  // sequences' tokens interleaved.
  std::vector<int32_t> seq, pos;
  for (int t = 0; t < 70; ++t) {
    for (int s = 0; s < 3; ++s) {
      if (t < lens[static_cast<size_t>(s)]) {
        seq.push_back(s);
        pos.push_back(t);
      }
    }
  }
  const auto n = static_cast<int64_t>(seq.size());
  auto k = random_vec(static_cast<size_t>(n * nkv * hd), 5);
  auto v = random_vec(static_cast<size_t>(n * nkv * hd), 6);
  {
    Graph g;
    const KvView view = (*pool)->layer_view(0, seq.data(), tables.data());
    Tensor* kt = g.input(DType::F32, {nkv * hd, n, 1, 1}, k.data());
    Tensor* vt = g.input(DType::F32, {nkv * hd, n, 1, 1}, v.data());
    Tensor* ps = g.input(DType::I32, {n, 1, 1, 1}, pos.data());
    g.kv_store(kt, vt, ps, view);
    ASSERT_TRUE(be->compute(g).ok());
  }
  const std::vector<float> kc = as_cached(k, hd, c.cache), vc = as_cached(v, hd, c.cache);
  // Where the stored row of (sequence, position) is in k/v.
  auto row_of = [&](int s, int t) {
    for (int64_t i = 0; i < n; ++i) {
      if (seq[static_cast<size_t>(i)] == s && pos[static_cast<size_t>(i)] == t) return i;
    }
    return int64_t{-1};
  };
  // Queries as a scheduler step holds them: a decode token of sequence 0,
  // the whole prompt of sequence 1, a chunk of sequence 2.
  std::vector<int32_t> qseq, qpos;
  qseq.push_back(0);
  qpos.push_back(69);
  for (int t = 0; t < 5; ++t) {
    qseq.push_back(1);
    qpos.push_back(t);
  }
  for (int t = 22; t < 40; ++t) {
    qseq.push_back(2);
    qpos.push_back(t);
  }
  const auto nq = static_cast<int64_t>(qseq.size());
  auto q = random_vec(static_cast<size_t>(nq * nh * hd), 4);
  AttentionParams ap{nh, nkv, hd, 0.5f, c.cap, c.window};
  Graph g;
  const KvView view = (*pool)->layer_view(0, qseq.data(), tables.data());
  Tensor* qt = g.input(DType::F32, {nh * hd, nq, 1, 1}, q.data());
  Tensor* ps = g.input(DType::I32, {nq, 1, 1, 1}, qpos.data());
  g.output = g.attention(qt, ps, view, ap);
  ASSERT_TRUE(be->compute(g).ok());
  for (int64_t qi = 0; qi < nq; ++qi) {
    const int s = qseq[static_cast<size_t>(qi)], t = qpos[static_cast<size_t>(qi)];
    for (int h = 0; h < nh; ++h) {
      const int kh = h / (nh / nkv);
      const int first = c.window > 0 ? std::max(0, t - c.window + 1) : 0;
      std::vector<double> sc;
      for (int j = first; j <= t; ++j) {
        const int64_t r = row_of(s, j);
        double d = 0;
        for (int i = 0; i < hd; ++i) d += double(q[static_cast<size_t>((qi * nh + h) * hd + i)]) * kc[static_cast<size_t>((r * nkv + kh) * hd + i)];
        sc.push_back(c.cap > 0 ? c.cap * std::tanh(d * 0.5 / c.cap) : d * 0.5);
      }
      const double mx = *std::max_element(sc.begin(), sc.end());
      double z = 0;
      for (auto& e : sc) z += (e = std::exp(e - mx));
      for (int i = 0; i < hd; ++i) {
        double o = 0;
        size_t idx = 0;
        for (int j = first; j <= t; ++j, ++idx) {
          o += sc[idx] / z * vc[static_cast<size_t>((row_of(s, j) * nkv + kh) * hd + i)];
        }
        ASSERT_NEAR(g.output->as<float>()[(qi * nh + h) * hd + i], o, 1e-4)
            << "sequence " << s << " position " << t << " head " << h << " dim " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SequenceAttentionTest,
    ::testing::Values(SeqAttentionCase{"f32_ref", DType::F32, KernelChoice::Reference, 32, 4, 2, 0, 0.0f},
                      SeqAttentionCase{"f32_fast", DType::F32, KernelChoice::Fastest, 32, 4, 2, 0, 0.0f},
                      SeqAttentionCase{"f16_gqa4_window_cap_ref", DType::F16, KernelChoice::Reference, 64, 8, 2, 20, 2.0f},
                      SeqAttentionCase{"f16_gqa4_window_cap_fast", DType::F16, KernelChoice::Fastest, 64, 8, 2, 20, 2.0f},
                      SeqAttentionCase{"q8_0_mha_ref", DType::Q8_0, KernelChoice::Reference, 64, 3, 3, 0, 0.0f},
                      SeqAttentionCase{"q8_0_mha_fast", DType::Q8_0, KernelChoice::Fastest, 64, 3, 3, 0, 0.0f}),
    [](const auto& p) { return std::string(p.param.name); });

// In a pass over several sequences, products of a few tokens run each
// token through the decode kernels block by block: every token's result
// against the reference kernels (one token at a time), for the weight types
// of a Q4_K_M file, with row counts that leave partial blocks.
TEST(SequencePassMatMul, FewTokensMatchTheReferenceKernels) {
  for (const DType type : {DType::Q4_K, DType::Q6_K, DType::Q5_0, DType::Q8_0}) {
    for (const int64_t n_tok : {int64_t{2}, int64_t{5}, int64_t{8}}) {
      const int64_t cols = 512, rows = 301;
      std::mt19937 rng(static_cast<unsigned>(n_tok) + static_cast<unsigned>(type));
      std::normal_distribution<float> dist(0.0f, 1.0f);
      const size_t rb = *row_bytes(type, cols);
      std::vector<uint8_t> w(rb * static_cast<size_t>(rows));
      std::vector<float> row(static_cast<size_t>(cols)), wf(static_cast<size_t>(rows * cols));
      for (int64_t r = 0; r < rows; ++r) {
        for (auto& v : row) v = 0.02f * dist(rng);
        ASSERT_TRUE(quant::quantize_row(type, row.data(), w.data() + r * rb, cols).ok());
        ASSERT_TRUE(quant::dequantize_row(type, w.data() + r * rb, wf.data() + r * cols, cols).ok());
      }
      std::vector<float> x(static_cast<size_t>(n_tok * cols));
      for (auto& v : x) v = dist(rng);
      // The fast kernels in a sequence pass (a KvStore with per-sequence
      // tables marks it), the reference kernels token by token.
      auto fast = make_cpu_backend(testing::cpu_options(2));
      auto pool = kv::KvPool::create(*fast, kv::KvPoolConfig{1, 1, 32, DType::F32, 1, 32});
      ASSERT_TRUE(pool.ok());
      std::vector<int32_t> seq(static_cast<size_t>(n_tok)), pos(static_cast<size_t>(n_tok)), table{0};
      for (int64_t t = 0; t < n_tok; ++t) pos[static_cast<size_t>(t)] = static_cast<int32_t>(t);
      std::vector<float> kv(static_cast<size_t>(n_tok * 32), 0.25f);
      Graph g;
      Tensor* kt = g.input(DType::F32, {32, n_tok, 1, 1}, kv.data());
      Tensor* ps = g.input(DType::I32, {n_tok, 1, 1, 1}, pos.data());
      g.kv_store(kt, kt, ps, (*pool)->layer_view(0, seq.data(), table.data()));
      Tensor* wt = g.input(type, {cols, rows, 1, 1}, w.data());
      wt->kind = TensorKind::Weight;
      g.output = g.matmul(wt, g.input(DType::F32, {cols, n_tok, 1, 1}, x.data()));
      ASSERT_TRUE(fast->compute(g).ok());
      auto ref = make_cpu_backend(testing::cpu_options(1, KernelChoice::Reference));
      for (int64_t t = 0; t < n_tok; ++t) {
        Graph one;
        Tensor* w1 = one.input(type, {cols, rows, 1, 1}, w.data());
        w1->kind = TensorKind::Weight;
        one.output = one.matmul(w1, one.input(DType::F32, {cols, 1, 1, 1}, x.data() + t * cols));
        ASSERT_TRUE(ref->compute(one).ok());
        for (int64_t r = 0; r < rows; ++r) {
          double mag = 0;
          for (int64_t c = 0; c < cols; ++c) {
            mag += std::fabs(static_cast<double>(wf[static_cast<size_t>(r * cols + c)]) * x[static_cast<size_t>(t * cols + c)]);
          }
          ASSERT_NEAR(g.output->as<float>()[t * rows + r], one.output->as<float>()[r], 2e-5 * mag + 1e-9)
              << traits(type).name << " tokens " << n_tok << " token " << t << " row " << r;
        }
      }
    }
  }
}

// Blocks are counted: taken, shared, given back.
TEST(KvPool, CountsHoldersAndFreesBlocksWhenTheLastLetsGo) {
  auto be = make_cpu_backend(testing::cpu_options(1));
  auto pool = kv::KvPool::create(*be, kv::KvPoolConfig{2, 1, 32, DType::F16, 3, 64});
  ASSERT_TRUE(pool.ok());
  kv::KvPool& p = **pool;
  EXPECT_EQ(p.bytes(), *kv::kv_cache_bytes(2, 1, 32, 3 * kv::kBlockTokens, DType::F16));
  auto a = p.allocate(), b = p.allocate(), c = p.allocate();
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(p.free_blocks(), 0);
  auto d = p.allocate();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().code, ErrorCode::LimitExceeded);
  p.retain(*a);
  p.release(*a);
  EXPECT_EQ(p.free_blocks(), 0);
  p.release(*a);
  EXPECT_EQ(p.free_blocks(), 1);
  p.release(*b);
  p.release(*c);
  EXPECT_EQ(p.free_blocks(), 3);
}

// A KV buffer of a huge page or more starts on a 2 MiB boundary (huge-page
// memory, read scattered by attention), is writable to its last byte and
// counted while it lives; a smaller one is ordinary memory.
TEST(CpuBackend, LargeKvBuffersStartOnAHugePage) {
  auto be = make_cpu_backend(testing::cpu_options(1));
  constexpr size_t kTwoMiB = size_t{2} << 20;
  for (const size_t bytes : {kTwoMiB, 3 * kTwoMiB + 5}) {
    auto buffer = be->allocate(bytes, BufferUsage::KvCache);
    ASSERT_TRUE(buffer.ok()) << buffer.error().message;
    auto* data = static_cast<uint8_t*>((*buffer)->host_data());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % kTwoMiB, 0u) << bytes;
    data[0] = 1;
    data[bytes - 1] = 2;
    EXPECT_EQ((*buffer)->size(), bytes);
    EXPECT_EQ(be->memory_use().kv_bytes, bytes);
  }
  EXPECT_EQ(be->memory_use().kv_bytes, 0u) << "freed with the buffer";
  auto small = be->allocate(4096, BufferUsage::KvCache);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*small)->host_data()) % 64, 0u);
  static_cast<uint8_t*>((*small)->host_data())[4095] = 3;
  EXPECT_EQ(be->memory_use().kv_bytes, 4096u);
}

// A backend whose attention takes one block table refuses the op clearly.
TEST(KvPool, ABackendWithoutSequenceBatchesRefusesTheView) {
  class OneTable final : public Backend {
   public:
    explicit OneTable(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
    const char* name() const override { return "one-table"; }
    DeviceInfo device() const override { return inner_->device(); }
    bool supports(Op op, DType type) const override { return inner_->supports(op, type); }
    Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferUsage usage) override {
      return inner_->allocate(bytes, usage);
    }
    Status compute(Graph& graph) override { return check_supported(*this, graph); }

   private:
    std::unique_ptr<Backend> inner_;
  };
  OneTable be(make_cpu_backend(testing::cpu_options(1)));
  auto pool = kv::KvPool::create(be, kv::KvPoolConfig{1, 1, 32, DType::F32, 2, 32});
  ASSERT_TRUE(pool.ok());
  std::vector<int32_t> seq{0}, pos{0}, table{0};
  std::vector<float> q(32, 0.5f);
  Graph g;
  Tensor* qt = g.input(DType::F32, {32, 1, 1, 1}, q.data());
  Tensor* ps = g.input(DType::I32, {1, 1, 1, 1}, pos.data());
  g.output = g.attention(qt, ps, (*pool)->layer_view(0, seq.data(), table.data()), AttentionParams{1, 1, 32, 1.0f, 0, 0});
  const Status st = be.compute(g);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, ErrorCode::Unsupported);
  EXPECT_NE(st.error().message.find("several sequences"), std::string::npos) << st.error().message;
}

// Device memory the host cannot see (a discrete GPU's) still makes a pool:
// the views carry no host addresses, and the pool says it cannot copy
// blocks on the host (the scheduler then shares whole blocks only).
TEST(KvPool, MemoryTheHostCannotSeeMakesAPoolWithoutHostCopies) {
  class DeviceOnly final : public Backend {
   public:
    // A buffer of the inner backend whose memory the host is not given.
    class Hidden final : public Buffer {
     public:
      explicit Hidden(std::unique_ptr<Buffer> inner) : inner_(std::move(inner)) {}
      size_t size() const override { return inner_->size(); }
      BufferUsage usage() const override { return inner_->usage(); }
      void* host_data() override { return nullptr; }

     private:
      std::unique_ptr<Buffer> inner_;
    };
    explicit DeviceOnly(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
    const char* name() const override { return "device-only"; }
    DeviceInfo device() const override { return inner_->device(); }
    bool supports(Op op, DType type) const override { return inner_->supports(op, type); }
    Result<std::unique_ptr<Buffer>> allocate(size_t bytes, BufferUsage usage) override {
      HEARTH_TRY(auto b, inner_->allocate(bytes, usage));
      return std::unique_ptr<Buffer>(new Hidden(std::move(b)));
    }
    Status compute(Graph& graph) override { return inner_->compute(graph); }
    bool supports_sequence_batches() const override { return true; }

   private:
    std::unique_ptr<Backend> inner_;
  };
  DeviceOnly be(make_cpu_backend(testing::cpu_options(1)));
  auto pool = kv::KvPool::create(be, kv::KvPoolConfig{2, 1, 32, DType::F16, 3, 64});
  ASSERT_TRUE(pool.ok()) << pool.error().message;
  EXPECT_FALSE((*pool)->host_visible());
  std::vector<int32_t> seq{0}, table{0, 1};
  const KvView v = (*pool)->layer_view(1, seq.data(), table.data());
  EXPECT_EQ(v.k, nullptr);
  EXPECT_EQ(v.v, nullptr);
  EXPECT_NE(v.buffer, nullptr);
  EXPECT_EQ(v.v_offset - v.k_offset, 3u * 32 * 64);  // one layer's K: 3 blocks of 32 F16 rows of 32 values
  EXPECT_EQ(v.n_blocks, 3);
}

}  // namespace
}  // namespace hearth::backend
