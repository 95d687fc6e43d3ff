/* last_words.c -- a worker's output read by the dispatcher: every line to
 * the log tagged with its call, the last bytes of a call kept for a crash. */
#define _GNU_SOURCE
#include "last_words.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define WORDS_FINAL_MAX (1u << 20) /* read from a dead worker's pipe, at most */

/* The level of a routine's lines: notice; in a sanitizer build error, so
 * that a report from inside a worker shows even under --quiet (as it did
 * when workers wrote to the server's stderr). */
#if defined(__SANITIZE_ADDRESS__)
#define WORDS_LEVEL LOG_LEVEL_ERROR
#else
#define WORDS_LEVEL LOG_LEVEL_NOTICE
#endif

int words_open(last_words *w, int *write_end, err_t *err)
{
    int p[2];
    memset(w, 0, sizeof *w);
    w->fd = -1;
    *write_end = -1;
    if (pipe2(p, O_CLOEXEC) != 0) return err_set(err, NUMRPC_ESERVER, "a worker's output pipe: %s", strerror(errno));
    /* Only the dispatcher's end is non-blocking: a full pipe stops the
     * routine that fills it, never the dispatcher. */
    if (fcntl(p[0], F_SETFL, O_NONBLOCK) != 0) {
        close(p[0]);
        close(p[1]);
        return err_set(err, NUMRPC_ESERVER, "a worker's output pipe: %s", strerror(errno));
    }
    w->fd = p[0];
    *write_end = p[1];
    return 0;
}

void words_close(last_words *w)
{
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
}

/* Bytes c takes once escaped: printable ASCII as is, \\ \" \t, else \xNN. */
static size_t esc_len(unsigned char c)
{
    if (c == '\\' || c == '"' || c == '\t') return 2;
    return c >= 0x20 && c < 0x7f ? 1 : 4;
}

/* Escapes n bytes of s into out (room for all of them: esc_len each). */
static size_t esc_put(char *out, const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' || c == '"') {
            out[k++] = '\\';
            out[k++] = (char)c;
        } else if (c == '\t') {
            out[k++] = '\\';
            out[k++] = 't';
        } else if (c >= 0x20 && c < 0x7f) {
            out[k++] = (char)c;
        } else {
            k += (size_t)sprintf(out + k, "\\x%02x", c);
        }
    }
    return k;
}

/* The log's tag for the owner's lines: its call, or none before any call. */
static void tag(const last_words *w, pid_t pid, char *buf, size_t len)
{
    char name[IFACE_MAX_NAME * 4 + 1];
    size_t n = strnlen(w->owner_name, sizeof w->owner_name - 1);
    name[esc_put(name, w->owner_name, n)] = '\0';
    if (w->owner > 0) snprintf(buf, len, "call %u %s (worker %d)", (unsigned)w->owner_id, name, (int)pid);
    else snprintf(buf, len, "worker %d", (int)pid);
}

/* The line read so far goes to the log (at most WORDS_LOG_LINES a call). */
static void log_line(last_words *w, const server_config *cfg, pid_t pid)
{
    if (w->logged >= WORDS_LOG_LINES) {
        w->unlogged++;
    } else {
        char who[IFACE_MAX_NAME * 4 + 64], text[WORDS_LINE_MAX * 4 + 1];
        tag(w, pid, who, sizeof who);
        size_t n = w->line_len;
        if (n > 0 && w->line[n - 1] == '\r') n--;
        text[esc_put(text, w->line, n)] = '\0';
        server_log(cfg, WORDS_LEVEL, "%s: %s%s", who, text, w->line_over ? " [line cut]" : "");
        if (++w->logged == WORDS_LOG_LINES)
            server_log(cfg, WORDS_LEVEL, "%s: further lines of this call are counted, not logged", who);
    }
    w->line_len = w->line_over = 0;
}

/* The owner's output has ended (a new call, or the worker's end): its
 * unfinished line and the count of lines not logged go to the log. */
static void owner_done(last_words *w, const server_config *cfg, pid_t pid)
{
    if (w->line_len > 0 || w->line_over > 0) log_line(w, cfg, pid);
    if (w->unlogged > 0) {
        char who[IFACE_MAX_NAME * 4 + 64];
        tag(w, pid, who, sizeof who);
        server_log(cfg, WORDS_LEVEL, "%s: %u more lines not logged", who, w->unlogged);
        w->unlogged = 0;
    }
}

