#include "mapping_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace hearth::gguf::detail {
namespace {

struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<size_t> length{0};
  std::atomic<bool> faulted{false};
  std::atomic<bool> used{false};
};

// Models loaded at once are few; 64 leaves room for the CLI's tools too.
constexpr int kSlots = 64;
Slot g_slots[kSlots];
struct sigaction g_previous {};
uintptr_t g_page = 4096;
std::once_flag g_installed;

void pass_on(int sig, siginfo_t* info, void* context) {
  if (g_previous.sa_flags & SA_SIGINFO) {
    if (g_previous.sa_sigaction) g_previous.sa_sigaction(sig, info, context);
    return;
  }
  if (g_previous.sa_handler == SIG_IGN) return;
  if (g_previous.sa_handler == SIG_DFL) {
    // The default action (end the process), as if no handler was installed.
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  g_previous.sa_handler(sig);
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Slot& s : g_slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    const size_t length = s.length.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin || addr - begin >= length) continue;
    // mmap is a plain system call on Linux, safe to make here.
    void* page = reinterpret_cast<void*>(addr & ~(g_page - 1));
    void* p = ::mmap(page, g_page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p != MAP_FAILED) {
      s.faulted.store(true, std::memory_order_release);
      return;  // the faulting read is retried and reads zeros
    }
  }
  pass_on(sig, info, context);
}

void install() {
  const long page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) g_page = static_cast<uintptr_t>(page);
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &g_previous);
}

}  // namespace

int register_mapping(const void* begin, size_t length) {
  std::call_once(g_installed, install);
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (!g_slots[i].used.compare_exchange_strong(expected, true)) continue;
    g_slots[i].faulted.store(false, std::memory_order_relaxed);
    g_slots[i].length.store(length, std::memory_order_release);
    g_slots[i].begin.store(reinterpret_cast<uintptr_t>(begin), std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_mapping(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  g_slots[slot].begin.store(0, std::memory_order_release);
  g_slots[slot].length.store(0, std::memory_order_release);
  g_slots[slot].used.store(false, std::memory_order_release);
}

bool mapping_faulted(int slot) {
  return slot >= 0 && slot < kSlots && g_slots[slot].faulted.load(std::memory_order_acquire);
}

}  // namespace hearth::gguf::detail
