// "The smallest level within your quality floor that fits": the rule behind
// the comparison's recommendation, and the floor said in plain words.
#pragma once

#include <hearth/settings/settings.h>

#include <optional>
#include <string>
#include <vector>

#include "compare/compare_job.h"

namespace hearth::compare {

// Whether a level meets the floor: top-1 agreement with the base at least
// top1_percent %, or mean KL divergence at most kld_max.
bool within_floor(const LevelFigures& level, const settings::QualityFloorSettings& floor);

// Whether the picker's fit places the level on this machine at all.
bool fits(const LevelFigures& level);

// Among the levels that meet the floor and fit, the one that needs the least
// memory (ties: the smaller file, then the earlier level). nullopt when none.
std::optional<size_t> recommend_level(const std::vector<LevelFigures>& levels,
                                      const settings::QualityFloorSettings& floor);

// "answers agree with the best level at least 90 % of the time" / "its word
// choices stay within 0.05 nats (mean KL divergence) of the best level".
std::string describe_floor(const settings::QualityFloorSettings& floor);

}  // namespace hearth::compare
