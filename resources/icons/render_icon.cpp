// Renders the app icon (SVG) to a square PNG of a given size with Qt Svg, so
// the PNG sizes installed under hicolor always match the SVG source.
// Usage: hearth-render-icon IN.svg SIZE OUT.png
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s IN.svg SIZE OUT.png\n", argv[0]);
    return 1;
  }
  const int size = std::atoi(argv[2]);
  if (size <= 0 || size > 4096) {
    std::fprintf(stderr, "%s: size '%s' is not between 1 and 4096\n", argv[0], argv[2]);
    return 1;
  }
  QSvgRenderer svg{QString::fromLocal8Bit(argv[1])};
  if (!svg.isValid()) {
    std::fprintf(stderr, "%s: '%s' is not a readable SVG file\n", argv[0], argv[1]);
    return 2;
  }
  QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  QPainter painter(&image);
  painter.setRenderHint(QPainter::Antialiasing);
  svg.render(&painter);
  painter.end();
  if (!image.save(QString::fromLocal8Bit(argv[3]), "PNG")) {
    std::fprintf(stderr, "%s: cannot write '%s'\n", argv[0], argv[3]);
    return 2;
  }
  return 0;
}
