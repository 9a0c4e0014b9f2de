# C unit tests (cmocka) and busted specs, all run by ctest.

find_program(BUSTED busted)
foreach(runner CMOCKA BUSTED)
  if(NOT ${runner} AND NOT ${runner}_FOUND)
    set(why "${runner} not found (Debian: scripts/install-deps.sh test)")
    if(STEWARD_REQUIRE_TESTS)
      message(FATAL_ERROR "${why}: the tests that need it cannot run")
    endif()
    message(WARNING "${why}: its tests are skipped")
  endif()
endforeach()

# Under ThreadSanitizer every instrumented binary (tests, and steward as the specs run it)
# writes its reports to tsan-reports/ in the build directory rather than to a stderr that a
# spec may not read; tsan_reports, run after every other test, fails if any were written and
# prints them. spec/tsan.supp holds the suppressions, each with its reason.
set(SANITIZER_ENV "")
if(STEWARD_TSAN)
  set(TSAN_REPORTS ${CMAKE_BINARY_DIR}/tsan-reports)
  set(SANITIZER_ENV "TSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/spec/tsan.supp:log_path=${TSAN_REPORTS}/report:second_deadlock_stack=1:halt_on_error=0")
  add_test(NAME tsan_reports_clear COMMAND sh -c "rm -rf '${TSAN_REPORTS}' && mkdir -p '${TSAN_REPORTS}'")
  add_test(NAME tsan_reports COMMAND sh -c
    "set -- '${TSAN_REPORTS}'/report.*; [ -e \"$1\" ] || exit 0; for f; do echo \"== $f\"; cat \"$f\"; done; echo \"tsan: $# report file(s)\"; exit 1")
  set_tests_properties(tsan_reports_clear PROPERTIES FIXTURES_SETUP tsan)
  set_tests_properties(tsan_reports PROPERTIES FIXTURES_CLEANUP tsan)
endif()
# Every test: its sanitizer options, and under TSan the report fixture around it.
function(steward_test_env name)
  set_property(TEST ${name} APPEND PROPERTY ENVIRONMENT ${SANITIZER_ENV} ${ARGN})
  if(STEWARD_TSAN)
    set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED tsan)
  endif()
endfunction()
set(C_TESTS test_units test_yaml_tree test_schema test_refs test_graph test_change test_cli test_message test_vm test_vm_heap test_pidtable test_backoff test_restart_window test_supervisor test_security test_control_request test_module_names test_env_registry test_timefmt test_uuid test_fs_path)
list(APPEND C_TESTS test_log_ring) # one line each, so parallel additions merge
list(APPEND C_TESTS test_http_routes)
list(APPEND C_TESTS test_identity)
list(APPEND C_TESTS test_lib_tree)
list(APPEND C_TESTS test_http_auth)
list(APPEND C_TESTS test_worker_wake)
foreach(t ${C_TESTS})
  if(CMOCKA_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/spec/c/${t}.c)
    add_executable(${t} spec/c/${t}.c)
    target_link_libraries(${t} PRIVATE steward_cli PkgConfig::CMOCKA)
    target_compile_definitions(${t} PRIVATE SPEC_DIR="${CMAKE_SOURCE_DIR}/spec")
    add_test(NAME ${t} COMMAND ${t})
    steward_test_env(${t})
  endif()
endforeach()

# Modules tested with their own stand-in process context.
foreach(t test_log test_api_modules)
  if(CMOCKA_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/spec/c/${t}.c)
    add_executable(${t} spec/c/${t}.c)
    target_link_libraries(${t} PRIVATE steward_lua_api PkgConfig::CMOCKA)
    add_test(NAME ${t} COMMAND ${t})
    steward_test_env(${t})
  endif()
endforeach()

if(BUSTED)
  file(GLOB LUA_SPECS ${CMAKE_SOURCE_DIR}/spec/lua/*_spec.lua)
  foreach(s ${LUA_SPECS})
    get_filename_component(name ${s} NAME_WE)
    add_test(NAME ${name} COMMAND ${BUSTED} --output=TAP ${s} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    # STEWARD_SLOW: the binary runs under sanitizers (several times slower); timing specs widen
    # their bounds by this factor and soak specs shrink their counts. TSan slows spawning more
    # than ASan (time_spec's 1,000 tasks: 2-5 ms under TSan, 1-2 ms under ASan, ~1 ms plain).
    if(STEWARD_TSAN)
      set(slow 8)
    elseif(STEWARD_SANITIZE)
      set(slow 4)
    else()
      set(slow 1)
    endif()
    steward_test_env(${name} STEWARD=$<TARGET_FILE:steward> SPEC_DIR=${CMAKE_SOURCE_DIR}/spec STEWARD_SLOW=${slow})
  endforeach()
endif()

# The Lua API against its reference (docs/lua-api.md): neither may name what the other lacks.
if(CMOCKA_FOUND)
  add_executable(test_api_docs spec/c/test_api_docs.c)
  target_link_libraries(test_api_docs PRIVATE steward_lua_api PkgConfig::CMOCKA)
  # its blank sw_proc_ctx_of stands in for the runtime's (proc.c), which the modules pull in
  target_link_options(test_api_docs PRIVATE -Wl,--allow-multiple-definition)
  target_compile_definitions(test_api_docs PRIVATE SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  add_test(NAME test_api_docs COMMAND test_api_docs)
  steward_test_env(test_api_docs)
endif()

# A raw socket peer the control specs drive (next to the steward binary).
add_executable(spec_sock spec/tools/spec_sock.c)
