// Pearson's chi-square goodness-of-fit test for the sampling tests: counts
// against expected probabilities, categories merged until each expects at
// least five draws (the usual validity rule).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace hearth::sampling::testing {

struct ChiSquare {
  double statistic = 0;
  int degrees = 0;
  double critical = 0;  // at significance 0.001
  bool fits() const { return statistic <= critical; }
};

// Wilson-Hilferty approximation of the chi-square quantile; z = 3.090 is the
// standard normal's 0.999 quantile.
inline double chi_square_critical_0001(int df) {
  const double d = df;
  const double a = 2.0 / (9.0 * d);
  const double t = 1.0 - a + 3.090 * std::sqrt(a);
  return d * t * t * t;
}

inline ChiSquare chi_square(const std::vector<int64_t>& counts, const std::vector<double>& probs) {
  double total = 0;
  for (int64_t c : counts) total += static_cast<double>(c);
  ChiSquare r;
  double obs = 0, expv = 0;
  int cells = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    obs += static_cast<double>(counts[i]);
    expv += probs[i] * total;
    if (expv >= 5.0 || i + 1 == counts.size()) {
      if (expv > 0) r.statistic += (obs - expv) * (obs - expv) / expv;
      ++cells;
      obs = expv = 0;
    }
  }
  r.degrees = cells > 1 ? cells - 1 : 1;
  r.critical = chi_square_critical_0001(r.degrees);
  return r;
}

}  // namespace hearth::sampling::testing
