// hearth-cli imatrix and quantize --imatrix as a user runs them: the JSON
// summary, a file the engine's reader takes back with one entry per weight
// product of the model, the quantized file's provenance keys, and the errors
// for a short text, a matrix of another model and a file that is not one.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/imatrix/importance.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include "cli_process.h"

namespace {

using hearth::testing::cli;
using hearth::testing::data_path;
using hearth::testing::slurp;

int run_cli(const std::string& args, const std::string& out, const std::string& err = "/dev/null") {
  const std::string cmd = cli() + " " + args + " > " + out + " 2> " + err;
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

const std::string kCalibration = data_path("../../resources/calibration/default.txt");

TEST(CliImatrix, CollectsAndQuantizesWithTheMatrix) {
  const std::string dir = ::testing::TempDir();
  const std::string model = data_path("models/stories260K.gguf");
  const std::string matrix = dir + "stories.imatrix", out = dir + "imatrix.json";
  ASSERT_EQ(run_cli("imatrix --model " + model + " --text " + kCalibration + " -o " + matrix + " --ctx 128 --json", out),
            0);
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["output"], matrix);
  EXPECT_EQ(j["chunk_size"], 128);
  // The story model: 5 layers of q, k, v, output, gate, up, down.
  EXPECT_EQ(j["entries"], 35);
  auto m = hearth::imatrix::read_importance(matrix);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->entries.size(), 35u);
  EXPECT_EQ(m->datasets, std::vector<std::string>{"default.txt"});
  EXPECT_EQ(m->chunk_count, j["chunks"].get<uint32_t>());
  EXPECT_GE(m->chunk_count, 2u);

  const std::string q = dir + "stories-q4_k_m-im.gguf";
  ASSERT_EQ(run_cli("quantize " + model + " " + q + " Q4_K_M --imatrix " + matrix + " --no-error-report", "/dev/null"),
            0);
  auto file = hearth::gguf::GgufFile::open(q);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(*file->get_string("quantize.imatrix.file"), matrix);
  EXPECT_EQ(*file->get_string("quantize.imatrix.dataset"), "default.txt");
  EXPECT_EQ(*file->get_int("quantize.imatrix.entries_count"), 35);
}

TEST(CliImatrix, ErrorsNameWhatIsWrong) {
  const std::string dir = ::testing::TempDir();
  const std::string err = dir + "imatrix.err";
  // Two chunks are needed.
  EXPECT_EQ(run_cli("imatrix --model " + data_path("models/stories260K.gguf") + " --text " + kCalibration +
                        " -o " + dir + "x.imatrix --ctx 4096",
                    "/dev/null", err),
            2);
  EXPECT_NE(slurp(err).find("tokens"), std::string::npos) << slurp(err);
  EXPECT_EQ(run_cli("imatrix --model " + data_path("models/stories260K.gguf"), "/dev/null"), 1);

  // A matrix of the 256-wide fixture does not fit the 64-wide story model.
  const std::string other = dir + "llama.imatrix";
  ASSERT_EQ(run_cli("imatrix --model " + data_path("models/tiny-llama-f32.gguf") + " --text " + kCalibration + " -o " +
                        other + " --ctx 128",
                    "/dev/null"),
            0);
  EXPECT_EQ(run_cli("quantize " + data_path("models/stories260K.gguf") + " " + dir + "bad.gguf Q4_K_M --imatrix " + other,
                    "/dev/null", err),
            2);
  EXPECT_NE(slurp(err).find("blk.0."), std::string::npos) << slurp(err);
  EXPECT_NE(slurp(err).find("another model"), std::string::npos) << slurp(err);

  // Not an importance matrix at all.
  const std::string junk = dir + "junk.imatrix";
  std::ofstream(junk) << "this is plain text, not a matrix";
  EXPECT_EQ(run_cli("quantize " + data_path("models/stories260K.gguf") + " " + dir + "junk.gguf Q4_K_M --imatrix " + junk,
                    "/dev/null", err),
            2);
  EXPECT_NE(slurp(err).find("junk.imatrix"), std::string::npos) << slurp(err);
}

}  // namespace
