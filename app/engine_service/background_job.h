// Long work the engine thread runs between chat replies (the picker's level
// comparison): one bounded step per queued call, so a reply the GUI sends
// while a step runs starts as soon as that step ends.
#pragma once

#include <hearth/core/result.h>

#include <string>

namespace hearth::app {

class BackgroundJob {
 public:
  virtual ~BackgroundJob() = default;
  // Runs the next step; false once the job is complete. An error ends it.
  virtual Result<bool> step() = 0;
  // 0..1, and what the step now due does ("scoring Q4_K_M").
  virtual double progress() const = 0;
  virtual std::string activity() const = 0;
};

}  // namespace hearth::app
