# fuzz.mk -- the libFuzzer targets and the seed generator, compiled by clang
# from the real common/ and idlc/ sources (run by build.sh, not automake).
# make -f fuzz.mk TOP=SRCDIR OUT=OUTDIR CC=clang
TOP ?= ../..
OUT ?= out
CC ?= clang

TARGETS := fuzz_wire fuzz_msg_server fuzz_msg_client fuzz_iface fuzz_expr fuzz_meta fuzz_idlc
COMMON := error expr iface codec wire wire_fields transport_tcp transport_mem msg strbuf \
	marshal sock msg_control msg_data msg_meta rank hmac files tls_context tls_accept tls_client tls_record
IDLC := ast generic sema codegen

TIRPC_CFLAGS := $(shell pkg-config --cflags libtirpc)
TIRPC_LIBS := $(shell pkg-config --libs libtirpc)
OPENSSL_CFLAGS := $(shell pkg-config --cflags openssl)
OPENSSL_LIBS := $(shell pkg-config --libs openssl)
SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS := -std=gnu11 -g -O1 -Wall -Wextra $(SAN) -fsanitize=fuzzer-no-link -MMD -MP \
	-I$(TOP)/include -I$(TOP)/common -I$(TOP)/idlc -I$(TOP)/server -I$(OUT)/gen \
	-I$(TOP)/tests/fuzz \
	$(TIRPC_CFLAGS) $(OPENSSL_CFLAGS) -DFUZZ_SRCDIR='"$(abspath $(TOP))"'
LIBS := $(TIRPC_LIBS) $(OPENSSL_LIBS) -lpthread -lm

# The server's limits and its judgement of a call's memory, as it runs them.
SERVER := config callmem arena slots
SUPPORT_OBJS := $(COMMON:%=$(OUT)/obj/%.o) $(IDLC:%=$(OUT)/obj/%.o) $(SERVER:%=$(OUT)/obj/%.o) \
	$(OUT)/obj/parser.o $(OUT)/obj/lexer.o $(OUT)/obj/fuzz_support.o

all: $(TARGETS:%=$(OUT)/%) $(OUT)/make_seeds

$(OUT)/libsupport.a: $(SUPPORT_OBJS)
	rm -f $@ && ar rcs $@ $^

$(OUT)/fuzz_%: $(OUT)/obj/fuzz_%.o $(OUT)/libsupport.a
	$(CC) $(SAN) -fsanitize=fuzzer -o $@ $^ $(LIBS)

# The seed generator runs the real writers; it needs no fuzzer runtime.
$(OUT)/make_seeds: $(OUT)/obj/make_seeds.o $(OUT)/libsupport.a
	$(CC) $(SAN) -o $@ $^ $(LIBS)

# Every object also depends on this file: a changed flag rebuilds them.
MK := $(lastword $(MAKEFILE_LIST))

$(OUT)/obj/%.o: $(TOP)/common/%.c $(MK) | $(OUT)/obj
	$(CC) $(CFLAGS) -c -o $@ $<
$(OUT)/obj/%.o: $(TOP)/idlc/%.c $(OUT)/gen/parser.h $(MK) | $(OUT)/obj
	$(CC) $(CFLAGS) -c -o $@ $<
$(OUT)/obj/%.o: $(TOP)/tests/fuzz/%.c $(OUT)/gen/parser.h $(MK) | $(OUT)/obj
	$(CC) $(CFLAGS) -c -o $@ $<
$(OUT)/obj/%.o: $(TOP)/server/%.c $(MK) | $(OUT)/obj
	$(CC) $(CFLAGS) -DNUMRPC_STUBDIR='""' -c -o $@ $<
# The generated scanner and parser are table driven: tracing their
# comparisons guides nothing and costs a third of fuzz_idlc's time.
$(OUT)/obj/%.o: $(OUT)/gen/%.c $(MK) | $(OUT)/obj
	$(CC) $(CFLAGS) -fno-sanitize-coverage=trace-cmp -Wno-unused-function -c -o $@ $<

$(OUT)/gen/parser.c $(OUT)/gen/parser.h: $(TOP)/idlc/parser.y | $(OUT)/gen
	bison -d -Wno-yacc -o $(OUT)/gen/parser.c $<
$(OUT)/gen/lexer.c: $(TOP)/idlc/lexer.l $(OUT)/gen/parser.h | $(OUT)/gen
	flex -o $@ $<

$(OUT)/obj $(OUT)/gen:
	mkdir -p $@

.SECONDARY:
-include $(wildcard $(OUT)/obj/*.d)
