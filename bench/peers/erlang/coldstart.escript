#!/usr/bin/env escript
%%! +P 2000000
%% Cold start and shutdown: a one_for_one supervisor starts N gen_server children in order
%% (each init returns before the next starts: OTP's nearest to N services coming up), then
%% the whole tree is shut down (each child traps exits: an orderly stop, as a service's
%% CANCEL). usage: escript coldstart.escript N
-mode(compile).
-export([init/1, handle_call/3, handle_cast/2]).
main([A]) ->
    N = list_to_integer(A),
    logger:set_primary_config(level, none),
    process_flag(trap_exit, true),
    T0 = erlang:monotonic_time(nanosecond),
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, N}),
    T1 = erlang:monotonic_time(nanosecond),
    exit(Sup, shutdown),
    receive {'EXIT', Sup, _} -> ok end,
    T2 = erlang:monotonic_time(nanosecond),
    io:format("RESULT erlang coldstart n=~p start_ms=~.1f shutdown_ms=~.1f~n",
              [N, (T1 - T0) / 1.0e6, (T2 - T1) / 1.0e6]).

init({sup, N}) ->
    Child = fun(I) -> #{id => I, start => {gen_server, start_link, [?MODULE, child, []]},
                        shutdown => 10000} end,
    {ok, {#{strategy => one_for_one, intensity => 10, period => 5},
          [Child(I) || I <- lists:seq(1, N)]}};
init(child) ->
    process_flag(trap_exit, true),
    {ok, nostate}.
handle_call(_, _, S) -> {reply, ok, S}.
handle_cast(_, S) -> {noreply, S}.
