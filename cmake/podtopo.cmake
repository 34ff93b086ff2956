# podtopo_test(NAME SOURCES a_test.cc b_test.cc [LIBS extra...])
# Builds one GoogleTest executable from tests that sit beside the code they test, and
# registers every TEST with CTest. Tests find ../shared through PODTOPO_SHARED_DIR and the
# repository through PODTOPO_SOURCE_DIR.
function(podtopo_test name)
  if(NOT PODTOPO_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE podtopo_core podtopo_testing ${ARG_LIBS}
                        GTest::gtest GTest::gmock GTest::gtest_main rapidcheck)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT 300 LABELS unit)
endfunction()
