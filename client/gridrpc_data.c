/* gridrpc_data.c -- GridRPC data management (OGF GFD.186) mapped onto numrpc
 * data handles: grpc_data_t records, their URIs, and their use in calls. */
#include "gridrpc_data.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gridrpc_err.h"
#include "handles.h"
#include "iface.h"

#define DATA_MAGIC 0x67444154u /* "gDAT" */
#define DATA_GONE 0x67474f4eu  /* "gGON": unbound or freed */
#define GONE_MAX 1024          /* released records still recognised in calls */
#define DATA_MAX_URIS 8        /* per list: more is refused */
#define MAPPING_KEY_MAX 128

/* What a grpc_data_t stands for; owned by its slot, freed when released. */
typedef struct dstate {
    numrpc_type type;
    grpc_data_type_t grpc_type;
    size_t rows, cols;
    numrpc_data *copy;      /* the server copy (a handle), or NULL        */
    grpc_data_mode_t mode;  /* of the server copy                         */
    void *memory;           /* the memory input, or NULL                  */
    void *out_memory[DATA_MAX_URIS]; /* memory outputs, filled after calls */
    int n_out_memory;
    char *inputs, *outputs; /* the URIs given, one a line (malloc'd)      */
} dstate;

typedef struct dslot {
    const grpc_data_t *at; /* the caller's grpc_data_t; NULL when free */
    unsigned long serial;
    dstate *st;
} dslot;

typedef struct mapping {
    char key[MAPPING_KEY_MAX];
    void *address;
} mapping;

static pthread_mutex_t data_lock = PTHREAD_MUTEX_INITIALIZER;
static dslot *slots;
static int nslots, nlive;
static unsigned long next_serial = 1;
static mapping *mappings;
static int nmappings;
/* The latest released records: such an address passed to a call is
 * refused, not sent as an array, while its grpc_data_t still says so. */
static struct {
    const grpc_data_t *at;
    unsigned long serial;
} gone[GONE_MAX];
static int gone_next;

/* ---- URIs ---- */

typedef enum { URI_MEMORY, URI_SERVER } uri_kind;

/* One parsed URI: a memory address, or a server ("" = the library picks). */
typedef struct uri {
    uri_kind kind;
    void *address;
    char server[CLIENT_HOST_MAX + 8];
} uri;

static int mapping_find(const char *key)
{
    for (int i = 0; i < nmappings; i++)
        if (strcmp(mappings[i].key, key) == 0) return i;
    return -1;
}

static grpc_error_t parse_uri(const char *s, uri *out, const char *fn)
{
    static const char mem[] = "memory://", srv[] = "numrpc://";
    if (s && strncmp(s, mem, sizeof mem - 1) == 0) {
        const char *host = s + sizeof mem - 1, *key = strchr(host, '/');
        if (key == NULL || !(key == host || (key - host == 9 && strncmp(host, "localhost", 9) == 0)))
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: \"%s\": want memory://localhost/KEY", fn, s);
        out->kind = URI_MEMORY;
        pthread_mutex_lock(&data_lock);
        int at = mapping_find(key + 1);
        out->address = at >= 0 ? mappings[at].address : NULL;
        pthread_mutex_unlock(&data_lock);
        if (out->address == NULL)
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                                 "%s: \"%s\": no memory is mapped under \"%s\" "
                                 "(grpc_data_memory_mapping_set)",
                                 fn, s, key + 1);
        return GRPC_NO_ERROR;
    }
    if (s && strncmp(s, srv, sizeof srv - 1) == 0) {
        size_t len = strcspn(s + sizeof srv - 1, "/");
        if (len >= sizeof out->server || s[sizeof srv - 1 + len + (s[sizeof srv - 1 + len] == '/')] != '\0')
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: \"%s\": want numrpc://host:port", fn, s);
        out->kind = URI_SERVER;
        memcpy(out->server, s + sizeof srv - 1, len);
        out->server[len] = '\0';
        return GRPC_NO_ERROR;
    }
    return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                         "%s: \"%s\" is not covered: only memory://localhost/KEY and "
                         "numrpc://host:port (docs/gridrpc.md)",
                         fn, s ? s : "(null)");
}

