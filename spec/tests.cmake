# C unit tests (cmocka) and busted specs, all run by ctest.
set(C_TESTS test_units test_yaml_tree test_schema test_refs test_graph test_change test_cli test_message test_vm test_vm_heap test_pidtable test_backoff test_restart_window test_supervisor test_security test_control_request test_module_names)
foreach(t ${C_TESTS})
  if(EXISTS ${CMAKE_SOURCE_DIR}/spec/c/${t}.c)
    add_executable(${t} spec/c/${t}.c)
    target_link_libraries(${t} PRIVATE steward_cli PkgConfig::CMOCKA)
    target_compile_definitions(${t} PRIVATE SPEC_DIR="${CMAKE_SOURCE_DIR}/spec")
    add_test(NAME ${t} COMMAND ${t})
  endif()
endforeach()

# Modules tested with their own stand-in process context.
foreach(t test_log test_api_modules)
  if(EXISTS ${CMAKE_SOURCE_DIR}/spec/c/${t}.c)
    add_executable(${t} spec/c/${t}.c)
    target_link_libraries(${t} PRIVATE steward_lua_api PkgConfig::CMOCKA)
    add_test(NAME ${t} COMMAND ${t})
  endif()
endforeach()

find_program(BUSTED busted)
if(BUSTED)
  file(GLOB LUA_SPECS ${CMAKE_SOURCE_DIR}/spec/lua/*_spec.lua)
  foreach(s ${LUA_SPECS})
    get_filename_component(name ${s} NAME_WE)
    add_test(NAME ${name} COMMAND ${BUSTED} --output=TAP ${s} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
    # STEWARD_SLOW: the binary runs under sanitizers (several times slower); timing specs widen
    # their bounds by this factor and soak specs shrink their counts.
    if(STEWARD_SANITIZE)
      set(slow 4)
    else()
      set(slow 1)
    endif()
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "STEWARD=$<TARGET_FILE:steward>;SPEC_DIR=${CMAKE_SOURCE_DIR}/spec;STEWARD_SLOW=${slow}")
  endforeach()
endif()

# A raw socket peer the control specs drive (next to the steward binary).
add_executable(spec_sock spec/tools/spec_sock.c)
