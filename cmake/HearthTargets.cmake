# Shared target settings: warnings, sanitizers and the helpers every module uses.

add_library(hearth_warnings INTERFACE)
target_compile_options(hearth_warnings INTERFACE
  -Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local> -Wnon-virtual-dtor -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough)
if(HEARTH_WERROR)
  target_compile_options(hearth_warnings INTERFACE -Werror)
endif()

if(HEARTH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# hearth_add_library(NAME [QT] SOURCES ... [DEPS ...] [PRIVATE_DEPS ...])
# A static library of one module, with the project's warnings. Qt's moc runs
# only for libraries marked QT (engine and storage never use Qt).
function(hearth_add_library name)
  cmake_parse_arguments(ARG "QT" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  if(NOT ARG_QT)
    set_target_properties(${name} PROPERTIES AUTOMOC OFF AUTOUIC OFF AUTORCC OFF)
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE hearth_warnings ${ARG_PRIVATE_DEPS})
endfunction()
