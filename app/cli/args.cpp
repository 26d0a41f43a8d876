#include "args.h"
#include "verbs.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace hearth::cli {
namespace {

const FlagSpec* find_flag(const VerbSpec& spec, const std::string& name, bool is_short) {
  for (const auto& flag : spec.flags) {
    if (is_short ? flag.short_alias == name : flag.name == name) return &flag;
  }
  return nullptr;
}

}  // namespace

bool ParsedArgs::has(const std::string& name) const {
  return values_.count(name) != 0 ||
         std::find(switches_.begin(), switches_.end(), name) != switches_.end();
}

std::vector<std::string> ParsedArgs::get_all(const std::string& name) const {
  auto it = all_values_.find(name);
  return it == all_values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<std::string> ParsedArgs::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ParsedArgs::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

Result<int64_t> ParsedArgs::get_int(const std::string& name, int64_t fallback, int64_t min,
                                    int64_t max) const {
  auto text = get(name);
  if (!text) return fallback;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("--{}: '{}' is not a whole number", name, *text));
  }
  if (value < min || value > max) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("--{}: {} is outside {}..{}", name, value, min, max));
  }
  return value;
}

Result<double> ParsedArgs::get_double(const std::string& name, double fallback, double min,
                                      double max) const {
  auto text = get(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double value = std::strtod(text->c_str(), &end);
  if (text->empty() || end != text->c_str() + text->size()) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("--{}: '{}' is not a number", name, *text));
  }
  if (!(value >= min && value <= max)) {
    return make_error(ErrorCode::InvalidArgument,
                      fmt::format("--{}: {} is outside {}..{}", name, value, min, max));
  }
  return value;
}

Result<ParsedArgs> parse_args(const VerbSpec& spec, const std::vector<std::string>& argv) {
  ParsedArgs out;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    if (word == "--help" || word == "-h") {
      out.help_requested_ = true;
      return out;
    }
    if (word == "--") {
      for (++i; i < argv.size(); ++i) out.positionals_.push_back(argv[i]);
      break;
    }
    const bool is_long = word.rfind("--", 0) == 0;
    const bool is_short = !is_long && word.size() >= 2 && word[0] == '-' &&
                          !(word[1] >= '0' && word[1] <= '9');
    if (!is_long && !is_short) {
      out.positionals_.push_back(word);
      continue;
    }
    std::string name = word.substr(is_long ? 2 : 1);
    std::optional<std::string> inline_value;
    if (auto eq = name.find('='); is_long && eq != std::string::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const FlagSpec* flag = find_flag(spec, name, is_short);
    if (!flag) {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("{}: unknown option '{}' (see --help)", spec.verb, word));
    }
    if (flag->kind == FlagKind::Switch) {
      if (inline_value) {
        return make_error(ErrorCode::InvalidArgument,
                          fmt::format("{}: --{} takes no value", spec.verb, flag->name));
      }
      out.switches_.push_back(flag->name);
      continue;
    }
    if (inline_value) {
      out.values_[flag->name] = *inline_value;
      out.all_values_[flag->name].push_back(*inline_value);
    } else if (i + 1 < argv.size()) {
      out.values_[flag->name] = argv[++i];
      out.all_values_[flag->name].push_back(argv[i]);
    } else {
      return make_error(ErrorCode::InvalidArgument,
                        fmt::format("{}: --{} needs a value", spec.verb, flag->name));
    }
  }
  if (out.positionals_.size() < spec.min_positionals ||
      out.positionals_.size() > spec.max_positionals) {
    const size_t got = out.positionals_.size();
    const auto count = [&](size_t n) {
      static const char* const kWords[] = {"no", "one", "two", "three"};
      const std::string number = n < 4 ? kWords[n] : std::to_string(n);
      return n == 1 ? number + " " + spec.positional_name : number + " " + spec.positional_name + "s";
    };
    std::string wanted = spec.min_positionals == spec.max_positionals
                             ? count(spec.min_positionals)
                             : fmt::format("{} to {}", spec.min_positionals, count(spec.max_positionals));
    return make_error(ErrorCode::InvalidArgument, fmt::format("{} takes {}, got {}\nusage: hearth-cli {} {}", spec.verb,
                                                              wanted, got, spec.verb, spec.usage));
  }
  return out;
}

std::string help_text(const VerbSpec& spec) {
  std::string text = fmt::format("usage: hearth-cli {} {}\n\n{}\n", spec.verb, spec.usage,
                                 spec.description);
  if (!spec.flags.empty()) text += "\noptions:\n";
  for (const auto& flag : spec.flags) {
    std::string left = flag.short_alias.empty() ? "    " : "-" + flag.short_alias + ", ";
    left += "--" + flag.name;
    if (flag.kind == FlagKind::Value) left += " " + flag.value_name;
    text += fmt::format("  {:<28} {}\n", left, flag.help);
  }
  text += fmt::format("  {:<28} {}\n", "-h, --help", "show this help");
  return text;
}

std::optional<ParsedArgs> parse_verb_args(const VerbSpec& spec, const std::vector<std::string>& argv, int& exit_code) {
  auto parsed = parse_args(spec, argv);
  if (!parsed.ok()) {
    // The message already names the verb.
    std::fprintf(stderr, "%s\n", parsed.error().message.c_str());
    exit_code = kExitUsage;
    return std::nullopt;
  }
  if (parsed->help_requested_) {
    std::fputs(help_text(spec).c_str(), stdout);
    exit_code = kExitOk;
    return std::nullopt;
  }
  return std::move(parsed).value();
}

}  // namespace hearth::cli
