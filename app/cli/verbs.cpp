#include "verbs.h"

namespace hearth::cli {

// One line per verb, in the order `hearth-cli --help` lists them.
const std::vector<VerbEntry>& all_verbs() {
  static const std::vector<VerbEntry> verbs = {
  };
  return verbs;
}

}  // namespace hearth::cli
