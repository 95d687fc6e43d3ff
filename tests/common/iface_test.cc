// iface_test.cc -- interface descriptors: XDR round trip, version hash,
// hostile blobs, and shape evaluation with its error messages.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include "iface.h"
}

namespace {

// dgefa(INOUT double a[lda:n][n], IN int lda, IN int n, OUT int ipvt[n], OUT int *info)
struct Dgefa {
    iface_t f{};
    iface_param p[5]{};
    Dgefa()
    {
        f.name = const_cast<char *>("dgefa");
        f.module = const_cast<char *>("linpack");
        f.symbol = const_cast<char *>("dgefa_");
        f.lang = IFACE_LANG_FORTRAN;
        f.nparams = 5;
        f.params = p;
        const char *names[] = {"a", "lda", "n", "ipvt", "info"};
        uint32_t types[] = {NUMRPC_T_DOUBLE, NUMRPC_T_INT, NUMRPC_T_INT, NUMRPC_T_INT, NUMRPC_T_INT};
        uint32_t modes[] = {IFACE_INOUT, IFACE_IN, IFACE_IN, IFACE_OUT, IFACE_OUT};
        for (int i = 0; i < 5; i++) {
            p[i].name = const_cast<char *>(names[i]);
            p[i].type = types[i];
            p[i].mode = modes[i];
        }
        p[0].rank = 2;
        arg(&p[0].dims[0].size, 1);
        arg(&p[0].dims[0].count, 2);
        arg(&p[0].dims[1].size, 2);
        p[3].rank = 1;
        arg(&p[3].dims[0].size, 2);
        expr_append(&f.complexity, EXPR_ARG);
        expr_append(&f.complexity, 2);
        expr_append(&f.complexity, EXPR_CONST);
        expr_append(&f.complexity, 3);
        expr_append(&f.complexity, EXPR_POW);
    }
    static void arg(expr_t *e, int64_t index)
    {
        expr_append(e, EXPR_ARG);
        expr_append(e, index);
    }
    ~Dgefa()
    {
        for (auto &q : p)
            for (auto &d : q.dims) {
                expr_free(&d.size);
                expr_free(&d.count);
            }
        expr_free(&f.complexity);
    }
};

int Scalars(void *ctx, uint32_t index, int64_t *value, err_t *)
{
    *value = (*static_cast<std::vector<int64_t> *>(ctx))[index];
    return 0;
}

TEST(Iface, RoundTripsThroughXdr)
{
    Dgefa d;
    err_t err;
    ASSERT_EQ(iface_compute_hash(&d.f, &err), 0);
    EXPECT_NE(d.f.hash, 0u);
    uint8_t *blob;
    size_t len;
    ASSERT_EQ(iface_encode(&d.f, &blob, &len, &err), 0);
    iface_t back;
    ASSERT_EQ(iface_decode(blob, len, &back, &err), 0) << err.detail;
    EXPECT_STREQ(back.name, "dgefa");
    EXPECT_STREQ(back.symbol, "dgefa_");
    EXPECT_EQ(back.lang, (uint32_t)IFACE_LANG_FORTRAN);
    EXPECT_EQ(back.hash, d.f.hash);
    ASSERT_EQ(back.nparams, 5u);
    EXPECT_EQ(back.params[0].rank, 2u);
    EXPECT_EQ(back.params[4].mode, (uint32_t)IFACE_OUT);
    char *idl;
    ASSERT_EQ(iface_render_idl(&back, &idl), 0);
    EXPECT_NE(std::string(idl).find("INOUT double a[lda:n][n]"), std::string::npos) << idl;
    EXPECT_NE(std::string(idl).find("CalcOrder n^3"), std::string::npos) << idl;
    free(idl);
    // The hash covers the content: a change of mode changes it.
    uint64_t old = d.f.hash;
    d.p[3].mode = IFACE_INOUT;
    ASSERT_EQ(iface_compute_hash(&d.f, &err), 0);
    EXPECT_NE(d.f.hash, old);
    iface_free(&back);
    free(blob);
}

TEST(Iface, HostileBlobsAreProtocolErrors)
{
    Dgefa d;
    err_t err;
    uint8_t *blob;
    size_t len;
    ASSERT_EQ(iface_encode(&d.f, &blob, &len, &err), 0);
    iface_t back;
    // Every truncation fails cleanly.
    for (size_t cut = 0; cut < len; cut++) EXPECT_EQ(iface_decode(blob, cut, &back, &err), NUMRPC_EPROTO);
    // Random corruption never crashes (and mostly fails).
    std::mt19937 gen(3);
    std::vector<uint8_t> copy(blob, blob + len);
    for (int trial = 0; trial < 2000; trial++) {
        std::vector<uint8_t> bad = copy;
        for (int k = 0; k < 3; k++) bad[gen() % bad.size()] = static_cast<uint8_t>(gen());
        if (iface_decode(bad.data(), bad.size(), &back, &err) == 0) iface_free(&back);
    }
    free(blob);
}

// Found by tests/fuzz/fuzz_idlc: iface_free went through xdr_free, which
// keeps a string over its XDR limit and everything after it; idlc builds
// descriptors with names of any length before it refuses them.
TEST(Iface, FreeReleasesFieldsOverTheXdrLimits)
{
    // Names of 8 KiB: each kept one would show in the heap's bytes in use
    // (small blocks may sit in malloc's caches, counted as in use).
    std::string longname(8192, 'p');
    size_t before = mallinfo2().uordblks;
    for (int round = 0; round < 100; round++) {
        iface_t f{};
        f.name = strdup(longname.c_str());
        f.nparams = 2;
        f.params = static_cast<iface_param *>(calloc(2, sizeof(iface_param)));
        for (int i = 0; i < 2; i++) {
            f.params[i].name = strdup(longname.c_str());
            expr_append(&f.params[i].dims[0].size, EXPR_CONST);
            expr_append(&f.params[i].dims[0].size, 7);
        }
        expr_append(&f.complexity, EXPR_CONST);
        iface_free(&f);
    }
    // The plain build counts the heap; the sanitizer build's leak check
    // reports whatever was kept when the program ends.
    EXPECT_LT(mallinfo2().uordblks, before + 64 * 1024);
}

TEST(Iface, ExtentsMayOnlyNameIntegerInScalars)
{
    Dgefa d;
    err_t err;
    d.p[2].type = NUMRPC_T_DOUBLE;  // n becomes a double: a[lda:n] is now invalid
    EXPECT_EQ(iface_validate(&d.f, &err), NUMRPC_EPROTO);
    EXPECT_NE(std::string(err.detail).find("uses n"), std::string::npos) << err.detail;
}

TEST(Iface, ShapesFromScalars)
{
    Dgefa d;
    err_t err;
    iface_shape s[5];
    std::vector<int64_t> args = {0, 10, 7, 0, 0};
    ASSERT_EQ(iface_eval_shapes(&d.f, Scalars, &args, s, &err), 0) << err.detail;
    EXPECT_EQ(s[0].mem_elems, 70u);
    EXPECT_EQ(s[0].wire_elems, 49u);
    EXPECT_EQ(s[3].wire_elems, 7u);
    args = {0, 5, 7, 0, 0};  // lda < n: 7 rows do not fit in 5
    EXPECT_EQ(iface_eval_shapes(&d.f, Scalars, &args, s, &err), NUMRPC_EINVAL);
    EXPECT_NE(std::string(err.detail).find("do not fit in extent 5"), std::string::npos) << err.detail;
    args = {0, 10, -2, 0, 0};
    EXPECT_EQ(iface_eval_shapes(&d.f, Scalars, &args, s, &err), NUMRPC_EINVAL);
    EXPECT_NE(std::string(err.detail).find("is -2"), std::string::npos) << err.detail;
}

}  // namespace
