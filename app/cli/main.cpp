// hearth-cli: the Hearth engine from a terminal. Dispatches to one verb.
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "verbs.h"

namespace {

void print_usage() {
  std::string text = "usage: hearth-cli VERB [options]   (hearth-cli VERB --help for details)\n\nverbs:\n";
  for (const auto& verb : hearth::cli::all_verbs()) {
    text += fmt::format("  {:<14} {}\n", verb.name, verb.summary);
  }
  text += "\n  --version      print the version and git revision\n";
  std::fputs(text.c_str(), stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_usage();
    return hearth::cli::kExitUsage;
  }
  const std::string verb = argv[1];
  if (verb == "--version" || verb == "version") {
    std::printf("hearth-cli %s (%s)\n", hearth::kVersion, hearth::kGitRevision);
    return hearth::cli::kExitOk;
  }
  if (verb == "--help" || verb == "-h" || verb == "help") {
    print_usage();
    return hearth::cli::kExitOk;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto& entry : hearth::cli::all_verbs()) {
    if (verb == entry.name) return entry.run(args);
  }
  std::fprintf(stderr, "hearth-cli: unknown verb '%s' (see hearth-cli --help)\n", verb.c_str());
  return hearth::cli::kExitUsage;
}
