// fft_sparse_test.cc -- stubs/fft.idl against FFTW called here and a naive DFT,
// stubs/sparse.idl against dense LAPACK, its refusals of hostile CSC arrays.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <fftw3.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "numrpc.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"
#include "local_lapack.h"

namespace {

using cplx = std::complex<double>;
using cplxf = std::complex<float>;

std::unique_ptr<ServerProc> g_server;

class FftSparseEnvironment : public testing::Environment {
  public:
    void SetUp() override
    {
        openblas_set_num_threads(1);
        g_server = std::make_unique<ServerProc>();
        UseServer(g_server->address());
    }
    void TearDown() override
    {
        numrpc_finalize();
        g_server.reset();
    }
};

const testing::Environment *const g_env =
    testing::AddGlobalTestEnvironment(new FftSparseEnvironment);

// Whether the build made this stub module (it needs its Debian package).
bool ModuleBuilt(const char *name)
{
    std::string path = std::string(TOP_BUILDDIR "/stubs/.libs/") + name + ".so";
    return access(path.c_str(), R_OK) == 0;
}

#define REQUIRE_MODULE(name, package)                                                        \
    do {                                                                                     \
        if (!ModuleBuilt(name)) GTEST_SKIP() << name ".so not built: " package " is absent"; \
    } while (0)

int Call(int rc)
{
    EXPECT_EQ(rc, NUMRPC_OK) << numrpc_strerror(rc) << ": " << numrpc_last_error_detail();
    return rc;
}

std::vector<double> Reals(size_t n, std::mt19937_64 &gen)
{
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(n);
    for (double &x : v) x = u(gen);
    return v;
}

std::vector<cplx> Complexes(size_t n, std::mt19937_64 &gen)
{
    std::vector<double> parts = Reals(2 * n, gen);
    std::vector<cplx> v(n);
    for (size_t i = 0; i < n; i++) v[i] = cplx(parts[2 * i], parts[2 * i + 1]);
    return v;
}

// got equals want within tol * (1 + the largest |want|), element by element.
template <typename T, typename U>
void ExpectNear(const std::vector<T> &got, const std::vector<U> &want, double tol, const char *what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    double scale = 1.0;
    for (const U &w : want) scale = std::max(scale, static_cast<double>(std::abs(w)));
    for (size_t i = 0; i < got.size(); i++)
        ASSERT_LE(std::abs(std::complex<double>(got[i]) - std::complex<double>(want[i])), tol * scale)
            << what << "[" << i << "]: remote " << got[i] << ", expected " << want[i];
}

// ---- FFT ----

constexpr double kFftTol = 1e-13;  // relative, for n up to a few thousand
constexpr double kFftTolSingle = 2e-5;

// The 2-D DFT by its definition: x is n1 x n2 column-major, sign -1 or +1.
std::vector<cplx> NaiveDft(const std::vector<cplx> &x, int n1, int n2, int sign)
{
    std::vector<cplx> y(x.size());
    const double pi = std::acos(-1.0);
    for (int k2 = 0; k2 < n2; k2++)
        for (int k1 = 0; k1 < n1; k1++) {
            std::complex<long double> s = 0;
            for (int j2 = 0; j2 < n2; j2++)
                for (int j1 = 0; j1 < n1; j1++) {
                    long double phase = 2.0L * pi * sign *
                                        (static_cast<long double>((j1 * k1) % n1) / n1 +
                                         static_cast<long double>((j2 * k2) % n2) / n2);
                    s += std::complex<long double>(x[j1 + n1 * j2]) *
                         std::complex<long double>(std::cos(phase), std::sin(phase));
                }
            y[k1 + n1 * k2] = cplx(static_cast<double>(s.real()), static_cast<double>(s.imag()));
        }
    return y;
}

std::vector<cplx> Complexified(const std::vector<double> &x)
{
    return std::vector<cplx>(x.begin(), x.end());
}

// The first h rows of the n1 x n2 column-major a: the half a real transform keeps.
std::vector<cplx> FirstRows(const std::vector<cplx> &a, int n1, int n2, int h)
{
    std::vector<cplx> top(static_cast<size_t>(h) * n2);
    for (int j = 0; j < n2; j++)
        for (int i = 0; i < h; i++) top[i + static_cast<size_t>(h) * j] = a[i + static_cast<size_t>(n1) * j];
    return top;
}

fftw_complex *Fftw(cplx *p) { return reinterpret_cast<fftw_complex *>(p); }
fftwf_complex *Fftw(cplxf *p) { return reinterpret_cast<fftwf_complex *>(p); }

// The real routine of precision p ('d' or 's'), kind "r2c" or "c2r" and
// rank 1 (n1 points) or 2 (n1 x n2) from in to out.
int RealTransform(char p, const char *kind, int rank, int n1, int n2, void *in, void *out)
{
    std::string name = std::string(1, p) + "fft_" + kind + (rank == 1 ? "_1d" : "_2d");
    return rank == 1 ? numrpc_call(name.c_str(), n1, in, out) : numrpc_call(name.c_str(), n1, n2, in, out);
}

// r2c, then c2r of its result, gives n1*n2 times x (FFTW does not normalise).
template <typename R>
void ExpectRealRoundTrip(char p, int rank, int n1, int n2, std::vector<R> x, double tol)
{
    std::vector<std::complex<R>> half(static_cast<size_t>(n1 / 2 + 1) * n2);
    std::vector<R> back(x.size());
    ASSERT_EQ(Call(RealTransform(p, "r2c", rank, n1, n2, x.data(), half.data())), NUMRPC_OK);
    ASSERT_EQ(Call(RealTransform(p, "c2r", rank, n1, n2, half.data(), back.data())), NUMRPC_OK);
    for (R &v : x) v *= static_cast<R>(n1 * n2);
    ExpectNear(back, x, tol, rank == 1 ? "c2r(r2c(x))" : "c2r(r2c(x)) 2-D");
}

class RemoteFft : public testing::TestWithParam<int> {
  protected:
    void SetUp() override { REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)"); }
};

// Sizes: 1, a prime, a power of two, and sizes with the factors 3 and 5.
INSTANTIATE_TEST_SUITE_P(Sizes, RemoteFft, testing::Values(1, 13, 64, 360, 1000));

TEST_P(RemoteFft, Complex1dMatchesLocalFftwBothWays)
{
    const int n = GetParam();
    std::mt19937_64 gen(n);
    const std::vector<cplx> x = Complexes(n, gen);
    for (int sign : {FFTW_FORWARD, FFTW_BACKWARD}) {
        std::vector<cplx> remote = x, local = x;
        ASSERT_EQ(Call(numrpc_call("zfft_1d", n, remote.data(), sign)), NUMRPC_OK);
        fftw_plan p = fftw_plan_dft_1d(n, Fftw(local.data()), Fftw(local.data()), sign, FFTW_ESTIMATE);
        fftw_execute(p);
        fftw_destroy_plan(p);
        ExpectNear(remote, local, kFftTol, sign < 0 ? "forward" : "backward");
    }
}

TEST_P(RemoteFft, Complex1dBackwardOfForwardIsNTimesTheInput)
{
    const int n = GetParam();
    std::mt19937_64 gen(100 + n);
    const std::vector<cplx> x = Complexes(n, gen);
    std::vector<cplx> y = x;
    ASSERT_EQ(Call(numrpc_call("zfft_1d", n, y.data(), -1)), NUMRPC_OK);
    ASSERT_EQ(Call(numrpc_call("zfft_1d", n, y.data(), +1)), NUMRPC_OK);
    std::vector<cplx> nx(x);
    for (cplx &v : nx) v *= n;
    ExpectNear(y, nx, kFftTol, "n x");
}

TEST_P(RemoteFft, RealToComplexAndBack1d)
{
    const int n = GetParam(), h = n / 2 + 1;
    std::mt19937_64 gen(200 + n);
    const std::vector<double> x = Reals(n, gen);
    std::vector<double> x_in = x;
    std::vector<cplx> y(h), y_local(h);
    ASSERT_EQ(Call(numrpc_call("dfft_r2c_1d", n, x_in.data(), y.data())), NUMRPC_OK);
    fftw_plan p = fftw_plan_dft_r2c_1d(n, x_in.data(), Fftw(y_local.data()), FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    ExpectNear(y, y_local, kFftTol, "y");
    ExpectRealRoundTrip('d', 1, n, 1, x, kFftTol);
}

// The module keeps 8 plans per precision: ten shapes twice over run on
// kept plans (with the call's new arrays) and on replaced ones.
TEST(RemoteFftPlans, KeptAndReplacedPlansTransformNewArraysAlike)
{
    REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)");
    const int sizes[] = {16, 17, 30, 48, 100, 128, 243, 250, 512, 1001};
    for (int round = 0; round < 2; round++)
        for (int n : sizes) {
            std::mt19937_64 gen(700 + 10 * round + n);
            std::vector<cplx> x = Complexes(n, gen), local = x;
            ASSERT_EQ(Call(numrpc_call("zfft_1d", n, x.data(), -1)), NUMRPC_OK);
            fftw_plan p = fftw_plan_dft_1d(n, Fftw(local.data()), Fftw(local.data()), -1, FFTW_ESTIMATE);
            fftw_execute(p);
            fftw_destroy_plan(p);
            ExpectNear(x, local, kFftTol, "zfft_1d");
            ExpectRealRoundTrip('d', 1, n, 1, Reals(n, gen), kFftTol);
        }
}

// The same through the module loaded here, on arrays whose addresses the
// test chooses (a server's allocator tends to hand out the same block again):
// a kept plan must transform the call's arrays, not the ones it was made
// for, and an array aligned otherwise needs a plan of its own.
TEST(LocalFftPlans, AKeptPlanTransformsTheArraysOfTheCall)
{
    REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)");
    void *module = dlopen(TOP_BUILDDIR "/stubs/.libs/fft.so", RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(module, nullptr) << dlerror();
    using c2c_fn = void (*)(int, fftw_complex *, int);
    auto zfft_1d = reinterpret_cast<c2c_fn>(dlsym(module, "numrpc_fft_zfft_1d"));
    ASSERT_NE(zfft_1d, nullptr);
    const int n = 60;
    std::mt19937_64 gen(800);
    // Three arrays in one block: two 16-byte aligned, one 8 bytes off.
    std::vector<double> block(2 * (3 * n + 1));
    double *arrays[] = {block.data(), block.data() + 2 * n, block.data() + 4 * n + 1};
    std::vector<cplx> inputs[3];
    for (int a = 0; a < 3; a++) {
        inputs[a] = Complexes(n, gen);
        std::copy(inputs[a].begin(), inputs[a].end(), reinterpret_cast<cplx *>(arrays[a]));
    }
    for (int a = 0; a < 3; a++) {
        zfft_1d(n, reinterpret_cast<fftw_complex *>(arrays[a]), -1);
        std::vector<cplx> got(reinterpret_cast<cplx *>(arrays[a]), reinterpret_cast<cplx *>(arrays[a]) + n);
        ExpectNear(got, NaiveDft(inputs[a], n, 1, -1), kFftTol, "array");
    }
    dlclose(module);
}

TEST(RemoteFftDefinition, Small1dTransformsMatchTheDefinition)
{
    REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)");
    for (int n : {1, 2, 5, 12}) {
        std::mt19937_64 gen(300 + n);
        std::vector<cplx> x = Complexes(n, gen), y = x;
        ASSERT_EQ(Call(numrpc_call("zfft_1d", n, y.data(), -1)), NUMRPC_OK);
        ExpectNear(y, NaiveDft(x, n, 1, -1), kFftTol, "forward");
        y = x;
        ASSERT_EQ(Call(numrpc_call("zfft_1d", n, y.data(), +1)), NUMRPC_OK);
        ExpectNear(y, NaiveDft(x, n, 1, +1), kFftTol, "backward");
        std::vector<double> r = Reals(n, gen);
        std::vector<cplx> half(n / 2 + 1);
        ASSERT_EQ(Call(numrpc_call("dfft_r2c_1d", n, r.data(), half.data())), NUMRPC_OK);
        ExpectNear(half, FirstRows(NaiveDft(Complexified(r), n, 1, -1), n, 1, n / 2 + 1), kFftTol,
                   "r2c");
    }
}

