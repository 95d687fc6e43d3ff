/* hmac.h -- SHA-256 and HMAC-SHA256 (FIPS 180-4, RFC 2104), for the
 * challenge-response of remote administration: the secret never travels. */
#ifndef NUMRPC_COMMON_HMAC_H
#define NUMRPC_COMMON_HMAC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HMAC_SHA256_BYTES 32u

/* ---- SHA-256, incremental ---- */
typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[64];
    size_t used;     /* bytes waiting in block */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t n);
void sha256_final(sha256_ctx *c, uint8_t out[HMAC_SHA256_BYTES]);

/* ---- HMAC-SHA256 of the concatenation of up to three parts (a part may
 * be NULL with length 0) under key. ---- */
void hmac_sha256(const void *key, size_t key_len, const void *p1, size_t n1, const void *p2, size_t n2,
                 const void *p3, size_t n3, uint8_t out[HMAC_SHA256_BYTES]);

/* Compares two MACs in time independent of where they differ: 1 if equal. */
int hmac_equal(const uint8_t a[HMAC_SHA256_BYTES], const uint8_t b[HMAC_SHA256_BYTES]);

#ifdef __cplusplus
}
#endif

#endif
