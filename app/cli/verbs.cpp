#include "verbs.h"

namespace hearth::cli {

// One line per verb, in the order `hearth-cli --help` lists them.
const std::vector<VerbEntry>& all_verbs() {
  static const std::vector<VerbEntry> verbs = {
      {"template", "render a conversation with a chat template", run_template},
  };
  return verbs;
}

}  // namespace hearth::cli