// n1 != n2 and both odd and even: a transposed layout would not match.
TEST(RemoteFftDefinition, Small2dTransformsMatchTheDefinitionColumnMajor)
{
    REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)");
    for (auto [n1, n2] : {std::pair{3, 5}, std::pair{6, 4}, std::pair{1, 7}, std::pair{8, 1}}) {
        std::mt19937_64 gen(400 + n1 * 10 + n2);
        std::vector<cplx> x = Complexes(static_cast<size_t>(n1) * n2, gen), y = x;
        ASSERT_EQ(Call(numrpc_call("zfft_2d", n1, n2, y.data(), -1)), NUMRPC_OK);
        ExpectNear(y, NaiveDft(x, n1, n2, -1), kFftTol, "forward 2-D");
        const int h = n1 / 2 + 1;
        std::vector<double> r = Reals(static_cast<size_t>(n1) * n2, gen);
        std::vector<cplx> half(static_cast<size_t>(h) * n2);
        ASSERT_EQ(Call(numrpc_call("dfft_r2c_2d", n1, n2, r.data(), half.data())), NUMRPC_OK);
        ExpectNear(half, FirstRows(NaiveDft(Complexified(r), n1, n2, -1), n1, n2, h), kFftTol,
                   "r2c 2-D");
        ExpectRealRoundTrip('d', 2, n1, n2, r, kFftTol);
    }
}

