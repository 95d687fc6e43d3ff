/* netns_ranks.c -- an MPI job that says where its ranks run (host name, address on
 * a subnet) and moves data between them: an Allreduce and messages of some MiB. */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { HOST_LEN = 64 };

/* Where one rank runs, gathered to rank 0 as bytes. */
struct where {
    char host[HOST_LEN];
    char addr[INET_ADDRSTRLEN];
};

/* "a.b.c.d/bits" into a network and a mask (host order); 0 on success. */
static int parse_subnet(const char *text, uint32_t *net, uint32_t *mask)
{
    char ip[INET_ADDRSTRLEN];
    const char *slash = strchr(text, '/');
    if (slash == NULL || (size_t)(slash - text) >= sizeof ip) return -1;
    memcpy(ip, text, (size_t)(slash - text));
    ip[slash - text] = '\0';
    char *end;
    long bits = strtol(slash + 1, &end, 10);
    struct in_addr a;
    if (*end != '\0' || bits < 1 || bits > 32 || inet_pton(AF_INET, ip, &a) != 1) return -1;
    *mask = bits == 32 ? 0xffffffffu : ~(0xffffffffu >> bits);
    *net = ntohl(a.s_addr) & *mask;
    return 0;
}

/* This process's IPv4 address inside net/mask, or "none" (out: INET_ADDRSTRLEN bytes). */
static void address_on(uint32_t net, uint32_t mask, char *out)
{
    struct ifaddrs *list;
    strcpy(out, "none");
    if (getifaddrs(&list) != 0) return;
    for (struct ifaddrs *i = list; i != NULL; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
        struct in_addr a = ((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
        if ((ntohl(a.s_addr) & mask) != net) continue;
        inet_ntop(AF_INET, &a, out, INET_ADDRSTRLEN);
        break;
    }
    freeifaddrs(list);
}

/* Every rank adds (rank + 1 + i % 7) at element i: the sums are exact. Returns
 * the number of wrong elements on this rank. */
static long allreduce_check(int rank, int size, long count)
{
    double *mine = malloc((size_t)count * sizeof *mine);
    double *sum = malloc((size_t)count * sizeof *sum);
    long wrong = count;
    if (mine == NULL || sum == NULL) goto done;
    for (long i = 0; i < count; i++) mine[i] = rank + 1 + (double)(i % 7);
    MPI_Allreduce(mine, sum, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    wrong = 0;
    for (long i = 0; i < count; i++)
        if (sum[i] != size * (size + 1) / 2.0 + (double)size * (double)(i % 7)) wrong++;
done:
    free(mine);
    free(sum);
    return wrong;
}

static unsigned char pattern(long i, int peer)
{
    return (unsigned char)(i * 31 + peer * 7 + 1);
}

/* Rank 0 sends `bytes` to peer, which checks them and sends them back; rank 0
 * checks the echo.  Returns the wrong bytes seen on this rank (the whole
 * message if the buffer cannot be had). */
static long echo_check(int rank, int peer, long bytes)
{
    unsigned char *buf = malloc((size_t)bytes);
    long wrong = 0;
    if (buf == NULL) return bytes;
    if (rank == 0) {
        for (long i = 0; i < bytes; i++) buf[i] = pattern(i, peer);
        MPI_Send(buf, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        memset(buf, 0, (size_t)bytes);
        MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (long i = 0; i < bytes; i++)
        if (buf[i] != pattern(i, peer)) wrong++;
    if (rank == peer) MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
    free(buf);
    return wrong;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint32_t net = 0, mask = 0;
    char *end = NULL;
    long mib = argc == 3 ? strtol(argv[2], &end, 10) : 0;
    if (argc != 3 || parse_subnet(argv[1], &net, &mask) != 0 || *end != '\0' || mib < 1 || mib > 256) {
        if (rank == 0) fprintf(stderr, "usage: netns_ranks SUBNET/BITS MIB (1..256)\n");
        MPI_Finalize();
        return 2;
    }

    struct where me, *all = NULL;
    memset(&me, 0, sizeof me);
    gethostname(me.host, sizeof me.host - 1);
    address_on(net, mask, me.addr);
    if (rank == 0 && (all = calloc((size_t)size, sizeof *all)) == NULL) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int r = 0; r < size; r++) printf("rank %d host %s addr %s\n", r, all[r].host, all[r].addr);

    long count = mib * (1L << 20) / (long)sizeof(double), wrong_here, wrong;
    wrong_here = allreduce_check(rank, size, count);
    MPI_Reduce(&wrong_here, &wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    long failures = wrong != 0;
    if (rank == 0) printf("allreduce: %ld doubles over %d ranks: %ld wrong\n", count, size, wrong);
    for (int peer = 1; peer < size; peer++) {
        wrong_here = rank == 0 || rank == peer ? echo_check(rank, peer, mib << 20) : 0;
        MPI_Reduce(&wrong_here, &wrong, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank != 0) continue;
        failures += wrong != 0;
        printf("message: %ld MiB from rank 0 (%s) to rank %d (%s) and back: %ld bytes wrong\n", mib,
               all[0].addr, peer, all[peer].addr, wrong);
    }
    MPI_Bcast(&failures, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("netns_ranks: %s\n", failures == 0 ? "ok" : "FAILED");
    free(all);
    MPI_Finalize();
    return failures == 0 ? 0 : 1;
}
