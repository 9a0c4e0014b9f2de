#!/usr/bin/env escript
%% Supervised restarts: a one_for_one supervisor restarts a child that exits at once, N times
%% (intensity 10N a second: it never gives up), as Steward's zero-backoff service restarts.
%% The first and last tenth are timed apart: OTP keeps the restarts of the period in a list,
%% so a restart costs more the more there were. usage: escript restarts.escript N
-mode(compile).
-export([init/1, start_child/0]).
main([A]) ->
    N = list_to_integer(A),
    logger:set_primary_config(level, none),
    C = counters:new(1, []),
    persistent_term:put(?MODULE, {C, N, self()}),
    T0 = erlang:monotonic_time(nanosecond),
    {ok, _Sup} = supervisor:start_link(?MODULE, N),
    W = max(N div 10, 1),
    NW = N - W,
    receive {at, W, T1} -> ok end,
    receive {at, NW, T2} -> ok end,
    receive {at, N, T3} -> ok end,
    Rate = fun(Count, Ns) -> Count / (Ns / 1.0e9) end,
    io:format("RESULT erlang restarts n=~p time=~.3fs rate=~.1f first_rate=~.1f last_rate=~.1f~n",
              [N, (T3 - T0) / 1.0e9, Rate(N, T3 - T0), Rate(W, T1 - T0), Rate(W, T3 - T2)]).

init(N) ->
    {ok, {#{strategy => one_for_one, intensity => N * 10, period => 1},
          [#{id => crasher, start => {?MODULE, start_child, []}, restart => permanent,
             shutdown => brutal_kill}]}}.

%% Each start counts; the (N+1)th start stays up, so the restarts end at N.
start_child() ->
    {C, N, Main} = persistent_term:get(?MODULE),
    counters:add(C, 1, 1),
    Restarts = counters:get(C, 1) - 1,
    W = max(N div 10, 1),
    case Restarts of
        W -> Main ! {at, W, erlang:monotonic_time(nanosecond)};
        _ when Restarts == N - W -> Main ! {at, N - W, erlang:monotonic_time(nanosecond)};
        _ -> ok
    end,
    case Restarts >= N of
        true ->
            Main ! {at, N, erlang:monotonic_time(nanosecond)},
            {ok, spawn_link(fun() -> receive stop -> ok end end)};
        false ->
            {ok, spawn_link(fun() -> exit(crash) end)}
    end.