TEST(RemoteFft2d, LargerTransformsMatchLocalFftw)
{
    REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)");
    const int n1 = 96, n2 = 50, h = n1 / 2 + 1;
    std::mt19937_64 gen(500);
    std::vector<cplx> x = Complexes(static_cast<size_t>(n1) * n2, gen), local = x;
    ASSERT_EQ(Call(numrpc_call("zfft_2d", n1, n2, x.data(), +1)), NUMRPC_OK);
    // FFTW is row-major: a column-major n1 x n2 array is its n2 x n1.
    fftw_plan p = fftw_plan_dft_2d(n2, n1, Fftw(local.data()), Fftw(local.data()), +1, FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    ExpectNear(x, local, kFftTol, "backward 2-D");
    std::vector<double> r = Reals(static_cast<size_t>(n1) * n2, gen);
    std::vector<cplx> half(static_cast<size_t>(h) * n2), half_local(half.size());
    ASSERT_EQ(Call(numrpc_call("dfft_r2c_2d", n1, n2, r.data(), half.data())), NUMRPC_OK);
    p = fftw_plan_dft_r2c_2d(n2, n1, r.data(), Fftw(half_local.data()), FFTW_ESTIMATE);
    fftw_execute(p);
    fftw_destroy_plan(p);
    ExpectNear(half, half_local, kFftTol, "r2c 2-D");
}

