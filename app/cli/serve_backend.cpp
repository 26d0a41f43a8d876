#include "serve_backend.h"

#include <hearth/server/engine_backend.h>
#include <hearth/server/scheduler_backend.h>

#include <cstdio>

namespace hearth::cli {

Result<std::unique_ptr<server::CompletionBackend>> make_backend(EngineSetup& setup, const runtime::ChatFormat& format,
                                                                const ServeShape& shape, const std::string& model_id,
                                                                int64_t created, server::SpeculatorFactory speculators) {
  if (shape.parallel > 1 || speculators) {
    if (setup.backend->supports_sequence_batches()) {
      server::SchedulerBackendConfig sc;
      sc.scheduler.n_ctx = shape.n_ctx;
      sc.scheduler.parallel = static_cast<int32_t>(shape.parallel);
      sc.scheduler.max_batch_tokens = static_cast<int32_t>(shape.batch_tokens);
      sc.scheduler.kv_type = setup.kv_type;
      sc.max_queued = shape.max_queued;
      sc.model_id = model_id;
      sc.created = created;
      const bool drafting = static_cast<bool>(speculators);
      sc.speculators = std::move(speculators);
      HEARTH_TRY(auto batched, server::SchedulerBackend::create(*setup.model, *setup.backend, format, sc));
      std::fprintf(stderr, "serve: up to %lld requests decoded together (%lld tokens per pass), %zu more may wait\n",
                   static_cast<long long>(shape.parallel), static_cast<long long>(shape.batch_tokens),
                   shape.max_queued);
      if (drafting) {
        std::fprintf(stderr, "serve: speculative decoding per request, in the rows a decode step leaves free "
                             "(requests with response_format or logprobs decode plainly)\n");
      }
      return std::unique_ptr<server::CompletionBackend>(std::move(batched));
    }
    std::fprintf(stderr, "serve: the %s backend cannot decode several requests in one pass; requests are served "
                         "one at a time (--parallel %lld is ignored)\n",
                 setup.backend->name(), static_cast<long long>(shape.parallel));
    if (speculators) {
      std::fprintf(stderr, "serve: speculative decoding runs in the batched server, which the %s backend cannot "
                           "run; requests are decoded without drafts\n", setup.backend->name());
    }
  }
  server::EngineBackendConfig bc;
  bc.n_ctx = shape.n_ctx;
  bc.kv_type = setup.kv_type;
  bc.max_queued = shape.max_queued;
  bc.model_id = model_id;
  bc.created = created;
  HEARTH_TRY(auto single, server::EngineBackend::create(*setup.model, *setup.backend, format, bc));
  return std::unique_ptr<server::CompletionBackend>(std::move(single));
}


}  // namespace hearth::cli
