/* iface.h -- the interface descriptor ("compiled IDL") of one routine: its
 * parameters, their shapes as expressions, and its XDR encoding. */
#ifndef NUMRPC_COMMON_IFACE_H
#define NUMRPC_COMMON_IFACE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "expr.h"

#define IFACE_FORMAT_VERSION 2
#define IFACE_MAX_RANK 4
#define IFACE_MAX_PARAMS 64
#define IFACE_MAX_NAME 64
#define IFACE_MAX_TEXT 4096
#define IFACE_MAX_BLOB (256 * 1024)

typedef enum iface_mode {
    IFACE_IN = 1,
    IFACE_OUT = 2,
    IFACE_INOUT = 3,
    IFACE_WORK = 4 /* server-side scratch, never sent */
} iface_mode;

typedef enum iface_lang { IFACE_LANG_C = 0, IFACE_LANG_FORTRAN = 1 } iface_lang;

/* Where the routine runs: in a worker through the stub's thunk, or on the
 * server's resident MPI job (docs/mpi.md; then `symbol` names the engine's
 * routine and the stub has no thunk). */
typedef enum iface_backend { IFACE_BACKEND_LOCAL = 0, IFACE_BACKEND_MPI = 1 } iface_backend;
#define IFACE_MAX_RANKS 65536 /* ranks an MPI routine may ask for */

/* One dimension of an array.  In memory the dimension spans `size`
 * elements (a leading dimension, like LDA); the elements that travel are
 * start, start+stride, ... (count of them).  Empty expressions take the
 * defaults: count = size, start = 0, stride = 1.  Dimension 0 varies
 * fastest (Fortran order). */
typedef struct iface_dim {
    expr_t size;
    expr_t count;
    expr_t start;
    expr_t stride;
} iface_dim;

typedef struct iface_param {
    char *name;
    uint32_t type; /* numrpc_type */
    uint32_t mode; /* iface_mode */
    uint32_t rank; /* 0 = scalar */
    iface_dim dims[IFACE_MAX_RANK];
    expr_t bound; /* strings: the most characters one may hold (string<N>);
                     empty = up to IFACE_MAX_STRING, for IN strings only */
} iface_param;

/* A routine's interface.  Decoded ones own all their memory (iface_free). */
typedef struct iface {
    char *name;        /* routine name clients call                        */
    char *module;      /* module it came from                              */
    char *description; /* one line for people                              */
    char *library;     /* Required / Library text, informational           */
    char *symbol;      /* the library symbol the thunk calls ("dgefa_")    */
    uint32_t lang;     /* iface_lang                                       */
    uint64_t hash;     /* version hash: FNV-1a of the encoding with hash 0 */
    uint32_t nparams;
    iface_param *params;
    expr_t complexity; /* flops as a function of the scalars; may be empty */
    /* An optional trailing part of the encoding, present only when backend
     * is not LOCAL, so that every local routine's bytes and hash are those
     * of the format before it. */
    uint32_t backend;  /* iface_backend                                    */
    uint32_t ranks;    /* MPI: ranks the job must have; 0 = as configured  */
} iface_t;

/* The evaluated shape of one parameter for one call. */
typedef struct iface_shape {
    int64_t size[IFACE_MAX_RANK];
    int64_t count[IFACE_MAX_RANK];
    int64_t start[IFACE_MAX_RANK];
    int64_t stride[IFACE_MAX_RANK];
    uint64_t mem_elems;  /* elements the memory block spans (product of size) */
    uint64_t wire_elems; /* elements that travel (product of count)           */
    int64_t bound;       /* strings: characters each may hold; -1 = unbounded */
    int held;            /* the call names a data handle here: the array stays
                            on the server (set by the call, never by shapes) */
} iface_shape;

/* ---- Encoding ---- */
/* Encodes f into a malloc'd blob (*blob_out, *len_out; caller frees). */
int iface_encode(const iface_t *f, uint8_t **blob_out, size_t *len_out,
                 err_t *err);
/* Decodes and validates a blob from the wire into *f (caller calls
 * iface_free).  Hostile input gives NUMRPC_EPROTO, never a crash. */
int iface_decode(const uint8_t *blob, size_t len, iface_t *f, err_t *err);
/* Sets f->hash from f's encoding. */
int iface_compute_hash(iface_t *f, err_t *err);
/* Checks the structure: names, types, modes, ranks, expressions that name
 * only integer scalar parameters of mode in. */
int iface_validate(const iface_t *f, err_t *err);
void iface_free(iface_t *f);

/* ---- Types ---- */
/* Bytes per element in memory and on the wire (they are equal). */
size_t iface_type_size(uint32_t type);
/* Byte-swap unit of a type on the wire: 1, 4 or 8. */
size_t iface_type_unit(uint32_t type);
const char *iface_type_name(uint32_t type);
const char *iface_mode_name(uint32_t mode);
/* True for the types a shape expression may read. */
int iface_type_is_integer(uint32_t type);
/* True when the parameter travels in the request (in, inout) or reply. */
int iface_param_in_request(const iface_param *p);
int iface_param_in_reply(const iface_param *p);

/* ---- Shapes ---- */
/* Evaluates every array's shape from the scalar values `arg` reads; checks
 * extents are >= 0, strides >= 1 and traveling elements inside the block,
 * and every string bound is in 0 .. max_string.
 * Errors name the routine and parameter.  shapes has f->nparams entries. */
int iface_eval_shapes(const iface_t *f, expr_arg_fn arg, void *ctx,
                      iface_shape *shapes, err_t *err);
/* The most characters a string parameter may carry in one call. */
#define IFACE_MAX_STRING (1u << 20)

/* ---- Rendering ---- */
/* The language word of f's Calls clause: "C", "Fortran" or "MPI". */
const char *iface_calls_language(const iface_t *f);
/* Writes f in IDL form into a malloc'd string (*out; caller frees). */
int iface_render_idl(const iface_t *f, char **out);

/* ---- File parameters ---- */
/* True for filename and rfile. */
int iface_type_is_file(uint32_t type);
/* True when some parameter of f is a file (such calls are never cheap:
 * they neither pipeline nor hold replies). */
int iface_has_files(const iface_t *f);
/* Structure of a file parameter: a scalar (rank 0) without a bound;
 * filename of mode in or out, rfile of mode in.  0 for other types. */
int iface_validate_file_param(const iface_t *f, const iface_param *p, err_t *err);

#endif
