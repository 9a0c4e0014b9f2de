/* Tests of the Lua host modules logger, errors, json and registry (host/api_*.c) in plain
 * LuaJIT states. This file provides its own sw_proc_ctx_of: one static context with a
 * registry loaded from YAML in memory, a pid, a service id and a log on a temporary file.
 * Most checks are Lua snippets; the Lua helper take_log() returns what the log received since
 * the last call, with each line's timestamp checked for shape and replaced by "T". */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lualib.h>

#include "api.h"

/* ---- the process context ---- */

static sw_proc_ctx ctx;
static FILE *log_file;
static bool log_json;

const sw_proc_ctx *sw_proc_ctx_of(lua_State *L)
{
    (void)L;
    return &ctx;
}

static const char *const app_yaml =
    "version: \"1.0\"\n"
    "namespace: app\n"
    "meta: { team: core }\n"
    "entries:\n"
    "  - name: db\n"
    "    kind: registry.entry\n"
    "    meta: { type: database, tier: 1, primary: true, labels: { env: prod } }\n"
    "    host: localhost\n"
    "    port: 5432\n"
    "    ratio: 0.5\n"
    "    enabled: true\n"
    "    nothing: null\n"
    "    tags: [a, b, c]\n"
    "    holes: [1, null, 3]\n"
    "    nested: { x: { y: [1, 2.5, true, \"s\"] } }\n"
    "    \"80\": http\n"
    "    quoted: \"5432\"\n"
    "    shared: &shared { k: v }\n"
    "    again: *shared\n"
    "  - name: cache\n"
    "    kind: registry.entry\n"
    "    meta: { type: cache, tier: 2, primary: false }\n"
    "    host: localhost\n"
    "  - name: worker_process\n"
    "    kind: process.lua\n"
    "    source: \"return function() return 1 end\"\n"
    "  - name: worker\n"
    "    kind: process.service\n"
    "    process: worker_process\n"
    "    meta: { type: database, tier: \"1\" }\n"
    "    config: { database: app:db }\n";

static const char *const other_yaml = "namespace: other\n"
                                      "entries:\n"
                                      "  - name: db\n"
                                      "    kind: registry.entry\n"
                                      "    meta: { type: database }\n"
                                      "    url: \"postgres://x\"\n";

static int group_setup(void **state)
{
    (void)state;
    sw_registry_file files[] = {
        {"/tmp/x/app.yaml", app_yaml, strlen(app_yaml)},
        {"/tmp/x/other.yaml", other_yaml, strlen(other_yaml)},
    };
    sw_diags d;
    sw_diags_init(&d);
    sw_registry *r = sw_registry_load_files("/tmp/x", files, 2, &d);
    if (!r) {
        sw_diags_finish(&d);
        sw_diags_print(&d, stderr);
        sw_diags_free(&d);
        return -1;
    }
    sw_diags_free(&d);
    ctx.registry = r;
    ctx.pid = "host|0x0001";
    ctx.service = "app:svc";
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    sw_registry_free((sw_registry *)ctx.registry);
    return 0;
}

/* ---- the log as seen from Lua ---- */

static void use_log(bool json, sw_log_level min)
{
    sw_log_free(ctx.log);
    if (log_file) fclose(log_file);
    log_file = tmpfile();
    assert_non_null(log_file);
    log_json = json;
    ctx.log = sw_log_new(log_file, json, min, false);
}

/* One line with its timestamp replaced by "T", appended to b. */
static void add_normalized(lua_State *L, luaL_Buffer *b, const char *line, size_t len)
{
    const char *shape = log_json ? "{\"ts\":\"dddd-dd-ddTdd:dd:dd.dddZ\"" : "dd:dd:dd.ddd";
    size_t n = strlen(shape);
    bool ok = len >= n;
    for (size_t i = 0; ok && i < n; i++)
        ok = shape[i] == 'd' ? isdigit((unsigned char)line[i]) : line[i] == shape[i];
    if (!ok) luaL_error(L, "log line without a timestamp: %s", line);
    luaL_addstring(b, log_json ? "{\"ts\":\"T\"" : "T");
    luaL_addlstring(b, line + n, len - n);
}

