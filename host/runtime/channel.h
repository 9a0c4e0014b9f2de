/* Channels (docs/lua-api.md): typed-free queues between the tasks of one process, buffered or not,
 * with close and select. Process-local: only the thread running the process touches them, so
 * no locks. The host also uses channels for the inbox, events and timers. */
#ifndef STEWARD_CHANNEL_H
#define STEWARD_CHANNEL_H

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>

#define SW_CHAN_UNBOUNDED (-1L)

/* The functions of the `channel` module (lua_api builds the table): channel.new(n) and
 * channel.select{cases..., default = bool}. */
int sw_chan_new_lua(lua_State *L);
int sw_chan_select_lua(lua_State *L);
/* Pushes a new channel with the given capacity (0 = unbuffered, SW_CHAN_UNBOUNDED). */
void sw_chan_push_new(lua_State *L, long capacity);
/* The functions below take a channel the host made (sw_chan_push_new) at idx; they do not
 * check it is one.
 * Sends the value on top of L (popped) to the channel at index idx without blocking: hands it
 * to a waiting receiver or buffers it. Returns false (value dropped) when the buffer is full or
 * the channel closed. */
bool sw_chan_offer(lua_State *L, int idx);
/* Drops from the buffer of the channel at idx every value for which keep(L, value_idx, ud)
 * is false; the others keep their order. keep must not change the stack below value_idx. */
void sw_chan_filter(lua_State *L, int idx, bool (*keep)(lua_State *L, int value_idx, void *ud),
                    void *ud);

/* How many values a channel holds in its buffer (not counting blocked senders'). chan is its
 * userdata (lua_touserdata of a channel the host made, kept alive by the caller), so the count
 * needs no Lua call. Thread: the one running the channel's process. */
size_t sw_chan_buffered(const void *chan);

/* Closes the channel at idx: waiting receivers get nil, false; waiting senders false. */
void sw_chan_close_at(lua_State *L, int idx);

#endif
