/* mpi_pingpong.c -- the MPI link's latency and per-byte time between ranks 0
 * and 1 (a ping-pong of 8 B to 8 MiB), the t_m and t_v of the MPI model. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* usage: mpirun -np 2 numrpc-bench-mpi-pingpong [REPEATS=20]
 * prints "bytes seconds_one_way" lines (median of REPEATS round trips / 2),
 * then "t_m=... t_v=..." from a least-squares line through them. */
static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int repeats = argc > 1 ? atoi(argv[1]) : 20;
    if (size < 2 || repeats < 1 || repeats > 1000) {
        if (rank == 0) fprintf(stderr, "mpi_pingpong: needs 2 ranks and 1..1000 repeats\n");
        MPI_Finalize();
        return 2;
    }
    enum { MAX_BYTES = 8 << 20, SIZES = 13 };
    char *buf = calloc(MAX_BYTES, 1);
    double *times = calloc((size_t)repeats, sizeof *times);
    double xs[SIZES], ys[SIZES];
    int n = 0;
    for (long bytes = 8; bytes <= MAX_BYTES && buf && times; bytes *= 4) {
        for (int r = -1; r < repeats; r++) { /* r = -1: warm-up */
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
            if (r >= 0) times[r] = (MPI_Wtime() - t0) / 2;
        }
        if (rank == 0) {
            qsort(times, (size_t)repeats, sizeof *times, by_value);
            xs[n] = (double)bytes;
            ys[n] = times[repeats / 2];
            printf("%ld %.9f\n", bytes, ys[n]);
            n++;
        }
    }
    if (rank == 0 && n > 1) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int i = 0; i < n; i++) sx += xs[i], sy += ys[i], sxx += xs[i] * xs[i], sxy += xs[i] * ys[i];
        double tv = (n * sxy - sx * sy) / (n * sxx - sx * sx);
        /* The latency: the smallest message's time, not the line's intercept
         * (which the large messages dominate). */
        printf("t_m=%.9f t_v=%.12f\n", ys[0], tv);
    }
    free(buf);
    free(times);
    MPI_Finalize();
    return 0;
}