/* take_log() -> everything logged since the last call, timestamps normalized. */
static int l_take_log(lua_State *L)
{
    int fd = fileno(log_file);
    off_t size = lseek(fd, 0, SEEK_END);
    char *all = malloc((size_t)size + 1);
    ssize_t got = pread(fd, all, (size_t)size, 0);
    assert_int_equal(got, size);
    all[got] = '\0';
    assert_int_equal(ftruncate(fd, 0), 0);
    lseek(fd, 0, SEEK_SET);
    lua_pushlstring(L, all, (size_t)got); /* anchors the text while lines are checked */
    free(all);
    const char *p = lua_tostring(L, -1), *end = p + got;
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p + 1) : (size_t)(end - p);
        add_normalized(L, &b, p, len);
        p += len;
    }
    luaL_pushresult(&b);
    return 1;
}

/* ---- fixture ---- */

static const char *const lua_helpers =
    "function eq(got, want, what)\n"
    "  if got ~= want then\n"
    "    error(string.format('%s: expected %q, got %q', what or 'value', tostring(want), "
    "tostring(got)), 2)\n"
    "  end\n"
    "end\n"
    "function raises(f, part)\n"
    "  local ok, err = pcall(f)\n"
    "  if ok then error('expected an error containing ' .. part, 2) end\n"
    "  if not string.find(tostring(err), part, 1, true) then\n"
    "    error(string.format('error %q lacks %q', tostring(err), part), 2)\n"
    "  end\n"
    "end\n";

static int setup(void **state)
{
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    static const struct {
        const char *name;
        lua_CFunction open;
    } mods[] = {{"logger", sw_open_logger},
                {"errors", sw_open_errors},
                {"json", sw_open_json},
                {"registry", sw_open_registry}};
    for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
        lua_pushcfunction(L, mods[i].open);
        lua_call(L, 0, 1);
        assert_int_equal(lua_type(L, -1), LUA_TTABLE);
        lua_setglobal(L, mods[i].name);
    }
    lua_register(L, "take_log", l_take_log);
    if (luaL_dostring(L, lua_helpers) != 0) fail_msg("helpers: %s", lua_tostring(L, -1));
    assert_int_equal(lua_gettop(L), 0);
    use_log(false, SW_LOG_DEBUG);
    *state = L;
    return 0;
}

static int teardown(void **state)
{
    lua_close(*state);
    sw_log_free(ctx.log);
    ctx.log = NULL;
    fclose(log_file);
    log_file = NULL;
    return 0;
}

static void run(lua_State *L, const char *code)
{
    if (luaL_dostring(L, code) != 0) fail_msg("lua: %s", lua_tostring(L, -1));
    lua_settop(L, 0);
}

/* ---- logger ---- */

static void test_logger_text(void **state)
{
    lua_State *L = *state;
    run(L,
        "logger.info('service state', {state = 'running', attempt = 1})\n"
        "eq(take_log(), 'T INFO  app:svc  service state  attempt=1 state=running "
        "pid=host|0x0001\\n')\n"
        "logger.debug('d') logger.warn('w') logger.error('e')\n"
        "eq(take_log(), 'T DEBUG app:svc  d  pid=host|0x0001\\n'\n"
        "            .. 'T WARN  app:svc  w  pid=host|0x0001\\n'\n"
        "            .. 'T ERROR app:svc  e  pid=host|0x0001\\n')\n"
        "logger.info(42)\n"
        "eq(take_log(), 'T INFO  app:svc  42  pid=host|0x0001\\n')\n"
        "logger.info('q', {s = 'a b', e = '', n = 'x\\ny', f = 1.5, b = false, pid = 'spoofed'})\n"
        "eq(take_log(), 'T INFO  app:svc  q  b=false e=\"\" f=1.5 n=\"x\\\\ny\" s=\"a b\" "
        "pid=host|0x0001\\n')\n");
}

