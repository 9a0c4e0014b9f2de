/* libFuzzer target for the message decoder (host/runtime/message.c): the input is a buffer
 * as a mailbox might hold it. sw_msg_decode must never crash, raise, or read outside it
 * (libFuzzer hands over exactly `size` bytes, so ASan sees any overread); it either refuses
 * with the stack unchanged, or pushes exactly the values it reports. What it decoded must
 * encode again and decode, in another state, to equal values. */
#include <stdint.h>

#include "fuzz_lua.h"
#include "message.h"

static lua_State *A, *B;
static sw_msgbuf buf;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    A = fuzz_new_state();
    B = fuzz_new_state();
    sw_msgbuf_init(&buf);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lua_settop(A, 0);
    lua_settop(B, 0);
    lua_pushliteral(A, "below"); /* decode must leave what is under its values alone */
    int n = sw_msg_decode(A, data, size);
    if (n < 0) {
        FUZZ_CHECK(lua_gettop(A) == 1, "a refused decode left %d values", lua_gettop(A) - 1);
        return 0;
    }
    FUZZ_CHECK(lua_gettop(A) == n + 1, "decode returned %d but pushed %d", n, lua_gettop(A) - 1);
    FUZZ_CHECK(lua_type(A, 1) == LUA_TSTRING, "decode overwrote the value below");

    char err[256];
    int rc = sw_msg_encode(A, 2, n, SIZE_MAX, &buf, err, sizeof err);
    FUZZ_CHECK(rc == 0, "decoded values do not encode again: %s", err);
    FUZZ_CHECK(lua_gettop(A) == n + 1, "encode changed the stack");
    int m = sw_msg_decode(B, buf.data, buf.len);
    FUZZ_CHECK(m == n, "re-encoded values decode as %d, not %d", m, n);
    for (int i = 1; i <= n; i++)
        FUZZ_CHECK(fuzz_same(A, i + 1, B, i), "value %d differs after a round trip", i);
    return 0;
}
