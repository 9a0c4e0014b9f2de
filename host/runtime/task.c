/* Tasks of a process: creation (coroutine.spawn), the ready queue, blocking and waking. Only
 * the thread running the process calls these. */
#include "task.h"

#include <lauxlib.h>
#include <stdlib.h>

#include "proc.h"

sw_task *sw_task_current(lua_State *L) { return sw_proc_of(L)->current; }
sw_proc *sw_task_proc(const sw_task *t) { return t->proc; }
uint64_t sw_task_id(const sw_task *t) { return t->id; }
bool sw_task_blocked(const sw_task *t) { return t->blocked; }

sw_task *sw_task_find(sw_proc *p, uint64_t id)
{
    for (sw_task *t = p->tasks; t; t = t->next)
        if (t->id == id) return t;
    return NULL;
}

sw_task *sw_task_new(sw_proc *p, lua_State *co, int ref)
{
    sw_task *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->id = ++p->next_task_id;
    t->proc = p;
    t->co = co;
    t->ref = ref;
    t->next = p->tasks;
    if (p->tasks) p->tasks->prev = t;
    p->tasks = t;
    return t;
}

void sw_task_make_ready(sw_task *t, int nresume)
{
    sw_proc *p = t->proc;
    t->nresume = nresume;
    if (t->ready) return;
    t->ready = true;
    t->next_ready = NULL;
    if (p->ready_tail) p->ready_tail->next_ready = t;
    else p->ready_head = t;
    p->ready_tail = t;
}

void sw_task_requeue_first(sw_task *t)
{
    sw_proc *p = t->proc;
    t->nresume = 0;
    if (t->ready) return;
    t->ready = true;
    t->next_ready = p->ready_head;
    p->ready_head = t;
    if (!p->ready_tail) p->ready_tail = t;
}

sw_task *sw_task_pop_ready(sw_proc *p)
{
    sw_task *t = p->ready_head;
    if (!t) return NULL;
    p->ready_head = t->next_ready;
    if (!p->ready_head) p->ready_tail = NULL;
    t->next_ready = NULL;
    t->ready = false;
    return t;
}

void sw_task_cancel_wait(sw_task *t)
{
    sw_task_wait *w = t->wait;
    t->wait = NULL;
    t->blocked = false;
    if (w) w->cancel(w);
}

void sw_task_free(sw_task *t, lua_State *L)
{
    sw_proc *p = t->proc;
    sw_task_cancel_wait(t);
    if (t->ready) { /* rare: unlink from the ready queue */
        sw_task **pp = &p->ready_head, *prev = NULL;
        while (*pp && *pp != t) {
            prev = *pp;
            pp = &(*pp)->next_ready;
        }
        if (*pp) *pp = t->next_ready;
        if (p->ready_tail == t) p->ready_tail = prev;
    }
    if (t->prev) t->prev->next = t->next;
    else p->tasks = t->next;
    if (t->next) t->next->prev = t->prev;
    if (p->current == t) p->current = NULL;
    if (L) luaL_unref(L, LUA_REGISTRYINDEX, t->ref);
    free(t->wait_mem);
    free(t);
}

int sw_task_block(lua_State *L, sw_task_wait *wait)
{
    sw_task *t = sw_task_current(L);
    if (!t || !lua_isyieldable(L)) {
        if (wait) wait->cancel(wait);
        return luaL_error(L, "cannot block here: inside a C call (sort comparator, gsub callback, "
                             "error handler) or outside a task");
    }
    t->blocked = true;
    t->wait = wait;
    return sw_vm_block(L, 0);
}

bool sw_task_wake(sw_task *t, lua_State *from, int n)
{
    if (!t->blocked) {
        lua_pop(from, n);
        return false;
    }
    t->blocked = false;
    t->wait = NULL;
    sw_vm_reserve(sw_vm_of(from), t->co, n); /* lua_xmove never checks the target's room */
    lua_xmove(from, t->co, n);
    sw_task_make_ready(t, n);
    return true;
}

int sw_task_spawn_lua(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    int nargs = lua_gettop(L) - 1;
    sw_proc *p = sw_proc_of(L);
    lua_State *co = lua_newthread(L);
    lua_pushvalue(L, -1);
    int ref = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_insert(L, 1); /* the thread goes below fn and its arguments, which move onto it */
    lua_xmove(L, co, nargs + 1);
    sw_task *t = sw_task_new(p, co, ref);
    if (!t) {
        luaL_unref(L, LUA_REGISTRYINDEX, ref);
        return luaL_error(L, "out of memory");
    }
    sw_task_make_ready(t, nargs);
    lua_pushboolean(L, 1);
    return 1;
}
