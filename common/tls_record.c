/* tls_record.c -- our own TLS 1.3 record layer (RFC 8446 §5) over a plain
 * tls_stream_state: records framed, sealed and opened (tls_keys.c), the "tls-record" stream. */
#include "tls_ossl.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>


/* Alerts (RFC 8446 §6) */
#define ALERT_CLOSE_NOTIFY 0
#define ALERT_UNEXPECTED_MESSAGE 10
#define ALERT_BAD_RECORD_MAC 20
#define ALERT_RECORD_OVERFLOW 22
#define ALERT_ILLEGAL_PARAMETER 47
#define ALERT_DECODE_ERROR 50
#define ALERT_INTERNAL_ERROR 80
#define ALERT_USER_CANCELED 90

/* Records one pull opens at most (tls_record_pull). */
#define PULL_RECORDS 64

#define TRUNCATED_WHY "the peer closed the connection without close_notify: the stream may be truncated"
#define BUSY_WHY "TLS state in use by another holder"

/* ---- One holder at a time ---- */

static int broke(tls_stream_state *st, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Takes st for this call: 1, or 0 with errno EBUSY (another holder has it;
 * st untouched).  Acquire ordering: what the last holder wrote is seen. */
static int hold(tls_stream_state *st)
{
    uint32_t free_ = 0;
    if (!__atomic_compare_exchange_n(&st->busy, &free_, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        errno = EBUSY;
        return 0;
    }
    /* A state comes back from a worker (its routine may be taken over): its
     * counts are checked before use as offsets, its strings end in their arrays. */
    st->why[sizeof st->why - 1] = st->peer.common_name[sizeof st->peer.common_name - 1] = '\0';
    st->peer.fingerprint[sizeof st->peer.fingerprint - 1] = '\0';
    if (st->cipher_len > sizeof st->cipher || st->plain_off > sizeof st->plain ||
        st->plain_len > sizeof st->plain - st->plain_off) {
        st->cipher_len = st->plain_off = st->plain_len = 0;
        broke(st, EPROTO, "TLS state with counts out of bounds: refused");
    }
    return 1;
}

/* Gives st back (release: the next holder sees what this one wrote);
 * errno is kept for the caller. */
static void release(tls_stream_state *st)
{
    __atomic_store_n(&st->busy, 0, __ATOMIC_RELEASE);
}

int tls_record_holder_died(tls_stream_state *st)
{
    if (__atomic_load_n(&st->busy, __ATOMIC_ACQUIRE) == 0) return 0;
    snprintf(st->why, sizeof st->why, "the holder of the TLS state died inside a record operation");
    st->broken = 1;
    st->alert = 0;
    __atomic_store_n(&st->busy, 0, __ATOMIC_RELEASE);
    return 1;
}

void tls_record_set_key_update_limit(tls_stream_state *st, uint64_t records)
{
    st->key_update_records = records == 1 ? 2 : records;
}

/* Marks st broken with why (and the alert it owes the peer, 0: none);
 * errno becomes code.  Returns -1. */
static int broke_with(tls_stream_state *st, int code, int alert, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));
static int broke_with(tls_stream_state *st, int code, int alert, const char *fmt, va_list ap)
{
    vsnprintf(st->why, sizeof st->why, fmt, ap);
    st->broken = 1;
    if (alert != 0 && st->alert == 0) st->alert = (uint8_t)alert;
    errno = code;
    return -1;
}

static int broke(tls_stream_state *st, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = broke_with(st, code, 0, fmt, ap);
    va_end(ap);
    return rc;
}

/* broke, owing the peer the alert (sent by the caller that has the socket). */
static int broke_alert(tls_stream_state *st, int alert, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int broke_alert(tls_stream_state *st, int alert, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = broke_with(st, EPROTO, alert, fmt, ap);
    va_end(ap);
    return rc;
}

/* Sends the alert st owes the peer (broke_alert), once, without blocking:
 * best effort, the stream is broken anyway.  errno is kept. */
static void send_owed_alert(int fd, tls_stream_state *st)
{
    if (st->alert == 0 || fd < 0) return;
    int saved = errno;
    unsigned char alert[2] = {2 /* fatal */, st->alert}, rec[TLS_RECORD_HEADER + 2 + 1 + TLS_TAG_SIZE];
    st->alert = 0;
    size_t size = tls_seal_one(st, TLS_TYPE_ALERT, alert, sizeof alert, rec);
    if (size > 0 && send(fd, rec, size, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        /* the peer will see the connection close */
    }
    errno = saved;
}

/* The size of the whole record at p (avail bytes received), 0 when it has
 * not all arrived, or -1 (st broken) when its header is impossible. */
static long whole_record_at(tls_stream_state *st, const unsigned char *p, size_t avail)
{
    if (avail < TLS_RECORD_HEADER) return 0;
    size_t len = (size_t)p[3] << 8 | p[4];
    if (p[0] != TLS_TYPE_APPLICATION)
        return broke_alert(st, ALERT_UNEXPECTED_MESSAGE, "unexpected TLS record type %d after the handshake", p[0]);
    if (len > TLS_CIPHERTEXT_MAX)
        return broke_alert(st, ALERT_RECORD_OVERFLOW, "TLS record length %zu out of range", len);
    if (len < TLS_TAG_SIZE) /* cannot carry a tag: no AEAD would open it */
        return broke_alert(st, ALERT_BAD_RECORD_MAC, "TLS record length %zu out of range", len);
    /* the version bytes are the AEAD's additional data: other ones fail the tag */
    return avail >= TLS_RECORD_HEADER + len ? (long)(TLS_RECORD_HEADER + len) : 0;
}

static long whole_record(tls_stream_state *st)
{
    return whole_record_at(st, st->cipher, st->cipher_len);
}

/* Room for need more bytes at the end of st->plain (compacting). */
static int plain_room(tls_stream_state *st, size_t need)
{
    if (st->plain_len == 0) st->plain_off = 0;
    if (sizeof st->plain - st->plain_off - st->plain_len >= need) return 1;
    memmove(st->plain, st->plain + st->plain_off, st->plain_len);
    st->plain_off = 0;
    return sizeof st->plain - st->plain_len >= need;
}

/* A handshake record after the handshake: a KeyUpdate (RFC 8446 §4.6.3),
 * whole and alone in its record (§5.1: a message before a key change ends
 * its record).  The next receive keys are derived at once (the following
 * records are sealed with them); update_requested owes the peer a KeyUpdate
 * of ours before our next record.  0, or -1 (st broken, an alert owed). */
static int handshake_record(tls_stream_state *st, const unsigned char *p, size_t len)
{
    if (len < 4)
        return broke_alert(st, ALERT_UNEXPECTED_MESSAGE,
                           "a TLS handshake message cut across records after the handshake (%zu bytes)", len);
    size_t msg_len = (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3];
    if (p[0] != TLS_HANDSHAKE_KEY_UPDATE)
        return broke_alert(st, ALERT_UNEXPECTED_MESSAGE, "the peer sent a TLS handshake message (type %d) after the handshake",
                           p[0]);
    if (msg_len != 1) return broke_alert(st, ALERT_DECODE_ERROR, "TLS KeyUpdate of %zu bytes (1 expected)", msg_len);
    if (len != 5)
        return broke_alert(st, ALERT_UNEXPECTED_MESSAGE, "TLS KeyUpdate not alone in its record (%zu bytes)", len);
    if (p[4] > 1) return broke_alert(st, ALERT_ILLEGAL_PARAMETER, "TLS KeyUpdate with request_update %d", p[4]);
    if (tls_next_keys(&st->in, st->suite) != 0)
        return broke_alert(st, ALERT_INTERNAL_ERROR, "TLS KeyUpdate: no traffic secret to derive the next keys from");
    if (p[4] == 1 && st->out.update_due < TLS_UPDATES_DUE_MAX) st->out.update_due++;
    return 0;
}

/* What a record other than application data means: EOF for close_notify,
 * the next keys for a KeyUpdate, else an error.  Returns 0 or -1 (st
 * broken). */
static int control_record(tls_stream_state *st, int type, const unsigned char *p, size_t len)
{
    if (type == TLS_TYPE_ALERT && len == 2 && p[1] == ALERT_CLOSE_NOTIFY) {
        st->eof = 1;
        return 0;
    }
    if (type == TLS_TYPE_ALERT && len == 2 && p[1] == ALERT_USER_CANCELED)
        return 0; /* a closure alert: close_notify follows (RFC 8446 §6.1) */
    if (type == TLS_TYPE_ALERT && len == 2)
        return broke(st, EPROTO, "the peer sent TLS alert %d (%s)", p[1], SSL_alert_desc_string_long(p[1]));
    if (type == TLS_TYPE_ALERT) /* alerts are neither cut nor coalesced (§5.1) */
        return broke_alert(st, ALERT_DECODE_ERROR, "TLS alert record of %zu bytes", len);
    if (type == TLS_TYPE_HANDSHAKE) return handshake_record(st, p, len);
    return broke_alert(st, ALERT_UNEXPECTED_MESSAGE, "bad TLS inner content type %d (length %zu)", type, len);
}

/* Opens the whole record rec (rec_len bytes) into to, which has room for
 * its body less the tag (and is rec's body itself, or does not overlap it).
 * The application bytes it carried (0 for close_notify, which sets eof), or
 * -1 (st broken). */
static long open_at(tls_stream_state *st, const unsigned char *rec, size_t rec_len, unsigned char *to)
{
    size_t len = rec_len - TLS_RECORD_HEADER - TLS_TAG_SIZE;
    /* TLSInnerPlaintext (content, type, padding) is at most 2^14 + 1 bytes (§5.2, §5.4) */
    if (len > TLS_PLAINTEXT_MAX + 1)
        return broke_alert(st, ALERT_RECORD_OVERFLOW, "TLS record of %zu bytes is too long", len - 1);
    if (tls_open_body(st, rec, rec + TLS_RECORD_HEADER, len, to) != 0)
        return broke_alert(st, ALERT_BAD_RECORD_MAC, "TLS record %llu failed authentication (bad tag)",
                           (unsigned long long)st->in.seq);
    /* from here on the record is authentic: its bytes may be looked at */
    st->in.seq++;
    while (len > 0 && to[len - 1] == 0) len--; /* padding */
    if (len == 0) return broke_alert(st, ALERT_UNEXPECTED_MESSAGE, "TLS record without a content type");
    int type = to[--len];
    /* Records that carry no application byte cost a decryption each and
     * move no request on: a few in a row are allowed, as other stacks do. */
    st->idle_records = type == TLS_TYPE_APPLICATION && len > 0 ? 0 : st->idle_records + 1;
    if (st->idle_records > TLS_IDLE_RECORDS_MAX)
        return broke_alert(st, ALERT_UNEXPECTED_MESSAGE, "%u TLS records in a row without application data",
                           st->idle_records);
    if (type != TLS_TYPE_APPLICATION) return control_record(st, type, to, len);
    return (long)len;
}

/* Opens the whole record at the start of st->cipher (size rec_len) into
 * st->plain (which has room for its body).  0, or -1 (st broken). */
static int open_record(tls_stream_state *st, size_t rec_len)
{
    long len = open_at(st, st->cipher, rec_len, st->plain + st->plain_off + st->plain_len);
    if (len < 0) return -1;
    memmove(st->cipher, st->cipher + rec_len, st->cipher_len - rec_len);
    st->cipher_len -= rec_len;
    st->plain_len += (size_t)len;
    return 0;
}

/* Opens the whole records received while plaintext has room for them,
 * *budget of them at most (counted down).  0, or -1 (st broken). */
static int open_received(tls_stream_state *st, int *budget)
{
    for (; *budget > 0; --*budget) {
        long rec = st->eof ? 0 : whole_record(st);
        if (rec <= 0) return (int)rec;
        if (!plain_room(st, (size_t)rec - TLS_RECORD_HEADER - TLS_TAG_SIZE)) return 0;
        if (open_record(st, (size_t)rec) != 0) return -1;
    }
    return 0;
}

/* One recv into to (room bytes), kept bytes of a record having come
 * before: the count, 0 at EOF between records (st->eof, and st->truncated:
 * without close_notify), -1 with errno (st broken when the peer closed
 * inside a record). */
static ssize_t receive_after(int fd, tls_stream_state *st, size_t kept, unsigned char *to, size_t room, int flags)
{
    ssize_t k = recv(fd, to, room, flags);
    if (k == 0) st->truncated = 1; /* close_notify would have set eof before any recv */
    if (k == 0 && kept > 0)
        return broke(st, ECONNRESET,
                     "the peer closed the connection inside a TLS record (%zu bytes of it came) without close_notify: "
                     "the stream is truncated",
                     kept);
    if (k == 0) st->eof = 1;
    return k;
}

/* The peer is done (st->eof): 0 after its close_notify; after an EOF
 * without it, once the plaintext before it is taken, -1 with ECONNRESET and
 * st broken (TRUNCATED_WHY). */
static int ended(tls_stream_state *st)
{
    if (!st->truncated || st->plain_len > 0) return 0;
    return broke(st, ECONNRESET, TRUNCATED_WHY);
}

/* Reads what fd gives into st->cipher (flags: MSG_DONTWAIT or 0), as
 * receive_after says. */
static ssize_t receive(int fd, tls_stream_state *st, int flags)
{
    ssize_t k = receive_after(fd, st, st->cipher_len, st->cipher + st->cipher_len,
                              sizeof st->cipher - st->cipher_len, flags);
    if (k > 0) st->cipher_len += (size_t)k;
    return k;
}

/* What the socket has, opened without blocking, PULL_RECORDS at most per
 * call: one connection's records (tiny or empty ones too) cannot keep the
 * dispatcher from the others; a whole record left stays pending. */
static long pull(int fd, tls_stream_state *st, err_t *err)
{
    int budget = PULL_RECORDS;
    while (!st->broken) {
        if (open_received(st, &budget) != 0) break;
        if (budget == 0) return (long)st->plain_len;
        if (st->eof) {
            if (ended(st) != 0) break;
            return (long)st->plain_len;
        }
        if (st->cipher_len == sizeof st->cipher) return (long)st->plain_len; /* full */
        ssize_t k = receive(fd, st, MSG_DONTWAIT);
        if (k == 0 && st->eof) continue;
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return (long)st->plain_len;
        if (k < 0 && !st->broken) broke(st, errno, "receive: %s", strerror(errno));
    }
    return err_set(err, errno == EPROTO ? NUMRPC_EPROTO : NUMRPC_EIO, "%s", st->why);
}

long tls_record_pull(int fd, tls_stream_state *st, err_t *err)
{
    if (!hold(st)) return err_set(err, NUMRPC_EBUSY, BUSY_WHY);
    long rc = pull(fd, st, err);
    send_owed_alert(fd, st);
    release(st);
    return rc;
}

size_t tls_record_peek(const tls_stream_state *st, const unsigned char **p)
{
    *p = st->plain + st->plain_off;
    return st->plain_len;
}

void tls_record_consume(tls_stream_state *st, size_t n)
{
    if (n > st->plain_len) n = st->plain_len;
    st->plain_off += n;
    st->plain_len -= n;
}

static int seal(tls_stream_state *st, const void *buf, size_t len, transport_bytes *out, err_t *err)
{
    unsigned char rec[TLS_SEALED_MAX];
    transport sink = transport_memory_sink(out);
    const unsigned char *p = buf;
    if (st->broken) return err_set(err, NUMRPC_EIO, "TLS stream broken: %s", st->why);
    while (len > 0) {
        size_t n = len < TLS_PLAINTEXT_MAX ? len : TLS_PLAINTEXT_MAX;
        size_t size = tls_seal_record(st, TLS_TYPE_APPLICATION, p, n, rec);
        if (size == 0) return err_set(err, NUMRPC_EINTERNAL, "TLS record sealing failed");
        if (sink.ops->send(&sink, rec, size) < 0) {
            broke(st, errno, "sealed records: %s", strerror(errno));
            return err_set(err, NUMRPC_ELIMIT, "%s", st->why);
        }
        p += n;
        len -= n;
    }
    return 0;
}

int tls_record_seal(tls_stream_state *st, const void *buf, size_t len, transport_bytes *out, err_t *err)
{
    if (!hold(st)) return err_set(err, NUMRPC_EBUSY, BUSY_WHY);
    int rc = seal(st, buf, len, out, err);
    release(st);
    return rc;
}

int tls_record_close_notify(int fd, tls_stream_state *st)
{
    static const unsigned char close_notify[2] = {1, ALERT_CLOSE_NOTIFY};
    unsigned char rec[TLS_SEALED_ROOM(sizeof close_notify)];
    if (!hold(st)) return -1;
    int rc = -1;
    if (!st->broken && fd >= 0) {
        size_t size = tls_seal_record(st, TLS_TYPE_ALERT, close_notify, sizeof close_notify, rec);
        ssize_t k = size > 0 ? send(fd, rec, size, MSG_NOSIGNAL | MSG_DONTWAIT) : -1;
        rc = k == (ssize_t)size ? 0 : -1;
        snprintf(st->why, sizeof st->why, "this end sent close_notify");
        st->broken = 1;
    }
    release(st);
    return rc;
}

/* ---- The blocking stream: up to BATCH_RECORDS records per system call,
 * sealed from and opened into the caller's buffer without a copy ---- */

#define BATCH_RECORDS 16
#define BATCH_MAX (BATCH_RECORDS * TLS_RECORD_MAX)

static pthread_key_t batch_key;
static pthread_once_t batch_once = PTHREAD_ONCE_INIT;

static void make_batch_key(void)
{
    if (pthread_key_create(&batch_key, free) != 0) batch_key = (pthread_key_t)-1;
}

/* This thread's batch buffer (BATCH_MAX bytes): malloc'd on its first use,
 * freed when the thread ends; NULL when memory is short. */
static unsigned char *thread_batch(void)
{
    pthread_once(&batch_once, make_batch_key);
    if (batch_key == (pthread_key_t)-1) return NULL;
    unsigned char *b = pthread_getspecific(batch_key);
    if (b == NULL && (b = malloc(BATCH_MAX)) != NULL && pthread_setspecific(batch_key, b) != 0) {
        free(b);
        b = NULL;
    }
    return b;
}

/* Opens the whole records at the start of in[0, len) straight into out
 * while each fits its room; then the next whole records into st->plain
 * while it has room, and keeps the rest (part of a record) in st->cipher.
 * The bytes written to out, or -1 (st broken). */
static long open_batch(tls_stream_state *st, const unsigned char *in, size_t len, unsigned char *out,
                       size_t room)
{
    size_t used = 0, wrote = 0;
    long rec;
    while (!st->eof && (rec = whole_record_at(st, in + used, len - used)) > 0) {
        size_t body = (size_t)rec - TLS_RECORD_HEADER - TLS_TAG_SIZE;
        long got;
        if (body <= room - wrote) {
            got = open_at(st, in + used, (size_t)rec, out + wrote);
            wrote += got > 0 ? (size_t)got : 0;
        } else if (plain_room(st, body)) {
            got = open_at(st, in + used, (size_t)rec, st->plain + st->plain_off + st->plain_len);
            st->plain_len += got > 0 ? (size_t)got : 0;
        } else {
            break;
        }
        if (got < 0) return -1;
        used += (size_t)rec;
    }
    if (st->broken) return -1;
    if (st->eof) used = len; /* nothing counts after close_notify */
    if (len - used > sizeof st->cipher)
        return broke(st, EPROTO, "%zu TLS bytes left over from a batch", len - used);
    memcpy(st->cipher, in + used, len - used);
    st->cipher_len = len - used;
    return (long)wrote;
}

/* One blocking receive of up to n more ciphertext bytes after those kept
 * in st->cipher, opened as far as they go into buf (n bytes of room, at
 * least one whole record's).  The bytes written to buf (maybe 0 when only
 * st->plain got some, or the record is not whole yet), 0 at EOF (st->eof),
 * or -1 with errno. */
static ssize_t receive_batch(int fd, tls_stream_state *st, unsigned char *batch, unsigned char *buf, size_t n)
{
    size_t kept = st->cipher_len, want = BATCH_MAX - kept;
    if (want > n) want = n; /* what is opened beyond buf stays within plain and cipher */
    memcpy(batch, st->cipher, kept);
    ssize_t k = receive_after(fd, st, kept, batch + kept, want, 0);
    if (k <= 0) return k;
    return open_batch(st, batch, kept + (size_t)k, buf, n);
}

static ssize_t receive_plain(transport *t, tls_stream_state *st, void *buf, size_t n)
{
    unsigned char *batch = n >= TLS_CIPHERTEXT_MAX ? thread_batch() : NULL;
    for (;;) {
        if (st->broken) {
            errno = st->truncated ? ECONNRESET : EPROTO;
            return -1;
        }
        if (st->plain_len > 0) {
            size_t k = n < st->plain_len ? n : st->plain_len;
            memcpy(buf, st->plain + st->plain_off, k);
            tls_record_consume(st, k);
            return (ssize_t)k;
        }
        int budget = PULL_RECORDS;
        if (open_received(st, &budget) != 0) return -1;
        if (st->plain_len > 0) continue;
        if (st->eof) return ended(st);
        if (budget < PULL_RECORDS) break; /* records without application bytes: the caller's clock runs */
        ssize_t k = batch ? receive_batch(t->fd, st, batch, buf, n) : receive(t->fd, st, 0);
        if (batch && k > 0) return k;
        if (k == 0 && st->eof) continue; /* ended() tells */
        if (k < 0) return -1; /* a time limit leaves a cut record buffered; st->broken tells the rest */
        if (batch && st->plain_len == 0 && st->cipher_len < TLS_RECORD_HEADER) break; /* only empty records */
    }
    errno = EINTR; /* nothing for the caller yet: it checks its deadlines and reads again */
    return -1;
}

static ssize_t rec_recv(transport *t, void *buf, size_t n)
{
    tls_stream_state *st = t->session;
    if (!hold(st)) return -1;
    ssize_t k = receive_plain(t, st, buf, n);
    send_owed_alert(t->fd, st);
    release(st);
    return k;
}

/* Sends the records rec[0, size) whole, or breaks st. */
static int send_records(int fd, tls_stream_state *st, const unsigned char *rec, size_t size)
{
    size_t sent = 0;
    while (sent < size) {
        ssize_t k = send(fd, rec + sent, size - sent, MSG_NOSIGNAL);
        if (k > 0) sent += (size_t)k;
        else if (errno == EINTR) continue;
        else if (sent == 0) return -1; /* nothing went: the caller takes the records back */
        else if (errno == EAGAIN || errno == EWOULDBLOCK)
            return broke(st, ETIMEDOUT, "send time limit passed inside a TLS record");
        else
            return broke(st, errno, "send: %s", strerror(errno));
    }
    return 0;
}

static ssize_t send_plain(transport *t, tls_stream_state *st, const void *buf, size_t n)
{
    unsigned char one[TLS_SEALED_MAX], *batch = n > TLS_PLAINTEXT_MAX ? thread_batch() : NULL;
    size_t room = batch ? BATCH_MAX : sizeof one, size = 0, took = 0;
    if (batch == NULL) batch = one;
    if (st->broken) {
        errno = EPROTO;
        return -1;
    }
    tls_direction was = st->out; /* to take the records back if none goes */
    while (took < n) {
        size_t len = n - took < TLS_PLAINTEXT_MAX ? n - took : TLS_PLAINTEXT_MAX;
        if (room - size < TLS_SEALED_ROOM(len)) break;
        size_t sealed = tls_seal_record(st, TLS_TYPE_APPLICATION, (const unsigned char *)buf + took, len, batch + size);
        if (sealed == 0) return broke(st, EPROTO, "TLS record sealing failed");
        size += sealed;
        took += len;
    }
    int rc = send_records(t->fd, st, batch, size);
    if (rc != 0 && !st->broken) st->out = was; /* none was sent: their numbers (and keys) are free again */
    OPENSSL_cleanse(&was, sizeof was);
    return rc != 0 ? -1 : (ssize_t)took;
}

static ssize_t rec_send(transport *t, const void *buf, size_t n)
{
    tls_stream_state *st = t->session;
    if (!hold(st)) return -1;
    ssize_t k = send_plain(t, st, buf, n);
    release(st);
    return k;
}

static int rec_start(transport *t, int server_side, err_t *err)
{
    (void)server_side;
    if (t->session == NULL) return err_set(err, NUMRPC_EINVAL, "a TLS record stream needs its handshake's state");
    return 0; /* the handshake is the acceptor's (tls_accept.c) */
}

/* Plaintext ready, or 1 when a whole record waits to be opened: bytes poll()
 * on the socket cannot see either way. */
static size_t rec_pending(const transport *t)
{
    const tls_stream_state *st = t->session;
    if (st == NULL || st->broken) return 0;
    if (st->plain_len > 0) return st->plain_len;
    if (st->cipher_len < TLS_RECORD_HEADER) return 0;
    size_t len = (size_t)st->cipher[3] << 8 | st->cipher[4];
    return st->cipher_len >= TLS_RECORD_HEADER + len ? 1 : 0;
}

static void rec_close(transport *t)
{
    tls_stream_state *st = t->session;
    if (t->fd >= 0 && st != NULL) tls_record_close_notify(t->fd, st); /* best effort */
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    t->session = NULL; /* the state stays its owner's */
}

/* ---- Without blocking: a server's look between messages ---- */

/* The plaintext ready once what the socket has is opened, or -1 (failed,
 * or the peer finished and nothing is left). */
static long rec_ready(transport *t)
{
    tls_stream_state *st = t->session;
    err_t ignored;
    long k = tls_record_pull(t->fd, st, &ignored);
    return k < 0 || (k == 0 && st->eof) ? -1 : k;
}

static long rec_look(transport *t, void *buf, size_t n, int take)
{
    long k = rec_ready(t);
    if (k <= 0) return k;
    const unsigned char *p;
    size_t got = tls_record_peek(t->session, &p);
    if (got > n) got = n;
    memcpy(buf, p, got);
    if (take) tls_record_consume(t->session, got);
    return (long)got;
}

static size_t rec_window(const transport *t)
{
    (void)t;
    return TLS_PLAINTEXT_MAX; /* one record: the state holds two */
}

static int rec_seal(transport *t, transport_bytes *out, err_t *err)
{
    if (out->len == 0) return 0;
    /* Each record adds its header, the inner type and the tag. */
    size_t records = (out->len + TLS_PLAINTEXT_MAX - 1) / TLS_PLAINTEXT_MAX;
    transport_bytes sealed = {.max = out->len + records * (TLS_CIPHERTEXT_MAX - TLS_PLAINTEXT_MAX + TLS_RECORD_HEADER)};
    int rc = tls_record_seal(t->session, out->p, out->len, &sealed, err);
    if (rc != 0) {
        transport_bytes_free(&sealed);
        return rc;
    }
    transport_bytes_free(out);
    *out = sealed;
    return 0;
}

static ssize_t rec_send_now(transport *t, const void *bytes, size_t len, size_t *size)
{
    tls_stream_state *st = t->session;
    tls_direction before = st->out; /* key and number: a KeyUpdate may change both */
    transport_bytes sealed = {.max = SIZE_MAX};
    err_t ignored;
    ssize_t k = -1;
    if (tls_record_seal(st, bytes, len, &sealed, &ignored) == 0) {
        if (size) *size = sealed.len;
        do k = send(t->fd, sealed.p, sealed.len, MSG_DONTWAIT | MSG_NOSIGNAL);
        while (k < 0 && errno == EINTR);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) k = 0;
        if (k == 0) st->out = before; /* nothing went: the numbers are free again */
    }
    transport_bytes_free(&sealed);
    return k;
}

const transport_ops transport_tls_record_ops = {"tls-record", rec_recv,  rec_send,   rec_start, rec_pending, rec_close,
                                                rec_look,     rec_ready, rec_window, rec_seal,  rec_send_now};

transport tls_record_transport(int fd, tls_stream_state *st)
{
    transport t = {&transport_tls_record_ops, fd, st};
    return t;
}
