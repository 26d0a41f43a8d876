// Crash safety for model loads: a marker file exists exactly while a model is
// being loaded. If the process dies during a load, the marker survives, and the
// next start skips reloading that model instead of crashing again.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace hearth::app {

class LoadMarker {
 public:
  explicit LoadMarker(std::filesystem::path marker_file);

  // The model whose load was interrupted by the previous run, if any.
  std::optional<std::string> interrupted_model() const;

  // Called right before a load starts; writes the model path and syncs it to
  // disk so the marker survives a crash moments later.
  bool begin(const std::string& model_path) const;

  // Called when a load ended (success or a reported failure).
  void end() const;

 private:
  std::filesystem::path file_;
};

}  // namespace hearth::app
