/* fuzz_idlc.c -- libFuzzer target: idlc's lexer, parser and checks on IDL
 * text, then what it accepts encoded, decoded, rendered and generated. */
#include <stdio.h>
#include <stdlib.h>

#include "ast.h"
#include "codegen.h"
#include "iface.h"
#include "sema.h"

/* Input: the text of an IDL file (fuzz_test.sh and fuzz_long.sh give it
 * -max_len=1024 and idl.dict).  Diagnostics go to stderr, fully buffered
 * here (one error is three writes otherwise); run with -close_fd_mask=2 to
 * keep them off the fuzzer's output. */

/* A routine idlc accepts must decode as a server and client decode it,
 * with the same hash: otherwise idlc built a module nobody can call. */
static void check_descriptor(const iface_t *f)
{
    uint8_t *blob;
    size_t len;
    iface_t back;
    err_t err;
    if (iface_encode(f, &blob, &len, &err) != 0) {
        fprintf(stderr, "idlc accepted %s, which does not encode: %s\n", f->name, err.detail);
        fflush(stderr);
        abort();
    }
    if (iface_decode(blob, len, &back, &err) != 0) {
        fprintf(stderr, "idlc accepted %s, which does not decode: %s\n", f->name, err.detail);
        fflush(stderr);
        abort();
    }
    if (back.hash != f->hash) {
        fprintf(stderr, "idlc's hash of %s differs from its descriptor's\n", f->name);
        fflush(stderr);
        abort();
    }
    char *text = NULL;
    if (iface_render_idl(&back, &text) == 0) free(text);
    iface_free(&back);
    free(blob);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    static char diagnostics[1 << 16];
    if (sink == NULL) {
        if ((sink = fopen("/dev/null", "w")) == NULL) abort();
        setvbuf(stderr, diagnostics, _IOFBF, sizeof diagnostics);
    }
    if (size == 0) return 0; /* fmemopen wants a buffer */
    FILE *in = fmemopen((void *)data, size, "r");
    if (in == NULL) abort();
    ast_file file;
    sema_unit unit;
    ast_file_init(&file, "fuzz.idl");
    if (ast_parse_stream(&file, in) != 0) abort();
    fclose(in);
    if (sema_check(&file, &unit) == 0) {
        for (size_t i = 0; i < unit.count; i++) check_descriptor(&unit.routines[i].iface);
        codegen_emit(sink, &unit, "fuzz.idl"); /* may refuse two prototypes of one symbol */
    }
    ast_file_free(&file);
    sema_unit_free(&unit);
    return 0;
}