TEST(RemoteFftSingle, SinglePrecisionMatchesLocalFftwf)
{
    REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)");
    const int n = 360, n1 = 20, n2 = 9;
    std::mt19937_64 gen(600);
    std::vector<cplxf> x;
    for (cplx v : Complexes(n, gen)) x.emplace_back(v);
    std::vector<cplxf> local = x;
    ASSERT_EQ(Call(numrpc_call("cfft_1d", n, x.data(), -1)), NUMRPC_OK);
    fftwf_plan p = fftwf_plan_dft_1d(n, Fftw(local.data()), Fftw(local.data()), -1, FFTW_ESTIMATE);
    fftwf_execute(p);
    fftwf_destroy_plan(p);
    ExpectNear(x, local, kFftTolSingle, "cfft_1d");

    std::vector<cplxf> z(static_cast<size_t>(n1) * n2, cplxf(0.5f, -0.25f)), z_local;
    z[7] = cplxf(3.0f, 1.0f);
    z_local = z;
    ASSERT_EQ(Call(numrpc_call("cfft_2d", n1, n2, z.data(), +1)), NUMRPC_OK);
    p = fftwf_plan_dft_2d(n2, n1, Fftw(z_local.data()), Fftw(z_local.data()), +1, FFTW_ESTIMATE);
    fftwf_execute(p);
    fftwf_destroy_plan(p);
    ExpectNear(z, z_local, kFftTolSingle, "cfft_2d");

    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> r(static_cast<size_t>(n1) * n2), r1(n);
    for (float &v : r) v = u(gen);
    for (float &v : r1) v = u(gen);
    ExpectRealRoundTrip('s', 2, n1, n2, r, kFftTolSingle);
    ExpectRealRoundTrip('s', 1, n, 1, r1, kFftTolSingle);
}

