# The shell capability service and the static precheck (spec host.md §6).
# Included from tests/cpp/CMakeLists.txt; paths are relative to this file so
# a scratch top-level can include it as well.
add_executable(o4s_precheck_test ${CMAKE_CURRENT_LIST_DIR}/precheck_test.cpp)
target_link_libraries(o4s_precheck_test PRIVATE o4s_host GTest::gtest_main)
o4s_warnings(o4s_precheck_test)
gtest_discover_tests(o4s_precheck_test
  DISCOVERY_TIMEOUT 30
  PROPERTIES LABELS unit TIMEOUT 30)

add_executable(o4s_bash_capability_test ${CMAKE_CURRENT_LIST_DIR}/bash_capability_test.cpp)
target_link_libraries(o4s_bash_capability_test PRIVATE o4s_host GTest::gtest_main)
o4s_warnings(o4s_bash_capability_test)
gtest_discover_tests(o4s_bash_capability_test
  DISCOVERY_TIMEOUT 30
  PROPERTIES LABELS unit TIMEOUT 30)

# The corpus both prechecks run (the worker's Python suite reads it too).
add_executable(o4s_precheck_corpus_test ${CMAKE_CURRENT_LIST_DIR}/precheck_corpus_test.cpp)
target_link_libraries(o4s_precheck_corpus_test PRIVATE o4s_host GTest::gtest_main)
target_compile_definitions(o4s_precheck_corpus_test PRIVATE
  O4S_PRECHECK_CORPUS="${PROJECT_SOURCE_DIR}/tests/precheck/corpus.jsonl")
o4s_warnings(o4s_precheck_corpus_test)
gtest_discover_tests(o4s_precheck_corpus_test
  DISCOVERY_TIMEOUT 30
  PROPERTIES LABELS unit TIMEOUT 30)
