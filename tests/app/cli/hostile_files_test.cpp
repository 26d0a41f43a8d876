// hearth-cli on hostile input, through the real binary: FIFOs, devices,
// directories and oversized files where a text file is due; quantize asked to
// write over its own input; model files with impossible metadata; and the
// messages those cases print (exact texts: they name the file, key, offset).
// Every run is wrapped in `timeout 10`: a hang is a failure (status 124), not a
// stuck test.
#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "cli_process.h"

namespace hearth::testing {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int status = -1;  // exit code; 124 when `timeout` had to stop it
  std::string out, err;
};

struct Sandbox {
  fs::path dir;
  Sandbox() {
    std::string pattern = (fs::temp_directory_path() / "hearth_cli_hostile_XXXXXX").string();
    dir = ::mkdtemp(pattern.data());
  }
  ~Sandbox() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(path(name), std::ios::binary) << content;
    return path(name);
  }
  std::string fifo(const std::string& name) const {
    EXPECT_EQ(::mkfifo(path(name).c_str(), 0600), 0);
    return path(name);
  }
  std::string directory(const std::string& name) const {
    fs::create_directories(path(name));
    return path(name);
  }
  CliRun run(const std::string& args) const {
    const std::string cmd = "cd " + dir.string() + " && timeout -s KILL 10 " + cli() + " " + args + " > out.txt 2> err.txt";
    const int raw = std::system(cmd.c_str());
    CliRun r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
    r.out = slurp(path("out.txt"));
    r.err = slurp(path("err.txt"));
    return r;
  }
};

const std::string kMessages = R"([{"role": "user", "content": "hi"}])";

TEST(CliHostileFiles, TemplateRefusesWhatIsNotARegularFileWithoutBlocking) {
  Sandbox s;
  const std::string msgs = s.write("msgs.json", kMessages);
  const std::string tmpl = s.write("t.jinja", "{{ messages[0].content }}");
  const std::string fifo = s.fifo("fifo");
  const std::string dir = s.directory("dir");
  for (const auto& [path, kind] : {std::pair<std::string, std::string>{fifo, "a FIFO"},
                                   {"/dev/zero", "a character device"},
                                   {dir, "a directory"}}) {
    CliRun t = s.run("template --template-file " + path + " --messages " + msgs);
    EXPECT_EQ(t.status, 2) << path;
    EXPECT_EQ(t.out, "");
    EXPECT_EQ(t.err, "hearth-cli template: " + path + ": is " + kind + ", not a regular file\n");
    CliRun m = s.run("template --template-file " + tmpl + " --messages " + path);
    EXPECT_EQ(m.status, 2) << path;
    EXPECT_EQ(m.err, "hearth-cli template: " + path + ": is " + kind + ", not a regular file\n");
    CliRun tools = s.run("template --template-file " + tmpl + " --messages " + msgs + " --tools " + path);
    EXPECT_EQ(tools.status, 2) << path;
    EXPECT_EQ(tools.err, "hearth-cli template: " + path + ": is " + kind + ", not a regular file\n");
  }
  // The same files still render (the checks refuse only what they should).
  CliRun ok = s.run("template --template-file " + tmpl + " --messages " + msgs);
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_EQ(ok.out, "hi");
}

TEST(CliHostileFiles, OversizedInputFilesAreRefusedNamingFileAndLimit) {
  Sandbox s;
  const std::string tmpl = s.write("t.jinja", "{{ messages[0].content }}");
  // Sparse: the size is what the check sees; nothing is read.
  const std::string big = s.path("msgs.json");
  std::ofstream(big).close();
  fs::resize_file(big, uint64_t{300} << 20);
  CliRun r = s.run("template --template-file " + tmpl + " --messages " + big);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "hearth-cli template: " + big + ": 300 MiB is larger than the 64 MiB limit for message files\n");
  const std::string big_template = s.path("big.jinja");
  std::ofstream(big_template).close();
  fs::resize_file(big_template, uint64_t{2} << 20);
  CliRun t = s.run("template --template-file " + big_template + " --messages " + tmpl);
  EXPECT_EQ(t.err, "hearth-cli template: " + big_template + ": 2 MiB is larger than the 1 MiB limit for template files\n");
  const std::string corpus = s.path("corpus.txt");
  std::ofstream(corpus).close();
  fs::resize_file(corpus, uint64_t{257} << 20);
  CliRun c = s.run("tokenize --model " + data_path("models/stories260K.gguf") + " --corpus " + corpus + " --out ids.txt");
  EXPECT_EQ(c.status, 2);
  EXPECT_EQ(c.err, "tokenize: " + corpus + ": 257 MiB is larger than the 256 MiB limit for corpus files\n");
  CliRun d = s.run("tokenize --model " + data_path("models/stories260K.gguf") + " --corpus /dev/zero --out ids.txt");
  EXPECT_EQ(d.status, 2);
  EXPECT_EQ(d.err, "tokenize: /dev/zero: is a character device, not a regular file\n");
  CliRun cat = s.run("catalog --catalog " + s.directory("catalog.d"));
  EXPECT_EQ(cat.status, 2) << cat.err;
  EXPECT_NE(cat.err.find(s.path("catalog.d") + ": is a directory, not a regular file"), std::string::npos) << cat.err;
}

