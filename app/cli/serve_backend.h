// The CompletionBackend `serve` and `bench-serve` put behind the HTTP server.
#pragma once

#include <hearth/server/backend.h>
#include <hearth/server/scheduler_backend.h>

#include <memory>
#include <string>

#include "engine_setup.h"

namespace hearth::cli {

struct ServeShape {
  int64_t n_ctx = 4096;      // per request
  int64_t parallel = 1;      // requests decoded together
  int64_t batch_tokens = 256;
  size_t max_queued = 16;
};

// --parallel above 1 batches requests with the engine's scheduler (one
// forward pass serves every running request); 1 serves them in turn with one
// session, which keeps the previous request's KV for the next one's prefix.
// A backend that cannot batch sequences serves in turn, and says so.
// Speculation (`speculators` not empty) runs in the scheduler, so it takes
// the batched backend even for one request at a time; where that cannot
// run, requests are decoded without drafts, and that is said.
Result<std::unique_ptr<server::CompletionBackend>> make_backend(EngineSetup& setup, const runtime::ChatFormat& format,
                                                                const ServeShape& shape, const std::string& model_id,
                                                                int64_t created,
                                                                server::SpeculatorFactory speculators = {});

}  // namespace hearth::cli
