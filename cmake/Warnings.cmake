# Warnings are set per target so third-party headers stay quiet.
function(o4s_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
    -Wconversion -Wsign-conversion -Wdouble-promotion -Wformat=2
    -Wimplicit-fallthrough)
  # CI builds with O4S_WERROR=ON (scripts/setup.sh and test.sh turn it on
  # when CI=true): a warning one branch adds fails there, not in a user's
  # first build.
  if(O4S_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
    if(O4S_SANITIZE OR O4S_SANITIZE_THREAD)
      # GCC 12's -Wmaybe-uninitialized misfires on the sanitizers'
      # instrumentation (inside libstdc++'s <regex>): shown, not fatal.
      target_compile_options(${target} PRIVATE -Wno-error=maybe-uninitialized)
    endif()
  endif()
endfunction()