static void test_logger_json(void **state)
{
    lua_State *L = *state;
    use_log(true, SW_LOG_DEBUG);
    run(L,
        "logger.info('service state', {state = 'running', attempt = 1})\n"
        "eq(take_log(), '{\"ts\":\"T\",\"level\":\"info\",\"msg\":\"service "
        "state\",\"service\":\"app:svc\",'\n"
        "  .. '\"attempt\":1,\"state\":\"running\",\"pid\":\"host|0x0001\"}\\n')\n"
        "logger.warn('q\"\\1', {msg = 'collides', nan = 0/0, t = {1, 2, {a = 'x'}}, e = {}, nul = "
        "json.null})\n"
        "eq(take_log(), "
        "'{\"ts\":\"T\",\"level\":\"warn\",\"msg\":\"q\\\\\"\\\\u0001\",\"service\":\"app:svc\",'\n"
        "  .. "
        "'\"e\":{},\"fields.msg\":\"collides\",\"nan\":null,\"nul\":null,\"t\":[1,2,{\"a\":\"x\"}],"
        "'\n"
        "  .. '\"pid\":\"host|0x0001\"}\\n')\n"
        /* every line is JSON our own json module reads back */
        "logger.error('bad utf8 \\255', {k = 'v\\0w', deep = {a = {b = {c = {'\\255'}}}}})\n"
        "local line = take_log()\n"
        "local v = assert(json.decode(line))\n"
        "eq(v.msg, 'bad utf8 \\239\\191\\189') eq(v.k, 'v', 'cut at NUL') eq(v.deep.a.b.c[1], "
        "'\\239\\191\\189')\n");
}

static void test_logger_method_form(void **state)
{
    lua_State *L = *state;
    run(L,
        "logger:info('m', {a = 1})\n"
        "eq(take_log(), 'T INFO  app:svc  m  a=1 pid=host|0x0001\\n')\n"
        "local ro = setmetatable({}, {__index = logger, __newindex = function() error('ro') end,\n"
        "                             __metatable = false})\n"
        "ro:warn('via proxy')\n"
        "eq(take_log(), 'T WARN  app:svc  via proxy  pid=host|0x0001\\n')\n"
        "ro.error('dot form')\n"
        "eq(take_log(), 'T ERROR app:svc  dot form  pid=host|0x0001\\n')\n"
        "local copy = {info = logger.info}\n"
        "copy:info('copied table')\n"
        "eq(take_log(), 'T INFO  app:svc  copied table  pid=host|0x0001\\n')\n"
        "raises(function() logger.info({}, 'x') end, 'bad argument #1')\n"
        "raises(function() logger:info({}) end, 'bad argument #1 to \\'info\\' (string expected, "
        "got table)')\n"
        "raises(function() logger.info() end, 'bad argument #1')\n"
        "raises(function() logger.info(nil, {}) end, 'bad argument #1')\n"
        "raises(function() logger.info('m', 'not a table') end, 'bad argument #2')\n"
        "raises(function() logger:info('m', 5) end, 'bad argument #2')\n"
        "eq(take_log(), '')\n");
}

