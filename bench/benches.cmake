# Benchmarks: built by `make bench`, not by default and not run by ctest.
add_custom_target(benches)
foreach(b registry message runtime supervisor security control net log http_client wake)
  add_executable(bench_${b} EXCLUDE_FROM_ALL bench/bench_${b}.c)
  target_link_libraries(bench_${b} PRIVATE steward_cli)
  add_dependencies(benches bench_${b})
endforeach()
