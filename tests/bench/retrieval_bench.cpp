// Retrieval quality and speed of document libraries.
//
// Quality: indexes a corpus folder (tests/bench/retrieval/make_corpus.sh renders
// the machine's manual pages) and asks the questions of
// tests/bench/retrieval/questions.tsv, reporting recall@5 (the answering page is
// among the top five passages) and MRR (1 / rank of its first passage) for BM25,
// vectors and hybrid fusion, plus indexing speed (passages/s).
//   bench_retrieval --corpus DIR [--questions FILE] [--embedder hashed]
// Speed: Google Benchmark cases for search latency at 10k and 100k passages.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>

#include "hearth/documents/indexer.h"
#include "hearth/documents/retriever.h"

namespace {

using namespace hearth;
namespace fs = std::filesystem;

constexpr std::size_t kHashedDim = 256;

// Feature hashing of words: the baseline embedder when no model is given. It
// knows nothing of meaning, so its figures show the pipeline, not a model.
std::vector<float> hashed_words(std::string_view text) {
  std::vector<float> v(kHashedDim, 0.0f);
  std::string word;
  auto add = [&] {
    if (word.size() < 2) {
      word.clear();
      return;
    }
    std::uint32_t h = 2166136261u;
    for (char c : word) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
    v[h % kHashedDim] += 1.0f;
    word.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      add();
    }
  }
  add();
  double norm = 0;
  for (float x : v) norm += static_cast<double>(x) * x;
  if (norm > 0) {
    for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
  }
  return v;
}

struct Question {
  std::string text;
  std::string page;
};

std::vector<Question> read_questions(const fs::path& path) {
  std::vector<Question> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    out.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int evaluate(const fs::path& corpus, const fs::path& questions_path) {
  const auto questions = read_questions(questions_path);
  if (questions.empty()) {
    std::fprintf(stderr, "no questions in %s\n", questions_path.c_str());
    return 1;
  }
  const fs::path db_path = fs::temp_directory_path() / "hearth-retrieval-bench.db";
  fs::remove(db_path);
  auto db = storage::Database::open(db_path);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.error().message.c_str());
    return 1;
  }
  storage::Libraries libs(*db);
  const auto library = libs.create("corpus", "hashed-words", kHashedDim).value();
  if (!libs.add_root(library, corpus.string()).ok()) return 1;
  const documents::Extractors extractors = documents::Extractors::builtin();
  auto run = documents::IndexRun::plan(libs, library, extractors);
  if (!run.ok()) {
    std::fprintf(stderr, "%s\n", run.error().message.c_str());
    return 1;
  }
  auto embed = [](std::span<const std::string> texts) -> Result<std::vector<std::vector<float>>> {
    std::vector<std::vector<float>> out;
    for (const auto& t : texts) out.push_back(hashed_words(t));
    return out;
  };
  const auto start = std::chrono::steady_clock::now();
  while (!run->done()) {
    if (auto s = run->step(embed); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.error().message.c_str());
      return 1;
    }
  }
  const double index_s = seconds_since(start);
  const auto& p = run->progress();
  std::printf("corpus: %lld files, %lld passages, indexed in %.2f s (%.0f passages/s, hashed-words embedder)\n",
              static_cast<long long>(p.files_indexed), static_cast<long long>(p.chunks_added), index_s,
              static_cast<double>(p.chunks_added) / index_s);

  documents::Retriever retriever(libs, [](std::string_view q) -> Result<std::vector<float>> { return hashed_words(q); });
  const std::vector<storage::LibraryId> libraries{library};
  for (auto [mode, name] : {std::pair{documents::RetrievalMode::Keyword, "bm25"},
                            std::pair{documents::RetrievalMode::Vector, "vector"},
                            std::pair{documents::RetrievalMode::Hybrid, "hybrid"}}) {
    documents::RetrievalOptions options;
    options.mode = mode;
    options.top_k = 20;
    double recall5 = 0, mrr = 0;
    for (const Question& q : questions) {
      auto hits = retriever.search(libraries, q.text, options);
      if (!hits.ok()) {
        std::fprintf(stderr, "%s\n", hits.error().message.c_str());
        return 1;
      }
      std::vector<storage::ChunkId> ids;
      for (const auto& h : *hits) ids.push_back(h.chunk);
      const auto chunks = libs.chunks(ids).value();
      for (std::size_t rank = 0; rank < chunks.size(); ++rank) {
        if (fs::path(chunks[rank].document_path).stem().string() != q.page) continue;
        if (rank < 5) recall5 += 1;
        mrr += 1.0 / static_cast<double>(rank + 1);
        break;
      }
    }
    const double n = static_cast<double>(questions.size());
    std::printf("%-7s recall@5 %.3f  MRR %.3f  (%zu questions)\n", name, recall5 / n, mrr / n, questions.size());
  }
  fs::remove(db_path);
  return 0;
}