static void test_logger_odd_fields(void **state)
{
    lua_State *L = *state;
    use_log(true, SW_LOG_DEBUG);
    run(L,
        "local cyc = {name = 'c'} cyc.self = cyc\n"
        "local trap = setmetatable({x = 1}, {__index = function() error('metamethod called') end,\n"
        "  __tostring = function() error('metamethod called') end})\n"
        "local deep = {} local t = deep for i = 1, 30 do t.d = {} t = t.d end\n"
        "logger.info('odd', {fn = print, co = coroutine.create(print), cyc = cyc, trap = trap,\n"
        "  [1] = 'skipped', [true] = 'skipped', list = {'a', nil, 'c'}, sparse = {[1] = 1, [10] = "
        "2},\n"
        "  keys = {[1.5] = 'x', [true] = 'y'}, inner = {f = print, inf = math.huge}, deep = "
        "deep})\n"
        "local v = assert(json.decode(take_log()))\n"
        "eq(v.fn, '<function>') eq(v.co, '<thread>') eq(v.trap.x, 1)\n"
        "eq(v.cyc.name, 'c') eq(v.cyc.self, '<cycle>')\n"
        "eq(v[1], nil) eq(v['true'], nil)\n"
        "eq(v.list['1'], 'a') eq(v.list['3'], 'c')\n"
        "eq(v.sparse['10'], 2) eq(v.keys['1.5'], 'x') eq(v.keys['true'], 'y')\n"
        "eq(v.inner.f, '<function>') eq(v.inner.inf, nil)\n"
        "local n = 0 t = v.deep while type(t) == 'table' do n = n + 1 t = t.d end\n"
        "eq(n, 16, 'depth') eq(t, '<too deep>')\n"
        /* larger than the stack scratch: a userdata; larger than the limit: a placeholder */
        "local big, huge = {}, {}\n"
        "for i = 1, 3000 do big[i] = i end\n"
        "for i = 1, 20000 do huge[i] = 'xxxxx' end\n"
        "local many = {} for i = 1, 100 do many['k' .. string.format('%03d', i)] = {i} end\n"
        "logger.info('big', {big = big, huge = huge, small = {1}})\n"
        "v = assert(json.decode(take_log()))\n"
        "eq(#v.big, 3000) eq(v.big[3000], 3000) eq(v.huge, '<too large>') eq(v.small[1], 1)\n"
        "logger.info('many', many)\n"
        "v = assert(json.decode(take_log()))\n"
        "for i = 1, 100 do eq(v['k' .. string.format('%03d', i)][1], i) end\n"
        "eq(v.pid, 'host|0x0001')\n");
}

static void test_logger_disabled(void **state)
{
    lua_State *L = *state;
    use_log(false, SW_LOG_WARN);
    run(L, "logger.debug('no', {a = 1}) logger.info('no') logger:info('no')\n"
           "eq(take_log(), '')\n"
           "raises(function() logger.debug({}) end, 'bad argument')\n" /* checked even when off */
           "logger.warn('yes')\n"
           "eq(take_log(), 'T WARN  app:svc  yes  pid=host|0x0001\\n')\n");
}

/* ---- errors ---- */

static void test_errors(void **state)
{
    lua_State *L = *state;
    run(L,
        "local e = errors.new{message = 'db down', kind = 'unavailable', retryable = false}\n"
        "eq(rawget(e, 'message'), 'db down') eq(rawget(e, 'kind'), 'unavailable')\n"
        "eq(rawget(e, 'retryable'), false)\n"
        "eq(tostring(e), 'unavailable: db down')\n"
        "local d = errors.new('boom')\n"
        "eq(d.message, 'boom') eq(d.kind, 'error') eq(d.retryable, true) eq(tostring(d), 'boom')\n"
        "d = errors.new{message = 'x'}\n"
        "eq(d.kind, 'error') eq(d.retryable, true)\n"
        "d = errors.new{message = 12, details = {id = 7}}\n"
        "eq(d.message, '12') eq(d.details.id, 7)\n"
        "eq(errors.new(3.5).message, '3.5')\n"
        /* one protected metatable per state */
        "eq(getmetatable(e), false)\n"
        "raises(function() setmetatable(e, nil) end, 'protected metatable')\n"
        "eq(debug.getmetatable(e), debug.getmetatable(d))\n"
        /* raised and caught */
        "local ok, err = pcall(error, e)\n"
        "eq(ok, false) eq(err, e) eq(err.kind, 'unavailable')\n"
        /* errors.is, also on a plain copy (as a message would deliver it) */
        "eq(errors.is(e), true) eq(errors.is(e, 'unavailable'), true) eq(errors.is(e, 'error'), "
        "false)\n"
        "eq(errors.is({message = 'm', kind = 'k', retryable = true}, 'k'), true)\n"
        "eq(errors.is('string error'), false) eq(errors.is(nil), false) eq(errors.is({}), false)\n"
        /* refusals */
        "raises(function() errors.new() end, 'bad argument #1 to \\'new\\'')\n"
        "raises(function() errors.new(true) end, 'table or string expected')\n"
        "raises(function() errors.new{} end, 'message')\n"
        "raises(function() errors.new{message = {}} end, 'message')\n"
        "raises(function() errors.new{message = 'm', kind = 1} end, 'kind')\n"
        "raises(function() errors.new{message = 'm', retryable = 'no'} end, 'retryable')\n"
        "raises(function() errors.new{message = 'm', retriable = false} end, 'unknown field "
        "\\'retriable\\'')\n"
        "raises(function() errors.new{'m'} end, 'keys must be')\n"
        "local mt = debug.getmetatable(e)\n"
        "eq(mt.__tostring({message = 'm', kind = 'k'}), 'k: m')\n"
        "eq(mt.__tostring({}), '(no message)')\n");
}

