/* tls_keys.c -- TLS 1.3 record protection: the suites, the key schedule
 * (HKDF-Expand-Label, KeyUpdate's next keys), record bodies and whole records sealed. */
#include "tls_ossl.h"

#include <pthread.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

/* What a suite needs: its AEAD, key size and hash. */
typedef struct suite_info {
    uint16_t id;
    const char *name, *cipher, *hash;
    size_t key_len;
} suite_info;

static const suite_info suites[] = {
    {0x1301, "TLS_AES_128_GCM_SHA256", "AES-128-GCM", "SHA256", 16},
    {0x1302, "TLS_AES_256_GCM_SHA384", "AES-256-GCM", "SHA384", 32},
    {0x1303, "TLS_CHACHA20_POLY1305_SHA256", "ChaCha20-Poly1305", "SHA256", 32},
};
#define NSUITES (sizeof suites / sizeof suites[0])

static EVP_CIPHER *ciphers[NSUITES]; /* fetched once, kept for the process */
static pthread_once_t ciphers_once = PTHREAD_ONCE_INIT;

static void fetch_ciphers(void)
{
    for (size_t i = 0; i < NSUITES; i++) ciphers[i] = EVP_CIPHER_fetch(NULL, suites[i].cipher, NULL);
}

/* The index of suite in suites, or -1. */
static int suite_index(uint16_t suite)
{
    for (size_t i = 0; i < NSUITES; i++)
        if (suites[i].id == suite) return (int)i;
    return -1;
}

const char *tls_suite_name(uint16_t suite)
{
    int i = suite_index(suite);
    return i < 0 ? NULL : suites[i].name;
}

/* HKDF-Expand-Label(secret, label, "", len) for len up to the hash's size:
 * one HMAC block of the HkdfLabel structure (RFC 8446 §7.1). */
static int expand_label(const EVP_MD *md, const unsigned char *secret, size_t secret_len,
                        const char *label, unsigned char *out, size_t len)
{
    unsigned char info[64], block[EVP_MAX_MD_SIZE];
    size_t label_len = strlen(label), n = 0;
    unsigned block_len = 0;
    info[n++] = (unsigned char)(len >> 8);
    info[n++] = (unsigned char)len;
    info[n++] = (unsigned char)(6 + label_len);
    memcpy(info + n, "tls13 ", 6);
    memcpy(info + n + 6, label, label_len);
    n += 6 + label_len;
    info[n++] = 0; /* empty context */
    info[n++] = 1; /* the counter of the first block */
    if (HMAC(md, secret, (int)secret_len, info, n, block, &block_len) == NULL || block_len < len) return -1;
    memcpy(out, block, len);
    return 0;
}

int tls_record_keys(tls_direction *d, uint16_t suite, const unsigned char *secret, size_t secret_len)
{
    int i = suite_index(suite);
    if (i < 0) return -1;
    const EVP_MD *md = EVP_get_digestbyname(suites[i].hash);
    memset(d, 0, sizeof *d);
    if (md == NULL || expand_label(md, secret, secret_len, "key", d->key, suites[i].key_len) != 0 ||
        expand_label(md, secret, secret_len, "iv", d->iv, sizeof d->iv) != 0)
        return -1;
    if (secret_len <= sizeof d->secret) {
        memcpy(d->secret, secret, secret_len);
        d->secret_len = (uint8_t)secret_len;
    }
    return 0;
}

/* RFC 8446 §7.2: application_traffic_secret_N+1 = HKDF-Expand-Label(
 * application_traffic_secret_N, "traffic upd", "", Hash.length), and d's
 * key and iv from it; seq starts again at 0.  0, or -1 (d unchanged) when
 * d has no secret of the suite's hash length. */
int tls_next_keys(tls_direction *d, uint16_t suite)
{
    int i = suite_index(suite);
    const EVP_MD *md = i < 0 ? NULL : EVP_get_digestbyname(suites[i].hash);
    int n = md ? EVP_MD_get_size(md) : 0;
    unsigned char next[TLS_SECRET_MAX];
    if (n <= 0 || (size_t)n > sizeof next || d->secret_len != n ||
        expand_label(md, d->secret, (size_t)n, "traffic upd", next, (size_t)n) != 0)
        return -1;
    tls_direction was = *d;
    int rc = tls_record_keys(d, suite, next, (size_t)n);
    OPENSSL_cleanse(next, sizeof next);
    if (rc != 0) {
        *d = was;
    } else {
        d->update_due = was.update_due;
        d->updates = was.updates + 1;
    }
    OPENSSL_cleanse(&was, sizeof was);
    return rc;
}

/* A cipher context keyed for d's next record (nonce: iv XOR its sequence
 * number), with header fed as the additional data; NULL on failure.  The
 * caller frees it. */
