// What a level comparison runs on: a text scored in windows (the reference
// perplexity method, so figures compare with `hearth-cli compare --text`), or
// prompts the levels answer (JSONL, as `hearth-cli compare --prompts`).
#pragma once

#include <hearth/core/result.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::compare {

struct PromptSet {
  std::optional<std::string> text;   // scored in windows; its first tokens are also answered
  std::vector<std::string> prompts;  // answered, and scored over the base's answers
  std::vector<std::string> categories;  // per prompt ("chat", "code", ...), empty strings when unknown
};

// A file the user chose: `name` ending in .jsonl holds one prompt per line
// ({"prompt": "...", "category": "..."} or a JSON string; blank lines
// skipped); anything else is a text. InvalidFormat names the file and line.
Result<PromptSet> parse_prompt_file(std::string_view name, std::string_view content);
// The JSONL form alone, whatever the name (`hearth-cli compare --prompts`).
Result<PromptSet> parse_prompt_lines(std::string_view name, std::string_view content);

// The rank a quant level's name gives it (F32 highest, then F16/BF16, Q8_0,
// Q6_K, ...); 0 for a name it does not know.
int level_rank(std::string_view label);

}  // namespace hearth::compare