/* ---- json ---- */

static void test_json_roundtrip(void **state)
{
    lua_State *L = *state;
    run(L,
        "local v = {s = 'x\"y\\n', n = 1.5, i = -3, b = true, list = {1, 'two', {3}}, obj = {k = "
        "{}}}\n"
        "local s = assert(json.encode(v))\n"
        "local w = assert(json.decode(s))\n"
        "eq(w.s, v.s) eq(w.n, 1.5) eq(w.i, -3) eq(w.b, true) eq(#w.list, 3) eq(w.list[2], 'two')\n"
        "eq(w.list[3][1], 3) eq(type(w.obj.k), 'table') eq(next(w.obj.k), nil)\n"
        "eq(json.encode({1, 2, 3}), '[1,2,3]') eq(json.encode('a/b'), '\"a\\\\/b\"')\n"
        "eq(json.encode({}), '{}') eq(json.encode(nil), 'null') eq(json.encode(json.null), "
        "'null')\n"
        "eq(json.encode({a = json.null}), '{\"a\":null}')\n"
        "eq(json.encode({[1] = 1, [100] = 2}):sub(1, 1), '{')\n" /* sparse: an object */
        "eq(json.encode({[1] = 1, [3] = 3}), '[1,null,3]')\n"
        "eq(json.decode('\"\\\\u00e9\"'), '\\195\\169')\n"
        "eq(json.decode('  12  '), 12)\n"
        /* null decodes to nil */
        "w = assert(json.decode('{\"a\":null,\"b\":[1,null,3],\"c\":{\"d\":null,\"e\":1}}'))\n"
        "eq(w.a, nil) eq(w.b[1], 1) eq(w.b[2], nil) eq(w.b[3], 3) eq(w.c.d, nil) eq(w.c.e, 1)\n"
        "local x, err = json.decode('null') eq(x, nil) eq(err, nil)\n"
        "eq(select('#', json.decode('null')), 1)\n"
        /* no global and no module of cjson leaks out */
        "eq(rawget(_G, 'cjson'), nil) eq(package.loaded.cjson, nil)\n");
}

