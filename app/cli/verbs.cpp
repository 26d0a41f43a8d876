#include "verbs.h"

namespace hearth::cli {

// One line per verb, in the order `hearth-cli --help` lists them.
const std::vector<VerbEntry>& all_verbs() {
  static const std::vector<VerbEntry> verbs = {
      {"catalog", "list downloadable models and whether they fit this machine", run_catalog},
      {"pull", "download a model (NAME:QUANT or URL), resumable, verified", run_pull},
  };
  return verbs;
}

}  // namespace hearth::cli