// A library of `passages` synthetic passages (words drawn from a fixed vocabulary)
// with random unit vectors of `dim` components, built once per size.
struct ScaleLibrary {
  fs::path path;
  std::unique_ptr<storage::Database> db;
  std::unique_ptr<storage::Libraries> libs;
  storage::LibraryId library;
};

ScaleLibrary& scale_library(std::int64_t passages, std::int64_t dim) {
  static std::map<std::pair<std::int64_t, std::int64_t>, std::unique_ptr<ScaleLibrary>> built;
  auto& slot = built[{passages, dim}];
  if (slot) return *slot;
  slot = std::make_unique<ScaleLibrary>();
  slot->path = fs::temp_directory_path() /
               ("hearth-retrieval-scale-" + std::to_string(passages) + "x" + std::to_string(dim) + ".db");
  fs::remove(slot->path);
  slot->db = std::make_unique<storage::Database>(storage::Database::open(slot->path).value());
  slot->libs = std::make_unique<storage::Libraries>(*slot->db);
  slot->library = slot->libs->create("scale", "random", dim).value();
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> word(0, 4999);
  const std::int64_t per_document = 100;
  for (std::int64_t d = 0; d * per_document < passages; ++d) {
    std::vector<storage::NewChunk> chunks;
    for (std::int64_t i = 0; i < per_document && d * per_document + i < passages; ++i) {
      storage::NewChunk c;
      for (int w = 0; w < 60; ++w) c.text += "w" + std::to_string(word(rng)) + " ";
      std::vector<float> v(static_cast<std::size_t>(dim));
      double norm = 0;
      for (float& x : v) {
        x = normal(rng);
        norm += x * x;
      }
      for (float& x : v) x = static_cast<float>(x / std::sqrt(norm));
      auto q = documents::quantize_vector(v);
      c.scale = q.scale;
      c.vector = std::move(q.values);
      chunks.push_back(std::move(c));
    }
    storage::DocumentInfo info{"/doc" + std::to_string(d), "h", 1, 1, "text"};
    if (!slot->libs->put_document(slot->library, info, chunks).ok()) std::abort();
  }
  return *slot;
}

void BM_Search(benchmark::State& state, documents::RetrievalMode mode) {
  const std::int64_t passages = state.range(0), dim = state.range(1);
  ScaleLibrary& lib = scale_library(passages, dim);
  std::mt19937 rng(2);
  std::normal_distribution<float> normal;
  std::vector<float> query(static_cast<std::size_t>(dim));
  for (float& x : query) x = normal(rng);
  documents::Retriever retriever(*lib.libs, [&](std::string_view) -> Result<std::vector<float>> { return query; });
  const std::vector<storage::LibraryId> libraries{lib.library};
  documents::RetrievalOptions options;
  options.mode = mode;
  // Loads the vectors once; an error stops the case instead of timing it.
  if (auto first = retriever.search(libraries, "w17 w42 w4000", options); !first.ok()) {
    state.SkipWithError(first.error().message.c_str());
    return;
  }
  for (auto _ : state) {
    auto hits = retriever.search(libraries, "w17 w42 w4000", options);
    benchmark::DoNotOptimize(hits);
  }
  state.counters["passages"] = static_cast<double>(passages);
}

BENCHMARK_CAPTURE(BM_Search, bm25, documents::RetrievalMode::Keyword)
    ->Args({10000, 384})->Args({100000, 384})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, vector, documents::RetrievalMode::Vector)
    ->Args({10000, 384})->Args({100000, 384})->Args({100000, 1024})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Search, hybrid, documents::RetrievalMode::Hybrid)
    ->Args({10000, 384})->Args({100000, 384})->Args({100000, 1024})->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  fs::path corpus;
  fs::path questions = fs::path(HEARTH_SOURCE_DIR) / "tests" / "bench" / "retrieval" / "questions.tsv";
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--corpus") == 0 && i + 1 < argc) {
      corpus = argv[++i];
    } else if (std::strcmp(argv[i], "--questions") == 0 && i + 1 < argc) {
      questions = argv[++i];
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (!corpus.empty()) return evaluate(corpus, questions);
  int count = static_cast<int>(rest.size());
  benchmark::Initialize(&count, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