static void test_json_errors(void **state)
{
    lua_State *L = *state;
    run(L, "local function fails(part, v, err)\n"
           "  if v ~= nil then error('expected nil, got ' .. tostring(v), 2) end\n"
           "  if type(err) ~= 'string' or not err:find(part, 1, true) then\n"
           "    error(string.format('error %q lacks %q', tostring(err), part), 2) end\n"
           "end\n"
           "fails('Expected', json.decode('{bad'))\n"
           "fails('Expected', json.decode(''))\n"
           "fails('Expected', json.decode('[1,2'))\n"
           "fails('Expected', json.decode('{\"a\":1} x'))\n"
           "fails('invalid', json.decode('NaN'))\n"
           "fails('invalid', json.decode('0x10'))\n"
           "fails('expected a string, got nil', json.decode(nil))\n"
           "fails('expected a string, got table', json.decode({}))\n"
           "fails('expected a string, got number', json.decode(12))\n"
           "fails('function', json.encode(print))\n"
           "fails('function', json.encode({f = print}))\n"
           "fails('NaN', json.encode(0/0))\n"
           "fails('Inf', json.encode(math.huge))\n"
           "fails('key', json.encode({[{}] = 1}))\n"
           "local cyc = {} cyc.x = cyc\n"
           "fails('nest', json.encode(cyc))\n"
           /* nesting: 100 levels are fine, 101 are refused, both ways */
           "local ok100 = string.rep('[', 100) .. string.rep(']', 100)\n"
           "local bad101 = string.rep('[', 101) .. string.rep(']', 101)\n"
           "assert(json.decode(ok100))\n"
           "fails('nest', json.decode(bad101))\n"
           "fails('nest', json.decode(string.rep('[', 100000)))\n"
           "local t = {} local c = t for i = 1, 99 do c[1] = {} c = c[1] end\n"
           "assert(json.encode(t))\n"
           "c[1] = {}\n"
           "fails('nest', json.encode(t))\n"
           /* a metatable is never consulted */
           "local mt = setmetatable({a = 1}, {__index = function() error('called') end,\n"
           "  __pairs = function() error('called') end})\n"
           "eq(json.encode(mt), '{\"a\":1}')\n"
           /* the module still works after failures */
           "eq(json.encode({1}), '[1]')\n");
}

/* ---- registry ---- */

static void test_registry_get(void **state)
{
    lua_State *L = *state;
    run(L,
        "local e = assert(registry.get('app:db'))\n"
        "eq(e.id, 'app:db') eq(e.name, 'db') eq(e.namespace, 'app') eq(e.kind, 'registry.entry')\n"
        "eq(e.meta.type, 'database') eq(e.meta.tier, 1) eq(e.meta.primary, true)\n"
        "eq(e.meta.team, 'core', 'file meta merged') eq(e.meta.labels.env, 'prod')\n"
        "local d = e.data\n"
        "eq(d.name, nil) eq(d.kind, nil) eq(d.meta, nil)\n"
        "eq(d.host, 'localhost') eq(d.port, 5432) eq(d.ratio, 0.5) eq(d.enabled, true)\n"
        "eq(d.quoted, '5432') eq(d['80'], 'http') eq(d[80], nil)\n"
        "eq(d.nothing, nil) eq(rawget(d, 'nothing'), nil)\n"
        "eq(#d.tags, 3) eq(d.tags[1], 'a') eq(d.tags[3], 'c')\n"
        "eq(d.holes[1], 1) eq(d.holes[2], nil) eq(d.holes[3], 3)\n"
        "eq(d.nested.x.y[2], 2.5) eq(d.nested.x.y[3], true) eq(d.nested.x.y[4], 's')\n"
        "eq(d.shared.k, 'v') eq(d.again.k, 'v')\n"
        "assert(d.shared ~= d.again, 'an alias is its own copy')\n"
        "local n = 0 for k in pairs(e) do n = n + 1 end eq(n, 6, 'entry keys')\n"
        /* a deep copy: changing it changes nothing for the next get */
        "e.meta.type = 'changed' d.tags[1] = 'z' d.nested.x.y = nil e.id = 'x'\n"
        "local f = registry.get('app:db')\n"
        "eq(f.meta.type, 'database') eq(f.data.tags[1], 'a') eq(f.data.nested.x.y[1], 1) eq(f.id, "
        "'app:db')\n"
        "assert(f ~= e and f.data ~= d)\n"
        /* other kinds: their fields as written */
        "local s = assert(registry.get('app:worker'))\n"
        "eq(s.kind, 'process.service') eq(s.data.process, 'worker_process')\n"
        "eq(s.data.config.database, 'app:db') eq(s.data.lifecycle, nil)\n"
        "local p = assert(registry.get('app:worker_process'))\n"
        "eq(p.kind, 'process.lua') eq(p.data.source, 'return function() return 1 end')\n"
        "eq(p.meta.team, 'core') eq(registry.get('other:db').meta.team, nil)\n"
        /* unknown ids */
        "local none, err = registry.get('app:nope') eq(none, nil) eq(err, 'no entry app:nope')\n"
        "none, err = registry.get('db') eq(none, nil) eq(err, 'no entry db')\n"
        "raises(function() registry.get() end, 'bad argument #1')\n"
        "raises(function() registry.get({}) end, 'bad argument #1')\n");
}

