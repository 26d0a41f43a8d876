// The importance-matrix reader against files built byte by byte in the
// documented layouts (the reference engine's legacy .dat and its GGUF form),
// and hostile files: every truncation, bad sizes, NaN, wrong tensor types.
// Each must give an error naming the file, never a crash.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <hearth/engine/imatrix/importance.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

namespace hearth::imatrix {
namespace {

namespace fs = std::filesystem;

class ImportanceFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("hearth-imatrix-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    const auto p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  fs::path dir_;
};

void put_i32(std::string& s, int32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_f32(std::string& s, float v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put_str(std::string& s, const std::string& v) {
  put_i32(s, static_cast<int32_t>(v.size()));
  s += v;
}

// Two entries as the reference's legacy writer lays them out: values are
// sum / count * ncall.
std::string legacy_file() {
  std::string s;
  put_i32(s, 2);
  put_str(s, "blk.0.attn_q.weight");
  put_i32(s, 4);  // ncall
  put_i32(s, 3);  // values
  for (float v : {4.0f, 8.0f, 2.0f}) put_f32(s, v);
  put_str(s, "blk.0.ffn_down.weight");
  put_i32(s, 2);
  put_i32(s, 2);
  for (float v : {1.0f, 0.5f}) put_f32(s, v);
  put_i32(s, 7);  // chunk count
  put_str(s, "calibration.txt");
  return s;
}

TEST_F(ImportanceFile, ReadsTheLegacyLayout) {
  auto m = read_importance(write("a.dat", legacy_file()));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_TRUE(m->legacy);
  EXPECT_EQ(m->chunk_count, 7u);
  ASSERT_EQ(m->datasets.size(), 1u);
  EXPECT_EQ(m->datasets[0], "calibration.txt");
  ASSERT_EQ(m->entries.size(), 2u);
  const auto w = quant_weights(*m);
  // The means: stored / ncall.
  EXPECT_EQ(w.at("blk.0.attn_q.weight"), (std::vector<float>{1.0f, 2.0f, 0.5f}));
  EXPECT_EQ(w.at("blk.0.ffn_down.weight"), (std::vector<float>{0.5f, 0.25f}));
}

TEST_F(ImportanceFile, ReadsTheLegacyLayoutWithoutTrailer) {
  std::string s = legacy_file();
  s.resize(s.size() - 4 - 4 - 15);  // drop chunk count and dataset
  auto m = read_importance(write("b.dat", s));
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->chunk_count, 0u);
  EXPECT_TRUE(m->datasets.empty());
}

TEST_F(ImportanceFile, EveryTruncationOfALegacyFileIsAnErrorNamingIt) {
  const std::string s = legacy_file();
  // Cutting inside the entries must fail; cutting exactly after them or
  // after the chunk count is a valid shorter file.
  const size_t entries_end = s.size() - 4 - 4 - 15;
  for (size_t n = 0; n < s.size(); ++n) {
    const auto path = write("t.dat", s.substr(0, n));
    auto m = read_importance(path);
    if (n == entries_end || n == entries_end + 4) {
      EXPECT_TRUE(m.ok()) << n;
      continue;
    }
    ASSERT_FALSE(m.ok()) << "prefix of " << n << " bytes was accepted";
    EXPECT_NE(m.error().message.find("t.dat"), std::string::npos) << m.error().message;
  }
}

TEST_F(ImportanceFile, HostileLegacyValuesAreRefused) {
  struct Case {
    const char* what;
    std::string bytes;
    const char* says;
  };
  std::vector<Case> cases;
  {
    std::string s;
    put_i32(s, 1);
    put_str(s, "w");
    put_i32(s, 1);
    put_i32(s, 2);
    put_f32(s, 1.0f);
    put_f32(s, std::numeric_limits<float>::quiet_NaN());
    cases.push_back({"NaN", s, "nan"});
  }
  {
    std::string s;
    put_i32(s, 1);
    put_str(s, "w");
    put_i32(s, 1);
    put_i32(s, 1);
    put_f32(s, -2.0f);
    cases.push_back({"negative", s, "must be finite and >= 0"});
  }
  {
    std::string s;
    put_i32(s, 1);
    put_str(s, "w");
    put_i32(s, 1);
    put_i32(s, 0x7fffffff);  // two billion values in a 21-byte file
    put_f32(s, 1.0f);
    cases.push_back({"huge count", s, "truncated"});
  }
  {
    std::string s;
    put_i32(s, 1);
    put_i32(s, -5);  // name length
    s.append(16, '\0');
    cases.push_back({"negative name length", s, "name length"});
  }
  {
    std::string s;
    put_i32(s, 1 << 30);  // entries
    cases.push_back({"entry count", s, "entry count"});
  }
  {
    std::string s;
    put_i32(s, 2);
    for (int i = 0; i < 2; ++i) {
      put_str(s, "w");
      put_i32(s, 1);
      put_i32(s, 1);
      put_f32(s, 1.0f);
    }
    cases.push_back({"duplicate", s, "twice"});
  }
  cases.push_back({"empty", "", "truncated"});
  for (const auto& c : cases) {
    auto m = read_importance(write("h.dat", c.bytes));
    ASSERT_FALSE(m.ok()) << c.what;
    EXPECT_NE(m.error().message.find("h.dat"), std::string::npos) << c.what << ": " << m.error().message;
    EXPECT_NE(m.error().message.find(c.says), std::string::npos) << c.what << ": " << m.error().message;
  }
}

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

using Tensors = std::vector<std::pair<gguf::TensorSpec, std::vector<uint8_t>>>;

std::vector<gguf::KeyValue> imatrix_keys() {
  return {{"general.type", gguf::make_string("imatrix")},
          {"imatrix.datasets", gguf::make_string_array({"text.txt"})},
          {"imatrix.chunk_count", gguf::make_uint32(3)},
          {"imatrix.chunk_size", gguf::make_uint32(512)}};
}

TEST_F(ImportanceFile, ReadsTheGgufLayoutWithPerExpertCounts) {
  // A two-expert stack of 4 columns: expert 0 saw 2 rows, expert 1 none.
  Tensors t;
  t.push_back({{"blk.0.ffn_up_exps.weight.in_sum2", DType::F32, {4, 2}},
               f32_bytes({2, 4, 6, 8, 0, 0, 0, 0})});
  t.push_back({{"blk.0.ffn_up_exps.weight.counts", DType::F32, {1, 2}}, f32_bytes({2, 0})});
  t.push_back({{"blk.0.attn_k.weight.in_sum2", DType::F32, {2, 1}}, f32_bytes({9, 3})});
  t.push_back({{"blk.0.attn_k.weight.counts", DType::F32, {1, 1}}, f32_bytes({3})});
  const auto path = (dir_ / "m.gguf").string();
  ASSERT_TRUE(gguf::GgufWriter::write_file(path, imatrix_keys(), t));
  auto m = read_importance(path);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_FALSE(m->legacy);
  EXPECT_EQ(m->chunk_count, 3u);
  EXPECT_EQ(m->chunk_size, 512u);
  EXPECT_EQ(m->datasets, std::vector<std::string>{"text.txt"});
  const auto& e = m->entries.at("blk.0.ffn_up_exps.weight");
  EXPECT_EQ(e.n_mat(), 2);
  EXPECT_EQ(e.cols(), 4);
  const auto w = quant_weights(*m);
  // Expert 0: sums / 2; expert 1 (no rows): 1 everywhere.
  EXPECT_EQ(w.at("blk.0.ffn_up_exps.weight"), (std::vector<float>{1, 2, 3, 4, 1, 1, 1, 1}));
  EXPECT_EQ(w.at("blk.0.attn_k.weight"), (std::vector<float>{3, 1}));

  // What Hearth writes reads back the same (and is the layout above).
  const auto again = (dir_ / "again.gguf").string();
  ASSERT_TRUE(write_importance(*m, again));
  auto m2 = read_importance(again);
  ASSERT_TRUE(m2.ok()) << m2.error().message;
  EXPECT_EQ(quant_weights(*m2), w);
  EXPECT_EQ(m2->datasets, m->datasets);
  EXPECT_EQ(m2->chunk_count, 3u);
}

TEST_F(ImportanceFile, HostileGgufFilesAreRefused) {
  struct Case {
    const char* what;
    Tensors tensors;
    const char* says;
  };
  const auto nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<Case> cases;
  cases.push_back({"counts missing", {{{"w.in_sum2", DType::F32, {2, 1}}, f32_bytes({1, 1})}}, "missing"});
  cases.push_back({"sums missing", {{{"w.counts", DType::F32, {1, 1}}, f32_bytes({1})}}, "has no"});
  cases.push_back({"NaN sum",
                   {{{"w.in_sum2", DType::F32, {2, 1}}, f32_bytes({1, nan})},
                    {{"w.counts", DType::F32, {1, 1}}, f32_bytes({1})}},
                   "nan"});
  cases.push_back({"infinite count",
                   {{{"w.in_sum2", DType::F32, {2, 1}}, f32_bytes({1, 1})},
                    {{"w.counts", DType::F32, {1, 1}}, f32_bytes({std::numeric_limits<float>::infinity()})}},
                   "inf"});
  cases.push_back({"rows differ from counts",
                   {{{"w.in_sum2", DType::F32, {2, 3}}, f32_bytes({1, 1, 1, 1, 1, 1})},
                    {{"w.counts", DType::F32, {1, 2}}, f32_bytes({1, 1})}},
                   "counts 2 matrices"});
  cases.push_back({"counts not {1, n}",
                   {{{"w.in_sum2", DType::F32, {2, 1}}, f32_bytes({1, 1})},
                    {{"w.counts", DType::F32, {2, 1}}, f32_bytes({1, 1})}},
                   "counts are {1, n_mat}"});
  cases.push_back({"F16 sums",
                   {{{"w.in_sum2", DType::F16, {2, 1}}, std::vector<uint8_t>(4, 0)},
                    {{"w.counts", DType::F32, {1, 1}}, f32_bytes({1})}},
                   "not F32"});
  cases.push_back({"a stray tensor", {{{"token_embd.weight", DType::F32, {2, 1}}, f32_bytes({1, 1})}}, "neither"});
  cases.push_back({"no tensors", {}, "no importance data"});
  for (const auto& c : cases) {
    const auto path = (dir_ / "hostile.gguf").string();
    ASSERT_TRUE(gguf::GgufWriter::write_file(path, imatrix_keys(), c.tensors)) << c.what;
    auto m = read_importance(path);
    ASSERT_FALSE(m.ok()) << c.what;
    EXPECT_NE(m.error().message.find("hostile.gguf"), std::string::npos) << c.what << ": " << m.error().message;
    EXPECT_NE(m.error().message.find(c.says), std::string::npos) << c.what << ": " << m.error().message;
  }
}

TEST_F(ImportanceFile, TruncatedGgufIsAnErrorNamingTheFile) {
  Tensors t;
  t.push_back({{"w.in_sum2", DType::F32, {8, 1}}, f32_bytes({1, 2, 3, 4, 5, 6, 7, 8})});
  t.push_back({{"w.counts", DType::F32, {1, 1}}, f32_bytes({2})});
  const auto path = (dir_ / "full.gguf").string();
  ASSERT_TRUE(gguf::GgufWriter::write_file(path, imatrix_keys(), t));
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Where the last tensor's data ends (the writer may pad the file beyond).
  auto full = gguf::GgufFile::open(path);
  ASSERT_TRUE(full.ok());
  const auto* last = full->find_tensor("w.counts");
  const size_t data_end = full->data_offset() + last->offset + last->bytes;
  for (size_t n = 4; n < data_end; n += 3) {
    auto m = read_importance(write("cut.gguf", bytes.substr(0, n)));
    ASSERT_FALSE(m.ok()) << n;
    EXPECT_NE(m.error().message.find("cut.gguf"), std::string::npos) << m.error().message;
  }
  EXPECT_FALSE(read_importance(dir_ / "does-not-exist.imatrix").ok());
}

}  // namespace
}  // namespace hearth::imatrix
