#!/usr/bin/env escript
%%! +P 2000000
%% Ring: R processes pass a token H hops; the one that sees 0 tells the main process. Timed
%% from the first send (the ring is built before). usage: escript ring.escript R H
-mode(compile).
main([A, B]) ->
    R = list_to_integer(A), H = list_to_integer(B),
    Me = self(),
    Nodes = [spawn(fun() -> receive {next, Next} -> node(Next, Me) end end)
             || _ <- lists:seq(1, R)],
    link_ring(Nodes, hd(Nodes)),
    T0 = erlang:monotonic_time(nanosecond),
    hd(Nodes) ! {t, H},
    receive done -> ok end,
    Dt = (erlang:monotonic_time(nanosecond) - T0) / 1.0e9,
    io:format("RESULT erlang ring r=~p h=~p schedulers=~p time=~.3fs rate=~.1f~n",
              [R, H, erlang:system_info(schedulers_online), Dt, H / Dt]).

link_ring([Last], First) -> Last ! {next, First};
link_ring([N, Next | Rest], First) -> N ! {next, Next}, link_ring([Next | Rest], First).

node(Next, Parent) ->
    receive
        {t, 0} -> Parent ! done;
        {t, T} -> Next ! {t, T - 1}, node(Next, Parent)
    end.
