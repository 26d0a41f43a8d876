// main() for GoogleTest programs that need a Qt event loop but no GUI
// (Qt Network, QtKeychain).
#include <QCoreApplication>

#include <gtest/gtest.h>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
