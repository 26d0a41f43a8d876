// hearth-cli bench as a user runs it: the JSON contract, the roofline
// fraction against its own formula, the bytes per token against the
// model file (read through the GGUF reader), both weight placements, and
// a bad --weights value as a usage error. bench-serve's rounds: each
// level's figures are the medians of its rounds'.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <sys/wait.h>

#include "cli_process.h"

namespace {

using hearth::testing::cli;
using hearth::testing::data_path;
using hearth::testing::slurp;

// Every tensor once, the embedding table only for the one row a token reads
// (all of it when it is also the output matrix).
uint64_t weight_bytes_per_token(const std::string& path) {
  auto file = hearth::gguf::GgufFile::open(path);
  EXPECT_TRUE(file.ok());
  if (!file.ok()) return 0;
  const bool tied = file->find_tensor("output.weight") == nullptr;
  uint64_t total = 0;
  for (const auto& t : file->tensors()) {
    total += (t.name == "token_embd.weight" && !tied) ? t.bytes / static_cast<uint64_t>(t.rows()) : t.bytes;
  }
  return total;
}

// `hearth-cli ARGS` with stdout dropped: its exit status (-1 when it did
// not exit) and what it wrote to stderr.
struct Finished {
  int status = -1;
  std::string err;
};
Finished run_cli(const std::string& args, const std::string& name) {
  const std::string err = ::testing::TempDir() + name + ".err";
  const int raw = std::system((cli() + " " + args + " > /dev/null 2> " + err).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(err)};
}

TEST(CliBench, JsonKeepsTheContractWithEitherWeightPlacement) {
  const std::string model = data_path("models/stories260K.gguf");
  for (const char* where : {"copy", "mapped"}) {
    const std::string out = ::testing::TempDir() + "bench-" + where + ".json";
    const std::string cmd = cli() + " bench --model " + model + " -p 8 -n 8 -r 2 --weights " + where +
                            " --json > " + out + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto j = nlohmann::json::parse(slurp(out));
    for (const char* key : {"model", "backend", "threads", "pp_tokens", "tg_tokens", "pp_tps", "pp_tps_sd", "tg_tps",
                            "tg_tps_sd", "weight_bytes_per_token", "read_bandwidth_gbps", "roofline_fraction"}) {
      EXPECT_TRUE(j.contains(key)) << key;
    }
    EXPECT_EQ(j["weight_memory"], where);
    EXPECT_EQ(j["pp_tokens"], 8);
    EXPECT_EQ(j["tg_tokens"], 8);
    EXPECT_EQ(j["weight_bytes_per_token"].get<uint64_t>(), weight_bytes_per_token(model));
    const double tg = j["tg_tps"], bw = j["read_bandwidth_gbps"];
    EXPECT_GT(tg, 0.0);
    EXPECT_GT(bw, 0.0);
    const double bpt = j["weight_bytes_per_token"].get<double>();
    EXPECT_NEAR(j["roofline_fraction"].get<double>(), bpt * tg / (bw * 1e9), 1e-9 * bpt * tg / (bw * 1e9));
    ASSERT_EQ(j["roofline_fraction_runs"].size(), 2u);
    for (const auto& f : j["roofline_fraction_runs"]) EXPECT_GT(f.get<double>(), 0.0);
  }
}

// --profile on the CPU: wall time per op of the last repetition's steps,
// one entry per node the backend ran (the story model's products are F32,
// so none run as a group). The counts follow from the model's layer count
// (read through the GGUF reader): per generation step, one attention, two
// RoPEs and two RMS norms per layer, and the output norm.
TEST(CliBench, ProfileOnTheCpuCountsEveryOpOfEveryStep) {
  const std::string model = data_path("models/stories260K.gguf");
  auto file = hearth::gguf::GgufFile::open(model);
  ASSERT_TRUE(file.ok());
  const auto arch = file->get_string("general.architecture");
  ASSERT_TRUE(arch.ok());
  const auto layers = file->get_uint(*arch + ".block_count");
  ASSERT_TRUE(layers.ok());
  const std::string out = ::testing::TempDir() + "bench-profile.json";
  const std::string cmd = cli() + " bench --model " + model + " -p 8 -n 4 -r 1 --profile --json > " + out + " 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const auto j = nlohmann::json::parse(slurp(out));
  ASSERT_TRUE(j.contains("profile"));
  EXPECT_EQ(j["profile"]["clock"], "wall");
  const auto& tg = j["profile"]["tg"];
  ASSERT_EQ(tg["steps"], 4);
  const auto count_of = [&](const char* op) -> int64_t {
    for (const auto& o : tg["ops"]) {
      if (o["op"] == op) return o["count"].get<int64_t>();
    }
    return 0;
  };
  const auto n = static_cast<int64_t>(*layers);
  EXPECT_EQ(count_of("attention"), 4 * n);
  EXPECT_EQ(count_of("rope"), 4 * 2 * n);
  EXPECT_EQ(count_of("rms_norm"), 4 * (2 * n + 1));
  EXPECT_GT(count_of("matmul F32"), 0);
  double sum = 0;
  for (const auto& o : tg["ops"]) {
    EXPECT_GE(o["ms"].get<double>(), 0.0) << o["op"];
    sum += o["ms"].get<double>();
  }
  // Each entry is a span inside its step's compute, so together they stay
  // within the steps' wall time.
  EXPECT_LE(sum, tg["wall_ms"].get<double>());
}

TEST(CliBench, AnUnknownWeightPlacementIsAUsageError) {
  const Finished run = run_cli("bench --model " + data_path("models/stories260K.gguf") + " -p 8 -n 8 --weights hugepages",
                               "bench-bad-weights");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("--weights: weight memory 'hugepages' is not one of auto, mapped, copy"), std::string::npos)
      << run.err;
}

