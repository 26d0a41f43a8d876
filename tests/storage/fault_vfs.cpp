#include "fault_vfs.h"

#include <sqlite3.h>

#include <cstdlib>
#include <cstring>

namespace hearth::storage::testing {
namespace {

struct State {
  Fault fault = Fault::None;
  std::int64_t at = 0;
  std::int64_t writes = 0;
  std::int64_t syncs = 0;
  bool fired = false;
};
State state;
bool read_only_files = false;

sqlite3_vfs* real_vfs = nullptr;
sqlite3_vfs fault_vfs;

// Our file object: the base (whose pMethods we set) followed by the real file.
struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }

int f_close(sqlite3_file* f) {
  const int rc = real(f)->pMethods->xClose(real(f));
  return rc;
}
int f_read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) { return real(f)->pMethods->xRead(real(f), buf, n, off); }
int f_write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  ++state.writes;
  if ((state.fault == Fault::WriteIoError || state.fault == Fault::DiskFull) && state.writes >= state.at) {
    state.fired = true;
    return state.fault == Fault::DiskFull ? SQLITE_FULL : SQLITE_IOERR_WRITE;
  }
  return real(f)->pMethods->xWrite(real(f), buf, n, off);
}
int f_truncate(sqlite3_file* f, sqlite3_int64 size) { return real(f)->pMethods->xTruncate(real(f), size); }
int f_sync(sqlite3_file* f, int flags) {
  ++state.syncs;
  if (state.fault == Fault::SyncIoError && state.syncs >= state.at) {
    state.fired = true;
    return SQLITE_IOERR_FSYNC;
  }
  return real(f)->pMethods->xSync(real(f), flags);
}
int f_file_size(sqlite3_file* f, sqlite3_int64* size) { return real(f)->pMethods->xFileSize(real(f), size); }
int f_lock(sqlite3_file* f, int level) { return real(f)->pMethods->xLock(real(f), level); }
int f_unlock(sqlite3_file* f, int level) { return real(f)->pMethods->xUnlock(real(f), level); }
int f_check_reserved(sqlite3_file* f, int* out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); }
int f_file_control(sqlite3_file* f, int op, void* arg) { return real(f)->pMethods->xFileControl(real(f), op, arg); }
int f_sector_size(sqlite3_file* f) { return real(f)->pMethods->xSectorSize(real(f)); }
int f_device_characteristics(sqlite3_file* f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
int f_shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return real(f)->pMethods->xShmMap(real(f), page, size, extend, out);
}
int f_shm_lock(sqlite3_file* f, int offset, int n, int flags) { return real(f)->pMethods->xShmLock(real(f), offset, n, flags); }
void f_shm_barrier(sqlite3_file* f) { real(f)->pMethods->xShmBarrier(real(f)); }
int f_shm_unmap(sqlite3_file* f, int del) { return real(f)->pMethods->xShmUnmap(real(f), del); }
int f_fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) { return real(f)->pMethods->xFetch(real(f), off, n, out); }
int f_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) { return real(f)->pMethods->xUnfetch(real(f), off, p); }

// Version 3 methods (WAL needs the shared-memory ones); used only when the real file
// offers them, otherwise a version-1 table.
const sqlite3_io_methods methods_v3 = {3,
                                       f_close,
                                       f_read,
                                       f_write,
                                       f_truncate,
                                       f_sync,
                                       f_file_size,
                                       f_lock,
                                       f_unlock,
                                       f_check_reserved,
                                       f_file_control,
                                       f_sector_size,
                                       f_device_characteristics,
                                       f_shm_map,
                                       f_shm_lock,
                                       f_shm_barrier,
                                       f_shm_unmap,
                                       f_fetch,
                                       f_unfetch};
const sqlite3_io_methods methods_v1 = {1,       f_close,          f_read,          f_write,
                                       f_truncate, f_sync,        f_file_size,     f_lock,
                                       f_unlock,   f_check_reserved, f_file_control, f_sector_size,
                                       f_device_characteristics, nullptr, nullptr, nullptr,
                                       nullptr,    nullptr,       nullptr};

