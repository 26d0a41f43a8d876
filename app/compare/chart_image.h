// The comparison's chart as a PNG file: memory (x) against quality drift
// (y: mean KL divergence from the best level) per level, each point's label
// giving its decode speed. Drawn with Qt Charts (QChart into a QImage, no
// window), the module the picker's ChartView is made of: Debian 12 ships Qt
// 6.4, which has no Qt Graphs. Needs a QApplication (Qt Charts is built on
// Graphics View).
#pragma once

#include <QString>

#include "compare/compare_job.h"

namespace hearth::compare {

// Writes the chart of `result` to `path` (PNG, width x height pixels);
// false with `error` set when the file cannot be written.
bool write_chart_png(const JobResult& result, const QString& title, const QString& path, QString& error,
                     int width = 900, int height = 560);

}  // namespace hearth::compare
