// A small GNU-style argument parser for hearth-cli verbs: long flags
// (`--name value`, `--name=value`), short aliases (`-n 32`), switches and
// positional arguments, with generated `--help` text.
#pragma once

#include <hearth/core/result.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace hearth::cli {

enum class FlagKind { Switch, Value };

struct FlagSpec {
  std::string name;          // long name without dashes: "threads"
  FlagKind kind = FlagKind::Value;
  std::string help;
  std::string short_alias;   // optional, without dash: "n"
  std::string value_name = "V";
};

struct VerbSpec {
  std::string verb;
  std::string usage;         // e.g. "MODEL.gguf [--ctx N] [--json]"
  std::string description;
  std::vector<FlagSpec> flags;
  size_t min_positionals = 0;
  size_t max_positionals = 0;
  // What the positional arguments are, singular, for the message when their
  // count is wrong ("model file": "info takes one model file, got 2").
  std::string positional_name = "argument";
};

class ParsedArgs {
 public:
  bool has(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  // Typed getters return an InvalidArgument error naming the flag when the
  // text is not a number in range.
  Result<int64_t> get_int(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  Result<double> get_double(const std::string& name, double fallback, double min, double max) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  // Every value of a flag given more than once, in order (get() has the last).
  std::vector<std::string> get_all(const std::string& name) const;

  std::map<std::string, std::string> values_;
  std::map<std::string, std::vector<std::string>> all_values_;
  std::vector<std::string> switches_;
  std::vector<std::string> positionals_;
  bool help_requested_ = false;
};

// Parses argv (the words after the verb). On error returns InvalidArgument
// with a one-line message; `--help` sets help_requested.
Result<ParsedArgs> parse_args(const VerbSpec& spec, const std::vector<std::string>& argv);

std::string help_text(const VerbSpec& spec);

// The start of every verb: parses argv; on a usage error prints it on stderr
// and sets `exit_code` to kExitUsage, on --help prints the help and sets
// kExitOk. Returns the arguments only when the verb should go on.
std::optional<ParsedArgs> parse_verb_args(const VerbSpec& spec, const std::vector<std::string>& argv, int& exit_code);

}  // namespace hearth::cli
