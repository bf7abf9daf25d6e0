# The sandbox module's GoogleTest suites (src/sandbox). Included from
# tests/cpp/CMakeLists.txt after o4s_test() and o4s_test_support exist:
#   include(${CMAKE_CURRENT_SOURCE_DIR}/unit/sandbox/sandbox.cmake)
# The integration suite runs real bubblewrap and skips, with bubblewrap's own
# diagnosis as the reason, where it cannot run.
set(_o4s_sandbox_tests ${CMAKE_CURRENT_LIST_DIR}/../..)

o4s_test(o4s_sandbox_test LABEL unit SOURCES
  ${_o4s_sandbox_tests}/unit/sandbox/bwrap_command_test.cpp
  ${_o4s_sandbox_tests}/unit/sandbox/diagnosis_test.cpp
  ${_o4s_sandbox_tests}/unit/sandbox/envelope_test.cpp
  ${_o4s_sandbox_tests}/unit/sandbox/layout_test.cpp
  ${_o4s_sandbox_tests}/unit/sandbox/settings_test.cpp)
target_link_libraries(o4s_sandbox_test PRIVATE o4s_sandbox)

o4s_test(o4s_sandbox_integration_test LABEL integration SOURCES
  ${_o4s_sandbox_tests}/integration/sandbox/bubblewrap_launch_test.cpp
  ${_o4s_sandbox_tests}/integration/sandbox/descriptor_leak_test.cpp
  ${_o4s_sandbox_tests}/integration/sandbox/sandboxed_kernel_test.cpp
  ${_o4s_sandbox_tests}/integration/sandbox/seccomp_filter_test.cpp)
target_link_libraries(o4s_sandbox_integration_test PRIVATE o4s_sandbox)
