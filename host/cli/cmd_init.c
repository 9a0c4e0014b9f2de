/* `steward init DIR`: writes a small working app to start from: two services with a
 * dependency, a security policy, a README, and editor settings (a .luacheckrc that knows the
 * host modules, from the list the registry reserves, so it cannot drift). Refuses a DIR that
 * exists and is not empty: it never overwrites anything. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "kinds.h"

static const char app_yaml[] =
    "# The app's registry (docs/registry.md). `steward check .` validates it; `steward schema`\n"
    "# prints a JSON Schema editors can use (docs/operating.md \"Editor support\").\n"
    "version: \"1.0\"\n"
    "namespace: app\n"
    "entries:\n"
    "  - { name: counter_process, kind: process.lua, source: file://src/counter.lua }\n"
    "  - { name: client_process, kind: process.lua, source: file://src/client.lua }\n"
    "\n"
    "  # Keeps a count; other processes reach it by its name, \"counter\".\n"
    "  - name: counter\n"
    "    kind: process.service\n"
    "    process: counter_process\n"
    "    lifecycle:\n"
    "      auto_start: true\n"
    "      ready: notify            # running once its name is registered\n"
    "\n"
    "  # Asks the counter to count, every second. Starts after it (depends_on).\n"
    "  - name: client\n"
    "    kind: process.service\n"
    "    process: client_process\n"
    "    input: [ \"1s\" ]\n"
    "    lifecycle:\n"
    "      auto_start: true\n"
    "      depends_on: [ counter ]\n"
    "      restart: { policy: always, initial_delay: 500ms, max_delay: 10s }\n"
    "      security:\n"
    "        actor: { id: \"svc:client\" }\n"
    "        policies: [ may_count ]\n"
    "\n"
    "  # The client may send to the counter, and nothing else that is guarded.\n"
    "  - name: may_count\n"
    "    kind: security.policy\n"
    "    policy: { actions: process.send, resources: counter, effect: allow }\n"
    "\n"
    "  # `steward test .` runs tests/counter_test.lua with the counter running. Its assertions\n"
    "  # are Debian's lua-luassert (and lua-say), imported as module trees.\n"
    "  - name: counter_test\n"
    "    kind: test.lua\n"
    "    source: file://tests/counter_test.lua\n"
    "    imports: { luassert: luassert }\n"
    "    services: [ counter ]\n"
    "  - { name: luassert, kind: library.lua, source: \"dir:///usr/share/lua/5.1/luassert\",\n"
    "      imports: { say: say } }\n"
    "  - { name: say, kind: library.lua, source: \"dir:///usr/share/lua/5.1/say\" }\n";

static const char counter_test_lua[] =
    "-- Run by `steward test .` in a process of its own, with the counter service running.\n"
    "describe(\"counter\", function()\n"
    "  it(\"answers each incr with the new count\", function()\n"
    "    assert.is_true(process.send(\"counter\", \"incr\"))\n"
    "    assert.are.equal(1, process.inbox():receive():data())\n"
    "    process.send(\"counter\", \"incr\")\n"
    "    assert.are.equal(2, process.inbox():receive():data())\n"
    "  end)\n"
    "end)\n";

static const char counter_lua[] =
    "-- Counts the \"incr\" messages it gets and answers each with the new count.\n"
    "return function()\n"
    "  assert(process.registry.register(\"counter\"))\n"
    "  process.ready()\n"
    "  local count, inbox, events = 0, process.inbox(), process.events()\n"
    "  while true do\n"
    "    local r = channel.select { inbox:case_receive(), events:case_receive() }\n"
    "    if r.channel == events then\n"
    "      if r.value.kind == process.event.CANCEL then return end\n"
    "    elseif r.value:topic() == \"incr\" then\n"
    "      count = count + 1\n"
    "      process.send(r.value:from(), \"count\", count)\n"
    "    end\n"
    "  end\n"
    "end\n";

static const char client_lua[] =
    "-- Every `period`, asks the counter to count and logs the answer, until CANCEL.\n"
    "return function(period)\n"
    "  local ticker, inbox, events = time.ticker(period), process.inbox(), process.events()\n"
    "  while true do\n"
    "    local r = channel.select { ticker:channel():case_receive(), events:case_receive() }\n"
    "    if r.channel == events and r.value.kind == process.event.CANCEL then return end\n"
    "    if r.channel == ticker:channel() then\n"
    "      assert(process.send(\"counter\", \"incr\"))\n"
    "      logger.info(\"counted\", { count = inbox:receive():data() })\n"
    "    end\n"
    "  end\n"
    "end\n";

static const char readme_md[] =
    "# A Steward app\n"
    "\n"
    "    steward check .        # validate the registry, compile the Lua\n"
    "    steward graph . --why  # what starts when, and why\n"
    "    steward run .          # run it; Ctrl-C stops it cleanly\n"
    "    steward test .         # run tests/ with the services they need\n"
    "    steward status         # from another terminal, in this directory\n"
    "\n"
    "`app.yaml` declares two services: `counter` registers its name and is ready (`ready:\n"
    "notify`) before `client` starts, and `client` may send to it (the `may_count` policy)\n"
    "and do nothing else that is guarded. The code is in `src/`.\n";

/* One file under dir, created exclusively (an existing file is never overwritten). */
static int write_file(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "steward init: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    int rc = close(fd);
    if (done < len || rc != 0) {
        fprintf(stderr, "steward init: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* luacheck's settings: LuaJIT's standard library and the host modules as read-only globals. */
static int write_luacheckrc(const char *dir)
{
    char text[2048] = "-- luacheck settings for a Steward app: the host modules are globals.\n"
                      "std = \"luajit\"\n"
                      "read_globals = {";
    for (const char *const *m = sw_host_module_names; *m; m++) {
        size_t n = strlen(text);
        snprintf(text + n, sizeof text - n, "%s\"%s\"", m == sw_host_module_names ? "" : ", ", *m);
    }
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "}\n");
    return write_file(dir, ".luacheckrc", text);
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) return 0;
    fprintf(stderr, "steward init: %s: %s\n", path, strerror(errno));
    return -1;
}

/* Whether dir does not exist yet, or is an empty directory. */
static bool empty_or_missing(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return errno == ENOENT;
    const struct dirent *e;
    bool empty = true;
    while (empty && (e = readdir(d)) != NULL)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

int sw_cmd_init(const sw_cli *cli)
{
    const char *dir = cli->dir;
    if (!empty_or_missing(dir)) {
        fprintf(stderr, "steward init: %s exists and is not an empty directory\n", dir);
        return 2;
    }
    char src[4096], tests[4096];
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(tests, sizeof tests, "%s/tests", dir);
    if (make_dir(dir) || make_dir(src) || make_dir(tests) ||
        write_file(dir, "app.yaml", app_yaml) || write_file(src, "counter.lua", counter_lua) ||
        write_file(src, "client.lua", client_lua) ||
        write_file(tests, "counter_test.lua", counter_test_lua) ||
        write_file(dir, "README.md", readme_md) || write_luacheckrc(dir))
        return 1;
    printf("created %s: steward check %s && steward run %s\n", dir, dir, dir);
    return 0;
}
