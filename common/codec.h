/* codec.h -- bulk conversion of arrays between host memory and XDR (big-
 * endian) wire form: no function call per element, strided gather/scatter. */
#ifndef NUMRPC_COMMON_CODEC_H
#define NUMRPC_COMMON_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Encodes count elements of elem_size bytes each (1, 4, 8 or 16), taken
 * from src every stride elements, into dst contiguously, swapping every
 * unit bytes (1, 4 or 8) to big-endian.  dst and src must not overlap. */
void codec_encode(void *dst, const void *src, size_t count, size_t elem_size,
                  size_t unit, size_t stride);
/* The reverse: contiguous wire elements in src to dst every stride
 * elements. */
void codec_decode(void *dst, const void *src, size_t count, size_t elem_size,
                  size_t unit, size_t stride);

#endif
