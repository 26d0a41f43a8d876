#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "arch.h"
#include "hearth/engine/model/model.h"

namespace hearth::model {
namespace {

std::array<const ArchDef*, 11> all_archs() {
  return {&arch_llama(),   &arch_qwen2(),     &arch_qwen3(),    &arch_phi3(),  &arch_gemma2(),     &arch_gemma3(),
          &arch_smollm3(), &arch_qwen3moe(),  &arch_gpt_oss(),  &arch_bert(),  &arch_nomic_bert()};
}

}  // namespace

const ArchDef* find_arch(std::string_view name) {
  for (const ArchDef* a : all_archs()) {
    if (a->name == name) return a;
  }
  return nullptr;
}

std::vector<std::string> supported_architectures() {
  std::vector<std::string> names;
  for (const ArchDef* a : all_archs()) names.emplace_back(a->name);
  return names;
}

std::string supported_list() { return fmt::format("{}", fmt::join(supported_architectures(), ", ")); }

}  // namespace hearth::model