static void test_registry_find(void **state)
{
    lua_State *L = *state;
    run(L,
        "local function ids(list)\n"
        "  local t = {} for i, e in ipairs(list) do t[i] = e.id end return table.concat(t, ',')\n"
        "end\n"
        "eq(ids(registry.find{kind = 'registry.entry'}), 'app:db,app:cache,other:db')\n"
        "eq(ids(registry.find{['meta.type'] = 'database'}), 'app:db,app:worker,other:db')\n"
        "eq(ids(registry.find{kind = 'registry.entry', ['meta.type'] = 'database'}), "
        "'app:db,other:db')\n"
        "eq(ids(registry.find{namespace = 'other'}), 'other:db')\n"
        "eq(ids(registry.find{name = 'db'}), 'app:db,other:db')\n"
        "eq(ids(registry.find{['meta.tier'] = 1}), 'app:db', 'number, no coercion')\n"
        "eq(ids(registry.find{['meta.tier'] = '1'}), 'app:worker', 'string, no coercion')\n"
        "eq(ids(registry.find{['meta.primary'] = false}), 'app:cache')\n"
        "eq(ids(registry.find{['meta.labels.env'] = 'prod'}), 'app:db')\n"
        "eq(ids(registry.find{['meta.team'] = 'core', kind = 'process.lua'}), "
        "'app:worker_process')\n"
        "eq(ids(registry.find{['meta.labels'] = 'prod'}), '')\n"
        "eq(ids(registry.find{['meta.type.x'] = 'database'}), '')\n"
        "eq(ids(registry.find{kind = 'service.group'}), '')\n"
        "eq(#registry.find{}, 5)\n"
        "local found = registry.find{namespace = 'app', name = 'db'}\n"
        "eq(#found, 1) eq(found[1].data.port, 5432) eq(found[1].meta.team, 'core')\n"
        "raises(function() registry.find() end, 'bad argument #1')\n"
        "raises(function() registry.find{kind = 'nope'} end, 'unknown kind \\'nope\\'')\n"
        "raises(function() registry.find{type = 'x'} end, 'unknown criterion \\'type\\'')\n"
        "raises(function() registry.find{['meta.'] = 'x'} end, 'unknown criterion')\n"
        "raises(function() registry.find{['meta.a..b'] = 'x'} end, 'unknown criterion')\n"
        "raises(function() registry.find{'x'} end, 'keys must be strings')\n"
        "raises(function() registry.find{kind = 1} end, 'must be a string')\n"
        "raises(function() registry.find{['meta.x'] = {}} end, 'string, number or boolean')\n"
        "local many = {kind = 'registry.entry'} for i = 1, 20 do many['meta.k' .. i] = i end\n"
        "eq(#registry.find(many), 0)\n");
}

/* Modules opened twice in one state share the state's cjson and error metatable. */
static void test_open_twice(void **state)
{
    lua_State *L = *state;
    lua_pushcfunction(L, sw_open_json);
    lua_call(L, 0, 1);
    lua_setglobal(L, "json2");
    lua_pushcfunction(L, sw_open_errors);
    lua_call(L, 0, 1);
    lua_setglobal(L, "errors2");
    run(L, "eq(json2.decode('[1]')[1], 1) eq(json2.null, json.null)\n"
           "eq(debug.getmetatable(errors2.new('a')), debug.getmetatable(errors.new('b')))\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_logger_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logger_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logger_method_form, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logger_odd_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_logger_disabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_get, setup, teardown),
        cmocka_unit_test_setup_teardown(test_registry_find, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_twice, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
