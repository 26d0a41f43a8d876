// A test VFS shim in the style of SQLite's own I/O-error tests: it wraps the
// default VFS and, once armed, fails every write (or fsync) from the Nth one on,
// as a full disk or a failing drive would.
#pragma once

#include <cstdint>

namespace hearth::storage::testing {

enum class Fault {
  None,
  WriteIoError,  // xWrite returns SQLITE_IOERR_WRITE
  SyncIoError,   // xSync returns SQLITE_IOERR_FSYNC
  DiskFull,      // xWrite returns SQLITE_FULL
};

// The registered VFS is named kFaultVfsName; pass it in OpenOptions::vfs.
inline constexpr const char* kFaultVfsName = "hearth-fault";

// Registers the shim (once; not as the default VFS). Not thread-safe: for
// single-threaded tests.
void install_fault_vfs();

// Counts writes and syncs from now on; with a fault, the `at`-th operation of that
// kind (1-based) and every later one fail.
void arm_fault(Fault fault, std::int64_t at);
void disarm_fault();

// Opens every main database file read-only, as on a read-only disk or a file
// without write permission.
void set_read_only_files(bool read_only);

std::int64_t fault_vfs_writes();  // since the last arm
std::int64_t fault_vfs_syncs();
bool fault_fired();

}  // namespace hearth::storage::testing