/* Parses a NULL-terminated list (NULL = empty) into out; *n its length. */
static grpc_error_t parse_uris(const char **list, uri *out, int *n, const char *fn)
{
    *n = 0;
    for (int i = 0; list && list[i]; i++) {
        if (i == DATA_MAX_URIS)
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: more than %d URIs in a list", fn, DATA_MAX_URIS);
        grpc_error_t code = parse_uri(list[i], &out[i], fn);
        if (code != GRPC_NO_ERROR) return code;
        *n = i + 1;
    }
    return GRPC_NO_ERROR;
}

/* Checks one mode per output, then GRPC_END_LIST. */
static grpc_error_t check_modes(const grpc_data_mode_t *modes, int n, const char *fn)
{
    for (int i = 0; i <= n; i++) {
        int m = modes ? (int)modes[i] : (n == 0 ? GRPC_END_LIST : -1);
        if (i == n && m != GRPC_END_LIST)
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                                 "%s: the mode list must hold one mode per output URI (%d), then "
                                 "GRPC_END_LIST",
                                 fn, n);
        if (i < n && (m < GRPC_VOLATILE || m >= GRPC_END_LIST))
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                                 "%s: mode %d of output %d is no grpc_data_mode_t (GRPC_VOLATILE, "
                                 "GRPC_STICKY, GRPC_UNIQUE_STICKY, GRPC_PERSISTENT)",
                                 fn, m, i + 1);
    }
    return GRPC_NO_ERROR;
}

/* The server output among outs (at most one that keeps the data), or -1. */
static grpc_error_t find_server_output(const uri *outs, const grpc_data_mode_t *modes, int n, int *at,
                                       const char *fn)
{
    *at = -1;
    for (int i = 0; i < n; i++) {
        if (outs[i].kind != URI_SERVER || modes[i] == GRPC_VOLATILE) continue;
        if (*at >= 0)
            return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                                 "%s: two server outputs: multiple destinations are not covered", fn);
        *at = i;
    }
    return GRPC_NO_ERROR;
}

/* "a\nb" of a URI list, malloc'd ("" for none); NULL when out of memory. */
static char *join_uris(const char **list)
{
    size_t len = 1;
    for (int i = 0; list && list[i]; i++) len += strlen(list[i]) + 1;
    char *s = malloc(len);
    if (s == NULL) return NULL;
    s[0] = '\0';
    for (int i = 0; list && list[i]; i++) {
        if (i) strcat(s, "\n");
        strcat(s, list[i]);
    }
    return s;
}

/* The URIs of an init or a transfer, checked. */
typedef struct routes {
    uri ins[DATA_MAX_URIS], outs[DATA_MAX_URIS];
    int nin, nout;
    int server_at; /* the output that keeps the data on a server, or -1 */
} routes;

static grpc_error_t parse_routes(const char **in_list, const char **out_list, const grpc_data_mode_t *modes,
                                 routes *r, const char *fn)
{
    grpc_error_t code = parse_uris(in_list, r->ins, &r->nin, fn);
    if (code == GRPC_NO_ERROR) code = parse_uris(out_list, r->outs, &r->nout, fn);
    if (code == GRPC_NO_ERROR) code = check_modes(modes, r->nout, fn);
    if (code == GRPC_NO_ERROR) code = find_server_output(r->outs, modes, r->nout, &r->server_at, fn);
    if (code == GRPC_NO_ERROR && (r->nin > 1 || (r->nin == 1 && r->ins[0].kind != URI_MEMORY)))
        code = gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                             "%s: one memory:// input at most (a server copy cannot be named as input)", fn);
    return code;
}

/* ---- Slots ---- */

static dstate *slot_state_locked(const grpc_data_t *d)
{
    if (d == NULL || d->magic_np != DATA_MAGIC || d->slot_np < 0 || d->slot_np >= nslots) return NULL;
    dslot *s = &slots[d->slot_np];
    return s->at == d && s->serial == d->serial_np ? s->st : NULL;
}

/* A copy of the state of a live grpc_data_t, or GRPC_INVALID_DATA_NP. */
static grpc_error_t lookup(const grpc_data_t *d, dstate *out, const char *fn)
{
    pthread_mutex_lock(&data_lock);
    dstate *st = slot_state_locked(d);
    if (st) *out = *st;
    pthread_mutex_unlock(&data_lock);
    if (st == NULL)
        return gridrpc_failf(GRPC_INVALID_DATA_NP,
                             "%s: the grpc_data_t is NULL, was never initialised, was unbound or "
                             "freed, or is a copy of the one grpc_data_init filled",
                             fn);
    return GRPC_NO_ERROR;
}

