// Storage benchmarks: full-text search over 100,000 messages (first 50 hits), and
// opening a database of 10,000 conversations and listing the first page.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "hearth/storage/conversations.h"
#include "hearth/storage/messages.h"
#include "hearth/storage/search.h"

namespace hearth::storage {
namespace {

// A folder that lives as long as the program.
// Never destroyed, so the atexit cleanup can still read it.
const std::filesystem::path& bench_dir() {
  static const auto* dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "hearth-storage-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    auto* path = new std::filesystem::path(pattern);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(bench_dir(), ec);
    });
    return path;
  }();
  return *dir;
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "benchmark setup failed: %s\n", what);
    std::abort();
  }
}

// Words with a Zipf-like frequency, so a few words are very common (like "the")
// and most are rare, as in real chat text.
class TextSource {
 public:
  explicit TextSource(std::uint32_t seed) : rng_(seed) {
    for (int i = 0; i < 20000; ++i) weights_.push_back(1.0 / (i + 1));
    words_ = std::discrete_distribution<int>(weights_.begin(), weights_.end());
  }
  static std::string word(int index) { return "w" + std::to_string(index) + (index % 7 == 0 ? "ing" : ""); }
  std::string message() {
    std::string text;
    const int n = 20 + static_cast<int>(rng_() % 60);
    for (int i = 0; i < n; ++i) text += word(words_(rng_)) + " ";
    return text;
  }

 private:
  std::mt19937 rng_;
  std::vector<double> weights_;
  std::discrete_distribution<int> words_;
};

// Builds (once) a database of `conversations` conversations with `per_conversation`
// messages each.
std::filesystem::path build(const std::string& name, int conversations, int per_conversation) {
  const auto path = bench_dir() / name;
  if (std::filesystem::exists(path)) return path;
  auto db = Database::open(path);
  check(db.ok(), "open");
  TextSource text(7);
  auto tx = Transaction::begin(*db);
  check(tx.ok(), "begin");
  for (int c = 0; c < conversations; ++c) {
    auto id = Conversations(*db).create({"conversation " + std::to_string(c) + " " + text.message().substr(0, 30), "m.gguf",
                                         "Q4_K_M", "", {}});
    check(id.ok(), "create");
    MessageId parent;
    for (int m = 0; m < per_conversation; ++m) {
      auto mid = Messages(*db).append(*id, parent, {m % 2 ? Role::Assistant : Role::User, text.message(), 50});
      check(mid.ok(), "append");
      parent = *mid;
    }
  }
  check(tx->commit().ok(), "commit");
  check(db->checkpoint().ok(), "checkpoint");
  return path;
}

void search(benchmark::State& state, const std::string& query, PrefixMatch prefix) {
  const auto path = build("search.db", 5000, 20);  // 100,000 messages
  OpenOptions options;
  options.access = Access::ReadOnly;
  auto db = Database::open(path, options);
  check(db.ok(), "open reader");
  Search search(*db);
  SearchOptions search_options;
  search_options.limit = 50;
  search_options.prefix = prefix;
  std::size_t hits = 0;
  for (auto _ : state) {
    auto result = search.query(query, search_options);
    check(result.ok(), "query");
    hits = result->size();
    benchmark::DoNotOptimize(result);
  }
  state.counters["hits"] = static_cast<double>(hits);
}

// Of the 100,000 messages, "w1" is in 87 %, "w50" in about 6 %, "w5000" in
// about 0.1 %; the prefix "w1*" matches nearly all of them through ~2,000 words.
constexpr PrefixMatch kExact = PrefixMatch::None;
void BM_SearchCommonWord(benchmark::State& state) { search(state, "w1", kExact); }
void BM_SearchMediumWord(benchmark::State& state) { search(state, "w50", kExact); }
void BM_SearchRareWord(benchmark::State& state) { search(state, "w5000", kExact); }
void BM_SearchTwoWords(benchmark::State& state) { search(state, "w3 w40", kExact); }
void BM_SearchPrefix(benchmark::State& state) { search(state, "w1", PrefixMatch::LastWord); }
BENCHMARK(BM_SearchCommonWord)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchMediumWord)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchRareWord)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchTwoWords)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SearchPrefix)->Unit(benchmark::kMillisecond);

void open_and_list(benchmark::State& state, IntegrityCheck integrity) {
  const auto path = build("list.db", 10000, 4);
  OpenOptions options;
  options.integrity = integrity;
  for (auto _ : state) {
    auto db = Database::open(path, options);
    check(db.ok(), "open");
    auto page = Conversations(*db).list({ArchiveFilter::NotArchived, 50, 0});
    check(page.ok() && page->size() == 50, "list");
    benchmark::DoNotOptimize(page);
  }
}

void BM_OpenAndListFirstPage(benchmark::State& state) { open_and_list(state, IntegrityCheck::None); }
void BM_OpenWithQuickCheckAndListFirstPage(benchmark::State& state) { open_and_list(state, IntegrityCheck::Quick); }
BENCHMARK(BM_OpenAndListFirstPage)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OpenWithQuickCheckAndListFirstPage)->Unit(benchmark::kMillisecond);

// The cost of one streaming update (a short WAL transaction without fsync) and of
// the synced commit that ends a reply.
void BM_StreamingUpdate(benchmark::State& state) {
  const auto path = bench_dir() / "stream.db";
  auto db = Database::open(path);
  check(db.ok(), "open");
  auto c = Conversations(*db).create({});
  check(c.ok(), "create");
  auto q = Messages(*db).append(*c, MessageId{}, {Role::User, "q", 1});
  check(q.ok(), "append");
  auto r = Messages(*db).begin_reply(*c, *q);
  check(r.ok(), "begin");
  TextSource text(3);
  std::string content;
  std::int64_t n = 0;
  for (auto _ : state) {
    if (content.size() > 8000) content.clear();  // a typical reply length
    content += text.message();
    check(Messages(*db).update_reply(*r, content, ++n).ok(), "update");
  }
}
BENCHMARK(BM_StreamingUpdate)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace hearth::storage
