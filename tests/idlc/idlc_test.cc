// idlc_test.cc -- runs the real numrpc-idlc on the IDL files in
// tests/idlc/cases and stubs/: compiles, round-trips, errors, generated C.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern "C" {
#include "iface.h"
#include "stubmod.h"
}

extern char **environ;

namespace {

const std::string kIdlc = std::string(TOP_BUILDDIR) + "/idlc/numrpc-idlc";
const std::string kCases = std::string(TOP_SRCDIR) + "/tests/idlc/cases/";
const std::string kStubs = std::string(TOP_SRCDIR) + "/stubs/";

struct RunResult {
    int status = -1;  // exit status, or -1 if it did not exit normally
    std::string out;
    std::string err;
};

std::string ReadFile(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class IdlcTest : public ::testing::Test {
  protected:
    void SetUp() override {
        char tmpl[] = "/tmp/idlc_test-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        if (module_) dlclose(module_);
        if (dir_.empty()) return;
        std::string cmd = "rm -rf '" + dir_ + "'";
        ASSERT_EQ(system(cmd.c_str()), 0);
    }

    // Runs argv[0] with stdout and stderr captured in files of the temp dir.
    RunResult Run(const std::vector<std::string> &args) {
        RunResult r;
        std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        std::vector<char *> argv;
        for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        pid_t pid;
        int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        if (rc != 0) {
            ADD_FAILURE() << "cannot run " << args[0] << ": " << strerror(rc);
            return r;
        }
        int status = 0;
        waitpid(pid, &status, 0);
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = ReadFile(out);
        r.err = ReadFile(err);
        return r;
    }

    RunResult Idlc(const std::vector<std::string> &args) {
        std::vector<std::string> all{kIdlc};
        all.insert(all.end(), args.begin(), args.end());
        return Run(all);
    }

    // Decodes routine `name` of `idl` through --blob.
    void Decode(const std::string &idl, const std::string &name, iface_t *f) {
        RunResult r = Idlc({"--blob", name, idl});
        ASSERT_EQ(r.status, 0) << r.err;
        err_t err;
        err_clear(&err);
        ASSERT_EQ(iface_decode(reinterpret_cast<const uint8_t *>(r.out.data()), r.out.size(), f,
                               &err),
                  0)
            << err.detail;
    }

    // Compiles case `idl` into a module linked with the C source `impl`
    // and loads it: its table, or nullptr after a failure (the module is
    // closed by TearDown).
    const stub_module *LoadModule(const std::string &idl, const std::string &impl) {
        std::string c = dir_ + "/impl.c", so = dir_ + "/module.so";
        {
            std::ofstream o(c);
            o << impl;
        }
        RunResult r = Idlc({"--module", "-o", so, kCases + idl, "--", c, "-lm"});
        EXPECT_EQ(r.status, 0) << r.err;
        if (r.status != 0) return nullptr;
        module_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
        EXPECT_NE(module_, nullptr) << dlerror();
        if (module_ == nullptr) return nullptr;
        auto *m = static_cast<const stub_module *>(dlsym(module_, NUMRPC_STUB_SYMBOL));
        EXPECT_NE(m, nullptr);
        return m;
    }

    std::string dir_;
    void *module_ = nullptr;
};

std::string Render(const iface_t &f, const expr_t &e) {
    std::vector<const char *> names;
    for (uint32_t i = 0; i < f.nparams; i++) names.push_back(f.params[i].name);
    char buf[256];
    expr_render(&e, names.data(), buf, sizeof buf);
    return buf;
}

// ---- (a) the two DESIGN §3 examples ----

TEST_F(IdlcTest, DesignExamplesCompile) {
    for (const char *name : {"dmmul.idl", "linpack_paper.idl"}) {
        RunResult r = Idlc({"-o", dir_ + "/out.c", kCases + name});
        EXPECT_EQ(r.status, 0) << name << ": " << r.err;
        EXPECT_EQ(r.err, "");
        EXPECT_NE(ReadFile(dir_ + "/out.c").find("numrpc_stub_module"), std::string::npos);
    }
}

TEST_F(IdlcTest, DumpRoundTripsDmmul) {
    RunResult r = Idlc({"--dump", kCases + "dmmul.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *want :
         {"Define dmmul(", "IN int n", "IN double A[n][n]", "IN double B[n][n]",
          "OUT double C[n][n]", "\"matrix multiply: C = A * B\"", "Required \"libXXX.o\"",
          "CalcOrder n^3", "Calls \"C\" dmmul(n, A, B, C);"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << " not in\n" << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\nhash 0x[0-9a-f]{16}\n"))) << r.out;
}

TEST_F(IdlcTest, DumpRoundTripsLinpack) {
    RunResult r = Idlc({"--dump", kCases + "linpack_paper.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *want :
         {"Module linpack;", "IN double a[lda:n][n]", "IN int lda", "IN int n",
          "OUT int ipvt[n]", "INOUT double b[n]", "OUT int *info",
          "Required \"linpack_flib.a\"", "CalcOrder n^3",
          "Calls \"Fortran\" linpack_(a, lda, n, ipvt, b, info);"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << " not in\n" << r.out;
    EXPECT_TRUE(std::regex_search(r.out, std::regex("\nhash 0x[0-9a-f]{16}\n"))) << r.out;
}

// Strings with bounds (of any expression), string arrays with a stride, and
// abs() in an extent compile, and --dump renders them back as IDL.
TEST_F(IdlcTest, DumpRoundTripsStringsAndAbs) {
    RunResult r = Idlc({"--dump", kCases + "strings.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *want :
         {"IN string name", "OUT string<n> msg", "INOUT string<((n*2)+1)> both",
          "IN string list[n]", "OUT string<4> labels[2*n:n:2]",
          "IN double x[max((1+((n-1)*max(step,-(step)))),0):n:max(step,-(step))]"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << " not in\n" << r.out;
    r = Idlc({"-o", dir_ + "/strings.c", kCases + "strings.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    // The thunk hands a string scalar over as its char* and an array as char**.
    std::string c = ReadFile(dir_ + "/strings.c");
    EXPECT_NE(c.find("*(char **)argv[1]"), std::string::npos) << c;
    EXPECT_NE(c.find("(char * *)argv[4]"), std::string::npos) << c;
}

// The hash printed by --dump is the one in the blob, and it is stable.
TEST_F(IdlcTest, HashIsStable) {
    RunResult a = Idlc({"--dump", kCases + "dmmul.idl"});
    RunResult b = Idlc({"--dump", kCases + "dmmul.idl"});
    ASSERT_EQ(a.status, 0);
    EXPECT_EQ(a.out, b.out);
    iface_t f;
    Decode(kCases + "dmmul.idl", "dmmul", &f);
    char line[64];
    snprintf(line, sizeof line, "hash 0x%016llx", static_cast<unsigned long long>(f.hash));
    EXPECT_NE(a.out.find(line), std::string::npos);
    uint64_t h = f.hash;
    err_t err;
    ASSERT_EQ(iface_compute_hash(&f, &err), 0);
    EXPECT_EQ(f.hash, h);
    iface_free(&f);
}

// ---- (b) the project's stub modules ----

TEST_F(IdlcTest, StubModulesCompile) {
    for (const char *name : {"linpack.idl", "blas.idl", "lapack.idl", "scalapack.idl"}) {
        RunResult r = Idlc({"-o", dir_ + "/out.c", kStubs + name});
        EXPECT_EQ(r.status, 0) << name << ": " << r.err;
        EXPECT_EQ(r.err, "");
    }
}

TEST_F(IdlcTest, LinpackDescriptor) {
    iface_t f;
    Decode(kStubs + "linpack.idl", "linpack", &f);
    EXPECT_STREQ(f.name, "linpack");
    EXPECT_STREQ(f.module, "linpack");
    EXPECT_EQ(f.lang, static_cast<uint32_t>(IFACE_LANG_FORTRAN));
    EXPECT_STREQ(f.symbol, "linpack_");
    ASSERT_EQ(f.nparams, 6u);
    const iface_param &a = f.params[0];
    EXPECT_STREQ(a.name, "a");
    EXPECT_EQ(a.type, static_cast<uint32_t>(NUMRPC_T_DOUBLE));
    EXPECT_EQ(a.mode, static_cast<uint32_t>(IFACE_IN));
    ASSERT_EQ(a.rank, 2u);
    EXPECT_EQ(Render(f, a.dims[0].size), "lda");
    EXPECT_EQ(Render(f, a.dims[0].count), "n");
    EXPECT_EQ(a.dims[0].stride.nwords, 0u);
    EXPECT_EQ(a.dims[0].start.nwords, 0u);
    EXPECT_EQ(Render(f, a.dims[1].size), "n");
    EXPECT_EQ(a.dims[1].count.nwords, 0u);
    EXPECT_EQ(f.params[5].mode, static_cast<uint32_t>(IFACE_OUT));
    EXPECT_EQ(f.params[5].rank, 0u);
    EXPECT_STRNE(f.description, "");
    // (2*n^3)/3 + 2*n^2 at n = 30: 18000 + 1800.
    err_t err;
    double flops = 0;
    auto arg = [](void *, uint32_t index, int64_t *v, err_t *) -> int {
        *v = index == 2 ? 30 : 40;
        return 0;
    };
    ASSERT_EQ(expr_eval_real(&f.complexity, arg, nullptr, &flops, &err), 0) << err.detail;
    EXPECT_DOUBLE_EQ(flops, 19800.0);
    iface_free(&f);
}

TEST_F(IdlcTest, DgefaAndDgeslDescriptors) {
    iface_t f;
    Decode(kStubs + "linpack.idl", "dgefa", &f);
    EXPECT_STREQ(f.symbol, "dgefa_");
    ASSERT_EQ(f.nparams, 5u);
    EXPECT_EQ(f.params[0].mode, static_cast<uint32_t>(IFACE_INOUT));
    iface_free(&f);
    Decode(kStubs + "linpack.idl", "dgesl", &f);
    EXPECT_STREQ(f.symbol, "dgesl_");
    ASSERT_EQ(f.nparams, 6u);
    EXPECT_EQ(f.params[4].mode, static_cast<uint32_t>(IFACE_INOUT));
    EXPECT_EQ(f.params[5].mode, static_cast<uint32_t>(IFACE_IN));
    iface_free(&f);
}

// dcopy's strided vectors: legal shapes for n = 0, incx > 1 and incx < 0
// (the positions of |incx|).
TEST_F(IdlcTest, DcopyShapes) {
    iface_t f;
    Decode(kStubs + "blas.idl", "dcopy", &f);
    EXPECT_STREQ(f.symbol, "dcopy_");
    ASSERT_EQ(f.nparams, 5u);
    ASSERT_EQ(f.params[1].rank, 1u);
    EXPECT_EQ(Render(f, f.params[1].dims[0].stride), "max(incx,-(incx))");
    struct Vals {
        int64_t n, incx, incy;
    };
    auto arg = [](void *ctx, uint32_t index, int64_t *v, err_t *) -> int {
        const Vals *s = static_cast<const Vals *>(ctx);
        *v = index == 0 ? s->n : index == 2 ? s->incx : s->incy;
        return 0;
    };
    iface_shape shapes[5];
    err_t err;
    Vals empty{0, 3, 1};
    ASSERT_EQ(iface_eval_shapes(&f, arg, &empty, shapes, &err), 0) << err.detail;
    EXPECT_EQ(shapes[1].wire_elems, 0u);
    Vals strided{4, 3, 2};
    ASSERT_EQ(iface_eval_shapes(&f, arg, &strided, shapes, &err), 0) << err.detail;
    EXPECT_EQ(shapes[1].mem_elems, 10u);  // 1 + 3*3
    EXPECT_EQ(shapes[1].wire_elems, 4u);
    EXPECT_EQ(shapes[3].mem_elems, 7u);  // 1 + 3*2
    Vals backwards{4, -3, -2};
    ASSERT_EQ(iface_eval_shapes(&f, arg, &backwards, shapes, &err), 0) << err.detail;
    EXPECT_EQ(shapes[1].mem_elems, 10u);
    EXPECT_EQ(shapes[1].stride[0], 3);
    EXPECT_EQ(shapes[3].mem_elems, 7u);
    iface_free(&f);
}

// ---- (c) errors: exact file:line:column and message ----

struct ErrorCase {
    const char *file;
    int line, col;
    std::string phrase;
};

TEST_F(IdlcTest, ErrorsHaveExactPositions) {
    const ErrorCase cases[] = {
        {"err_syntax.idl", 2, 19, "syntax error, unexpected mode, expecting ')'"},
        {"err_unknown_extent.idl", 1, 33, "unknown name 'm' in the extent of 'x'"},
        {"err_out_scalar.idl", 2, 18, "OUT scalar 'info' is passed by pointer: write '*info'"},
        {"err_double_extent.idl", 1, 35,
         "the extent of 'x' uses 'n', which is a double, not an integer"},
        {"err_calls_unknown.idl", 2, 16, "Calls argument 'y' is not a parameter of 'f'"},
        {"err_duplicate.idl", 2, 21, "duplicate parameter 'n' (first at line 1, column 17)"},
        {"err_no_calls.idl", 2, 8, "Define 'f' has no Calls clause"},
        {"err_result.idl", 2, 11,
         "Calls result 'n' must be an OUT scalar of a numeric or char type (e.g. OUT double *n)"},
        {"err_result.idl", 4, 20, "Calls result 'r' cannot also be an argument"},
        {"err_result.idl", 6, 11, "Calls result 'q' is not a parameter of 'h'"},
        {"err_self_extent.idl", 2, 35,
         "the extent of 'x' uses 'x', which is an array, not a scalar"},
        {"err_char_const.idl", 1, 49,
         "malformed character constant '' (write one character: 'N')"},
        {"err_strings.idl", 1, 31,
         "OUT string 'msg' needs a bound: write string<N> msg (N characters, the caller's "
         "buffer holds N+1 bytes)"},
        {"err_strings.idl", 3, 16, "only strings have a bound; 'n' is a int"},
        {"err_strings.idl", 3, 39, "string 's' is already a pointer: remove the '*'"},
        {"err_strings.idl", 5, 33, "string array 'w' has 2 dimensions; at most 1 is allowed"},
        {"err_strings.idl", 5, 52,
         "string array 'x' in a Fortran routine: declare a CHARACTER array as a char array "
         "(char x[len][n])"},
        {"err_strings.idl", 7, 31, "unknown name 'm' in the bound of 's'"},
        {"err_generic.idl", 1, 18,
         "unknown precision 'q' (use s, d, c, z, or sc, cs, dz, zd for a complex routine with "
         "a real part)"},
        {"err_generic.idl", 1, 24, "precision 's' listed twice for '?gemm'"},
        {"err_generic.idl", 1, 50, "'c' is not a precision of '?gemm' (for parameter 'w')"},
        {"err_generic.idl", 2, 11,
         "Calls name 'gemm' of generic '?gemm' must contain a name pattern of the Define "
         "('?gemm'), which stands for each routine's name"},
        {"err_generic.idl", 3, 23,
         "type T of 'x' names a precision's type: only in a generic Define (Define ?f {s, d, c, "
         "z} ...)"},
        {"err_generic.idl", 3, 31, "'k' is given precisions, but 'f' is not a generic Define"},
        {"err_generic.idl", 4, 11,
         "'complex' in an expression is 1 or 0 by precision: only in a generic Define, and 'f' "
         "is not one"},
        {"err_generic.idl", 5, 11, "Calls name 'cblas_?f' has a '?', but 'f' is not a generic Define"},
        {"err_generic.idl", 6, 8,
         "name pattern '?a?b' must hold exactly one '?' (where the precision prefix goes)"},
        {"err_generic.idl", 6, 31, "unknown type 'matrix' (T and R name the types of a generic Define)"},
        {"err_generic.idl", 8, 36, "unknown name 'm' in the extent of 'x'"},
        {"err_generic.idl", 9, 20, "Calls argument 'y' is not a parameter of '?g'"},
        {"err_generic.idl", 10, 76,
         "the name of '?" + std::string(62, 'a') + "' for 'sc' is longer than 63 characters"},
    };
    for (const ErrorCase &c : cases) {
        std::string path = kCases + c.file;
        std::string out = dir_ + "/never.c";
        RunResult r = Idlc({"-o", out, path});
        EXPECT_EQ(r.status, 1) << c.file;
        std::string want = path + ":" + std::to_string(c.line) + ":" + std::to_string(c.col) +
                           ": error: " + c.phrase + "\n";
        EXPECT_NE(r.err.find(want), std::string::npos)
            << "want: " << want << "got:  " << r.err;
        EXPECT_EQ(r.out, "");
        struct stat st;
        EXPECT_NE(stat(out.c_str(), &st), 0) << c.file << ": output written despite errors";
    }
}

TEST_F(IdlcTest, ReportsEveryError) {
    std::string path = kCases + "err_many.idl";
    RunResult r = Idlc({path});
    EXPECT_EQ(r.status, 1);
    const char *want[] = {
        ":2:32: error: unknown name 'k' in the extent of 'x'\n",
        ":2:44: error: OUT scalar 'r' is passed by pointer: write '*r'\n",
        ":3:7: error: unknown language \"Pascal\" (use \"C\" or \"Fortran\")\n",
        ":5:45: error: 'w' has 5 dimensions; at most 4 are allowed\n",
        ":6:19: error: Calls argument 'q' is not a parameter of 'g'\n",
    };
    for (const char *w : want)
        EXPECT_NE(r.err.find(path + w), std::string::npos) << w << " not in\n" << r.err;
    size_t lines = 0;
    for (char ch : r.err) lines += ch == '\n';
    EXPECT_EQ(lines, 5u) << r.err;
}

// A mistake in a generic Define's body is reported once, not once per
// precision (the lines of err_generic.idl's errors are all different).
TEST_F(IdlcTest, GenericMistakeReportedOnce) {
    RunResult r = Idlc({kCases + "err_generic.idl"});
    EXPECT_EQ(r.status, 1);
    size_t lines = 0;
    for (char ch : r.err) lines += ch == '\n';
    EXPECT_EQ(lines, 13u) << r.err;
}

TEST_F(IdlcTest, MissingFileAndBadUsage) {
    EXPECT_EQ(Idlc({kCases + "no_such_file.idl"}).status, 1);
    EXPECT_EQ(Idlc({}).status, 1);
    EXPECT_EQ(Idlc({"--module", kCases + "dmmul.idl"}).status, 1);  // no -o
    EXPECT_EQ(Idlc({"--blob", "nosuch", kCases + "dmmul.idl"}).status, 1);
}

// ---- (d) the generated C compiles cleanly, and the thunk works ----

TEST_F(IdlcTest, GeneratedCCompilesWithWerror) {
    for (std::string idl : {kCases + "dmmul.idl", kCases + "linpack_paper.idl",
                            kCases + "reorder.idl", kCases + "optional.idl",
                            kCases + "generic.idl", kCases + "mode_names.idl",
                            kStubs + "linpack.idl", kStubs + "blas.idl", kStubs + "lapack.idl"}) {
        std::string c = dir_ + "/gen.c";
        RunResult r = Idlc({"-o", c, idl});
        ASSERT_EQ(r.status, 0) << idl << ": " << r.err;
        RunResult cc = Run({"cc", "-std=c11", "-c", "-Wall", "-Wextra", "-Werror",
                            "-Wmissing-prototypes", "-Wshadow", "-I",
                            std::string(TOP_SRCDIR) + "/common", "-o", dir_ + "/gen.o", c});
        EXPECT_EQ(cc.status, 0) << idl << ":\n" << cc.err;
    }
}

// Calls order differs from Define order: the thunk passes Calls order.
TEST_F(IdlcTest, ModuleThunkReordersArguments) {
    const stub_module *m =
        LoadModule("reorder.idl",
                   "void scale_vec(double *x, int *count, double factor, int n);\n"
                   "void scale_vec(double *x, int *count, double factor, int n)\n"
                   "{ for (int i = 0; i < n; i++) x[i] *= factor; *count = n; }\n");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->abi, static_cast<uint32_t>(NUMRPC_STUB_ABI));
    EXPECT_STREQ(m->module, "reorder");
    ASSERT_EQ(m->count, 1u);
    EXPECT_STREQ(m->entries[0].name, "scale");
    iface_t f;
    err_t err;
    ASSERT_EQ(iface_decode(m->entries[0].iface_blob, m->entries[0].iface_len, &f, &err), 0)
        << err.detail;
    EXPECT_STREQ(f.symbol, "scale_vec");
    EXPECT_EQ(f.lang, static_cast<uint32_t>(IFACE_LANG_C));
    iface_free(&f);
    int n = 3, count = 0;
    double x[3] = {1, 2, 3}, factor = 2.5;
    void *argv[4] = {&n, x, &factor, &count};  // Define order
    m->entries[0].thunk(argv);
    EXPECT_EQ(count, 3);
    EXPECT_DOUBLE_EQ(x[0], 2.5);
    EXPECT_DOUBLE_EQ(x[2], 7.5);
}

// ---- (e) char-dependent extents, functions, Fortran char lengths ----

// Evaluates routine f's shapes with the integer scalars in vals (by index).
int EvalShapes(const iface_t &f, std::vector<int64_t> vals, iface_shape *shapes) {
    auto arg = [](void *ctx, uint32_t index, int64_t *v, err_t *) -> int {
        *v = (*static_cast<std::vector<int64_t> *>(ctx))[index];
        return 0;
    };
    err_t err;
    return iface_eval_shapes(&f, arg, &vals, shapes, &err);
}

TEST_F(IdlcTest, CharConstantsComparisonsAndConditionals) {
    RunResult r = Idlc({"--dump", kCases + "optional.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *want :
         {"OUT double v[(((jobz==86)||(jobz==118))?n:0)][(((jobz==86)||(jobz==118))?n:0)]",
          "CalcOrder (((jobz!=78)&&(n>=2))?(n^2):n)", "OUT double *trace"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << " not in\n" << r.out;
    iface_t f;
    Decode(kCases + "optional.idl", "eig", &f);
    ASSERT_EQ(f.nparams, 6u);
    iface_shape shapes[6];
    // jobz 'V': v is n x n; 'v' too; 'N': v has extent 0 and nothing travels.
    ASSERT_EQ(EvalShapes(f, {'V', 5, 0, 7, 0, 0}, shapes), 0);
    EXPECT_EQ(shapes[4].wire_elems, 25u);
    EXPECT_EQ(shapes[2].mem_elems, 35u);
    EXPECT_EQ(shapes[2].wire_elems, 25u);
    ASSERT_EQ(EvalShapes(f, {'v', 5, 0, 7, 0, 0}, shapes), 0);
    EXPECT_EQ(shapes[4].wire_elems, 25u);
    ASSERT_EQ(EvalShapes(f, {'N', 5, 0, 7, 0, 0}, shapes), 0);
    EXPECT_EQ(shapes[4].wire_elems, 0u);
    EXPECT_EQ(shapes[4].mem_elems, 0u);
    iface_free(&f);
}

// The thunk of a Fortran FUNCTION stores its value in the result parameter
// and passes a hidden length of 1 for the char argument.
TEST_F(IdlcTest, FortranFunctionResultAndCharLength) {
    const stub_module *m = LoadModule(
        "optional.idl",
        "#include <stddef.h>\n"
        "double eig_(char *jobz, int *n, double *a, int *lda, double *v, size_t len);\n"
        "double eig_(char *jobz, int *n, double *a, int *lda, double *v, size_t len)\n"
        "{\n"
        "    if (len != 1) return -1000.0 - (double)len;\n"
        "    double t = 0;\n"
        "    for (int i = 0; i < *n; i++) t += a[i * *lda + i];\n"
        "    if (*jobz == 'V')\n"
        "        for (int j = 0; j < *n; j++)\n"
        "            for (int i = 0; i < *n; i++) v[j * *n + i] = a[j * *lda + i];\n"
        "    return t;\n"
        "}\n");
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->count, 1u);
    char jobz = 'V';
    int n = 2, lda = 3;
    double a[6] = {1, 2, -9, 3, 4, -9}, v[4] = {0, 0, 0, 0}, trace = 0;
    void *argv[6] = {&jobz, &n, a, &lda, v, &trace};
    m->entries[0].thunk(argv);
    EXPECT_DOUBLE_EQ(trace, 5.0);
    EXPECT_DOUBLE_EQ(v[0], 1.0);
    EXPECT_DOUBLE_EQ(v[3], 4.0);
}

// lapack.idl: dgesvd's U and VT follow jobu/jobvt; dgemm's A follows transa.
TEST_F(IdlcTest, LapackAndBlasShapesFollowTheirJobCharacters) {
    iface_t f;
    Decode(kStubs + "lapack.idl", "dgesvd", &f);
    ASSERT_EQ(f.nparams, 14u);
    iface_shape shapes[14];
    // jobu jobvt m n a lda s u ldu vt ldvt work lwork info
    ASSERT_EQ(EvalShapes(f, {'A', 'S', 6, 4, 0, 6, 0, 0, 7, 0, 5, 0, 100, 0}, shapes), 0);
    EXPECT_EQ(shapes[7].wire_elems, 36u);  // U: 6 x 6
    EXPECT_EQ(shapes[7].mem_elems, 42u);   // ldu 7
    EXPECT_EQ(shapes[9].wire_elems, 16u);  // VT: min(6,4) x 4
    EXPECT_EQ(shapes[11].mem_elems, 100u);
    ASSERT_EQ(EvalShapes(f, {'n', 'o', 6, 4, 0, 6, 0, 0, 1, 0, 1, 0, 100, 0}, shapes), 0);
    EXPECT_EQ(shapes[7].mem_elems, 0u);
    EXPECT_EQ(shapes[9].mem_elems, 0u);
    iface_free(&f);

    Decode(kStubs + "blas.idl", "dgemm", &f);
    ASSERT_EQ(f.nparams, 13u);
    iface_shape g[13];
    // transa transb m n k alpha a lda b ldb beta c ldc
    ASSERT_EQ(EvalShapes(f, {'T', 'N', 5, 4, 3, 0, 0, 3, 0, 3, 0, 0, 5}, g), 0);
    EXPECT_EQ(g[6].wire_elems, 15u);  // A is k x m
    EXPECT_EQ(g[6].count[0], 3);
    EXPECT_EQ(g[8].count[0], 3);      // B is k x n
    EXPECT_NE(EvalShapes(f, {'N', 'N', 5, 4, 3, 0, 0, 3, 0, 3, 0, 0, 5}, g), 0);  // lda 3 < m 5
    iface_free(&f);
}

// ---- (f) generic Defines, mode words as names ----

// One Define over s, d, c, z: each routine has its name, its element type T
// and real type R, the parameters of its precision, and its Calls name.
TEST_F(IdlcTest, GenericDefineGivesOneRoutinePerPrecision) {
    RunResult r = Idlc({"--dump", kCases + "generic.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *want :
         {"Define snorm(", "Define znorm(", "Define ssum(", "Define dsum(", "Define chsum(",
          "Define zhsum(", "Define sscale(", "Define csscale(", "Define zdscale(",
          "\"result := sum of |x_i|^2 (cnorm)\"", "Calls \"C\" my_chsum(n, x, total);",
          "Calls \"Fortran\" zdscale_(n, alpha, x);", "WORK double scratch[2*n]"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << " not in\n" << r.out;
    struct Want {
        const char *name;
        uint32_t nparams, x_type, result_type;
    };
    const Want wants[] = {{"snorm", 3, NUMRPC_T_FLOAT, NUMRPC_T_FLOAT},
                          {"dnorm", 3, NUMRPC_T_DOUBLE, NUMRPC_T_DOUBLE},
                          {"cnorm", 4, NUMRPC_T_SCOMPLEX, NUMRPC_T_FLOAT},
                          {"znorm", 4, NUMRPC_T_DCOMPLEX, NUMRPC_T_DOUBLE}};
    for (const Want &w : wants) {
        SCOPED_TRACE(w.name);
        iface_t f;
        Decode(kCases + "generic.idl", w.name, &f);
        EXPECT_EQ(f.symbol, "my_" + std::string(w.name));
        ASSERT_EQ(f.nparams, w.nparams);
        EXPECT_EQ(f.params[1].type, w.x_type);
        EXPECT_EQ(f.params[w.nparams - 1].type, w.result_type);
        if (w.nparams == 4) {  // scratch: complex precisions only, of their real type
            EXPECT_STREQ(f.params[2].name, "scratch");
            EXPECT_EQ(f.params[2].mode, static_cast<uint32_t>(IFACE_WORK));
            EXPECT_EQ(f.params[2].type, w.result_type);
        }
        // CalcOrder (complex ? 4 : 1) * n at n = 10.
        double flops = 0;
        err_t err;
        auto ten = [](void *, uint32_t, int64_t *v, err_t *) -> int {
            *v = 10;
            return 0;
        };
        ASSERT_EQ(expr_eval_real(&f.complexity, ten, nullptr, &flops, &err), 0) << err.detail;
        EXPECT_DOUBLE_EQ(flops, w.nparams == 4 ? 40.0 : 10.0);
        iface_free(&f);
    }
    iface_t f;
    Decode(kCases + "generic.idl", "zdscale", &f);
    EXPECT_STREQ(f.symbol, "zdscale_");
    EXPECT_EQ(f.params[1].type, static_cast<uint32_t>(NUMRPC_T_DOUBLE));
    EXPECT_EQ(f.params[2].type, static_cast<uint32_t>(NUMRPC_T_DCOMPLEX));
    iface_free(&f);
}

// The generated thunks hand each routine its own types: float and complex
// arrays, a real result from a complex routine, a real alpha by reference.
TEST_F(IdlcTest, GenericModuleThunksPassEachPrecisionsTypes) {
    std::string impl =
        "#include <complex.h>\n"
        "float my_snorm(int n, float *x);\n"
        "float my_snorm(int n, float *x)\n"
        "{ float s = 0; for (int i = 0; i < n; i++) s += x[i] * x[i]; return s; }\n"
        "double my_znorm(int n, double complex *x, double *scratch);\n"
        "double my_znorm(int n, double complex *x, double *scratch)\n"
        "{ double s = 0; for (int i = 0; i < n; i++) { scratch[2*i] = creal(x[i]);\n"
        "  scratch[2*i+1] = cimag(x[i]); s += scratch[2*i] * scratch[2*i]\n"
        "  + scratch[2*i+1] * scratch[2*i+1]; } return s; }\n"
        "void zdscale_(int *n, double *alpha, double complex *x);\n"
        "void zdscale_(int *n, double *alpha, double complex *x)\n"
        "{ for (int i = 0; i < *n; i++) x[i] *= *alpha; }\n";
    // The other routines of generic.idl, never called here.
    for (std::string name : {"my_dnorm", "my_cnorm", "my_ssum", "my_dsum", "my_chsum", "my_zhsum",
                             "sscale_", "dscale_", "csscale_"})
        impl += "void " + name + "(void);\nvoid " + name + "(void) {}\n";
    const stub_module *m = LoadModule("generic.idl", impl);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->count, 12u);
    auto thunk = [m](const char *name) {
        for (uint32_t i = 0; i < m->count; i++)
            if (strcmp(m->entries[i].name, name) == 0) return m->entries[i].thunk;
        ADD_FAILURE() << name << " not in the module";
        return m->entries[0].thunk;
    };
    int n = 3;
    float xs[3] = {1, 2, 2}, rs = 0;
    void *sargs[3] = {&n, xs, &rs};
    thunk("snorm")(sargs);
    EXPECT_FLOAT_EQ(rs, 9.0f);
    std::complex<double> xz[3] = {{3.0, 4.0}, {1.0, 0.0}, {0.0, -2.0}};
    double scratch[6] = {0}, rz = 0;
    void *zargs[4] = {&n, xz, scratch, &rz};
    thunk("znorm")(zargs);
    EXPECT_DOUBLE_EQ(rz, 30.0);
    EXPECT_DOUBLE_EQ(scratch[1], 4.0);
    double alpha = 0.5;
    void *dargs[3] = {&n, &alpha, xz};
    thunk("zdscale")(dargs);
    EXPECT_DOUBLE_EQ(xz[0].real(), 1.5);
    EXPECT_DOUBLE_EQ(xz[0].imag(), 2.0);
}

// in, out, inout and work (any case, mode_ spellings too) name parameters
// where no mode can stand: in the parameter list, extents, Calls.
TEST_F(IdlcTest, ModeWordsAreNamesWhereNoModeCanStand) {
    RunResult r = Idlc({"--dump", kCases + "mode_names.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *want :
         {"IN int in", "IN double out[in]", "INOUT double Inout[In]", "WORK double work[in]",
          "OUT int *mode_out", "CalcOrder in*In", "Calls \"C\" f(in, out, Inout, In, work, mode_out);",
          "OUT double *out"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << " not in\n" << r.out;
}

// ---- (d) Backend "MPI" (docs/idl.md, "Backend") ----

// The backend part of a descriptor is written only for an MPI routine: a
// local routine's bytes, and so its hash, are what they were before it.
TEST_F(IdlcTest, BackendLeavesLocalHashesAlone) {
    iface_t f;
    Decode(kStubs + "lapack.idl", "dgesv", &f);
    EXPECT_EQ(f.backend, static_cast<uint32_t>(IFACE_BACKEND_LOCAL));
    EXPECT_EQ(f.hash, 0x7243d3e9af2a3facULL);  // dgesv's hash before the Backend clause existed
    iface_free(&f);
    RunResult r = Idlc({"--dump", kStubs + "lapack.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out.find("Backend"), std::string::npos);
}

// An MPI routine carries its backend and rank count through encode, decode
// and --dump, and its module entry has no thunk.
TEST_F(IdlcTest, MpiRoutineRoundTrips) {
    iface_t f;
    Decode(kCases + "mpi.idl", "pdgesv", &f);
    EXPECT_EQ(f.backend, static_cast<uint32_t>(IFACE_BACKEND_MPI));
    EXPECT_EQ(f.ranks, 0u);
    EXPECT_STREQ(f.symbol, "pdgesv");
    ASSERT_EQ(f.nparams, 8u);
    uint64_t h = f.hash;
    err_t err;
    ASSERT_EQ(iface_compute_hash(&f, &err), 0);
    EXPECT_EQ(f.hash, h);
    iface_free(&f);
    Decode(kCases + "mpi.idl", "pdfour", &f);
    EXPECT_EQ(f.backend, static_cast<uint32_t>(IFACE_BACKEND_MPI));
    EXPECT_EQ(f.ranks, 4u);
    // The same routine without its backend part is another routine.
    uint64_t with = f.hash;
    f.backend = IFACE_BACKEND_LOCAL;
    f.ranks = 0;
    ASSERT_EQ(iface_compute_hash(&f, &err), 0);
    EXPECT_NE(f.hash, with);
    iface_free(&f);
    RunResult r = Idlc({"--dump", kCases + "mpi.idl"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const char *want : {"Backend \"MPI\";\nCalls \"MPI\" pdgesv(n, nrhs, a, lda, ipiv, b, ldb, info);",
                             "Backend \"MPI\" 4;\nCalls \"MPI\" pdfour(n, x);"})
        EXPECT_NE(r.out.find(want), std::string::npos) << want << " not in\n" << r.out;
    const stub_module *m = LoadModule("mpi.idl", "int unused_symbol;\n");
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(m->count, 2u);
    EXPECT_EQ(m->entries[0].thunk, nullptr);
    EXPECT_EQ(m->entries[1].thunk, nullptr);
}

// A decoder refuses an unknown backend and a rank count without MPI.
TEST_F(IdlcTest, BackendPartIsValidated) {
    iface_t f;
    Decode(kCases + "mpi.idl", "pdfour", &f);
    err_t err;
    f.backend = 7;
    EXPECT_NE(iface_validate(&f, &err), 0);
    EXPECT_NE(std::string(err.detail).find("unknown backend 7"), std::string::npos) << err.detail;
    f.backend = IFACE_BACKEND_LOCAL;
    EXPECT_NE(iface_validate(&f, &err), 0);
    f.backend = IFACE_BACKEND_MPI;
    f.ranks = IFACE_MAX_RANKS + 1;
    EXPECT_NE(iface_validate(&f, &err), 0);
    f.ranks = 4;
    EXPECT_EQ(iface_validate(&f, &err), 0);
    iface_free(&f);
}

TEST_F(IdlcTest, BackendErrorsHaveExactPositions) {
    std::string path = kCases + "err_backend.idl";
    RunResult r = Idlc({"-o", dir_ + "/never.c", path});
    EXPECT_EQ(r.status, 1);
    const char *want[] = {
        ":1:47: error: unknown backend \"PVM\" (the one backend is \"MPI\")\n",
        ":2:53: error: Backend \"MPI\" 0: the job's ranks are at least 1 (leave the number out for the "
        "server's configured job)\n",
        ":3:56: error: c: Backend given twice (first at line 3)\n",
        ":4:60: error: 'd' runs on the MPI job: its Calls names the engine's routine, Calls \"MPI\" d(...)\n",
        ":5:45: error: Calls \"MPI\" of 'e' needs Backend \"MPI\" in its Define\n",
        ":6:68: error: Calls \"MPI\" passes the parameters in the Define's order: 'n' here, not 'x'\n",
        ":7:47: error: Backend \"MPI\" -2: the job's ranks are at least 1",
        ":7:13: error: 's' is a string: an MPI routine takes numbers and chars only\n",
    };
    for (const char *w : want) EXPECT_NE(r.err.find(path + w), std::string::npos) << w << " not in\n" << r.err;
}

// scalapack.idl's routines take exactly the parameters of their LAPACK and
// BLAS twins: the rendered parameter lists are equal.
TEST_F(IdlcTest, ScalapackMirrorsLapackAndBlas) {
    auto params = [](const std::string &dump, const std::string &name) {
        size_t at = dump.find("Define " + name + "(");
        if (at == std::string::npos) return std::string("(missing)");
        size_t open = dump.find('(', at), close = dump.find(")\n", open);
        return dump.substr(open, close - open);
    };
    RunResult sp = Idlc({"--dump", kStubs + "scalapack.idl"});
    RunResult la = Idlc({"--dump", kStubs + "lapack.idl"});
    RunResult bl = Idlc({"--dump", kStubs + "blas.idl"});
    ASSERT_EQ(sp.status, 0) << sp.err;
    for (const char *twin : {"dgesv", "dgetrf", "dgetrs", "dposv", "dsyev"})
        EXPECT_EQ(params(sp.out, std::string("p") + twin), params(la.out, twin)) << twin;
    EXPECT_EQ(params(sp.out, "pdgemm"), params(bl.out, "dgemm"));
    for (const char *name : {"pdgesv", "pdgetrf", "pdgetrs", "pdposv", "pdsyev", "pdgemm"}) {
        iface_t f;
        Decode(kStubs + "scalapack.idl", name, &f);
        EXPECT_EQ(f.backend, static_cast<uint32_t>(IFACE_BACKEND_MPI)) << name;
        EXPECT_STREQ(f.symbol, name);
        iface_free(&f);
    }
}

}  // namespace
