#!/usr/bin/env escript
%%! +P 2000000
%% Fan-out: M messages round-robin to R receivers; each tells the main process when it has
%% its share (M/R). Timed from the first send to the last receiver's word.
%% usage: escript fanout.escript M R
-mode(compile).
main([A, B]) ->
    M = list_to_integer(A), R = list_to_integer(B),
    Me = self(),
    Sinks = list_to_tuple([spawn(fun() -> sink(M div R, Me) end) || _ <- lists:seq(1, R)]),
    T0 = erlang:monotonic_time(nanosecond),
    send(Sinks, R, 1, 1, M),
    [receive done -> ok end || _ <- lists:seq(1, R)],
    Dt = (erlang:monotonic_time(nanosecond) - T0) / 1.0e9,
    io:format("RESULT erlang fanout m=~p r=~p schedulers=~p time=~.3fs rate=~.1f~n",
              [M, R, erlang:system_info(schedulers_online), Dt, M / Dt]).

send(_S, _R, _J, I, M) when I > M -> ok;
send(S, R, J, I, M) ->
    element(J, S) ! {m, I},
    send(S, R, if J >= R -> 1; true -> J + 1 end, I + 1, M).

sink(0, Parent) -> Parent ! done;
sink(K, Parent) -> receive {m, _} -> sink(K - 1, Parent) end.
