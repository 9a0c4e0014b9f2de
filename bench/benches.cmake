# Benchmarks: built by `make bench`, not by default and not run by ctest.
add_custom_target(benches)
foreach(b registry message runtime supervisor security control net log http_client log_keep liveness metrics wake)
  add_executable(bench_${b} EXCLUDE_FROM_ALL bench/bench_${b}.c)
  target_link_libraries(bench_${b} PRIVATE steward_cli)
  add_dependencies(benches bench_${b})
endforeach()
# The C floor bench/fs.sh compares fs.read with (not a bench_* of its own: it takes arguments).
add_executable(floor_fs EXCLUDE_FROM_ALL bench/floor_fs.c)
target_link_libraries(floor_fs PRIVATE PkgConfig::LIBUV)
add_dependencies(benches floor_fs)