static grpc_error_t slot_take(grpc_data_t *d, dstate *st)
{
    int slot = -1;
    pthread_mutex_lock(&data_lock);
    for (int i = 0; i < nslots && slot < 0; i++)
        if (slots[i].at == NULL) slot = i;
    if (slot < 0 && (size_t)nslots < (1u << 24)) {
        size_t old = (size_t)nslots, grown = old ? 2 * old : 32;
        dslot *more = realloc(slots, grown * sizeof *more);
        if (more) {
            memset(more + old, 0, (grown - old) * sizeof *more);
            slots = more;
            slot = nslots;
            nslots = (int)grown;
        }
    }
    for (int i = 0; i < GONE_MAX; i++)
        if (gone[i].at == d) gone[i].at = NULL;
    if (slot >= 0) {
        slots[slot] = (dslot){d, next_serial++, st};
        d->magic_np = DATA_MAGIC;
        d->slot_np = slot;
        d->serial_np = slots[slot].serial;
        nlive++;
    }
    pthread_mutex_unlock(&data_lock);
    return slot >= 0 ? GRPC_NO_ERROR : gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_data_init: out of memory");
}

/* Takes d's state out of its slot (the caller frees it); NULL if not live. */
static dstate *slot_release(grpc_data_t *d)
{
    pthread_mutex_lock(&data_lock);
    dstate *st = slot_state_locked(d);
    if (st) {
        slots[d->slot_np].at = NULL;
        slots[d->slot_np].st = NULL;
        d->magic_np = DATA_GONE;
        gone[gone_next].at = d;
        gone[gone_next].serial = d->serial_np;
        gone_next = (gone_next + 1) % GONE_MAX;
        nlive--;
    }
    pthread_mutex_unlock(&data_lock);
    return st;
}

/* Sets d's server copy (under the lock: calls read it). */
static void set_copy(const grpc_data_t *d, numrpc_data *copy, grpc_data_mode_t mode)
{
    pthread_mutex_lock(&data_lock);
    dstate *st = slot_state_locked(d);
    if (st) {
        st->copy = copy;
        st->mode = mode;
    }
    pthread_mutex_unlock(&data_lock);
}

static void state_free(dstate *st)
{
    if (st == NULL) return;
    free(st->inputs);
    free(st->outputs);
    free(st);
}

/* ---- Moving the data ---- */

static grpc_error_t numrpc_result(int rc)
{
    return rc == 0 ? GRPC_NO_ERROR : gridrpc_fail_numrpc(rc);
}

/* A new server copy of st's shape on server ("" = the library picks):
 * sent from memory, or empty when memory is NULL. */
static grpc_error_t make_copy(const dstate *st, const char *server, const void *memory, numrpc_data **out)
{
    const char *where = server[0] ? server : NULL;
    int rc = memory ? numrpc_data_put(out, where, st->type, memory, st->rows, st->cols, st->rows)
                    : numrpc_data_new(out, where, st->type, st->rows, st->cols, st->rows);
    return numrpc_result(rc);
}

static grpc_error_t copy_to_memory(const dstate *st, void *const *dest, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = st->copy ? numrpc_data_get(st->copy, dest[i], st->rows)
                          : (memmove(dest[i], st->memory, st->rows * st->cols * iface_type_size(st->type)), 0);
        if (rc != 0) return numrpc_result(rc);
    }
    return GRPC_NO_ERROR;
}

static grpc_error_t element_type(grpc_data_type_t t, numrpc_type *out)
{
    switch (t) {
    case GRPC_INT: *out = NUMRPC_T_INT; break;
    case GRPC_DOUBLE: *out = NUMRPC_T_DOUBLE; break;
    case GRPC_COMPLEX: *out = NUMRPC_T_DCOMPLEX; break;
    case GRPC_FLOAT_NP: *out = NUMRPC_T_FLOAT; break;
    case GRPC_LONG_NP: *out = NUMRPC_T_LONG; break;
    case GRPC_CHAR_NP: *out = NUMRPC_T_CHAR; break;
    case GRPC_FLOAT_COMPLEX_NP: *out = NUMRPC_T_SCOMPLEX; break;
    default:
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                             "grpc_data_init: data type %d is not covered (bool, string, file and "
                             "containers are not; numbers are)",
                             (int)t);
    }
    return GRPC_NO_ERROR;
}

