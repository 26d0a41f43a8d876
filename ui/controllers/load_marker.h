// Crash safety for model loads as the model controller needs it: a marker that
// exists exactly while a model loads, so the next start can skip a model whose
// load ended the previous run. ui/ declares it; the app implements it over a
// synced file (app/gui/file_load_marker.h) and passes it in.
#pragma once

#include <optional>
#include <string>

namespace hearth::ui {

class LoadMarker {
 public:
  virtual ~LoadMarker() = default;

  // The model whose load the previous run did not finish, if any.
  virtual std::optional<std::string> interrupted_model() const = 0;
  // Before a load starts; durable when it returns. Called on a worker thread.
  virtual bool begin(const std::string& model_path) const = 0;
  // When a load ended (success or a reported failure). Called on a worker thread.
  virtual void end() const = 0;
};

}  // namespace hearth::ui
