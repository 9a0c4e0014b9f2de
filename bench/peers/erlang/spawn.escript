#!/usr/bin/env escript
%%! +P 2000000
%% Spawn N idle processes (each waits in receive): microseconds per spawn, and bytes per
%% process (growth of the OS's resident set, as Steward's bench_runtime measures it, and the
%% VM's own count). usage: escript spawn.escript N
-mode(compile).
main([A]) ->
    N = list_to_integer(A),
    erlang:garbage_collect(),
    Rss0 = rss_kb(), Mem0 = erlang:memory(processes),
    T0 = erlang:monotonic_time(nanosecond),
    Pids = spawn_n(N, []),
    Dt = (erlang:monotonic_time(nanosecond) - T0) / 1.0e9,
    Rss1 = rss_kb(), Mem1 = erlang:memory(processes),
    io:format("RESULT erlang spawn n=~p time=~.3fs us=~.3f rss_bytes=~.1f vm_bytes=~.1f~n",
              [N, Dt, Dt / N * 1.0e6, (Rss1 - Rss0) * 1024 / N, (Mem1 - Mem0) / N]),
    [exit(P, kill) || P <- Pids].

spawn_n(0, Acc) -> Acc;
spawn_n(N, Acc) -> spawn_n(N - 1, [spawn(fun() -> receive stop -> ok end end) | Acc]).

rss_kb() ->
    {ok, B} = file:read_file("/proc/self/status"),
    {match, [R]} = re:run(B, "VmRSS:\\s*(\\d+)", [{capture, all_but_first, list}]),
    list_to_integer(R).