TEST(CliHostileFiles, JsonErrorsGiveOffsetLineColumnAndReason) {
  Sandbox s;
  const std::string tmpl = s.write("t.jinja", "{{ messages[0].content }}");
  // Line 2 ends early: the input runs out at byte 20, line 2 column 3.
  const std::string bad = s.write("bad.json", "[{\"role\": \"user\",\n  ");
  CliRun r = s.run("template --template-file " + tmpl + " --messages " + bad);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "hearth-cli template: " + bad +
                       ": not valid JSON at byte 20 (line 2, column 3): syntax error while parsing object key - "
                       "unexpected end of input; expected string literal\n");
}

TEST(CliHostileFiles, ModelPathsThatAreNotRegularFilesAreCleanErrors) {
  Sandbox s;
  const std::string fifo = s.fifo("model.gguf");
  const std::string dir = s.directory("dir.gguf");
  for (const auto& [path, kind] : {std::pair<std::string, std::string>{fifo, "a FIFO"},
                                   {"/dev/zero", "a character device"},
                                   {dir, "a directory"}}) {
    CliRun info = s.run("info " + path);
    EXPECT_EQ(info.status, 2) << path;
    EXPECT_EQ(info.err, "info: " + path + ": is " + kind + ", not a regular file\n");
    CliRun gen = s.run("generate --model " + path + " --prompt hi -n 1");
    EXPECT_EQ(gen.status, 2) << path;
    EXPECT_NE(gen.err.find("generate: " + path + ": is " + kind + ", not a regular file\n"), std::string::npos)
        << gen.err;
    CliRun q = s.run("quantize " + path + " out.gguf Q8_0 --no-error-report");
    EXPECT_EQ(q.status, 2) << path;
    EXPECT_EQ(q.err, "quantize: " + path + ": is " + kind + ", not a regular file\n");
    EXPECT_FALSE(fs::exists(s.path("out.gguf")));
  }
}

TEST(CliHostileFiles, QuantizeNeverWritesOverItsInput) {
  Sandbox s;
  const std::string fixture = data_path("models/tiny-llama-f32.gguf");
  const std::string original = slurp(fixture);
  const std::string in = s.path("model.gguf");
  fs::copy_file(fixture, in);
  fs::create_symlink(in, s.path("link.gguf"));
  fs::create_hard_link(in, s.path("hard.gguf"));
  for (const std::string& out : {in, s.path("link.gguf"), s.path("hard.gguf"), s.dir.string() + "/./model.gguf"}) {
    CliRun r = s.run("quantize " + in + " " + out + " Q8_0 --no-error-report");
    EXPECT_EQ(r.status, 2) << out;
    EXPECT_EQ(r.err, "quantize: " + in + " and " + out + " are the same file; write the output to a new file\n");
    EXPECT_EQ(slurp(in), original) << out;
  }
  // Over another, existing file: replaced only when the new one is complete.
  const std::string out = s.write("out.gguf", "old contents");
  CliRun ok = s.run("quantize " + in + " " + out + " Q8_0 --no-error-report");
  ASSERT_EQ(ok.status, 0) << ok.err;
  auto written = gguf::GgufFile::open(out);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(written->find_tensor("blk.0.attn_q.weight")->type, DType::Q8_0);
  // A failing run (a quantized input) leaves the existing output untouched.
  const std::string before = slurp(out);
  CliRun fail = s.run("quantize " + data_path("models/tiny-llama-q8_0.gguf") + " " + out + " Q4_0 --no-error-report");
  EXPECT_EQ(fail.status, 2);
  EXPECT_EQ(slurp(out), before);
  EXPECT_EQ(slurp(in), original);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(s.dir)) files += e.path().filename().string().find(".tmp-") != std::string::npos;
  EXPECT_EQ(files, 0u) << "a temporary file was left behind";
}

// The fixture model rewritten with metadata changed by `edit`.
template <typename Edit>
std::string rewritten_model(const Sandbox& s, const std::string& name, Edit edit) {
  auto src = gguf::GgufFile::open(data_path("models/stories260K.gguf"));
  EXPECT_TRUE(src.ok());
  std::vector<gguf::KeyValue> metadata = src->metadata();
  edit(metadata);
  gguf::GgufWriter w(src->alignment());
  for (auto& kv : metadata) w.add_metadata(kv.key, kv.value);
  for (const auto& t : src->tensors()) {
    gguf::TensorSpec spec{t.name, t.type, {}};
    for (uint32_t d = 0; d < t.n_dims; ++d) spec.dims.push_back(t.dims[d]);
    EXPECT_TRUE(w.add_tensor(std::move(spec)).ok());
  }
  const std::string path = s.path(name);
  EXPECT_TRUE(w.begin(path).ok());
  for (const auto& t : src->tensors()) EXPECT_TRUE(w.write_tensor_data(src->tensor_data(t)).ok());
  EXPECT_TRUE(w.finish().ok());
  return path;
}

