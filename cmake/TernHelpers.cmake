# tern_library(NAME SOURCES ... DEPS ...): one static library per layer.
function(tern_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# tern_test(NAME SOURCES ... DEPS ... [LABELS ...]): a GoogleTest binary registered with ctest,
# one ctest entry per TEST (discovered when ctest runs, so cross builds work under an emulator).
function(tern_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS;FIXTURES" ${ARGN})
  if(NOT TERN_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} tern_test_util GTest::gtest GTest::gtest_main GTest::gmock Threads::Threads)
  set(labels ${ARG_LABELS})
  if(NOT labels)
    set(labels unit)
  endif()
  set(props LABELS "${labels}" TIMEOUT 900)
  if(ARG_FIXTURES)
    list(APPEND props FIXTURES_REQUIRED "${ARG_FIXTURES}")
  endif()
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST DISCOVERY_TIMEOUT 120
    PROPERTIES ${props})
endfunction()
