/* marshal.h -- the interface walker: one engine that writes and reads the
 * arguments of a call on both sides, driven by the interface descriptor. */
#ifndef NUMRPC_COMMON_MARSHAL_H
#define NUMRPC_COMMON_MARSHAL_H

#include "iface.h"
#include "wire.h"

/* Which half of a call a message carries: the request holds the in and
 * inout parameters, the reply the out and inout ones.  Work parameters
 * never travel. */
typedef enum marshal_dir { MARSHAL_REQUEST = 0, MARSHAL_REPLY = 1 } marshal_dir;

#define MARSHAL_MAX_STRING IFACE_MAX_STRING

/* argv[i] points at parameter i's storage, as stubmod.h says: the scalar's
 * value in its C type, a char* slot for a string, or an array's memory block
 * laid out as its shape says (for a string array: a table of char*).
 * Strings of a request (read by the server) are malloc'd by the walker into
 * their slots and freed by its caller; strings of a reply (read by the
 * client) are copied into the caller's buffers of bound + 1 bytes.
 * An array whose shape is marked held (a data handle on the server) does
 * not travel: the walker skips it both ways. */

/* Shapes of every parameter, from the in scalars argv points at. */
int marshal_eval_shapes(const iface_t *f, void *const *argv,
                        iface_shape *shapes, err_t *err);
/* Flops of the call from the complexity expression (0 when absent). */
double marshal_complexity(const iface_t *f, void *const *argv);

/* Writes the scalars, then the arrays, of direction dir into the current
 * message of w (the caller has begun it and ends it). */
int marshal_write(wire_writer *w, const iface_t *f, void *const *argv,
                  const iface_shape *shapes, marshal_dir dir, err_t *err);
/* The arrays alone (the second half of marshal_write). */
int marshal_write_arrays(wire_writer *w, const iface_t *f, void *const *argv,
                         const iface_shape *shapes, marshal_dir dir, err_t *err);
/* Reads the scalar section of direction dir into argv's storage; shapes may
 * be NULL for a request (they are not known before its scalars). */
int marshal_read_scalars(wire_reader *r, const iface_t *f, void *const *argv,
                         const iface_shape *shapes, marshal_dir dir, err_t *err);
/* Checks that every string of direction dir fits its bound (the sender
 * before sending; the server again after reading a request). */
int marshal_check_strings(const iface_t *f, void *const *argv, const iface_shape *shapes,
                          marshal_dir dir, err_t *err);
/* Reads the array section into argv's blocks; each array's element count
 * on the wire must equal its shape's. */
int marshal_read_arrays(wire_reader *r, const iface_t *f, void *const *argv,
                        const iface_shape *shapes, marshal_dir dir,
                        err_t *err);
/* One array of parameter p laid out as shape s says, in the form the
 * walker gives every array (u64 count, the traveling elements, padding):
 * the arrays of a call, and a handle's data (msg_data.h).  Reading checks
 * the count against s first; it reads no strings (a handle has none). */
int marshal_write_block(wire_writer *w, const iface_param *p, const iface_shape *s, const void *block,
                        err_t *err);
int marshal_read_block(wire_reader *r, const iface_param *p, const iface_shape *s, void *block, err_t *err);
/* True when parameter p travels in direction dir. */
int marshal_travels(const iface_param *p, marshal_dir dir);

#endif
