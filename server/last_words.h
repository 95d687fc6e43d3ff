/* last_words.h -- what a worker's routines write to stdout and stderr (a
 * pipe the dispatcher reads): each line logged with its call, and the last
 * 4 KiB of the current call's kept for its error detail (last_words.c). */
#ifndef NUMRPC_SERVER_LAST_WORDS_H
#define NUMRPC_SERVER_LAST_WORDS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "error.h"
#include "slots.h"

#define WORDS_KEEP 4096      /* bytes of a call's output kept for its detail    */
#define WORDS_LINE_MAX 512   /* a logged line is cut there                       */
#define WORDS_READ_MAX 4096  /* bytes read per event: a flood cannot hold the loop */
#define WORDS_LOG_LINES 200  /* lines of one call logged; later ones are counted */

/* One worker's output, owned by the dispatcher's worker entry.  The keys
 * are the slot's `started` (unique per call of a worker): the dispatcher
 * reads it before each read, and the worker starts a call only once the
 * pipe is empty (worker.c), so bytes read under a key were written during
 * that call; a new key empties the kept bytes. */
typedef struct last_words {
    int fd;                       /* read end, non-blocking (-1: none)      */
    double owner;                 /* key of the call whose words are kept   */
    uint32_t owner_id;            /* its call id and routine, for the log   */
    char owner_name[IFACE_MAX_NAME + 1];
    char kept[WORDS_KEEP];        /* the call's last bytes                   */
    size_t kept_len;
    int kept_cut;                 /* bytes before kept[0] were dropped      */
    char line[WORDS_LINE_MAX];    /* the line being read, for the log       */
    size_t line_len;
    size_t line_over;             /* its bytes beyond WORDS_LINE_MAX        */
    unsigned logged, unlogged;    /* the owner's lines logged, and not      */
} last_words;

/* A new pipe: *write_end for the worker (blocking, close-on-exec, the
 * caller's to close once handed over), the read end kept in w.  0, or -1
 * with err set (w then has no pipe: the worker keeps the server's stderr). */
int words_open(last_words *w, int *write_end, err_t *err);
/* Reads what the worker of slot (pid) wrote and logs its lines: one read
 * of WORDS_READ_MAX at most, or with all (the worker is dead) everything
 * left, up to 1 MiB. */
void words_drain(last_words *w, const server_config *cfg, const worker_slot *slot, pid_t pid, int all);
/* The last words of the call with the slot's current key, escaped and
 * quoted, at most max - 1 bytes (whole lines first, "..." where cut),
 * written to out; "" when that call wrote nothing. */
void words_tail(const last_words *w, const worker_slot *slot, char *out, size_t max);
/* Closes the pipe (w's other fields are left as they are). */
void words_close(last_words *w);

#endif