TEST(RemoteFftErrors, BadSignAndEmptySizesAreRefusedWithTheirReason)
{
    REQUIRE_MODULE("fft", "FFTW 3 (libfftw3-dev)");
    std::vector<cplx> x(8, cplx(1.0, 0.0));
    EXPECT_EQ(numrpc_call("zfft_1d", 8, x.data(), 2), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "zfft_1d: sign is 2"))
        << Detail();
    std::vector<std::complex<float>> xs(4, std::complex<float>(1, 0)); // cfft_2d is single precision
    EXPECT_EQ(numrpc_call("cfft_2d", 2, 2, xs.data(), 0), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "cfft_2d: sign is 0"))
        << Detail();
    EXPECT_EQ(numrpc_call("zfft_2d", 0, 4, x.data(), -1), NUMRPC_EINVAL);
    EXPECT_TRUE(Contains(Detail(), "zfft_2d: size 0 x 4"))
        << Detail();
    EXPECT_EQ(x, std::vector<cplx>(8, cplx(1.0, 0.0)));  // a refused call changes nothing
    ASSERT_EQ(Call(numrpc_call("zfft_1d", 8, x.data(), -1)), NUMRPC_OK);
    EXPECT_EQ(x[0], cplx(8.0, 0.0));
    EXPECT_TRUE(g_server->alive());
}

// ---- Sparse direct solve ----

// An n x n matrix in 0-based CSC arrays, and the same matrix dense.
template <typename T>
struct Csc {
    int n = 0;
    std::vector<T> values;
    std::vector<int> rowind, colptr;

    int nnz() const { return static_cast<int>(values.size()); }
    std::vector<T> Dense() const
    {
        std::vector<T> a(static_cast<size_t>(n) * n, T(0));
        for (int j = 0; j < n; j++)
            for (int k = colptr[j]; k < colptr[j + 1]; k++) a[rowind[k] + static_cast<size_t>(n) * j] = values[k];
        return a;
    }
};

template <typename T>
T RandomValue(std::mt19937_64 &gen);
template <>
double RandomValue<double>(std::mt19937_64 &gen) { return Reals(1, gen)[0]; }
template <>
cplx RandomValue<cplx>(std::mt19937_64 &gen) { return Complexes(1, gen)[0]; }

// A random sparse matrix with a strong diagonal and about `per_column` other
// entries per column, its row indices in no particular order.
template <typename T>
Csc<T> RandomSparse(int n, int per_column, std::mt19937_64 &gen)
{
    Csc<T> m;
    m.n = n;
    m.colptr.push_back(0);
    std::uniform_int_distribution<int> row(0, n - 1);
    for (int j = 0; j < n; j++) {
        std::vector<int> rows = {j};
        for (int e = 0; e < per_column; e++) {
            int r = row(gen);
            if (std::find(rows.begin(), rows.end(), r) == rows.end()) rows.push_back(r);
        }
        std::shuffle(rows.begin(), rows.end(), gen);
        for (int r : rows) {
            m.rowind.push_back(r);
            m.values.push_back(r == j ? T(per_column + 2.0) + RandomValue<T>(gen) : RandomValue<T>(gen));
        }
        m.colptr.push_back(static_cast<int>(m.rowind.size()));
    }
    return m;
}

