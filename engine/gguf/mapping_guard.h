// Keeps a model file that is truncated while it is mapped from killing the
// process. Reading a mapped page past the file's new end raises SIGBUS; for a
// registered mapping the handler maps a page of zeros at the faulting address
// (the read then completes, with zeros) and marks the mapping. The pass that
// read the zeros is discarded by its caller: Model::forward checks the mark
// and the file after every pass and returns a clean error, so nothing computed
// from those zeros reaches a user.
//
// A signal handler can only find the mappings through process-wide state: a
// fixed table of slots with atomic fields (no allocation, no locks in the
// handler). It is the one piece of global state in the engine, and it holds
// only address ranges. A SIGBUS outside every registered range goes to the
// handler that was installed before (or the default action).
#pragma once

#include <cstddef>

namespace hearth::gguf::detail {

// Registers [begin, begin + length); returns its slot, or -1 when the table
// is full (the mapping is then unprotected, as before).
int register_mapping(const void* begin, size_t length);
// Before the range is unmapped.
void unregister_mapping(int slot);
// Whether a read of the mapping faulted since it was registered.
bool mapping_faulted(int slot);

}  // namespace hearth::gguf::detail
