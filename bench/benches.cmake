# Benchmarks: built by `make bench`, not by default and not run by ctest.
add_custom_target(benches)
if(EXISTS ${CMAKE_SOURCE_DIR}/bench/bench_registry.c)
  add_executable(bench_registry EXCLUDE_FROM_ALL bench/bench_registry.c)
  target_link_libraries(bench_registry PRIVATE steward_registry)
  add_dependencies(benches bench_registry)
endif()
