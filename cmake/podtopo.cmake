# podtopo_library(NAME SOURCES a.cc b.cc DEPS podtopo_cpuset absl::status ...)
# One static library per src/<domain> folder, named podtopo_<domain>. It is added to
# podtopo_core, the bundle the CLI and server link.
function(podtopo_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC absl::status absl::statusor fmt::fmt ${ARG_DEPS})
  target_link_libraries(podtopo_core INTERFACE ${name})
endfunction()

# podtopo_test(NAME SOURCES a_test.cc b_test.cc [LIBS podtopo_cpuset ...])
# Builds one GoogleTest executable from tests that sit beside the code they test, and
# registers every TEST with CTest (label "unit"). Tests find ../shared through
# testing::SharedDir() and the repository through testing::SourceDir().
function(podtopo_test name)
  if(NOT PODTOPO_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  # A test source that does not exist yet (work in progress) is skipped with a warning rather
  # than breaking the configure step of the whole tree.
  set(sources "")
  foreach(src ${ARG_SOURCES})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${src})
      list(APPEND sources ${src})
    else()
      message(WARNING "${name}: ${CMAKE_CURRENT_SOURCE_DIR}/${src} does not exist; skipped")
    endif()
  endforeach()
  if(NOT sources)
    return()
  endif()
  add_executable(${name} ${sources})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} podtopo_testing
                        GTest::gtest GTest::gmock GTest::gtest_main rapidcheck)
  target_precompile_headers(${name} REUSE_FROM podtopo_test_pch)
  include(GoogleTest)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT 300 LABELS unit)
endfunction()