void DenseSolve(int n, int nrhs, std::vector<double> a, std::vector<double> &b, int *info)
{
    std::vector<int> ipiv(n);
    dgesv_(&n, &nrhs, a.data(), &n, ipiv.data(), b.data(), &n, info);
}

void DenseSolve(int n, int nrhs, std::vector<cplx> a, std::vector<cplx> &b, int *info)
{
    std::vector<int> ipiv(n);
    zgesv_(&n, &nrhs, a.data(), &n, ipiv.data(), b.data(), &n, info);
}

class RemoteSparse : public testing::TestWithParam<int> {
  protected:
    void SetUp() override { REQUIRE_MODULE("sparse", "SuperLU (libsuperlu-dev)"); }
};

INSTANTIATE_TEST_SUITE_P(Rhs, RemoteSparse, testing::Values(0, 1, 3, 10),
                         [](const testing::TestParamInfo<int> &param) {
                             return "nrhs" + std::to_string(param.param);
                         });

template <typename T>
void ExpectSolveMatchesDense(const char *routine, int n, int nrhs, uint64_t seed)
{
    std::mt19937_64 gen(seed);
    Csc<T> a = RandomSparse<T>(n, 4, gen);
    std::vector<T> b(static_cast<size_t>(n) * nrhs);
    for (T &v : b) v = RandomValue<T>(gen);
    std::vector<T> x_local = b;
    int info = -99, info_local = -99;
    ASSERT_EQ(Call(numrpc_call(routine, n, a.nnz(), a.values.data(), a.rowind.data(), a.colptr.data(),
                               nrhs, b.data(), &info)),
              NUMRPC_OK);
    DenseSolve(n, nrhs, a.Dense(), x_local, &info_local);
    ASSERT_EQ(info_local, 0);
    EXPECT_EQ(info, 0);
    ExpectNear(b, x_local, 1e-12, "x");  // a strong diagonal: cond(A) is small
}

TEST_P(RemoteSparse, DgssvMatchesDenseDgesv) { ExpectSolveMatchesDense<double>("dgssv", 200, GetParam(), 1); }

TEST_P(RemoteSparse, ZgssvMatchesDenseZgesv) { ExpectSolveMatchesDense<cplx>("zgssv", 150, GetParam(), 2); }

int SolveInfo(int n, std::vector<int> rowind, std::vector<int> colptr, std::vector<double> values)
{
    std::vector<double> b(n, 1.0);
    int info = -99;
    EXPECT_EQ(Call(numrpc_call("dgssv", n, static_cast<int>(values.size()), values.data(), rowind.data(),
                               colptr.data(), 1, b.data(), &info)),
              NUMRPC_OK);
    EXPECT_EQ(b, std::vector<double>(n, 1.0)) << "b changed although A is singular";
    return info;
}

// SuperLU 5.3 wrote through an uninitialised row index on the first two
// (the worker died of SIGSEGV): the stub finds them singular first.
TEST(RemoteSparseSingular, StructurallySingularMatricesGiveTheFirstColumnWithoutARow)
{
    REQUIRE_MODULE("sparse", "SuperLU (libsuperlu-dev)");
    // 3 x 3, column 1 empty.
    EXPECT_EQ(SolveInfo(3, {0, 2, 2}, {0, 2, 2, 3}, {2.0, 1.0, 4.0}), 2);
    // 3 x 3, row 1 empty: one of the three columns finds no row.
    int info = SolveInfo(3, {0, 2, 0, 2, 2}, {0, 2, 4, 5}, {1.0, 2.0, 3.0, 4.0, 5.0});
    EXPECT_GE(info, 1);
    EXPECT_LE(info, 3);
    // 4 x 4, no empty row or column, but columns 0-2 share rows 0 and 1.
    info = SolveInfo(4, {0, 1, 1, 0, 1, 2, 3}, {0, 2, 3, 5, 7}, {1, 2, 3, 4, 5, 6, 7});
    EXPECT_GE(info, 1);
    EXPECT_LE(info, 3);
    EXPECT_TRUE(g_server->alive());
}

