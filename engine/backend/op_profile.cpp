#include "hearth/engine/backend/op_profile.h"

#include <algorithm>

namespace hearth::backend {
namespace {

void sort_by_time(std::vector<OpProfile>& v) {
  std::sort(v.begin(), v.end(), [](const OpProfile& a, const OpProfile& b) {
    return a.ms != b.ms ? a.ms > b.ms : a.op < b.op;
  });
}

OpProfile& entry(std::vector<OpProfile>& v, const std::string& op) {
  auto it = std::find_if(v.begin(), v.end(), [&](const OpProfile& p) { return p.op == op; });
  if (it != v.end()) return *it;
  v.push_back(OpProfile{op, 0, 0.0});
  return v.back();
}

}  // namespace

std::vector<OpProfile> summarize_timings(std::span<const std::pair<std::string, double>> timings) {
  std::vector<OpProfile> out;
  for (const auto& [label, ms] : timings) {
    OpProfile& e = entry(out, label);
    e.count += 1;
    e.ms += ms;
  }
  sort_by_time(out);
  return out;
}

void accumulate(std::vector<OpProfile>& into, const std::vector<OpProfile>& more) {
  for (const auto& m : more) {
    OpProfile& e = entry(into, m.op);
    e.count += m.count;
    e.ms += m.ms;
  }
  sort_by_time(into);
}

}  // namespace hearth::backend
