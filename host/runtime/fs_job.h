/* One fs operation as a blocking job (the `fs` module, docs/lua-api.md "fs"): what a Lua call
 * asks, done start to end by sw_fs_job_run on one of libuv's thread-pool threads (fs.c queues
 * it with uv_queue_work), its results left in the job for the process to read. Paths are
 * opened beneath their volume's directory only (fs_path.h); files that are not regular (a
 * FIFO, a device) are refused before any read or write, so no job can block forever on one.
 * Every fd a job opens is O_CLOEXEC: commands (exec) never inherit them. */
#ifndef STEWARD_FS_JOB_H
#define STEWARD_FS_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "vm.h"

#define SW_FS_LINE_MAX   (64 * 1024) /* read_line: the longest line, and its read-ahead */
#define SW_FS_LIST_MAX   100000      /* entries fs.list returns */
#define SW_FS_EIRREGULAR (-200001)   /* not a regular file (read, write, open) */
#define SW_FS_ETOOBIG    (-200002)   /* fs.read: larger than the cap */
#define SW_FS_ETOOMANY   (-200003)   /* fs.list: more than SW_FS_LIST_MAX entries */
#define SW_FS_EROOT      (-200004)   /* remove, rename or mkdir of the volume's root */
#define SW_FS_ELINE      (-200005)   /* read_line: no "\n" within SW_FS_LINE_MAX bytes */
#define SW_FS_ENOMEM     (-200006)   /* the host's memory budget has no room for the bytes */

typedef enum {
    SW_FS_OP_READ,       /* root+rel: the whole file, at most max bytes -> data, len */
    SW_FS_OP_WRITE,      /* root+rel: data, len; append; mode (created files) */
    SW_FS_OP_OPEN,       /* root+rel: flags, mode -> fd */
    SW_FS_OP_LIST,       /* root+rel -> data: len bytes of entries "<type char><name>\0", sorted */
    SW_FS_OP_STAT,       /* root+rel -> st (a link is described, not followed) */
    SW_FS_OP_MKDIR,      /* root+rel: mode; parents: create the missing ones, none is an error */
    SW_FS_OP_REMOVE,     /* root+rel: a file, link or empty directory */
    SW_FS_OP_RENAME,     /* root+rel to root2+rel2 */
    SW_FS_OP_FREAD,      /* fd: at most max bytes -> data, len (len 0: end of file) */
    SW_FS_OP_FREAD_LINE, /* fd: data holds len read-ahead bytes (cap SW_FS_LINE_MAX); reads
                          * on until a "\n" or the end of the file (eof) -> data, len */
    SW_FS_OP_FWRITE,     /* fd: seeks back over `unread` read-ahead bytes, then writes data, len */
    SW_FS_OP_FSEEK,      /* fd: whence (SEEK_*), offset (SEEK_CUR: less `unread`) -> pos */
    SW_FS_OP_CLOSE,      /* fd */
} sw_fs_op;

typedef struct sw_fs_job {
    sw_fs_op op;
    char *root, *rel, *root2, *rel2; /* owned (sw_fs_job_clear frees them) */
    int flags;                       /* open(2) flags of OP_OPEN */
    unsigned mode;                   /* permission bits of what WRITE, OPEN, MKDIR create */
    bool parents, append, eof;
    int fd;
    char *data; /* owned: WRITE/FWRITE's bytes, READ/FREAD/LIST's results */
    size_t len, max, unread;
    int whence;
    int64_t offset, pos;
    struct stat st;
    int err; /* 0, a negative errno or SW_FS_E* */
    /* READ and FREAD take the bytes they read from it (docs/security.md "Limits"), WRITE the
     * copy of its data; sw_fs_job_clear gives them back. NULL: not counted. */
    sw_vm_budget *budget;
    size_t taken;
} sw_fs_job;

/* Does the job (blocks). Thread: any; in the host, libuv's thread pool. */
void sw_fs_job_run(sw_fs_job *j);
/* Takes n more bytes from the job's budget: false when there is no room. */
bool sw_fs_job_take(sw_fs_job *j, size_t n);
/* Frees what the job owns and gives back what it took from its budget; closes the fd an
 * OP_OPEN made if close_fd (nobody took it). */
void sw_fs_job_clear(sw_fs_job *j, bool close_fd);
/* A job's error as text: libuv's for errno values ("no such file or directory"), else ours. */
const char *sw_fs_strerror(int err);

#endif