TEST(RemoteSparseSingular, NumericallySingularMatricesGiveAZeroPivot)
{
    REQUIRE_MODULE("sparse", "SuperLU (libsuperlu-dev)");
    // [[1, 1], [2, 2]]: every entry there, two equal columns.
    EXPECT_EQ(SolveInfo(2, {0, 1, 0, 1}, {0, 2, 4}, {1.0, 2.0, 1.0, 2.0}), 2);
    // An explicit zero is an entry: structurally fine, numerically singular.
    EXPECT_EQ(SolveInfo(2, {0, 1}, {0, 1, 2}, {3.0, 0.0}), 2);
}

struct Hostile {
    const char *what;
    int n, nnz;
    std::vector<int> rowind, colptr;
    int nrhs;
    int info;  // the documented refusal (stubs/sparse.idl)
};

TEST(RemoteSparseHostile, BadCscArraysAreRefusedWithTheDocumentedInfo)
{
    REQUIRE_MODULE("sparse", "SuperLU (libsuperlu-dev)");
    const std::vector<Hostile> cases = {
        {"colptr[0] not 0", 3, 3, {0, 1, 2}, {1, 1, 2, 3}, 1, -5},
        {"colptr[n] not nnz", 3, 3, {0, 1, 2}, {0, 1, 2, 2}, 1, -5},
        {"colptr falling", 3, 3, {0, 1, 2}, {0, 2, 1, 3}, 1, -5},
        {"colptr far past nnz", 3, 3, {0, 1, 2}, {0, INT_MAX, 2, 3}, 1, -5},
        {"colptr negative", 3, 3, {0, 1, 2}, {0, -7, 2, 3}, 1, -5},
        {"row index n", 3, 3, {0, 3, 2}, {0, 1, 2, 3}, 1, -4},
        {"row index negative", 3, 3, {0, -1, 2}, {0, 1, 2, 3}, 1, -4},
        {"row index huge", 3, 3, {0, 1, INT_MAX}, {0, 1, 2, 3}, 1, -4},
        {"row twice in a column", 3, 4, {0, 1, 1, 2}, {0, 1, 3, 4}, 1, -4},
        {"colptr checked before rowind", 3, 3, {0, 9, 2}, {0, 1, 2, 4}, 1, -5},
    };
    for (const Hostile &c : cases) {
        std::vector<double> values(c.nnz, 1.0), b(static_cast<size_t>(c.n) * c.nrhs, 7.0);
        std::vector<int> rowind = c.rowind, colptr = c.colptr;
        int info = 0;
        ASSERT_EQ(Call(numrpc_call("dgssv", c.n, c.nnz, values.data(), rowind.data(), colptr.data(), c.nrhs,
                                   b.data(), &info)),
                  NUMRPC_OK)
            << c.what;
        EXPECT_EQ(info, c.info) << c.what;
        EXPECT_EQ(b, std::vector<double>(b.size(), 7.0)) << c.what << ": b changed";
        std::vector<cplx> zvalues(c.nnz, 1.0), zb(b.size(), 7.0);
        info = 0;
        ASSERT_EQ(Call(numrpc_call("zgssv", c.n, c.nnz, zvalues.data(), rowind.data(), colptr.data(), c.nrhs,
                                   zb.data(), &info)),
                  NUMRPC_OK)
            << c.what;
        EXPECT_EQ(info, c.info) << c.what << " (zgssv)";
    }
    // An empty matrix is nothing to solve.
    std::vector<int> colptr0 = {0};
    int info = -99;
    ASSERT_EQ(Call(numrpc_call("dgssv", 0, 0, nullptr, nullptr, colptr0.data(), 3, nullptr, &info)), NUMRPC_OK);
    EXPECT_EQ(info, 0);
    // The server still serves, and solves.
    EXPECT_TRUE(g_server->alive());
    ExpectSolveMatchesDense<double>("dgssv", 50, 2, 3);
}

}  // namespace
