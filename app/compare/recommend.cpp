#include "compare/recommend.h"

#include <fmt/format.h>

namespace hearth::compare {

bool within_floor(const LevelFigures& level, const settings::QualityFloorSettings& floor) {
  if (floor.kind == settings::QualityFloorKind::Kld) return level.kld_mean <= floor.kld_max;
  return 100.0 * level.top1 >= floor.top1_percent;
}

bool fits(const LevelFigures& level) { return level.fit != models::FitKind::NoFit; }

std::optional<size_t> recommend_level(const std::vector<LevelFigures>& levels,
                                      const settings::QualityFloorSettings& floor) {
  std::optional<size_t> best;
  for (size_t i = 0; i < levels.size(); ++i) {
    const auto& l = levels[i];
    if (!within_floor(l, floor) || !fits(l)) continue;
    if (!best) {
      best = i;
      continue;
    }
    const auto& b = levels[*best];
    if (l.memory_bytes < b.memory_bytes || (l.memory_bytes == b.memory_bytes && l.file_bytes < b.file_bytes)) best = i;
  }
  return best;
}

std::string describe_floor(const settings::QualityFloorSettings& floor) {
  if (floor.kind == settings::QualityFloorKind::Kld) {
    return fmt::format("its next-word choices stay close to the best level's: mean KL divergence at most {:g} nats",
                       floor.kld_max);
  }
  return fmt::format("its next word agrees with the best level's at least {:g} % of the time", floor.top1_percent);
}

}  // namespace hearth::compare
