// tls_support.cc -- certificates for the TLS tests (made with OpenSSL's API,
// so expired ones too), server child processes, whole reads and writes.
#include "tls_support.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <random>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

extern "C" {
#include "sock.h"
}

namespace tls_support {
namespace {

struct Issued {
    X509 *cert;
    EVP_PKEY *key;
};

void AddExtension(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx_nodb(&v3);
    X509V3_set_ctx(&v3, issuer, x, nullptr, nullptr, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(nullptr, &v3, nid, value);
    if (e == nullptr) abort();
    X509_add_ext(x, e, -1);
    X509_EXTENSION_free(e);
}

// A certificate for cn valid from `from` to `to` seconds from now, signed
// by issuer (or by itself when issuer.cert is null).
Issued Issue(const char *cn, const char *san, Issued issuer, long from, long to, bool ca)
{
    static long serial = 1;
    Issued out{X509_new(), EVP_EC_gen("P-256")};
    X509 *x = out.cert;
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), serial++);
    X509_gmtime_adj(X509_getm_notBefore(x), from);
    X509_gmtime_adj(X509_getm_notAfter(x), to);
    X509_set_pubkey(x, out.key);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509 *signer = issuer.cert ? issuer.cert : x;
    X509_set_issuer_name(x, X509_get_subject_name(signer));
    AddExtension(x, signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (ca) AddExtension(x, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    if (san) AddExtension(x, signer, NID_subject_alt_name, san);
    X509_sign(x, issuer.key ? issuer.key : out.key, EVP_sha256());
    return out;
}

// Writes stem.pem and stem.key into dir, and frees i.
void Write(const std::string &dir, const char *stem, Issued i)
{
    std::string cert = dir + "/" + stem + ".pem", key = dir + "/" + stem + ".key";
    FILE *f = fopen(cert.c_str(), "w");
    PEM_write_X509(f, i.cert);
    fclose(f);
    f = fopen(key.c_str(), "w");
    PEM_write_PrivateKey(f, i.key, nullptr, nullptr, 0, nullptr, nullptr);
    fclose(f);
    X509_free(i.cert);
    EVP_PKEY_free(i.key);
}

char pki_dir[64];
pid_t pki_owner;

// At exit of the process that made them (children leave with _exit).
void RemovePki()
{
    if (getpid() != pki_owner) return;
    DIR *d = opendir(pki_dir);
    for (struct dirent *e; d && (e = readdir(d)) != nullptr;)
        if (e->d_name[0] != '.') unlink((std::string(pki_dir) + "/" + e->d_name).c_str());
    if (d) closedir(d);
    rmdir(pki_dir);
}

std::string MakePki()
{
    snprintf(pki_dir, sizeof pki_dir, "/tmp/numrpc-tls-XXXXXX");
    if (mkdtemp(pki_dir) == nullptr) abort();
    pki_owner = getpid();
    atexit(RemovePki);
    std::string dir = pki_dir;
    const long day = 86400;
    Issued none{nullptr, nullptr};
    Issued ca = Issue("numrpc test CA", nullptr, none, -day, 30 * day, true);
    Issued other = Issue("numrpc other CA", nullptr, none, -day, 30 * day, true);
    Write(dir, "server", Issue("localhost", "IP:127.0.0.1,DNS:localhost", ca, -day, 30 * day, false));
    Write(dir, "expired", Issue("localhost", "IP:127.0.0.1,DNS:localhost", ca, -30 * day, -day, false));
    Write(dir, "otherhost", Issue("other.example", "DNS:other.example", ca, -day, 30 * day, false));
    Write(dir, "client", Issue("numrpc-client", nullptr, ca, -day, 30 * day, false));
    std::string many = "IP:127.0.0.1";
    for (int i = 0; i < 2000; i++) many += ",DNS:host-" + std::to_string(i) + ".numrpc.example";
    Write(dir, "big", Issue("localhost", many.c_str(), ca, -day, 30 * day, false));
    Write(dir, "ca", ca);
    Write(dir, "other-ca", other);
    return dir;
}

} // namespace

std::string Pki(const char *file)
{
    static const std::string dir = MakePki();
    return dir + "/" + file;
}

std::string Fingerprint(const std::string &pem)
{
    FILE *f = fopen(pem.c_str(), "r");
    X509 *x = f ? PEM_read_X509(f, nullptr, nullptr, nullptr) : nullptr;
    if (f) fclose(f);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    std::string hex;
    if (x && X509_digest(x, EVP_sha256(), md, &n) == 1)
        for (unsigned i = 0; i < n; i++) {
            char two[3];
            snprintf(two, sizeof two, "%02x", md[i]);
            hex += two;
        }
    X509_free(x);
    return hex;
}

ServerProc::ServerProc(std::function<int(int)> body)
{
    err_t err;
    int fd = sock_listen("127.0.0.1", 0, &port_, &err);
    if (fd < 0) {
        fprintf(stderr, "listen: %s\n", err.detail);
        return;
    }
    pid_ = fork();
    if (pid_ == 0) {
        alarm(30);
        _exit(body(fd));
    }
    close(fd);
}

ServerProc::~ServerProc()
{
    if (pid_ > 0) Wait();
}

int ServerProc::Wait()
{
    int status = 0;
    for (int i = 0; i < 3000 && pid_ > 0; i++) {
        pid_t r = waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        usleep(10000);
    }
    if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    return -1;
}

int ReadFull(transport *t, void *buf, size_t n)
{
    unsigned char *p = static_cast<unsigned char *>(buf);
    size_t got = 0;
    while (got < n) {
        ssize_t k = t->ops->recv(t, p + got, n - got);
        if (k == 0) return got == 0 ? 1 : -1;
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        got += static_cast<size_t>(k);
    }
    return 0;
}

int WriteFull(transport *t, const void *buf, size_t n)
{
    const unsigned char *p = static_cast<const unsigned char *>(buf);
    while (n > 0) {
        ssize_t k = t->ops->send(t, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= static_cast<size_t>(k);
    }
    return 0;
}

int ReadMessage(transport *t, std::vector<unsigned char> *bytes)
{
    uint64_t len = 0;
    int rc = ReadFull(t, &len, sizeof len);
    if (rc != 0) return rc;
    if (len > (64u << 20)) return -1;
    bytes->resize(len);
    return len == 0 ? 0 : ReadFull(t, bytes->data(), len);
}

int WriteMessage(transport *t, const std::vector<unsigned char> &bytes)
{
    uint64_t len = bytes.size();
    if (WriteFull(t, &len, sizeof len) != 0) return -1;
    return bytes.empty() ? 0 : WriteFull(t, bytes.data(), bytes.size());
}

std::vector<unsigned char> Pattern(size_t n, unsigned seed)
{
    std::vector<unsigned char> v(n);
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        v[i] = static_cast<unsigned char>(x >> 24);
    }
    return v;
}

std::vector<double> Random(size_t n, unsigned seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> v(n);
    for (double &x : v) x = u(gen);
    return v;
}

tls_stream_state *SharedState()
{
    void *p = mmap(nullptr, sizeof(tls_stream_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) abort();
    return static_cast<tls_stream_state *>(p);
}

int AcceptTls(int listen_fd, tls_context *ctx, tls_stream_state *st, int *not_tls, err_t *err)
{
    *not_tls = 0;
    int fd = accept(listen_fd, nullptr, nullptr);
    if (fd < 0) return err_set(err, NUMRPC_EIO, "accept: %s", strerror(errno));
    sock_set_timeouts(fd, 10000, 10000);
    int rc = tls_accept_blocking(ctx, fd, 10000, st, err);
    if (rc == TLS_ACCEPT_NOT_TLS) *not_tls = 1;
    if (rc == 0 || rc == TLS_ACCEPT_NOT_TLS) return fd;
    close(fd);
    return -1;
}

} // namespace tls_support
