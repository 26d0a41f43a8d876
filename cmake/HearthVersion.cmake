# Version string and git revision, baked into a generated header so
# `hearth --version` and `hearth-cli --version` can print both.
find_package(Git QUIET)
set(HEARTH_GIT_REVISION "unknown")
if(GIT_FOUND AND EXISTS "${CMAKE_SOURCE_DIR}/.git")
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=12
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE HEARTH_GIT_REVISION
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT HEARTH_GIT_REVISION)
    set(HEARTH_GIT_REVISION "unknown")
  endif()
endif()
