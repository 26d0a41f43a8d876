// CPU feature detection and assembly of the kernel table.
#include "hearth/engine/quant/kernels.h"

#if defined(HEARTH_QUANT_X86)
#include <cpuid.h>
#include <cpuinfo.h>
#endif
#if defined(HEARTH_QUANT_AARCH64)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "hearth/engine/quant/reference.h"
#include "kernels_internal.h"

namespace hearth::quant {
namespace {

#if defined(HEARTH_QUANT_X86)
// This cpuinfo release predates AVX-VNNI; read CPUID leaf 7, sub-leaf 1,
// EAX bit 4 directly. The OS-enabled YMM state is implied by AVX2 below.
bool cpu_has_avx_vnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 1, eax, ebx, ecx, edx);
  return (eax >> 4) & 1u;
}
#endif

}  // namespace

std::string_view to_string(KernelLevel level) {
  switch (level) {
    case KernelLevel::Scalar: return "scalar";
    case KernelLevel::Neon: return "neon";
    case KernelLevel::NeonDotprod: return "neon-dotprod";
    case KernelLevel::NeonI8mm: return "neon-i8mm";
    case KernelLevel::Avx2: return "avx2";
    case KernelLevel::AvxVnni: return "avx-vnni";
    case KernelLevel::Avx512: return "avx512";
  }
  return "unknown";
}

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
#if defined(HEARTH_QUANT_X86)
  if (!cpuinfo_initialize()) return f;
  f.avx2 = cpuinfo_has_x86_avx2();
  f.fma = cpuinfo_has_x86_fma3();
  f.f16c = cpuinfo_has_x86_f16c();
  f.avx_vnni = f.avx2 && cpu_has_avx_vnni();
  f.avx512f = cpuinfo_has_x86_avx512f();
  f.avx512bw = cpuinfo_has_x86_avx512bw();
  f.avx512vl = cpuinfo_has_x86_avx512vl();
  f.avx512dq = cpuinfo_has_x86_avx512dq();
  f.avx512_vnni = cpuinfo_has_x86_avx512vnni();
  f.avx512_bf16 = cpuinfo_has_x86_avx512bf16();
#endif
#if defined(HEARTH_QUANT_AARCH64)
  // Linux reports the optional extensions in the auxiliary vector; reading it
  // needs no privilege and never traps (unlike reading ID registers on old kernels).
  const unsigned long hwcap = getauxval(AT_HWCAP);
  const unsigned long hwcap2 = getauxval(AT_HWCAP2);
  f.neon = (hwcap & HWCAP_ASIMD) != 0;
  f.dotprod = f.neon && (hwcap & HWCAP_ASIMDDP) != 0;
#if defined(HWCAP2_I8MM)
  f.i8mm = f.neon && (hwcap2 & HWCAP2_I8MM) != 0;
#else
  (void)hwcap2;
#endif
#endif
  return f;
}

namespace {

bool level_supported(const CpuFeatures& f, KernelLevel level) {
  const bool avx2 = f.avx2 && f.fma && f.f16c;
  switch (level) {
    case KernelLevel::Scalar: return true;
    case KernelLevel::Neon: return f.neon;
    case KernelLevel::NeonDotprod: return f.neon && f.dotprod;
    case KernelLevel::NeonI8mm: return f.neon && f.dotprod && f.i8mm;
    case KernelLevel::Avx2: return avx2;
    case KernelLevel::AvxVnni: return avx2 && f.avx_vnni;
    case KernelLevel::Avx512:
      return avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq && f.avx512_vnni;
  }
  return false;
}

}  // namespace

std::vector<KernelLevel> supported_levels(const CpuFeatures& features) {
  std::vector<KernelLevel> out;
  for (auto level : {KernelLevel::Scalar, KernelLevel::Neon, KernelLevel::NeonDotprod, KernelLevel::NeonI8mm,
                     KernelLevel::Avx2, KernelLevel::AvxVnni, KernelLevel::Avx512}) {
    if (level_supported(features, level)) out.push_back(level);
  }
  return out;
}

KernelLevel best_level(const CpuFeatures& features) { return supported_levels(features).back(); }

KernelTable select_kernels(const CpuFeatures& features, KernelLevel max_level) {
  KernelTable table;
  detail::fill_scalar(table);
  table.level = KernelLevel::Scalar;
  const auto use = [&](KernelLevel level) {
    return level <= max_level && level_supported(features, level);
  };
#if defined(HEARTH_QUANT_AARCH64)
  if (use(KernelLevel::Neon)) {
    detail::fill_neon(table);
    detail::fill_act_quantizers_neon(table);
    table.level = KernelLevel::Neon;
  }
  if (use(KernelLevel::NeonDotprod)) {
    detail::fill_neon_dotprod(table);
    table.level = KernelLevel::NeonDotprod;
  }
  if (use(KernelLevel::NeonI8mm)) {
    detail::fill_neon_i8mm(table);
    table.level = KernelLevel::NeonI8mm;
  }
#endif
#if defined(HEARTH_QUANT_X86)
  if (use(KernelLevel::Avx2)) {
    detail::fill_avx2(table);
    detail::fill_quantizers_avx2(table);
    detail::fill_act_quantizers_avx2(table);
    table.level = KernelLevel::Avx2;
  }
  // The AVX-VNNI build uses the VEX encoding; a CPU with only AVX512-VNNI
  // gets the same kernels from the AVX-512 build instead.
  if (use(KernelLevel::AvxVnni)) {
    detail::fill_avxvnni(table);
    table.level = KernelLevel::AvxVnni;
  }
  if (use(KernelLevel::Avx512)) {
    detail::fill_avx512(table);
    detail::fill_act_quantizers_avx512(table);
    table.level = KernelLevel::Avx512;
  }
#endif
#if !defined(HEARTH_QUANT_X86) && !defined(HEARTH_QUANT_AARCH64)
  (void)use;
#endif
  return table;
}

void KernelTable::quantize_activation(DType act, const float* x, void* dst, int64_t n) const {
  switch (act) {
    case DType::Q8_0: quantize_q8_0(x, dst, n); break;
    case DType::Q8_K: quantize_q8_k(x, dst, n); break;
    default: (void)quantize_row(DType::F32, x, dst, n); break;
  }
}

}  // namespace hearth::quant