static EVP_CIPHER_CTX *record_cipher(const tls_stream_state *st, const tls_direction *d, int seal,
                                     const unsigned char header[TLS_RECORD_HEADER])
{
    pthread_once(&ciphers_once, fetch_ciphers);
    int i = suite_index(st->suite), n = 0;
    if (i < 0 || ciphers[i] == NULL) return NULL;
    unsigned char nonce[12];
    memcpy(nonce, d->iv, sizeof nonce);
    for (int b = 0; b < 8; b++) nonce[11 - b] ^= (unsigned char)(d->seq >> (8 * b));
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (c != NULL && EVP_CipherInit_ex2(c, ciphers[i], d->key, nonce, seal, NULL) == 1 &&
        EVP_CipherUpdate(c, NULL, &n, header, TLS_RECORD_HEADER) == 1)
        return c;
    EVP_CIPHER_CTX_free(c);
    return NULL;
}

/* Seals len bytes of data and then the content type byte into out (which
 * does not overlap data) and writes the tag after them.  0, or -1. */
int tls_seal_body(const tls_stream_state *st, const unsigned char header[TLS_RECORD_HEADER],
                  const unsigned char *data, size_t len, unsigned char type, unsigned char *out)
{
    EVP_CIPHER_CTX *c = record_cipher(st, &st->out, 1, header);
    int n = 0, ok = c != NULL && EVP_CipherUpdate(c, out, &n, data, (int)len) == 1 &&
                    EVP_CipherUpdate(c, out + len, &n, &type, 1) == 1 &&
                    EVP_CipherFinal_ex(c, out + len + 1, &n) == 1 &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, TLS_TAG_SIZE, out + len + 1) == 1;
    EVP_CIPHER_CTX_free(c);
    return ok ? 0 : -1;
}

/* Opens the len bytes of body (followed by its tag) into out (the same
 * place, or one that does not overlap it).  0, or -1 for a bad tag.
 * The tag is checked before any byte of out is used: EVP_CipherUpdate
 * writes the decrypted bytes, EVP_CipherFinal_ex then verifies the tag,
 * and only a 0 from here lets the callers (tls_record.c: open_at) count them, strip the
 * padding or read the content type.  On a failure the bytes written to out
 * are wiped, so no plaintext of a forged record stays even in buffers the
 * caller has not been told about. */
int tls_open_body(const tls_stream_state *st, const unsigned char header[TLS_RECORD_HEADER],
                  const unsigned char *body, size_t len, unsigned char *out)
{
    EVP_CIPHER_CTX *c = record_cipher(st, &st->in, 0, header);
    int n = 0, ok = c != NULL && EVP_CipherUpdate(c, out, &n, body, (int)len) == 1 &&
                    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, TLS_TAG_SIZE, (void *)(body + len)) == 1 &&
                    EVP_CipherFinal_ex(c, out + n, &n) == 1;
    EVP_CIPHER_CTX_free(c);
    if (!ok) OPENSSL_cleanse(out, len);
    return ok ? 0 : -1;
}

/* ---- Whole records ---- */

size_t tls_seal_one(tls_stream_state *st, int type, const void *buf, size_t len, unsigned char *rec)
{
    size_t body_len = len + 1 + TLS_TAG_SIZE;
    rec[0] = TLS_TYPE_APPLICATION;
    rec[1] = 3;
    rec[2] = 3;
    rec[3] = (unsigned char)(body_len >> 8);
    rec[4] = (unsigned char)body_len;
    if (tls_seal_body(st, rec, buf, len, (unsigned char)type, rec + TLS_RECORD_HEADER) != 0) return 0;
    st->out.seq++;
    return TLS_RECORD_HEADER + body_len;
}

/* Whether a KeyUpdate goes before our next record: the peer asked for one,
 * or the sealing key has one record left under st's limit (the KeyUpdate
 * itself is sealed with the key it replaces).  Keys without a secret (set
 * by hand) cannot be updated. */
static int key_update_due(const tls_stream_state *st)
{
    uint64_t limit = st->key_update_records ? st->key_update_records : TLS_KEY_UPDATE_RECORDS;
    return st->out.secret_len > 0 && (st->out.update_due > 0 || st->out.seq + 1 >= limit);
}

/* Seals our KeyUpdate (update_not_requested) into rec (TLS_KEY_UPDATE_RECORD
 * bytes) and moves the sealing direction to the next secret.  The record's
 * size, or 0 on failure. */
static size_t seal_key_update(tls_stream_state *st, unsigned char *rec)
{
    static const unsigned char key_update[5] = {TLS_HANDSHAKE_KEY_UPDATE, 0, 0, 1, 0 /* update_not_requested */};
    tls_direction was = st->out;
    size_t size = tls_seal_one(st, TLS_TYPE_HANDSHAKE, key_update, sizeof key_update, rec);
    if (size == 0 || tls_next_keys(&st->out, st->suite) != 0) {
        st->out = was;
        size = 0;
    } else if (st->out.update_due > 0) {
        st->out.update_due--;
    }
    OPENSSL_cleanse(&was, sizeof was);
    return size;
}

size_t tls_seal_record(tls_stream_state *st, int type, const void *buf, size_t len, unsigned char *rec)
{
    size_t at = 0;
    for (int i = 0; i < TLS_UPDATES_DUE_MAX && key_update_due(st); i++) {
        size_t k = seal_key_update(st, rec + at);
        if (k == 0) return 0;
        at += k;
    }
    size_t k = tls_seal_one(st, type, buf, len, rec + at);
    return k == 0 ? 0 : at + k;
}
