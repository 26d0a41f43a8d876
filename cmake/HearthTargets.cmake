# Shared target settings: warnings, sanitizers and the helpers every module uses.

add_library(hearth_warnings INTERFACE)
target_compile_options(hearth_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough)
if(HEARTH_WERROR)
  target_compile_options(hearth_warnings INTERFACE -Werror)
endif()

if(HEARTH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# hearth_add_library(NAME SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# A static library of one module, with the project's warnings.
function(hearth_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE hearth_warnings ${ARG_PRIVATE_DEPS})
endfunction()
