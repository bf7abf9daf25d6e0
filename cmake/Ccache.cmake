# ccache for every compile when it is installed (a fresh CI machine has a
# cold cache, so it only speeds up rebuilds and reruns).
#
# Without telling ccache that a precompiled header's macros and timestamps
# may be ignored, it refuses every file compiled with one ("could not use
# precompiled header"): measured here, 72% of all compiles, i.e. nearly
# every file of a target with a PCH. The .gch itself is still hashed, so a
# changed PCH still misses the cache.
option(O4S_CCACHE "Compile through ccache when it is installed" ON)

if(NOT CMAKE_CXX_COMPILER_LAUNCHER AND O4S_CCACHE)
  find_program(O4S_CCACHE_PROGRAM ccache)
  if(O4S_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER ${O4S_CCACHE_PROGRAM})
  endif()
endif()

# A launcher given by the user (-D or the CMAKE_CXX_COMPILER_LAUNCHER
# environment variable) gets the same settings when it is ccache.
if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
