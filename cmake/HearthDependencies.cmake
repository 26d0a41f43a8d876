# Every dependency comes from a Debian 12 package (see packaging/install-deps.sh);
# nothing is downloaded at configure or build time.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

if(HEARTH_ENGINE_ONLY AND CMAKE_CROSSCOMPILING)
  # A cross build has no target-architecture copies of Debian's libraries:
  # fmt and xxHash are used header-only from the build machine's headers
  # (architecture-independent text), GoogleTest is built from its sources.
  include(HearthCrossDependencies)
  return()
endif()

find_package(fmt REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# Only the x86 kernel selection reads CPU features through cpuinfo (aarch64
# asks the kernel's auxiliary vector).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  pkg_check_modules(CPUINFO REQUIRED IMPORTED_TARGET libcpuinfo)
endif()

if(HEARTH_ENGINE_ONLY)
  if(HEARTH_BUILD_TESTS)
    find_package(GTest REQUIRED)
  endif()
  return()
endif()

find_package(nlohmann_json 3.10 REQUIRED)
find_package(Vulkan REQUIRED)
find_program(HEARTH_GLSLC glslc REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)

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
