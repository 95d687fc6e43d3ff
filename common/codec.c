/* codec.c -- bulk host <-> XDR (big-endian) array conversion: one vectorised
 * loop per run of elements, strided gather/scatter for BLAS-style vectors. */
#include "codec.h"

#include <string.h>

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CODEC_NEEDS_SWAP 1
#else
#define CODEC_NEEDS_SWAP 0
#endif

/* The contiguous loops are where the time goes: compile them for AVX2 too
 * and let the loader pick (GCC function multiversioning). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define CODEC_HOT __attribute__((target_clones("avx2", "default"), optimize("O3")))
#else
#define CODEC_HOT
#endif

/* Payloads in a receive buffer need not be 8-aligned: element types that
 * allow any alignment keep the loads defined (and still vectorise). */
typedef uint64_t unaligned_u64 __attribute__((aligned(1), may_alias));
typedef uint32_t unaligned_u32 __attribute__((aligned(1), may_alias));

CODEC_HOT static void swap64_run(unaligned_u64 *restrict dst,
                                 const unaligned_u64 *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = __builtin_bswap64(src[i]);
}

CODEC_HOT static void swap32_run(unaligned_u32 *restrict dst,
                                 const unaligned_u32 *restrict src, size_t n)
{
    for (size_t i = 0; i < n; i++) dst[i] = __builtin_bswap32(src[i]);
}

static void swap_units(void *dst, const void *src, size_t bytes, size_t unit)
{
    if (!CODEC_NEEDS_SWAP || unit == 1) {
        memcpy(dst, src, bytes);
    } else if (unit == 8) {
        swap64_run(dst, src, bytes / 8);
    } else {
        swap32_run(dst, src, bytes / 4);
    }
}

void codec_encode(void *dst, const void *src, size_t count, size_t elem_size,
                  size_t unit, size_t stride)
{
    if (stride == 1) {
        swap_units(dst, src, count * elem_size, unit);
        return;
    }
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < count; i++)
        swap_units(d + i * elem_size, s + i * stride * elem_size, elem_size, unit);
}

void codec_decode(void *dst, const void *src, size_t count, size_t elem_size,
                  size_t unit, size_t stride)
{
    if (stride == 1) {
        swap_units(dst, src, count * elem_size, unit);
        return;
    }
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < count; i++)
        swap_units(d + i * stride * elem_size, s + i * elem_size, elem_size, unit);
}
