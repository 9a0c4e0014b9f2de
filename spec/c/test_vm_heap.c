/* Unit tests for host/vm_heap.c, the per-state heap behind every process's Lua allocations:
 * alignment, reuse by size class, contents kept across reallocations (within the small
 * sizes, between small and large, and back), chunks added as it grows, closing, and a random
 * workload checked against a model of what each block must hold. Run under ASan too, where
 * the heap poisons free space: any stray access in here or in the heap would be reported. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vm_heap.h"

static void fill(void *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) ((unsigned char *)p)[i] = (unsigned char)(seed * 31 + i);
}

static int holds(const void *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (((const unsigned char *)p)[i] != (unsigned char)(seed * 31 + i)) return 0;
    return 1;
}

static void test_blocks_are_aligned_and_distinct(void **state)
{
    (void)state;
    sw_heap h;
    sw_heap_init(&h, 0);
    void *p[64];
    for (int i = 0; i < 64; i++) {
        size_t n = (size_t)(i * 5 % SW_HEAP_SMALL_MAX) + 1;
        p[i] = sw_heap_alloc(&h, n);
        assert_non_null(p[i]);
        assert_int_equal((uintptr_t)p[i] % SW_HEAP_GRAIN, 0);
        fill(p[i], n, (unsigned)i);
    }
    for (int i = 0; i < 64; i++)
        assert_true(holds(p[i], (size_t)(i * 5 % SW_HEAP_SMALL_MAX) + 1, (unsigned)i));
    for (int i = 0; i < 64; i++) sw_heap_free(&h, p[i], (size_t)(i * 5 % SW_HEAP_SMALL_MAX) + 1);
    sw_heap_release(&h);
}

static void test_free_block_is_reused_by_its_class_only(void **state)
{
    (void)state;
    sw_heap h;
    sw_heap_init(&h, 0);
    void *a = sw_heap_alloc(&h, 40);
    void *keep = sw_heap_alloc(&h, 8);
    sw_heap_free(&h, a, 40);
    void *other = sw_heap_alloc(&h, 24); /* another class: a new block */
    assert_ptr_not_equal(other, a);
    void *same = sw_heap_alloc(&h, 33); /* 33..40 share a's class */
    assert_ptr_equal(same, a);
    sw_heap_free(&h, same, 33);
    sw_heap_free(&h, other, 24);
    sw_heap_free(&h, keep, 8);
    sw_heap_release(&h);
}

static void test_realloc_keeps_contents_across_classes_and_kinds(void **state)
{
    (void)state;
    sw_heap h;
    sw_heap_init(&h, 0);
    const size_t sizes[] = {16, 20, 100, 256, 257, 4000, 300, 200, 9, 1};
    size_t n = 16;
    unsigned char *p = sw_heap_alloc(&h, n);
    fill(p, n, 7);
    for (size_t i = 1; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t m = sizes[i];
        p = sw_heap_realloc(&h, p, n, m);
        assert_non_null(p);
        assert_true(holds(p, n < m ? n : m, 7));
        fill(p, m, 7); /* the whole block is usable: ASan would catch a short one */
        n = m;
    }
    sw_heap_free(&h, p, n);
    sw_heap_release(&h);
}

static void test_grows_in_chunks_and_releases_them(void **state)
{
    (void)state;
    sw_heap h;
    sw_heap_init(&h, 1024);
    assert_int_equal(sw_heap_footprint(&h), 0);
    enum { N = 2000 };
    void **p = malloc(N * sizeof *p);
    for (int i = 0; i < N; i++) {
        p[i] = sw_heap_alloc(&h, 48);
        fill(p[i], 48, (unsigned)i);
    }
    size_t footprint = sw_heap_footprint(&h);
    assert_true(footprint >= N * 48);
    assert_true(footprint < N * 48 * 2); /* chunks grow, but not wastefully */
    for (int i = 0; i < N; i++) assert_true(holds(p[i], 48, (unsigned)i));
    sw_heap_closing(&h);
    for (int i = 0; i < N; i++) sw_heap_free(&h, p[i], 48); /* no-ops now */
    assert_int_equal(sw_heap_footprint(&h), footprint);
    sw_heap_release(&h);
    assert_int_equal(sw_heap_footprint(&h), 0);
    free(p);
}

static void test_large_blocks_are_freed_while_closing(void **state)
{
    (void)state;
    sw_heap h;
    sw_heap_init(&h, 0);
    void *big = sw_heap_alloc(&h, 10000);
    fill(big, 10000, 3);
    sw_heap_closing(&h);
    sw_heap_free(&h, big, 10000); /* goes back to malloc: LeakSanitizer checks it */
    sw_heap_release(&h);
}

/* A random mix of allocations, reallocations and frees, each block checked against the
 * pattern it must hold; sizes span both sides of SW_HEAP_SMALL_MAX. */
static void test_random_workload_keeps_every_block_intact(void **state)
{
    (void)state;
    enum { SLOTS = 300, STEPS = 40000 };
    struct {
        unsigned char *p;
        size_t n;
        unsigned seed;
    } s[SLOTS] = {0};
    sw_heap h;
    sw_heap_init(&h, 0);
    srand(12345);
    for (int step = 0; step < STEPS; step++) {
        int i = rand() % SLOTS;
        size_t n = rand() % 8 == 0 ? (size_t)(rand() % 2000) + 1 : (size_t)(rand() % 300) + 1;
        if (!s[i].p) {
            s[i].p = sw_heap_alloc(&h, n);
            s[i].n = n;
            s[i].seed = (unsigned)step;
            fill(s[i].p, n, s[i].seed);
        } else if (rand() % 3 == 0) {
            assert_true(holds(s[i].p, s[i].n, s[i].seed));
            sw_heap_free(&h, s[i].p, s[i].n);
            s[i].p = NULL;
        } else {
            assert_true(holds(s[i].p, s[i].n, s[i].seed));
            s[i].p = sw_heap_realloc(&h, s[i].p, s[i].n, n);
            assert_non_null(s[i].p);
            assert_true(holds(s[i].p, s[i].n < n ? s[i].n : n, s[i].seed));
            s[i].n = n;
            fill(s[i].p, n, s[i].seed);
        }
    }
    for (int i = 0; i < SLOTS; i++) {
        if (!s[i].p) continue;
        assert_true(holds(s[i].p, s[i].n, s[i].seed));
        sw_heap_free(&h, s[i].p, s[i].n);
    }
    sw_heap_release(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_are_aligned_and_distinct),
        cmocka_unit_test(test_free_block_is_reused_by_its_class_only),
        cmocka_unit_test(test_realloc_keeps_contents_across_classes_and_kinds),
        cmocka_unit_test(test_grows_in_chunks_and_releases_them),
        cmocka_unit_test(test_large_blocks_are_freed_while_closing),
        cmocka_unit_test(test_random_workload_keeps_every_block_intact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
