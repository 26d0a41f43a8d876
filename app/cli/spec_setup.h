// The speculative-decoding flags shared by generate, chat and bench:
// --spec off|ngram|draft, --draft-model D.gguf, --draft-max K,
// --draft-backend cpu|vulkan, --draft-fixed.
#pragma once

#include <hearth/core/result.h>
#include <hearth/engine/backend/backend.h>
#include <hearth/engine/model/model.h>
#include <hearth/engine/runtime/speculation.h>
#include <hearth/server/scheduler_backend.h>

#include <memory>
#include <string>
#include <vector>

#include "args.h"

namespace hearth::cli {

std::vector<FlagSpec> speculation_flags();

// What --spec set up: the speculator and, for draft-model drafting, the
// draft model and the backend it runs on (owned here, outliving the
// speculator's drafter).
struct SpecSetup {
  runtime::SpecMode mode = runtime::SpecMode::Off;
  runtime::SpeculationConfig config;
  std::string draft_path;
  std::unique_ptr<backend::Backend> draft_backend;
  std::unique_ptr<model::Model> draft_model;
  std::unique_ptr<runtime::Speculator> speculator;  // nullptr when off

  ~SpecSetup() {
    speculator.reset();  // its drafter holds a session on the draft model
    draft_model.reset();
  }
};

// Reads the flags: --spec defaults to off, or to draft when --draft-model is
// given. A draft model with another vocabulary is refused with the reason.
// Errors are one line for stderr (InvalidArgument: a usage error).
Result<std::unique_ptr<SpecSetup>> setup_speculation(const ParsedArgs& args, const model::Model& target, int64_t n_ctx,
                                                     int threads);

// The server's speculators (serve, bench-serve), one per request: an n-gram
// drafter each, or a draft-model drafter with its own session (a KV cache of
// n_ctx on the draft's backend) each. Empty when --spec is off. `setup` and
// `target` outlive the factory.
server::SpeculatorFactory speculator_factory(const SpecSetup& setup, const model::Model& target, int64_t n_ctx);

}  // namespace hearth::cli
