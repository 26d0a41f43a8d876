# Dependencies of a cross build of the engine's CPU parts (HEARTH_ENGINE_ONLY
# with a toolchain file, e.g. packaging/cmake/aarch64-linux-gnu.cmake).
# The cross compiler does not search the build machine's /usr/include (it
# holds that machine's C library headers), so the header-only libraries are
# reached through a folder in the build tree that links to just their headers.
set(HEARTH_CROSS_INCLUDE_DIR ${CMAKE_BINARY_DIR}/cross-include)
file(MAKE_DIRECTORY ${HEARTH_CROSS_INCLUDE_DIR})
foreach(item fmt xxhash.h)
  if(NOT EXISTS /usr/include/${item})
    message(FATAL_ERROR "cross build: /usr/include/${item} is missing (packaging/install-deps.sh installs it)")
  endif()
  file(CREATE_LINK /usr/include/${item} ${HEARTH_CROSS_INCLUDE_DIR}/${item} SYMBOLIC)
endforeach()

# fmt, header-only (imported, so its headers are system headers: no warnings).
add_library(fmt::fmt INTERFACE IMPORTED)
set_target_properties(fmt::fmt PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${HEARTH_CROSS_INCLUDE_DIR}
  INTERFACE_COMPILE_DEFINITIONS FMT_HEADER_ONLY=1)

# xxHash, every function inlined into its caller.
add_library(PkgConfig::XXHASH INTERFACE IMPORTED)
set_target_properties(PkgConfig::XXHASH PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES ${HEARTH_CROSS_INCLUDE_DIR}
  INTERFACE_COMPILE_DEFINITIONS XXH_INLINE_ALL=1)

if(HEARTH_BUILD_TESTS)
  # GoogleTest from the sources Debian's libgtest-dev ships; it defines
  # GTest::gtest, GTest::gtest_main and GTest::gmock as the installed package does.
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  add_subdirectory(/usr/src/googletest ${CMAKE_BINARY_DIR}/googletest EXCLUDE_FROM_ALL SYSTEM)
endif()
