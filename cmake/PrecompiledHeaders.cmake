# Precompiled headers for the third-party headers that nearly every
# translation unit parses. On the 2-core CI machine parsing nlohmann/json
# costs about 4 s per file and GoogleTest about 3 s; with ~130 files that was
# a third of a clean build.
#
# Building a PCH costs about as much as compiling eight ordinary files, so
# one is built per family of targets whose flags agree (GCC refuses a PCH
# made with other -fPIC/-fPIE settings) and the rest reuse it: one for the
# static libraries (-fPIC), one for the test executables (-fPIE).
option(O4S_PRECOMPILED_HEADERS "Precompile the heavy third-party headers" ON)

set(O4S_COMMON_PCH
  <algorithm> <chrono> <functional> <map> <memory> <mutex> <optional>
  <string> <string_view> <vector> <nlohmann/json.hpp>)

# o4s_precompiled_headers(<target> FAMILY <name> [EXTRA <headers...>])
# The first target of a family builds the PCH (with EXTRA); later ones reuse
# it, so every target of a family must name the same EXTRA headers.
function(o4s_precompiled_headers target)
  cmake_parse_arguments(ARG "" "FAMILY" "EXTRA" ${ARGN})
  if(NOT O4S_PRECOMPILED_HEADERS)
    return()
  endif()
  get_property(owner GLOBAL PROPERTY O4S_PCH_OWNER_${ARG_FAMILY})
  if(owner)
    target_precompile_headers(${target} REUSE_FROM ${owner})
  else()
    target_precompile_headers(${target} PRIVATE ${O4S_COMMON_PCH} ${ARG_EXTRA})
    set_property(GLOBAL PROPERTY O4S_PCH_OWNER_${ARG_FAMILY} ${target})
  endif()
endfunction()
