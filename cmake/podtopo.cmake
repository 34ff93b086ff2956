# podtopo_library(NAME [OUTSIDE_CORE] SOURCES a.cc b.cc DEPS podtopo_cpuset absl::status ...)
# One static library per src/<domain> folder, named podtopo_<domain>. It is added to
# podtopo_core, the bundle the CLI and server link, unless OUTSIDE_CORE is given: libraries
# that link gRPC, talk to the network or write cgroups (server, client, CRI, cgroup, metrics)
# sit on top of the core and are never part of it.
function(podtopo_library name)
  cmake_parse_arguments(ARG "OUTSIDE_CORE" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC absl::status absl::statusor fmt::fmt ${ARG_DEPS})
  # On two cores most compile time is spent parsing the same heavy headers (abseil, fmt,
  # nlohmann-json, yaml-cpp, gRPC): compile each library's sources as a few unity batches.
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${PODTOPO_UNITY_BUILD})
  if(NOT ARG_OUTSIDE_CORE)
    target_link_libraries(podtopo_core INTERFACE ${name})
  endif()
endfunction()

# podtopo_test(NAME SOURCES a_test.cc b_test.cc [LIBS podtopo_cpuset ...])
# Builds one GoogleTest executable from tests that sit beside the code they test, and
# registers every TEST with CTest (label "unit"). Tests find ../shared through
# testing::SharedDir() and the repository through testing::SourceDir().
function(podtopo_test name)
  if(NOT PODTOPO_BUILD_TESTS)
    return()
  endif()
  # SERIAL: the tests measure time against a peer (cyclictest) or run to run, and run alone
  # (RUN_SERIAL), not beside another test that loads the same 2 cores.
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
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
                        GTest::gtest GTest::gmock GTest::gtest_main rapidcheck Threads::Threads)
  # As the precompiled header (CMakeLists.txt): -pthread, and the sanitizers of test code.
  target_compile_options(${name} PRIVATE ${PODTOPO_TEST_COMPILE_OPTIONS})
  target_precompile_headers(${name} REUSE_FROM podtopo_test_pch)
  include(GoogleTest)
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS unit RUN_SERIAL ${serial})
endfunction()

# podtopo_grpc_proto(TARGET proto/dir/api.proto)
# Generates C++ messages and gRPC stubs for one .proto file into the build tree (never the
# source tree) and builds them as a static library TARGET. Includes are relative to proto/:
# #include "podresources/v1/api.grpc.pb.h".
function(podtopo_grpc_proto target proto)
  get_filename_component(abs ${proto} ABSOLUTE)
  file(RELATIVE_PATH rel ${PODTOPO_PROTO_ROOT} ${abs})
  string(REGEX REPLACE "\\.proto$" "" stem ${rel})
  set(out ${PODTOPO_PROTO_OUT})
  set(srcs ${out}/${stem}.pb.cc ${out}/${stem}.grpc.pb.cc)
  set(hdrs ${out}/${stem}.pb.h ${out}/${stem}.grpc.pb.h)
  add_custom_command(
    OUTPUT ${srcs} ${hdrs}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND protobuf::protoc -I ${PODTOPO_PROTO_ROOT} --cpp_out=${out} --grpc_out=${out}
            --plugin=protoc-gen-grpc=$<TARGET_FILE:gRPC::grpc_cpp_plugin> ${abs}
    DEPENDS ${abs} protobuf::protoc
    COMMENT "protoc ${rel}")
  add_library(${target} STATIC ${srcs})
  # Generated code: do not hold it to our warning flags.
  target_compile_options(${target} PRIVATE -w)
  if(PODTOPO_SANITIZE)
    # Nor to the sanitizers, as Debian's libprotobuf and gRPC that it calls: that cuts the
    # compile time of the generated code to about a third (clang 14: 14.2 s -> 5.2 s CPU for
    # the CRI API's messages).
    target_compile_options(${target} PRIVATE -fno-sanitize=all -O0 -g0)
  endif()
  target_include_directories(${target} PUBLIC ${out})
  target_link_libraries(${target} PUBLIC gRPC::grpc++ protobuf::libprotobuf)
endfunction()