// Three rounds over two levels on loopback: every round's figures are kept,
// and each level's are the middle of its three rounds' (sorted here, apart
// from the code under test). One round keeps the contract's shape alone.
// bench-serve on the story model, 8-token prompts and 4-token replies
// arriving together, and its JSON (no levels when the run failed).
nlohmann::json bench_serve_json(const std::string& args, const std::string& name) {
  const std::string out = ::testing::TempDir() + name + ".json";
  const std::string cmd = cli() + " bench-serve --model " + data_path("models/stories260K.gguf") +
                          " -p 8 -n 4 --stagger-ms 0 --json " + args + " > " + out + " 2>/dev/null";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(status, 0) << cmd;
  return status == 0 ? nlohmann::json::parse(slurp(out)) : nlohmann::json{{"levels", nlohmann::json::array()}};
}

TEST(CliBenchServe, RepeatReportsTheMedianOfItsRounds) {
  const auto j = bench_serve_json("--streams 1,2 --repeat 3", "bench-serve-repeat");
  ASSERT_EQ(j["levels"].size(), 2u);
  for (size_t li = 0; li < 2; ++li) {
    const auto& level = j["levels"][li];
    const int streams = static_cast<int>(li) + 1;
    EXPECT_EQ(level["streams"], streams);
    for (const char* key : {"agg_tps", "ttft_p50_ms", "ttft_p95_ms", "itl_p50_ms", "itl_p95_ms"}) {
      ASSERT_EQ(level["runs"].size(), 3u);
      std::vector<double> values;
      for (const auto& run : level["runs"]) {
        EXPECT_EQ(run["streams"], streams);
        EXPECT_EQ(run["tokens"], 4 * streams);
        values.push_back(run[key].get<double>());
      }
      std::sort(values.begin(), values.end());
      EXPECT_DOUBLE_EQ(level[key].get<double>(), values[1]) << key;
    }
    EXPECT_GT(level["agg_tps"].get<double>(), 0.0);
  }
  // The second level against the first: the ratio of the medians, each
  // round's own ratio (its two levels' aggregates), and the rounds' middle.
  const auto& scaling = j["levels"][1]["scaling"];
  EXPECT_EQ(scaling["base_streams"], 1);
  EXPECT_DOUBLE_EQ(scaling["agg_tps_ratio"].get<double>(),
                   j["levels"][1]["agg_tps"].get<double>() / j["levels"][0]["agg_tps"].get<double>());
  ASSERT_EQ(scaling["round_ratios"].size(), 3u);
  std::vector<double> ratios;
  for (size_t r = 0; r < 3; ++r) {
    const double expected =
        j["levels"][1]["runs"][r]["agg_tps"].get<double>() / j["levels"][0]["runs"][r]["agg_tps"].get<double>();
    EXPECT_DOUBLE_EQ(scaling["round_ratios"][r].get<double>(), expected) << r;
    ratios.push_back(expected);
  }
  std::sort(ratios.begin(), ratios.end());
  EXPECT_DOUBLE_EQ(scaling["round_ratio_median"].get<double>(), ratios[1]);
  EXPECT_FALSE(j["levels"][0].contains("scaling"));

  const auto single = bench_serve_json("--streams 1", "bench-serve-once");
  ASSERT_EQ(single["levels"].size(), 1u);
  EXPECT_FALSE(single["levels"][0].contains("runs"));
  EXPECT_EQ(single["levels"][0]["tokens"], 4);
}

// Sampled replies (every request's temperature, the whole softmax drawn)
// still run to their length, and the JSON says which temperature ran.
TEST(CliBenchServe, ATemperatureIsSentWithEveryRequest) {
  const auto j = bench_serve_json("--streams 2 --temperature 1", "bench-serve-sampled");
  ASSERT_EQ(j["levels"].size(), 1u);
  EXPECT_EQ(j["temperature"], 1.0);
  EXPECT_EQ(j["levels"][0]["tokens"], 8);
  const Finished hot = run_cli("bench-serve --model " + data_path("models/stories260K.gguf") + " --temperature 3",
                               "bench-serve-hot");
  EXPECT_EQ(hot.status, 1);
  EXPECT_NE(hot.err.find("--temperature"), std::string::npos) << hot.err;
}

TEST(CliBenchServe, ZeroRoundsIsAUsageError) {
  const Finished run =
      run_cli("bench-serve --model " + data_path("models/stories260K.gguf") + " --repeat 0", "bench-serve-repeat0");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("--repeat: 0 is outside 1..50"), std::string::npos) << run.err;
}

}  // namespace
