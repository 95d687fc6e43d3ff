// http_port_test.cc -- the HTTP port (common/http_port.c) of numrpc-server and
// numrpc-metaserver against a slowloris from four loopback addresses, with
// real processes on 127.0.0.x.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "../support/http_probe.h"
#include "../support/meta_proc.h"
#include "../support/server_proc.h"
#include "../support/test_util.h"

namespace {

using Clock = std::chrono::steady_clock;

const std::string kMeta = TOP_BUILDDIR "/metaserver/numrpc-metaserver";
const int kLimit = 4;        // --http-timeout of the processes under attack
const int kSlow = 64;        // the attacker's connections, 16 per address
const int kGapMs = 1500;     // a byte every 1.5 s: below the idle limit of kLimit

// A TCP connection from src (127.0.0.x) to 127.0.0.1:port; -1 on failure.
int ConnectFrom(const char *src, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, src, &a.sin_addr);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)port);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (bind(fd, (sockaddr *)&a, sizeof a) != 0 || connect(fd, (sockaddr *)&to, sizeof to) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

// True when the peer has closed fd (end of stream, reset or error), looking
// for at most wait_ms; bytes the port sent (a refusal's reply) are read past.
bool PeerClosed(int fd, int wait_ms)
{
    pollfd p{fd, POLLIN, 0};
    auto until = Clock::now() + std::chrono::milliseconds(wait_ms);
    for (;;) {
        int left = (int)std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
        if (poll(&p, 1, left > 0 ? left : 0) <= 0) return false;
        if (p.revents & (POLLERR | POLLHUP)) return true;
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
    }
}

// GET path from 127.0.0.1 with a hang limit of 5 s: the whole answer ("" if
// none came before the limit or the connection failed).
std::string Get(int port, const std::string &path)
{
    int fd = ConnectFrom("127.0.0.1", port);
    if (fd < 0) return "";
    std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    std::string out;
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == (ssize_t)req.size()) {
        auto until = Clock::now() + std::chrono::seconds(5);
        pollfd p{fd, POLLIN, 0};
        char buf[8192];
        while (Clock::now() < until && poll(&p, 1, 100) >= 0) {
            if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            out.append(buf, (size_t)n);
        }
    }
    close(fd);
    return out;
}

// The attack: kSlow connections from 127.0.0.2..5, each sending one byte of
// a request every kGapMs, never the end of its headers.
struct Slowloris {
    std::vector<int> fds;
    std::vector<bool> closed;
    std::atomic<bool> stop{false};
    std::thread feeder;
    explicit Slowloris(int port)
    {
        const char *from[4] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};
        for (int i = 0; i < kSlow; i++) {
            int fd = ConnectFrom(from[i % 4], port);
            EXPECT_GE(fd, 0) << "connect from " << from[i % 4] << ": " << strerror(errno);
            if (fd >= 0) send(fd, "G", 1, MSG_NOSIGNAL);
            fds.push_back(fd);
        }
        closed.assign(fds.size(), false);
        feeder = std::thread([this] {
            const char text[] = "ET /metrics HTTP/1.1\r\nHost: x\r\nX-a: ";
            for (size_t k = 0; !stop; k++) {
                for (int i = 0; i < 15 && !stop; i++) std::this_thread::sleep_for(std::chrono::milliseconds(kGapMs / 15));
                char c = k < sizeof text - 1 ? text[k] : 'a';
                for (int fd : fds)
                    if (fd >= 0) send(fd, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
            }
        });
    }
    // How many of the attacker's connections the port has closed by now.
    int Closed()
    {
        int n = 0;
        for (size_t i = 0; i < fds.size(); i++) {
            if (!closed[i] && fds[i] >= 0) closed[i] = PeerClosed(fds[i], 0);
            n += closed[i] ? 1 : 0;
        }
        return n;
    }
    ~Slowloris()
    {
        stop = true;
        feeder.join();
        for (int fd : fds)
            if (fd >= 0) close(fd);
    }
};

// The attack on the HTTP port at http: the refused connections are closed
// at once, a client on 127.0.0.1 gets real /metrics (holding metric) again
// and again meanwhile, and the held ones are closed within the limit though
// they keep sending.
void Attack(int http, const std::string &metric)
{
    ASSERT_GT(http, 0);
    auto start = Clock::now();
    Slowloris slow(http);
    // 8 per address are held; the other 8 of each address are closed at once.
    int closed = 0;
    for (int i = 0; i < 20 && closed < kSlow / 2; i++) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        closed = slow.Closed();
    }
    EXPECT_EQ(closed, kSlow / 2) << "connections beyond 8 per address are refused at once";
    int answered = 0, asked = 0;
    while (Clock::now() - start < std::chrono::milliseconds(kLimit * 1000 - 500)) {
        std::string page = Get(http, "/metrics");
        asked++;
        bool good = Contains(page, "HTTP/1.1 200") && Contains(page, "\n" + metric + " ");
        EXPECT_TRUE(good) << "request " << asked << " during the attack: " << page.substr(0, 200);
        answered += good ? 1 : 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    EXPECT_GE(asked, 3);
    EXPECT_EQ(answered, asked);
    // The held ones sent a byte every 1.5 s all along, and still are closed
    // within the limit (hang limit: 4 s beyond it).
    while (slow.Closed() < kSlow && Clock::now() - start < std::chrono::seconds(kLimit + 4))
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(slow.Closed(), kSlow) << "the slow requests outlived --http-timeout " << kLimit;
    // And the port serves after it.
    EXPECT_TRUE(Contains(Get(http, "/metrics"), "\n" + metric + " "));
}

TEST(HttpPort, ServerMetricsAnswerThroughASlowloris)
{
    TempDir dir("numrpc-http-slow");
    std::string file = dir.path + "/http.port";
    ServerProc server({"--http-port", "0", "--http-port-file", file, "--http-timeout", std::to_string(kLimit),
                       "--admin-socket", "none"});
    Attack(ReadPortFile(file), "numrpc_server_workers_max");
}

TEST(HttpPort, MetaserverMetricsAnswerThroughASlowloris)
{
    TempDir dir("numrpc-http-slow");
    std::string file = dir.path + "/http.port";
    Proc meta({kMeta, "--port", "0", "--quiet", "--http-port", "0", "--http-port-file", file, "--http-timeout",
               std::to_string(kLimit)});
    Attack(ReadPortFile(file), "numrpc_meta_lease_seconds");
}

} // namespace
