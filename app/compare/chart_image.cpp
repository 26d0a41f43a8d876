#include "compare/chart_image.h"

#include <QDir>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QtCharts/QChart>
#include <QtCharts/QScatterSeries>
#include <QtCharts/QValueAxis>

#include <algorithm>

namespace hearth::compare {

bool write_chart_png(const JobResult& result, const QString& title, const QString& path, QString& error, int width,
                     int height) {
  if (result.levels.empty()) {
    error = QStringLiteral("no levels to draw");
    return false;
  }
  // Owned by the scene, which deletes it.
  auto* chart = new QChart();
  chart->setTitle(title);
  chart->setAnimationOptions(QChart::NoAnimation);
  chart->setBackgroundBrush(Qt::white);
  auto* x = new QValueAxis();
  x->setTitleText(QStringLiteral("memory (MiB)"));
  auto* y = new QValueAxis();
  y->setTitleText(QStringLiteral("drift from the best level (mean KL divergence)"));
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  double max_mib = 1, max_kld = 1e-4;
  for (const auto& l : result.levels) {
    const double mib = static_cast<double>(l.memory_bytes) / (1024.0 * 1024.0);
    max_mib = std::max(max_mib, mib);
    max_kld = std::max(max_kld, l.kld_mean);
    // One series per level: its name is the legend entry, speed included.
    auto* s = new QScatterSeries();
    s->setName(QStringLiteral("%1: %2 tok/s").arg(QString::fromStdString(l.label)).arg(l.tg_tps, 0, 'f', 1));
    s->setMarkerSize(14);
    s->append(mib, l.kld_mean);
    s->setPointLabelsVisible(true);
    s->setPointLabelsFormat(QString::fromStdString(l.label));
    chart->addSeries(s);
    s->attachAxis(x);
    s->attachAxis(y);
  }
  x->setRange(0, max_mib * 1.15);
  y->setRange(0, max_kld * 1.2);

  QGraphicsScene scene;
  scene.addItem(chart);
  chart->resize(width, height);
  scene.setSceneRect(0, 0, width, height);
  QImage image(width, height, QImage::Format_ARGB32);
  image.fill(Qt::white);
  {
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    scene.render(&painter, QRectF(0, 0, width, height), QRectF(0, 0, width, height));
  }
  QDir().mkpath(QFileInfo(path).absolutePath());
  if (!image.save(path, "PNG")) {
    error = QStringLiteral("%1: cannot write the chart").arg(path);
    return false;
  }
  return true;
}

}  // namespace hearth::compare
