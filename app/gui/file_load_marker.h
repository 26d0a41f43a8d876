// The model controller's crash marker (ui/controllers/load_marker.h) over the
// app's synced marker file (common/load_marker.h).
#pragma once

#include <filesystem>
#include <utility>

#include "common/load_marker.h"
#include "controllers/load_marker.h"

namespace hearth::app {

class FileLoadMarker final : public ui::LoadMarker {
 public:
  explicit FileLoadMarker(std::filesystem::path file) : marker_(std::move(file)) {}

  std::optional<std::string> interrupted_model() const override { return marker_.interrupted_model(); }
  bool begin(const std::string& model_path) const override { return marker_.begin(model_path); }
  void end() const override { marker_.end(); }

 private:
  app::LoadMarker marker_;
};

}  // namespace hearth::app
