#!/usr/bin/env escript
%% Ping-pong round trips between two processes, a 3-field map payload (as Steward's table
%% {a = i, b = 'hello', c = 2.5}); 10,000 round trips of warm-up first.
%% usage: escript pingpong.escript N
-mode(compile).
main([A]) ->
    N = list_to_integer(A),
    Pong = spawn(fun pong/0),
    P = #{a => 0, b => <<"hello">>, c => 2.5},
    rounds(Pong, P, min(N, 10000)),
    T0 = erlang:monotonic_time(nanosecond),
    rounds(Pong, P, N),
    Dt = (erlang:monotonic_time(nanosecond) - T0) / 1.0e9,
    Pong ! stop,
    io:format("RESULT erlang pingpong n=~p schedulers=~p time=~.3fs rate=~.1f~n",
              [N, erlang:system_info(schedulers_online), Dt, N / Dt]).

rounds(_Pong, _P, 0) -> ok;
rounds(Pong, P, N) ->
    Pong ! {ping, self(), P#{a := N}},
    receive {pong, _} -> rounds(Pong, P, N - 1) end.

pong() ->
    receive
        {ping, From, P} -> From ! {pong, P}, pong();
        stop -> ok
    end.
