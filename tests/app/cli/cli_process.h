// Helpers for the tests that run the real hearth-cli binary on fixture data.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "../../engine/model/fixture_logits.h"

namespace hearth::testing {

// The hearth-cli built next to the tests.
inline std::string cli() { return std::string(HEARTH_BINARY_DIR) + "/app/hearth-cli"; }

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fixture model's tokens.txt as one --tokens argument (ids separated by spaces).
inline std::string tokens_arg(const std::string& file) {
  std::string ids = slurp(data_path("models/" + file));
  for (char& c : ids) {
    if (c == '\n') c = ' ';
  }
  return ids;
}

}  // namespace hearth::testing