static grpc_error_t dimensions(const size_t *dims, size_t *rows, size_t *cols)
{
    int n = 0;
    while (dims && n < 3 && dims[n] != 0) n++;
    if (dims == NULL || n == 0 || n > 2)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                             "grpc_data_init: dimensions must be {n, 0} or {rows, cols, 0}");
    *rows = dims[0];
    *cols = n == 2 ? dims[1] : 1;
    return GRPC_NO_ERROR;
}

/* ---- The API ---- */

grpc_error_t grpc_data_init(grpc_data_t *data, const char **in_list, const char **out_list,
                            grpc_data_type_t data_type, const size_t *dims, const grpc_data_mode_t *modes)
{
    static const char fn[] = "grpc_data_init";
    routes r;
    if (data == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: data is NULL", fn);
    dstate *st = calloc(1, sizeof *st);
    if (st == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: out of memory", fn);
    st->grpc_type = data_type;
    grpc_error_t code = element_type(data_type, &st->type);
    if (code == GRPC_NO_ERROR) code = dimensions(dims, &st->rows, &st->cols);
    if (code == GRPC_NO_ERROR) code = parse_routes(in_list, out_list, modes, &r, fn);
    if (code == GRPC_NO_ERROR && r.nin == 0 && r.server_at < 0)
        code = gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                             "%s: no input and no server to keep the data: nowhere for it to be", fn);
    if (code == GRPC_NO_ERROR) {
        st->memory = r.nin ? r.ins[0].address : NULL;
        for (int i = 0; i < r.nout; i++)
            if (r.outs[i].kind == URI_MEMORY) st->out_memory[st->n_out_memory++] = r.outs[i].address;
        st->inputs = join_uris(in_list);
        st->outputs = join_uris(out_list);
        if (st->inputs == NULL || st->outputs == NULL)
            code = gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: out of memory", fn);
    }
    if (code == GRPC_NO_ERROR && r.server_at >= 0) {
        st->mode = modes[r.server_at];
        code = make_copy(st, r.outs[r.server_at].server, st->memory, &st->copy);
    }
    if (code == GRPC_NO_ERROR) code = slot_take(data, st);
    if (code != GRPC_NO_ERROR) {
        if (st->copy) numrpc_data_free(st->copy);
        state_free(st);
        return code;
    }
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_data_transfer(grpc_data_t *data, const char **in_list, const char **out_list,
                                const grpc_data_mode_t *modes)
{
    static const char fn[] = "grpc_data_transfer";
    routes r;
    void *dest[DATA_MAX_URIS];
    int ndest = 0;
    dstate st;
    grpc_error_t code = lookup(data, &st, fn);
    if (code == GRPC_NO_ERROR) code = parse_routes(in_list, out_list, modes, &r, fn);
    if (code != GRPC_NO_ERROR) return code;
    if (r.nin == 1) { /* from the caller's memory: the server copy is not the source */
        st.memory = r.ins[0].address;
        st.copy = NULL;
    }
    for (int i = 0; i < r.nout; i++)
        if (r.outs[i].kind == URI_MEMORY) dest[ndest++] = r.outs[i].address;
    code = copy_to_memory(&st, dest, ndest);
    if (code != GRPC_NO_ERROR || r.server_at < 0) return code ? code : gridrpc_finish(GRPC_NO_ERROR, NULL);
    if (st.memory == NULL && st.copy == NULL)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: no memory to send from", fn);
    if (st.copy)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                             "%s: moving a server copy to a server is not covered; send it from memory", fn);
    numrpc_data *fresh = NULL, *old = NULL;
    code = make_copy(&st, r.outs[r.server_at].server, st.memory, &fresh);
    if (code != GRPC_NO_ERROR) return code;
    pthread_mutex_lock(&data_lock);
    dstate *live = slot_state_locked(data);
    if (live) {
        old = live->copy;
        live->copy = fresh;
        live->mode = modes[r.server_at];
    } else {
        old = fresh; /* released meanwhile */
    }
    pthread_mutex_unlock(&data_lock);
    if (old) numrpc_data_free(old);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

static const char *type_word(grpc_data_type_t t)
{
    switch (t) {
    case GRPC_INT: return "GRPC_INT";
    case GRPC_DOUBLE: return "GRPC_DOUBLE";
    case GRPC_COMPLEX: return "GRPC_COMPLEX";
    case GRPC_FLOAT_NP: return "GRPC_FLOAT_NP";
    case GRPC_LONG_NP: return "GRPC_LONG_NP";
    case GRPC_CHAR_NP: return "GRPC_CHAR_NP";
    default: return "GRPC_FLOAT_COMPLEX_NP";
    }
}

grpc_error_t grpc_data_getinfo(grpc_data_t *data, grpc_data_info_type_t tag, const char *URI, char **info)
{
    static const char fn[] = "grpc_data_getinfo";
    static const char *const modes[] = {"GRPC_VOLATILE", "GRPC_STICKY", "GRPC_UNIQUE_STICKY", "GRPC_PERSISTENT"};
    (void)URI;
    dstate st;
    handle_facts facts;
    char text[2 * CLIENT_HOST_MAX + 64];
    const char *value = text;
    if (info == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: info is NULL", fn);
    *info = NULL;
    grpc_error_t code = lookup(data, &st, fn);
    if (code != GRPC_NO_ERROR) return code;
    int held = st.copy && handles_lookup(st.copy, &facts);
    switch (tag) {
    case GRPC_DATA_HANDLE:
        if (!held) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: the data has no server copy", fn);
        msg_data_id_hex(&facts.id, text);
        break;
    case GRPC_INPUT_URI: value = st.inputs; break;
    case GRPC_OUTPUT_URI: value = st.outputs; break;
    case GRPC_MANAGEMENT_MODE: value = modes[held ? st.mode : GRPC_VOLATILE]; break;
    case GRPC_TYPE: value = type_word(st.grpc_type); break;
    case GRPC_DIMENSION: snprintf(text, sizeof text, "%zu %zu", st.rows, st.cols); break;
    case GRPC_LOCATIONS_LIST:
        snprintf(text, sizeof text, "%s%s%s", held ? "numrpc://" : "", held ? facts.server.label : "",
                 st.memory ? (held ? "\nmemory://localhost" : "memory://localhost") : "");
        break;
    default:
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: information %d is not covered", fn, (int)tag);
    }
    if ((*info = strdup(value)) == NULL) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "%s: out of memory", fn);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

grpc_error_t grpc_data_unbind(grpc_data_t *data)
{
    dstate st;
    grpc_error_t code = lookup(data, &st, "grpc_data_unbind");
    if (code != GRPC_NO_ERROR) return code;
    dstate *released = slot_release(data);
    int rc = released && released->copy && released->mode != GRPC_PERSISTENT ? numrpc_data_free(released->copy) : 0;
    state_free(released);
    return rc == NUMRPC_ENOHANDLE || rc == 0 ? gridrpc_finish(GRPC_NO_ERROR, NULL) : gridrpc_fail_numrpc(rc);
}

grpc_error_t grpc_data_free(grpc_data_t *data, const char **locations)
{
    static const char fn[] = "grpc_data_free";
    uri where[DATA_MAX_URIS];
    int n = 0, names_server = locations == NULL;
    dstate st;
    grpc_error_t code = lookup(data, &st, fn);
    if (code == GRPC_NO_ERROR) code = parse_uris(locations, where, &n, fn);
    if (code != GRPC_NO_ERROR) return code;
    handle_facts facts;
    int held = st.copy && handles_lookup(st.copy, &facts);
    for (int i = 0; i < n; i++)
        if (where[i].kind == URI_SERVER)
            names_server |= where[i].server[0] == '\0' || (held && strcmp(where[i].server, facts.server.label) == 0);
    int rc = 0;
    if (names_server && st.copy) {
        set_copy(data, NULL, GRPC_VOLATILE);
        rc = numrpc_data_free(st.copy);
        st.copy = NULL;
    }
    if (st.copy == NULL) state_free(slot_release(data));
    return rc == 0 ? gridrpc_finish(GRPC_NO_ERROR, NULL) : gridrpc_fail_numrpc(rc);
}

grpc_error_t grpc_data_memory_mapping_set(const char *key, void *address)
{
    if (key == NULL || strlen(key) >= MAPPING_KEY_MAX || address == NULL)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE,
                             "grpc_data_memory_mapping_set: a key of under %d characters and an address",
                             MAPPING_KEY_MAX);
    grpc_error_t code = GRPC_NO_ERROR;
    pthread_mutex_lock(&data_lock);
    int at = mapping_find(key);
    if (at < 0) {
        mapping *more = realloc(mappings, (size_t)(nmappings + 1) * sizeof *more);
        if (more) {
            mappings = more;
            at = nmappings++;
            snprintf(mappings[at].key, sizeof mappings[at].key, "%s", key);
        } else {
            code = GRPC_OTHER_ERROR_CODE;
        }
    }
    if (at >= 0) mappings[at].address = address;
    pthread_mutex_unlock(&data_lock);
    return code ? gridrpc_failf(code, "grpc_data_memory_mapping_set: out of memory") : gridrpc_finish(code, NULL);
}

grpc_error_t grpc_data_memory_mapping_get(const char *key, void **address)
{
    if (key == NULL || address == NULL)
        return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_data_memory_mapping_get: key or address is NULL");
    pthread_mutex_lock(&data_lock);
    int at = mapping_find(key);
    *address = at >= 0 ? mappings[at].address : NULL;
    pthread_mutex_unlock(&data_lock);
    if (at < 0) return gridrpc_failf(GRPC_OTHER_ERROR_CODE, "grpc_data_memory_mapping_get: no key \"%s\"", key);
    return gridrpc_finish(GRPC_NO_ERROR, NULL);
}

/* ---- In calls (gridrpc.c) ---- */

int gridrpc_data_count(void)
{
    pthread_mutex_lock(&data_lock);
    int n = nlive;
    for (int i = 0; i < GONE_MAX && n == 0; i++) n = gone[i].at != NULL;
    pthread_mutex_unlock(&data_lock);
    return n;
}

/* 1 when p is a released grpc_data_t that still says so (data_lock held). */
static int released_locked(const void *p)
{
    for (int i = 0; i < GONE_MAX; i++)
        if (gone[i].at == p)
            return gone[i].at->magic_np == DATA_GONE && gone[i].at->serial_np == gone[i].serial;
    return 0;
}

grpc_error_t gridrpc_data_bind_args(int nparams, const unsigned char *by_value, numrpc_arg *args,
                                    gridrpc_data_use *uses)
{
    int refused = -1;
    pthread_mutex_lock(&data_lock);
    for (int i = 0; i < nparams && refused < 0; i++) {
        uses[i].slot = -1;
        if (by_value[i] || args[i].v.p == NULL) continue;
        int s = 0;
        while (s < nslots && slots[s].at != args[i].v.p) s++;
        if (s < nslots) {
            const dstate *st = slots[s].st;
            uses[i] = (gridrpc_data_use){s, slots[s].serial};
            args[i].v.p = st->copy ? (void *)st->copy : st->memory;
        } else if (released_locked(args[i].v.p)) {
            refused = i;
        }
    }
    pthread_mutex_unlock(&data_lock);
    if (refused >= 0)
        return gridrpc_failf(GRPC_INVALID_DATA_NP,
                             "argument %d is a grpc_data_t that was unbound or freed", refused + 1);
    return GRPC_NO_ERROR;
}

grpc_error_t gridrpc_data_finish(int nparams, const unsigned char *writes, const gridrpc_data_use *uses)
{
    for (int i = 0; i < nparams; i++) {
        if (uses[i].slot < 0 || !writes[i]) continue;
        dstate st;
        int live = 0;
        pthread_mutex_lock(&data_lock);
        if (uses[i].slot < nslots && slots[uses[i].slot].serial == uses[i].serial && slots[uses[i].slot].st) {
            st = *slots[uses[i].slot].st;
            live = 1;
        }
        pthread_mutex_unlock(&data_lock);
        if (!live) continue; /* from the server copy, or from the memory the call wrote */
        grpc_error_t code = copy_to_memory(&st, st.out_memory, st.n_out_memory);
        if (code != GRPC_NO_ERROR) return code;
    }
    return GRPC_NO_ERROR;
}

void gridrpc_data_finalize(void)
{
    pthread_mutex_lock(&data_lock);
    dslot *all = slots;
    int n = nslots;
    slots = NULL;
    nslots = nlive = 0;
    free(mappings);
    mappings = NULL;
    nmappings = 0;
    memset(gone, 0, sizeof gone);
    pthread_mutex_unlock(&data_lock);
    for (int i = 0; i < n; i++) {
        if (all[i].st && all[i].st->copy && all[i].st->mode != GRPC_PERSISTENT) numrpc_data_free(all[i].st->copy);
        state_free(all[i].st);
    }
    free(all);
}
