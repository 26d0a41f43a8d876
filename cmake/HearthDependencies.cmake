# Every dependency comes from a Debian 12 package (see packaging/install-deps.sh);
# nothing is downloaded at configure or build time.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Vulkan REQUIRED)
find_program(HEARTH_GLSLC glslc REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(CPUINFO REQUIRED IMPORTED_TARGET libcpuinfo)

if(HEARTH_BUILD_APP)
  find_package(spdlog REQUIRED)
  # The local API server's HTTP (libcpp-httplib-dev, built as a shared library
  # by Debian; its .pc carries the feature defines the library was built with).
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
  # PDF text for document libraries (libpoppler-qt6-dev).
  pkg_check_modules(POPPLER_QT6 REQUIRED IMPORTED_TARGET poppler-qt6)
  # DOCX archives for document libraries (libzip-dev).
  pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
  find_package(Qt6 6.4 REQUIRED COMPONENTS Core Gui Widgets Charts Quick QuickControls2 Network Svg Test QuickTest)
  qt_standard_project_setup()
  # No Qt Designer forms: uic would take "ui_module.h" includes for them once
  # Qt Widgets is linked (Compare levels' chart needs it).
  set(CMAKE_AUTOUIC OFF)
endif()

if(HEARTH_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(HEARTH_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
