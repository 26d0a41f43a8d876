#include "compare/prompt_set.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <string>

namespace hearth::compare {
namespace {

bool ends_with_jsonl(std::string_view name) {
  constexpr std::string_view ext = ".jsonl";
  if (name.size() < ext.size()) return false;
  return std::equal(ext.begin(), ext.end(), name.end() - static_cast<std::ptrdiff_t>(ext.size()),
                    [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
}

}  // namespace

Result<PromptSet> parse_prompt_file(std::string_view name, std::string_view content) {
  PromptSet set;
  if (!ends_with_jsonl(name)) {
    if (content.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      return make_error(ErrorCode::InvalidFormat, fmt::format("{}: the text is empty", name));
    }
    set.text = std::string(content);
    return set;
  }
  return parse_prompt_lines(name, content);
}

Result<PromptSet> parse_prompt_lines(std::string_view name, std::string_view content) {
  PromptSet set;
  size_t line_no = 0, begin = 0;
  while (begin < content.size()) {
    size_t end = content.find('\n', begin);
    if (end == std::string_view::npos) end = content.size();
    const auto line = content.substr(begin, end - begin);
    begin = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_string() && !j.get<std::string>().empty()) {
      set.prompts.push_back(j.get<std::string>());
      set.categories.emplace_back();
    } else if (j.is_object() && j.contains("prompt") && j["prompt"].is_string() && !j["prompt"].get<std::string>().empty()) {
      set.prompts.push_back(j["prompt"].get<std::string>());
      set.categories.push_back(j.contains("category") && j["category"].is_string() ? j["category"].get<std::string>()
                                                                                     : std::string());
    } else {
      return make_error(ErrorCode::InvalidFormat,
                        fmt::format("{}: line {} is not a non-empty JSON string nor an object with a \"prompt\" string",
                                    name, line_no));
    }
  }
  if (set.prompts.empty()) return make_error(ErrorCode::InvalidFormat, fmt::format("{}: no prompts", name));
  return set;
}

int level_rank(std::string_view label) {
  std::string up(label);
  for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // Bits per weight, roughly: what decides which level is closest to the
  // original weights.
  static constexpr std::pair<std::string_view, int> kRanks[] = {
      {"F32", 100},   {"F16", 90},    {"BF16", 90},   {"Q8_0", 80},   {"Q6_K", 70},   {"Q5_K_M", 66},
      {"Q5_1", 64},   {"Q5_0", 62},   {"Q4_K_M", 56}, {"IQ4_XS", 54}, {"IQ4_NL", 54}, {"Q4_1", 53},
      {"Q4_0", 52},   {"MXFP4_MOE", 48}, {"Q3_K_M", 40}, {"Q2_K", 30}};
  for (const auto& [name, rank] : kRanks) {
    if (up == name) return rank;
  }
  return 0;
}

}  // namespace hearth::compare
