/* Volume paths (runtime/fs_path.c, fs_job.c): splitting, normalizing (".." never climbs out),
 * and opening beneath a volume's directory with openat2 and with the component walk (what
 * kernels without openat2 get): a symbolic link anywhere on the way is refused, whether it
 * points out of the volume or not, and nothing outside the volume is ever touched. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fs_job.h"
#include "fs_path.h"

static char base[256], vol[300], outside[300];

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int setup(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/test_fs_path.XXXXXX");
    assert_non_null(mkdtemp(base));
    snprintf(vol, sizeof vol, "%s/vol", base);
    snprintf(outside, sizeof outside, "%s/outside", base);
    char p[512];
    assert_int_equal(mkdir(vol, 0755), 0);
    assert_int_equal(mkdir(outside, 0755), 0);
    snprintf(p, sizeof p, "%s/secret", outside);
    write_file(p, "secret");
    snprintf(p, sizeof p, "%s/sub", vol);
    assert_int_equal(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/sub/in.txt", vol);
    write_file(p, "inside");
    snprintf(p, sizeof p, "%s/out", vol); /* a directory link out of the volume */
    assert_int_equal(symlink(outside, p), 0);
    snprintf(p, sizeof p, "%s/in_link", vol); /* a file link that stays inside */
    assert_int_equal(symlink("sub/in.txt", p), 0);
    snprintf(p, sizeof p, "%s/sub_link", vol); /* a directory link that stays inside */
    assert_int_equal(symlink("sub", p), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_split(void **state)
{
    (void)state;
    char id[64];
    const char *rel;
    assert_true(sw_fs_split("app:data:a/b.txt", id, sizeof id, &rel));
    assert_string_equal(id, "app:data");
    assert_string_equal(rel, "a/b.txt");
    assert_true(sw_fs_split("app:data", id, sizeof id, &rel));
    assert_string_equal(rel, "");
    assert_true(sw_fs_split("app.x:d-1:", id, sizeof id, &rel));
    assert_string_equal(id, "app.x:d-1");
    assert_false(sw_fs_split("data:", id, sizeof id, &rel) && *rel); /* "data" has no ns */
    assert_false(sw_fs_split("/etc/passwd", id, sizeof id, &rel));
    assert_false(sw_fs_split("app:da ta:x", id, sizeof id, &rel));
    assert_false(sw_fs_split(":x:y", id, sizeof id, &rel));
}

static void test_normalize(void **state)
{
    (void)state;
    char out[64];
    const struct {
        const char *in, *out;
    } ok[] = {{"", ""},          {"/", ""},          {"a/b", "a/b"},
              {"/a//b/", "a/b"}, {"./a/./b", "a/b"}, {"a/../b", "b"},
              {"a/b/..", "a"},   {"a/..", ""},       {"a/b/../../c", "c"},
              {"...", "..."},    {"..a", "..a"}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        assert_int_equal(sw_fs_normalize(ok[i].in, out, sizeof out), 0);
        assert_string_equal(out, ok[i].out);
    }
    const char *bad[] = {"..", "../x", "a/../..", "a/../../b", "/../x", "./.."};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(sw_fs_normalize(bad[i], out, sizeof out), -1);
    assert_int_equal(sw_fs_normalize("a/very/long/path/that/does/not/fit", out, 8), -1);
}

/* Runs a job on vol and returns its error. */
static int job(sw_fs_op op, const char *rel, sw_fs_job *j)
{
    memset(j, 0, sizeof *j);
    j->op = op;
    j->fd = -1;
    j->root = strdup(vol);
    j->rel = strdup(rel);
    j->max = 1 << 20;
    j->mode = 0644;
    sw_fs_job_run(j);
    return j->err;
}

static void check_beneath(void)
{
    sw_fs_job j;
    assert_int_equal(job(SW_FS_OP_READ, "sub/in.txt", &j), 0);
    assert_int_equal(j.len, 6);
    assert_memory_equal(j.data, "inside", 6);
    sw_fs_job_clear(&j, true);
    /* links are never followed: out of the volume or not, as a directory or as the file */
    const char *links[] = {"out/secret", "in_link", "sub_link/in.txt"};
    for (size_t i = 0; i < 3; i++) {
        int err = job(SW_FS_OP_READ, links[i], &j);
        assert_true(err == -ELOOP || err == -EXDEV);
        assert_null(j.data);
        sw_fs_job_clear(&j, true);
    }
    /* writing through a link creates nothing outside */
    job(SW_FS_OP_WRITE, "out/new", &j);
    assert_int_not_equal(j.err, 0);
    sw_fs_job_clear(&j, true);
    char p[512];
    snprintf(p, sizeof p, "%s/new", outside);
    assert_int_equal(access(p, F_OK), -1);
    /* a link is described by stat, not followed; it is removed itself, not its target */
    assert_int_equal(job(SW_FS_OP_STAT, "out", &j), 0);
    assert_true(S_ISLNK(j.st.st_mode));
    sw_fs_job_clear(&j, true);
    assert_int_equal(job(SW_FS_OP_MKDIR, "out/x", &j) != 0, 1);
    sw_fs_job_clear(&j, true);
    j = (sw_fs_job){.op = SW_FS_OP_MKDIR,
                    .fd = -1,
                    .root = strdup(vol),
                    .rel = strdup("out/y/z"),
                    .parents = true,
                    .mode = 0755};
    sw_fs_job_run(&j);
    assert_int_not_equal(j.err, 0);
    sw_fs_job_clear(&j, true);
    snprintf(p, sizeof p, "%s/y", outside);
    assert_int_equal(access(p, F_OK), -1);
}

static void test_beneath_openat2(void **state)
{
    (void)state;
    sw_fs_path_force_walk = false;
    check_beneath();
}

static void test_beneath_walk(void **state)
{
    (void)state;
    sw_fs_path_force_walk = true;
    check_beneath();
    sw_fs_path_force_walk = false;
}

static void test_irregular_files_refused(void **state)
{
    (void)state;
    char p[512];
    snprintf(p, sizeof p, "%s/fifo", vol);
    assert_int_equal(mkfifo(p, 0644), 0);
    sw_fs_job j;
    assert_int_equal(job(SW_FS_OP_READ, "fifo", &j), SW_FS_EIRREGULAR); /* never blocks */
    sw_fs_job_clear(&j, true);
    assert_int_equal(job(SW_FS_OP_READ, "sub", &j), -EISDIR);
    sw_fs_job_clear(&j, true);
    unlink(p);
}

static void test_read_cap(void **state)
{
    (void)state;
    sw_fs_job j = (sw_fs_job){
        .op = SW_FS_OP_READ, .fd = -1, .root = strdup(vol), .rel = strdup("sub/in.txt"), .max = 5};
    sw_fs_job_run(&j);
    assert_int_equal(j.err, SW_FS_ETOOBIG);
    assert_null(j.data);
    sw_fs_job_clear(&j, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_beneath_openat2),
        cmocka_unit_test(test_beneath_walk),
        cmocka_unit_test(test_irregular_files_refused),
        cmocka_unit_test(test_read_cap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