/* A new call's output: the last one's is done, its kept bytes dropped. */
static void new_owner(last_words *w, const server_config *cfg, const worker_slot *slot, pid_t pid, double key)
{
    owner_done(w, cfg, pid);
    w->owner = key;
    w->owner_id = slot->call_id;
    memcpy(w->owner_name, slot->routine, sizeof w->owner_name); /* the worker's writing: bounded below */
    w->owner_name[sizeof w->owner_name - 1] = '\0';
    w->kept_len = 0;
    w->kept_cut = 0;
    w->logged = w->unlogged = 0;
}

/* Bytes read: kept (the last WORDS_KEEP of them) and cut into lines. */
static void take(last_words *w, const server_config *cfg, pid_t pid, const char *b, size_t n)
{
    if (n >= WORDS_KEEP) {
        memcpy(w->kept, b + n - WORDS_KEEP, WORDS_KEEP);
        w->kept_cut |= n > WORDS_KEEP || w->kept_len > 0;
        w->kept_len = WORDS_KEEP;
    } else {
        size_t drop = w->kept_len + n > WORDS_KEEP ? w->kept_len + n - WORDS_KEEP : 0;
        if (drop) {
            memmove(w->kept, w->kept + drop, w->kept_len - drop);
            w->kept_len -= drop;
            w->kept_cut = 1;
        }
        memcpy(w->kept + w->kept_len, b, n);
        w->kept_len += n;
    }
    for (size_t i = 0; i < n; i++) {
        if (b[i] == '\n') log_line(w, cfg, pid);
        else if (w->line_len < WORDS_LINE_MAX) w->line[w->line_len++] = b[i];
        else w->line_over++;
    }
}

void words_drain(last_words *w, const server_config *cfg, const worker_slot *slot, pid_t pid, int all)
{
    if (w->fd < 0) return;
    size_t total = 0;
    char buf[WORDS_READ_MAX];
    do {
        /* The key before the read: what is read was written under it
         * (last_words.h). */
        double key = slot->started;
        if (key != w->owner) new_owner(w, cfg, slot, pid, key);
        ssize_t k = read(w->fd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        take(w, cfg, pid, buf, (size_t)k);
        total += (size_t)k;
    } while (all && total < WORDS_FINAL_MAX);
    if (all) owner_done(w, cfg, pid);
}

void words_tail(const last_words *w, const worker_slot *slot, char *out, size_t max)
{
    out[0] = '\0';
    if (w->fd < 0 || w->owner != slot->started || w->kept_len == 0 || max < 16) return;
    size_t end = w->kept_len;
    while (end > 0 && (w->kept[end - 1] == '\n' || w->kept[end - 1] == '\r')) end--;
    if (end == 0) return;
    size_t room = max - 1 - 2 - 3; /* the quotes, a "..." */
    /* Whole lines from the end while they fit ("\n" between them: 2). */
    size_t start = end, used = 0;
    while (start > 0) {
        size_t le = start == end ? end : start - 1, lb = le; /* the line before start: [lb, le) */
        while (lb > 0 && w->kept[lb - 1] != '\n') lb--;
        size_t need = start == end ? 0 : 2;
        for (size_t i = lb; i < le; i++) need += esc_len((unsigned char)w->kept[i]);
        if (used + need > room) break;
        used += need;
        start = lb;
    }
    size_t o = 0;
    out[o++] = '"';
    if (start == end) { /* the last line alone is too long: its end */
        start = end;
        while (start > 0 && w->kept[start - 1] != '\n' && used + esc_len((unsigned char)w->kept[start - 1]) <= room)
            used += esc_len((unsigned char)w->kept[--start]);
    }
    if (start > 0 || w->kept_cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    for (size_t i = start; i < end; i++) {
        if (w->kept[i] == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (w->kept[i] != '\r' || (i + 1 < end && w->kept[i + 1] != '\n')) {
            o += esc_put(out + o, w->kept + i, 1);
        }
    }
    out[o++] = '"';
    out[o] = '\0';
}
