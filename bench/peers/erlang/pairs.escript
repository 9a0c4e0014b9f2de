#!/usr/bin/env escript
%% K independent ping-pong pairs at once (spread over the schedulers), N round trips each, the
%% payload of pingpong.escript. usage: escript pairs.escript N K
-mode(compile).
main([A, B]) ->
    N = list_to_integer(A), K = list_to_integer(B),
    Me = self(),
    T0 = erlang:monotonic_time(nanosecond),
    [spawn(fun() -> pair(N, Me) end) || _ <- lists:seq(1, K)],
    [receive done -> ok end || _ <- lists:seq(1, K)],
    Dt = (erlang:monotonic_time(nanosecond) - T0) / 1.0e9,
    io:format("RESULT erlang pairs k=~p n=~p schedulers=~p time=~.3fs rate=~.1f~n",
              [K, N, erlang:system_info(schedulers_online), Dt, K * N / Dt]).

pair(N, Parent) ->
    Pong = spawn(fun pong/0),
    rounds(Pong, #{a => 0, b => <<"hello">>, c => 2.5}, N),
    Pong ! stop,
    Parent ! done.

rounds(_Pong, _P, 0) -> ok;
rounds(Pong, P, N) ->
    Pong ! {ping, self(), P#{a := N}},
    receive {pong, _} -> rounds(Pong, P, N - 1) end.

pong() ->
    receive
        {ping, From, P} -> From ! {pong, P}, pong();
        stop -> ok
    end.