int v_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* ff = reinterpret_cast<FaultFile*>(file);
  ff->base.pMethods = nullptr;
  ff->real = reinterpret_cast<sqlite3_file*>(ff + 1);
  if (read_only_files && (flags & SQLITE_OPEN_MAIN_DB) != 0) {
    flags = (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY;
  }
  const int rc = real_vfs->xOpen(real_vfs, name, ff->real, flags, out_flags);
  if (rc != SQLITE_OK || ff->real->pMethods == nullptr) return rc;
  ff->base.pMethods = ff->real->pMethods->iVersion >= 3 ? &methods_v3 : &methods_v1;
  return rc;
}

int v_delete(sqlite3_vfs*, const char* name, int sync_dir) { return real_vfs->xDelete(real_vfs, name, sync_dir); }
int v_access(sqlite3_vfs*, const char* name, int flags, int* out) { return real_vfs->xAccess(real_vfs, name, flags, out); }
int v_full_pathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return real_vfs->xFullPathname(real_vfs, name, n, out);
}
void* v_dl_open(sqlite3_vfs*, const char* name) { return real_vfs->xDlOpen(real_vfs, name); }
void v_dl_error(sqlite3_vfs*, int n, char* out) { real_vfs->xDlError(real_vfs, n, out); }
void (*v_dl_sym(sqlite3_vfs*, void* handle, const char* symbol))(void) { return real_vfs->xDlSym(real_vfs, handle, symbol); }
void v_dl_close(sqlite3_vfs*, void* handle) { real_vfs->xDlClose(real_vfs, handle); }
int v_randomness(sqlite3_vfs*, int n, char* out) { return real_vfs->xRandomness(real_vfs, n, out); }
int v_sleep(sqlite3_vfs*, int us) { return real_vfs->xSleep(real_vfs, us); }
int v_current_time(sqlite3_vfs*, double* out) { return real_vfs->xCurrentTime(real_vfs, out); }
int v_get_last_error(sqlite3_vfs*, int n, char* out) { return real_vfs->xGetLastError(real_vfs, n, out); }
int v_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) { return real_vfs->xCurrentTimeInt64(real_vfs, out); }

}  // namespace

void install_fault_vfs() {
  if (real_vfs != nullptr) return;
  real_vfs = sqlite3_vfs_find(nullptr);
  if (real_vfs == nullptr) std::abort();
  std::memset(&fault_vfs, 0, sizeof fault_vfs);
  fault_vfs.iVersion = 2;
  fault_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + real_vfs->szOsFile;
  fault_vfs.mxPathname = real_vfs->mxPathname;
  fault_vfs.zName = kFaultVfsName;
  fault_vfs.xOpen = v_open;
  fault_vfs.xDelete = v_delete;
  fault_vfs.xAccess = v_access;
  fault_vfs.xFullPathname = v_full_pathname;
  fault_vfs.xDlOpen = v_dl_open;
  fault_vfs.xDlError = v_dl_error;
  fault_vfs.xDlSym = v_dl_sym;
  fault_vfs.xDlClose = v_dl_close;
  fault_vfs.xRandomness = v_randomness;
  fault_vfs.xSleep = v_sleep;
  fault_vfs.xCurrentTime = v_current_time;
  fault_vfs.xGetLastError = v_get_last_error;
  fault_vfs.xCurrentTimeInt64 = v_current_time_int64;
  if (sqlite3_vfs_register(&fault_vfs, 0) != SQLITE_OK) std::abort();
}

void arm_fault(Fault fault, std::int64_t at) { state = State{fault, at, 0, 0, false}; }
void disarm_fault() { state.fault = Fault::None; }
void set_read_only_files(bool read_only) { read_only_files = read_only; }
std::int64_t fault_vfs_writes() { return state.writes; }
std::int64_t fault_vfs_syncs() { return state.syncs; }
bool fault_fired() { return state.fired; }

}  // namespace hearth::storage::testing
