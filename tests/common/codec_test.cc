// codec_test.cc -- the bulk array codec produces exactly XDR's big-endian
// encoding, contiguous and strided, for every element width.
#include <gtest/gtest.h>
#include <rpc/xdr.h>

#include <cstring>
#include <vector>

extern "C" {
#include "codec.h"
}

namespace {

TEST(Codec, DoublesMatchLibtirpcXdr)
{
    const size_t n = 1000;
    std::vector<double> x(n);
    for (size_t i = 0; i < n; i++) x[i] = 1.0 / (1.0 + i) - 0.3 * i;
    std::vector<char> ours(n * 8), theirs(n * 8);
    codec_encode(ours.data(), x.data(), n, 8, 8, 1);
    XDR xdr;
    xdrmem_create(&xdr, theirs.data(), static_cast<u_int>(theirs.size()), XDR_ENCODE);
    ASSERT_TRUE(xdr_vector(&xdr, reinterpret_cast<char *>(x.data()), n, sizeof(double),
                           reinterpret_cast<xdrproc_t>(xdr_double)));
    xdr_destroy(&xdr);
    EXPECT_EQ(ours, theirs);
    std::vector<double> back(n);
    codec_decode(back.data(), ours.data(), n, 8, 8, 1);
    EXPECT_EQ(back, x);
}

TEST(Codec, IntsMatchLibtirpcXdr)
{
    std::vector<int> v = {0, 1, -1, 123456789, -987654321, 42};
    std::vector<char> ours(v.size() * 4), theirs(v.size() * 4);
    codec_encode(ours.data(), v.data(), v.size(), 4, 4, 1);
    XDR xdr;
    xdrmem_create(&xdr, theirs.data(), static_cast<u_int>(theirs.size()), XDR_ENCODE);
    for (int &i : v) xdr_int(&xdr, &i);
    xdr_destroy(&xdr);
    EXPECT_EQ(ours, theirs);
}

TEST(Codec, StridedGatherAndScatter)
{
    const size_t n = 37, stride = 3;
    std::vector<double> x(n * stride);
    for (size_t i = 0; i < x.size(); i++) x[i] = static_cast<double>(i) * 0.5;
    std::vector<char> wire(n * 8);
    codec_encode(wire.data(), x.data(), n, 8, 8, stride);
    std::vector<double> y(n * stride, -1.0);
    codec_decode(y.data(), wire.data(), n, 8, 8, stride);
    for (size_t i = 0; i < y.size(); i++) EXPECT_EQ(y[i], i % stride == 0 ? x[i] : -1.0) << i;
}

TEST(Codec, ComplexSwapsEachPart)
{
    double z[4] = {1.5, -2.25, 3.0, 4.0};  // two double complex numbers
    char wire[32];
    codec_encode(wire, z, 2, 16, 8, 1);
    XDR xdr;
    char want[32];
    xdrmem_create(&xdr, want, sizeof want, XDR_ENCODE);
    for (double &d : z) xdr_double(&xdr, &d);
    xdr_destroy(&xdr);
    EXPECT_EQ(0, memcmp(wire, want, sizeof want));
    double back[4];
    codec_decode(back, wire, 2, 16, 8, 1);
    EXPECT_EQ(0, memcmp(back, z, sizeof z));
}

}  // namespace
