// Shared by the tokenize and detokenize verbs: loading a model's tokenizer,
// and the corpus format (each case followed by a line `__case__`).
#pragma once

#include <fmt/format.h>
#include <hearth/core/file_io.h>
#include <hearth/core/log.h>
#include <hearth/engine/gguf/reader.h>
#include <hearth/engine/tokenizer/tokenizer.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::cli {

inline constexpr std::string_view kCaseMarker = "__case__";

// Reads the vocabulary of a model (or vocabulary-only) GGUF. Tokenizer
// warnings go to stderr.
inline Result<tokenizer::Tokenizer> load_cli_tokenizer(const std::string& path) {
  HEARTH_TRY(auto file, gguf::GgufFile::open(path));
  const Logger logger([](LogLevel level, std::string_view message) {
    std::fprintf(stderr, "%s: %.*s\n", to_string(level), static_cast<int>(message.size()), message.data());
  }, LogLevel::Warn);
  return tokenizer::Tokenizer::from_gguf(file, logger);
}

// Corpora and id files are user input: regular files of at most this size.
inline constexpr uint64_t kCorpusFileLimit = uint64_t{256} << 20;

inline Result<std::string> read_whole_file(const std::string& path, std::string_view what) {
  return read_regular_file(path, kCorpusFileLimit, what);
}

// The output replaces an existing file only once complete (it may be an input).
inline Status write_whole_file(const std::string& path, std::string_view data) {
  return write_file_atomically(path, data);
}

// Splits a corpus: every case is the text before a line that is exactly
// `__case__`, without the newline that ends the case's last line. Text after
// the last marker, if any, is a final case.
inline std::vector<std::string> split_corpus(std::string_view content) {
  std::vector<std::string> cases;
  size_t case_begin = 0;
  size_t line_begin = 0;
  while (line_begin < content.size()) {
    size_t line_end = content.find('\n', line_begin);
    const bool last_line = line_end == std::string_view::npos;
    if (last_line) line_end = content.size();
    if (content.substr(line_begin, line_end - line_begin) == kCaseMarker) {
      size_t text_end = line_begin;
      if (text_end > case_begin) --text_end;  // the newline before the marker line
      cases.emplace_back(content.substr(case_begin, text_end - case_begin));
      case_begin = last_line ? content.size() : line_end + 1;
    }
    line_begin = last_line ? content.size() : line_end + 1;
  }
  if (case_begin < content.size()) cases.emplace_back(content.substr(case_begin));
  return cases;
}

inline std::string join_corpus(const std::vector<std::string>& cases) {
  std::string out;
  for (const auto& c : cases) {
    out += c;
    out += '\n';
    out += kCaseMarker;
    out += '\n';
  }
  return out;
}

inline std::string ids_line(const std::vector<tokenizer::TokenId>& ids) {
  std::string line;
  for (const auto id : ids) {
    if (!line.empty()) line += ' ';
    line += std::to_string(id);
  }
  return line;
}

}  // namespace hearth::cli
