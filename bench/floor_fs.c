/* The floor under fs.read (bench/fs.sh): open + read + close of the same 4 KB file as a job on
 * a libuv loop's thread pool, one at a time and `batch` at once, as fs.c queues them; and the
 * same syscalls in a plain loop on one thread. Usage: floor_fs FILE [N] [ROUNDS] [BATCH] */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <uv.h>

static const char *path;
static long left, in_flight;

static void read_file(void)
{
    char buf[8192];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || read(fd, buf, sizeof buf) != 4096) abort();
    close(fd);
}

static void on_work(uv_work_t *w)
{
    (void)w;
    read_file();
}

static void on_done(uv_work_t *w, int status)
{
    (void)status;
    in_flight--;
    if (left > 0) {
        left--;
        in_flight++;
        uv_queue_work(w->loop, w, on_work, on_done);
    } else {
        free(w);
    }
}

static double pool_rate(uv_loop_t *loop, long n, long batch)
{
    uint64_t t0 = uv_hrtime();
    left = n;
    for (long i = 0; i < batch && left > 0; i++, left--, in_flight++)
        uv_queue_work(loop, malloc(sizeof(uv_work_t)), on_work, on_done);
    uv_run(loop, UV_RUN_DEFAULT);
    return (double)n / ((double)(uv_hrtime() - t0) / 1e9);
}

static double plain_rate(long n)
{
    uint64_t t0 = uv_hrtime();
    for (long i = 0; i < n; i++) read_file();
    return (double)n / ((double)(uv_hrtime() - t0) / 1e9);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    path = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 20000, rounds = argc > 3 ? atol(argv[3]) : 5,
         batch = argc > 4 ? atol(argv[4]) : 64;
    uv_loop_t loop;
    uv_loop_init(&loop);
    double seq = 0, par = 0, plain = 0;
    for (long r = 0; r < rounds; r++) {
        double a = pool_rate(&loop, n, 1), b = pool_rate(&loop, n, batch), c = plain_rate(n);
        seq = a > seq ? a : seq;
        par = b > par ? b : par;
        plain = c > plain ? c : plain;
    }
    printf("C, one thread, no pool   %9.0f reads/s\n", plain);
    printf("C pool      sequential   %9.0f reads/s\n", seq);
    printf("C pool %3ld  at once      %9.0f reads/s\n", batch, par);
    uv_loop_close(&loop);
    return 0;
}
