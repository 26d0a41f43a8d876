// Throughput of the quant kernels: row dot products per format and level
// (GB/s of weight bytes), matrix tiles for prompt processing, and the
// quantizer. Run: build/dev/tests/engine/quant/bench_quant [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <hearth/engine/model/weight_memory.h>
#include <hearth/engine/quant/fp16.h>
#include <hearth/engine/quant/interleave.h>
#include <hearth/engine/quant/kernels.h>
#include <hearth/engine/quant/reference.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

namespace hearth::quant {
namespace {

constexpr int64_t kRowLength = 2048;  // the hidden size of a 1B-class model

struct Weights {
  // On huge pages where the kernel has them, as the engine loads weights
  // (model/weight_memory.h), so memory-bound figures match a real decode.
  model::HugePageBuffer bytes;
  size_t row_bytes = 0;
  int64_t rows = 0;
};

// A matrix of `total_bytes` of random weights in `type`, plus activations.
Weights make_weights(DType type, size_t total_bytes) {
  Weights w;
  w.row_bytes = *row_bytes(type, kRowLength);
  w.rows = static_cast<int64_t>(std::max<size_t>(1, total_bytes / w.row_bytes));
  w.bytes = std::move(model::HugePageBuffer::allocate(w.row_bytes * static_cast<size_t>(w.rows))).value();
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> x(kRowLength);
  std::vector<uint8_t> row(w.row_bytes);
  // Quantizing every row is slow for big matrices: make 64 rows and repeat them.
  const int64_t distinct = std::min<int64_t>(64, w.rows);
  for (int64_t r = 0; r < w.rows; ++r) {
    if (r < distinct) {
      for (auto& v : x) v = dist(rng);
      (void)quantize_row(type, x.data(), w.bytes.data() + r * w.row_bytes, kRowLength);
    } else {
      std::copy_n(w.bytes.data() + (r % distinct) * w.row_bytes, w.row_bytes, w.bytes.data() + r * w.row_bytes);
    }
  }
  return w;
}

std::vector<uint8_t> make_activations(const KernelTable& kt, DType act, int64_t count) {
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(kRowLength);
  const size_t rb = *row_bytes(act, kRowLength);
  std::vector<uint8_t> out(rb * static_cast<size_t>(count));
  for (int64_t c = 0; c < count; ++c) {
    for (auto& v : x) v = dist(rng);
    kt.quantize_activation(act, x.data(), out.data() + c * rb, kRowLength);
  }
  return out;
}

// Matrix-vector product over a matrix of `bytes` (256 MiB, 8x a 32 MiB L3:
// from memory;
// 512 KiB: from cache), rows split evenly across benchmark threads.
void BM_VecDot(benchmark::State& state, DType type, KernelLevel level, size_t bytes) {
  const CpuFeatures f = detect_cpu_features();
  if (best_level(f) < level) {
    state.SkipWithError("level not supported by this CPU");
    return;
  }
  static Weights w;  // shared by the threads of one run
  static std::vector<uint8_t> act;
  const KernelTable kt = select_kernels(f, level);
  const TypeKernels& k = kt.get(type);
  if (state.thread_index() == 0) {
    w = make_weights(type, bytes);
    act = make_activations(kt, k.act_type, 1);
  }
  // Google Benchmark starts all threads' loops together after setup.
  const int64_t per = 0;
  (void)per;
  for (auto _ : state) {
    const int64_t begin = w.rows * state.thread_index() / state.threads();
    const int64_t end = w.rows * (state.thread_index() + 1) / state.threads();
    float sum = 0;
    for (int64_t r = begin; r < end; ++r) sum += k.vec_dot(kRowLength, w.bytes.data() + r * w.row_bytes, act.data());
    benchmark::DoNotOptimize(sum);
    state.SetBytesProcessed(state.bytes_processed() + static_cast<int64_t>((end - begin) * w.row_bytes));
  }
  state.SetLabel(std::string(to_string(k.level)));
}

// The decode path as the CPU backend runs it: the activation prepared once,
// then decode.rows over chunks of 32 rows (vec_dot per row where the level
// has no multi-row kernel). Same matrices and byte count as BM_VecDot.
void BM_DecodeRows(benchmark::State& state, DType type, KernelLevel level, size_t bytes) {
  const CpuFeatures f = detect_cpu_features();
  if (best_level(f) < level) {
    state.SkipWithError("level not supported by this CPU");
    return;
  }
  static Weights w;
  static std::vector<uint8_t> act;
  static std::vector<uint8_t> prepared;
  const KernelTable kt = select_kernels(f, level);
  const TypeKernels& k = kt.get(type);
  if (state.thread_index() == 0) {
    w = make_weights(type, bytes);
    act = make_activations(kt, k.act_type, 1);
    prepared = act;
    if (k.decode.prepare) {
      prepared.resize(k.decode.prepared_bytes(kRowLength));
      k.decode.prepare(act.data(), prepared.data(), kRowLength);
    }
  }
  constexpr int64_t kChunk = 32;
  std::vector<float> out(kChunk);
  for (auto _ : state) {
    const int64_t begin = w.rows * state.thread_index() / state.threads();
    const int64_t end = w.rows * (state.thread_index() + 1) / state.threads();
    for (int64_t r = begin; r < end; r += kChunk) {
      const int64_t nr = std::min(kChunk, end - r);
      const uint8_t* wr = w.bytes.data() + r * w.row_bytes;
      if (k.decode.rows) {
        k.decode.rows(kRowLength, wr, w.row_bytes, nr, prepared.data(), out.data());
      } else {
        for (int64_t i = 0; i < nr; ++i) out[static_cast<size_t>(i)] = k.vec_dot(kRowLength, wr + i * w.row_bytes, act.data());
      }
      benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(state.bytes_processed() + static_cast<int64_t>((end - begin) * w.row_bytes));
  }
  state.SetLabel(std::string(to_string(k.level)) + (k.decode.rows ? " rows" : " vec_dot"));
}

// One continuous-batching step's product: `tokens` activation rows against
// a cache-sized weight slice (the CPU backend hands the kernels ~64 KB
// blocks), with decode.rows_multi (weights unpacked once for every token),
// or with decode.rows once per token when `multi` is false. Bytes counted as
// weight bytes x tokens, comparable with DecodeCache.
void BM_DecodeBatch(benchmark::State& state, DType type, bool multi) {
  const CpuFeatures f = detect_cpu_features();
  const KernelTable kt = select_kernels(f);
  const TypeKernels& k = kt.get(type);
  if (!k.decode.rows || (multi && !k.decode.rows_multi)) {
    state.SkipWithError("no decode kernel for this type at this level");
    return;
  }
  const int64_t tokens = state.range(0);
  const Weights w = make_weights(type, size_t{64} << 10);
  const auto act = make_activations(kt, k.act_type, tokens);
  const size_t act_rb = *row_bytes(k.act_type, kRowLength);
  const size_t prep = k.decode.prepare ? k.decode.prepared_bytes(kRowLength) : act_rb;
  std::vector<uint8_t> prepared(prep * static_cast<size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t) {
    if (k.decode.prepare) {
      k.decode.prepare(act.data() + static_cast<size_t>(t) * act_rb, prepared.data() + static_cast<size_t>(t) * prep,
                       kRowLength);
    } else {
      std::copy_n(act.data() + static_cast<size_t>(t) * act_rb, act_rb, prepared.data() + static_cast<size_t>(t) * prep);
    }
  }
  std::vector<float> out(static_cast<size_t>(w.rows * tokens));
  for (auto _ : state) {
    if (multi) {
      k.decode.rows_multi(kRowLength, w.bytes.data(), w.row_bytes, w.rows, prepared.data(), prep, tokens, out.data(),
                          static_cast<size_t>(w.rows));
    } else {
      for (int64_t t = 0; t < tokens; ++t) {
        k.decode.rows(kRowLength, w.bytes.data(), w.row_bytes, w.rows, prepared.data() + static_cast<size_t>(t) * prep,
                      out.data() + t * w.rows);
      }
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(w.bytes.size()) * tokens);
  state.SetLabel(std::string(to_string(k.level)) + (multi ? " rows_multi" : " rows per token"));
}

// The kernel table of `level`, or nothing (the benchmark marked skipped)
// where this CPU lacks the level.
std::optional<KernelTable> table_for(benchmark::State& state, KernelLevel level) {
  const CpuFeatures f = detect_cpu_features();
  const auto levels = supported_levels(f);
  if (std::find(levels.begin(), levels.end(), level) == levels.end()) {
    state.SkipWithError("level not supported by this CPU");
    return std::nullopt;
  }
  return select_kernels(f, level);
}

// The interleaved decode kernels (weights repacked into 16-row groups at
// load): `tokens` activation rows in one pass over a matrix of `bytes` (256
// MiB: from memory, rows split across the benchmark threads; 64 KiB: from
// cache), in the CPU backend's 64 KiB row blocks. Bytes counted as weight
// bytes x tokens, comparable with DecodeBatch and DecodeMem.
void BM_DecodeInterleaved(benchmark::State& state, DType type, KernelLevel level, size_t bytes) {
  const auto table = table_for(state, level);
  if (!table) return;
  const KernelTable& kt = *table;
  const TypeKernels& k = kt.get(type);
  if (!k.interleaved.decode.rows) {
    state.SkipWithError("no interleaved decode kernel at this level");
    return;
  }
  static Weights w;
  static std::vector<uint8_t> prepared;
  const int64_t tokens = state.range(0);
  const size_t prep = k.interleaved.decode.prepared_bytes(kRowLength);
  if (state.thread_index() == 0) {
    w = make_weights(type, bytes);
    w.rows = w.rows / kInterleaveRows * kInterleaveRows;
    interleave_rows_in_place(type, w.bytes.data(), w.rows, kRowLength);
    const auto act = make_activations(kt, k.act_type, tokens);
    const size_t act_rb = *row_bytes(k.act_type, kRowLength);
    prepared.assign(prep * static_cast<size_t>(tokens), 0);
    for (int64_t t = 0; t < tokens; ++t) {
      k.interleaved.decode.prepare(act.data() + static_cast<size_t>(t) * act_rb, prepared.data() + static_cast<size_t>(t) * prep,
                            kRowLength);
    }
  }
  // Thread 0 makes the weights; the others may read them only inside the
  // loop (its start waits for every thread).
  std::vector<float> out;
  for (auto _ : state) {
    const int64_t block = std::max<int64_t>(kInterleaveRows, static_cast<int64_t>((64u << 10) / w.row_bytes) / 16 * 16);
    out.resize(static_cast<size_t>(block * tokens));
    const int64_t groups = w.rows / kInterleaveRows;
    const int64_t begin = groups * state.thread_index() / state.threads() * kInterleaveRows;
    const int64_t end = groups * (state.thread_index() + 1) / state.threads() * kInterleaveRows;
    for (int64_t r = begin; r < end; r += block) {
      const int64_t nr = std::min(block, end - r);
      k.interleaved.decode.rows_multi(kRowLength, w.bytes.data() + r * w.row_bytes, w.row_bytes, nr, prepared.data(), prep,
                               tokens, out.data(), static_cast<size_t>(block));
      benchmark::DoNotOptimize(out.data());
    }
    state.SetBytesProcessed(state.bytes_processed() + static_cast<int64_t>((end - begin) * w.row_bytes) * tokens);
  }
  state.SetLabel(std::string(to_string(k.level)) + " interleaved");
}

// A 512-row slice of a weight matrix against `cols` tokens: the tile a
// prompt-processing thread computes. Bytes counted as weight bytes x tokens,
// so the figure compares directly with BM_VecDot's per-token rate.
void BM_Gemm(benchmark::State& state, DType type, KernelLevel level) {
  const CpuFeatures f = detect_cpu_features();
  if (best_level(f) < level) {
    state.SkipWithError("level not supported by this CPU");
    return;
  }
  const int64_t cols = state.range(0);
  const KernelTable kt = select_kernels(f, level);
  const TypeKernels& k = kt.get(type);
  const Weights w = make_weights(type, 512 * *row_bytes(type, kRowLength));
  const auto act = make_activations(kt, k.act_type, cols);
  const size_t act_rb = *row_bytes(k.act_type, kRowLength);
  std::vector<float> out(static_cast<size_t>(w.rows * cols));
  for (auto _ : state) {
    k.gemm(kRowLength, w.bytes.data(), w.row_bytes, w.rows, act.data(), act_rb, cols, out.data(),
           static_cast<size_t>(w.rows));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(w.bytes.size()) * cols);
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(state.iterations() * cols),
                                                  benchmark::Counter::kIsRate);
  state.SetLabel(std::string(to_string(k.level)));
}

// Quantization from F16 input: F16 -> F32 -> type, with the kernel table's
// quantizer (SIMD scale search where present), each thread on its own rows.
// Bytes counted are F16 input bytes. Q4_K_M is mostly Q4_K with some Q6_K.
void BM_QuantizeFromF16(benchmark::State& state, DType type) {
  const KernelTable kt = select_kernels(detect_cpu_features());
  const QuantizeFn quantize = kt.get(type).quantize;
  const int64_t rows = 64;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<uint16_t> src(static_cast<size_t>(rows * kRowLength));
  for (auto& v : src) v = fp32_to_fp16(dist(rng));
  std::vector<float> row(kRowLength);
  std::vector<uint8_t> dst(*row_bytes(type, kRowLength));
  for (auto _ : state) {
    for (int64_t r = 0; r < rows; ++r) {
      (void)dequantize_row(DType::F16, src.data() + r * kRowLength, row.data(), kRowLength);
      quantize(row.data(), dst.data(), kRowLength);
      benchmark::DoNotOptimize(dst.data());
    }
  }
  state.SetBytesProcessed(state.iterations() * rows * kRowLength * 2);
}

// The activation quantizers (F32 -> Q8_0 / Q8_K): every product's input goes
// through one, once per token; a prompt's FFN down product quantizes
// tokens x ffn-width values per layer. 64 rows of 4864 values (a
// Qwen2.5-0.5B FFN) from cache. Bytes counted are F32 input bytes.
void BM_QuantizeActivation(benchmark::State& state, DType act, KernelLevel level) {
  const auto table = table_for(state, level);
  if (!table) return;
  const KernelTable& kt = *table;
  constexpr int64_t kRows = 64, kWidth = 4864;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 0.5f);
  std::vector<float> x(static_cast<size_t>(kRows * kWidth));
  for (auto& v : x) v = dist(rng);
  const size_t rb = *row_bytes(act, kWidth);
  std::vector<uint8_t> out(rb * kRows);
  for (auto _ : state) {
    for (int64_t r = 0; r < kRows; ++r) kt.quantize_activation(act, x.data() + r * kWidth, out.data() + r * rb, kWidth);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kRows * kWidth * 4);
  state.SetLabel(std::string(to_string(level)));
}

void register_all() {
  const DType types[] = {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::Q5_K, DType::Q4_1,
                         DType::Q5_0, DType::Q5_1, DType::IQ4_NL, DType::IQ4_XS, DType::Q3_K,
                         DType::Q2_K, DType::MXFP4, DType::F16, DType::BF16, DType::F32};
  const auto levels = supported_levels(detect_cpu_features());
  for (DType t : types) {
    for (KernelLevel l : levels) {
      const std::string name = std::string(traits(t).name) + "/" + std::string(to_string(l));
      benchmark::RegisterBenchmark(("VecDotMem/" + name).c_str(), BM_VecDot, t, l, size_t{256} << 20)
          ->Threads(1)->Threads(2)->UseRealTime();
      benchmark::RegisterBenchmark(("VecDotCache/" + name).c_str(), BM_VecDot, t, l, size_t{512} << 10);
      benchmark::RegisterBenchmark(("Gemm/" + name).c_str(), BM_Gemm, t, l)->Arg(16)->Arg(64)->Arg(512);
      if (l != KernelLevel::Scalar) {
        benchmark::RegisterBenchmark(("DecodeMem/" + name).c_str(), BM_DecodeRows, t, l, size_t{256} << 20)
            ->Threads(1)->Threads(2)->UseRealTime();
        benchmark::RegisterBenchmark(("DecodeCache/" + name).c_str(), BM_DecodeRows, t, l, size_t{512} << 10);
      }
    }
  }
  for (DType t : {DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::Q4_K, DType::Q6_K, DType::MXFP4}) {
    for (const bool multi : {true, false}) {
      benchmark::RegisterBenchmark(
          ((multi ? "DecodeBatch/" : "DecodeBatchPerToken/") + std::string(traits(t).name)).c_str(), BM_DecodeBatch, t,
          multi)
          ->Arg(2)->Arg(4)->Arg(8);
    }
  }
  for (DType t : {DType::Q4_0, DType::Q5_0, DType::Q8_0, DType::Q4_K, DType::Q6_K}) {
    for (KernelLevel l : {KernelLevel::Avx2, KernelLevel::AvxVnni, KernelLevel::Avx512}) {
      const std::string name = std::string(traits(t).name) + "/" + std::string(to_string(l));
      benchmark::RegisterBenchmark(("DecodeInterleavedCache/" + name).c_str(), BM_DecodeInterleaved, t, l,
                                   size_t{64} << 10)
          ->Arg(1)->Arg(2)->Arg(4)->Arg(5)->Arg(8);
      benchmark::RegisterBenchmark(("DecodeInterleavedMem/" + name).c_str(), BM_DecodeInterleaved, t, l,
                                   size_t{256} << 20)
          ->Arg(1)->Arg(2)->Arg(4)->Arg(5)->Arg(8)->Threads(2)->UseRealTime();
    }
  }
  for (DType act : {DType::Q8_0, DType::Q8_K}) {
    for (KernelLevel l : levels) {
      benchmark::RegisterBenchmark(("QuantizeActivation/" + std::string(traits(act).name) + "/" +
                                    std::string(to_string(l))).c_str(),
                                   BM_QuantizeActivation, act, l);
    }
  }
  for (DType t : {DType::Q4_K, DType::Q6_K, DType::Q8_0, DType::Q4_0}) {
    benchmark::RegisterBenchmark(("QuantizeFromF16/" + std::string(traits(t).name)).c_str(),
                                 BM_QuantizeFromF16, t)
        ->Threads(1)->Threads(2)->UseRealTime();
  }
}

const int registered = (register_all(), 0);

}  // namespace
}  // namespace hearth::quant