void set_key(std::vector<gguf::KeyValue>& metadata, const std::string& key, gguf::Value value) {
  for (auto& kv : metadata) {
    if (kv.key == key) {
      kv.value = std::move(value);
      return;
    }
  }
  metadata.push_back({key, std::move(value)});
}

TEST(CliHostileFiles, BadModelMetadataNamesTheFileAndKeyOnce) {
  Sandbox s;
  const std::string nan_base = rewritten_model(s, "nan-base.gguf", [](auto& m) {
    set_key(m, "llama.rope.freq_base", gguf::make_float32(std::numeric_limits<float>::quiet_NaN()));
  });
  CliRun r = s.run("generate --model " + nan_base + " --prompt hi -n 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("generate: " + nan_base + ": key 'llama.rope.freq_base' = nan must be a finite number greater "
                       "than 0\n"),
            std::string::npos)
      << r.err;
  const std::string zero_eps = rewritten_model(s, "zero-eps.gguf", [](auto& m) {
    set_key(m, "llama.attention.layer_norm_rms_epsilon", gguf::make_float32(0.0f));
  });
  CliRun e = s.run("generate --model " + zero_eps + " --prompt hi -n 1");
  EXPECT_NE(e.err.find(zero_eps + ": key 'llama.attention.layer_norm_rms_epsilon' = 0 must be a finite number "
                                   "greater than 0\n"),
            std::string::npos)
      << e.err;
  // Head size n_embd / n_head = 0: named by its keys, not as "KV head_dim 0".
  const std::string thin = rewritten_model(s, "thin.gguf", [](auto& m) {
    set_key(m, "llama.embedding_length", gguf::make_uint32(4));
    set_key(m, "llama.attention.head_count", gguf::make_uint32(8));
    std::erase_if(m, [](const gguf::KeyValue& kv) { return kv.key == "llama.attention.key_length"; });
  });
  CliRun t = s.run("info " + thin);
  EXPECT_EQ(t.status, 2);
  EXPECT_EQ(t.err, "info: " + thin + ": key 'llama.embedding_length' = 4 is smaller than key "
                   "'llama.attention.head_count' = 8, so the head size would be 0\n");
  // A missing key is said once, with the file once.
  const std::string no_tokens = rewritten_model(s, "no-tokens.gguf", [](auto& m) {
    std::erase_if(m, [](const gguf::KeyValue& kv) { return kv.key == "tokenizer.ggml.tokens"; });
  });
  CliRun k = s.run("tokenize --model " + no_tokens + " --text hi");
  EXPECT_EQ(k.status, 2);
  EXPECT_EQ(k.err, "tokenize: " + no_tokens + ": metadata key 'tokenizer.ggml.tokens' is missing\n");
}

TEST(CliHostileFiles, ArgumentAndContextMessagesSayWhatIsWrong) {
  Sandbox s;
  const std::string model = data_path("models/stories260K.gguf");
  CliRun two = s.run("info " + model + " " + model);
  EXPECT_EQ(two.status, 1);
  EXPECT_EQ(two.err.substr(0, two.err.find('\n')), "info takes one model file, got 2");
  CliRun none = s.run("quantize in.gguf");
  EXPECT_EQ(none.err.substr(0, none.err.find('\n')), "quantize takes three arguments, got 1");
  // 20 ids, 16 positions: said in those numbers.
  CliRun big = s.run("generate --model " + model + " --tokens '1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20' "
                  "--ctx 16 -n 1 --print-ids");
  EXPECT_EQ(big.status, 2);
  EXPECT_NE(big.err.find("generate: the prompt has 20 tokens but the context holds 16; raise --ctx\n"),
            std::string::npos)
      << big.err;
  EXPECT_EQ(big.err.find("generate: generate:"), std::string::npos) << big.err;
  // A model that adds no BOS and an empty prompt: nothing to start from, said once.
  const std::string no_bos = rewritten_model(s, "no-bos.gguf", [](auto& m) {
    set_key(m, "tokenizer.ggml.add_bos_token", gguf::make_bool(false));
  });
  CliRun empty = s.run("generate --model " + no_bos + " --prompt '' --raw -n 1");
  EXPECT_EQ(empty.status, 2);
  EXPECT_NE(empty.err.find("generate: the prompt has no tokens (an empty --prompt and a model that adds no BOS)\n"),
            std::string::npos)
      << empty.err;
  EXPECT_EQ(empty.err.find("generate: generate:"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace hearth::testing
