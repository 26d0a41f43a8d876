// A fixture model copied with one metadata key set (added or replaced): how
// the tests make model files that lie (bad hyperparameters, hostile chat
// templates) from real ones, with the project's own GGUF writer.
#pragma once

#include <gtest/gtest.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/gguf/writer.h>

#include <string>

namespace hearth::testing {

// Writes `source` with `key` = `value` to TempDir()/`name`; returns the path.
inline std::string rewrite_model_with(const std::string& source, const std::string& name, const std::string& key,
                                      gguf::Value value) {
  auto src = gguf::GgufFile::open(source);
  EXPECT_TRUE(src.ok()) << (src.ok() ? "" : src.error().message);
  gguf::GgufWriter w(src->alignment());
  bool replaced = false;
  for (const auto& kv : src->metadata()) {
    if (kv.key == key) {
      w.add_metadata(key, value);
      replaced = true;
    } else {
      w.add_metadata(kv.key, kv.value);
    }
  }
  if (!replaced) w.add_metadata(key, value);
  for (const auto& t : src->tensors()) {
    gguf::TensorSpec spec{t.name, t.type, {}};
    for (uint32_t d = 0; d < t.n_dims; ++d) spec.dims.push_back(t.dims[d]);
    EXPECT_TRUE(w.add_tensor(std::move(spec)).ok());
  }
  const std::string path = ::testing::TempDir() + name;
  EXPECT_TRUE(w.begin(path).ok());
  for (const auto& t : src->tensors()) EXPECT_TRUE(w.write_tensor_data(src->tensor_data(t)).ok());
  EXPECT_TRUE(w.finish().ok());
  return path;
}

}  // namespace hearth::testing
