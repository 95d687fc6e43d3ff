/* csc_check.c -- checks of compressed-sparse-column arrays from the network:
 * their shape, then their structural rank (csc_check.h). */
#include "csc_check.h"

int csc_check_arrays(int n, int nnz, int nrhs, const int *rowind, const int *colptr, int *scratch)
{
    if (n < 0) return CSC_BAD_N;
    if (nnz < 0) return CSC_BAD_NNZ;
    if (nrhs < 0) return CSC_BAD_NRHS;
    if (colptr[0] != 0 || colptr[n] != nnz) return CSC_BAD_COLPTR;
    for (int j = 0; j < n; j++)
        if (colptr[j + 1] < colptr[j]) return CSC_BAD_COLPTR;
    /* scratch[row]: the last column the row appeared in. */
    int *last_column = scratch;
    for (int i = 0; i < n; i++) last_column[i] = -1;
    for (int j = 0; j < n; j++)
        for (int k = colptr[j]; k < colptr[j + 1]; k++) {
            int row = rowind[k];
            /* SuperLU would write outside its arrays, or keep only one of two
             * entries of the same place. */
            if (row < 0 || row >= n || last_column[row] == j) return CSC_BAD_ROWIND;
            last_column[row] = j;
        }
    return 0;
}

/* The matching under construction and the search's state, n ints each. */
typedef struct matching {
    int n;
    const int *rowind, *colptr;
    int *row_of;    /* column -> its matched row, or -1 */
    int *column_of; /* row -> its matched column, or -1 */
    int *level;     /* column -> its BFS level in this phase, or UNREACHED */
    int *next;      /* column -> its next entry to try in the DFS */
    int *stack;     /* BFS queue, then DFS path of columns */
} matching;

#define UNREACHED (-1)

/* Levels the columns from the free ones along alternating paths; whether
 * some path reaches a free row (an augmenting path exists). */
static int level_columns(matching *m)
{
    int head = 0, tail = 0, found = 0;
    for (int j = 0; j < m->n; j++) {
        m->level[j] = m->row_of[j] < 0 ? 0 : UNREACHED;
        if (m->row_of[j] < 0) m->stack[tail++] = j;
    }
    while (head < tail) {
        int j = m->stack[head++];
        for (int k = m->colptr[j]; k < m->colptr[j + 1]; k++) {
            int owner = m->column_of[m->rowind[k]];
            if (owner < 0) {
                found = 1;
            } else if (m->level[owner] == UNREACHED) {
                m->level[owner] = m->level[j] + 1;
                m->stack[tail++] = owner;
            }
        }
    }
    return found;
}

/* From the free column start, a depth-first search down the levels for a
 * free row, without recursion; on success, flips the path's matches. */
static void augment_from(matching *m, int start)
{
    int depth = 0;
    m->stack[depth++] = start;
    while (depth > 0) {
        int j = m->stack[depth - 1];
        if (m->next[j] == m->colptr[j + 1]) {
            m->level[j] = UNREACHED; /* a dead end for the rest of the phase */
            depth--;
            continue;
        }
        int row = m->rowind[m->next[j]++];
        int owner = m->column_of[row];
        if (owner >= 0) {
            if (m->level[owner] == m->level[j] + 1) m->stack[depth++] = owner;
            continue;
        }
        /* A free row: each column on the path takes the row it went through. */
        for (int d = depth - 1; d >= 0; d--) {
            int c = m->stack[d], r = m->rowind[m->next[c] - 1];
            m->row_of[c] = r;
            m->column_of[r] = c;
        }
        return;
    }
}

int csc_unmatched_column(int n, const int *rowind, const int *colptr, int *scratch)
{
    matching m = {n, rowind, colptr, scratch, scratch + n, scratch + 2 * n, scratch + 3 * n,
                  scratch + 4 * n};
    for (int i = 0; i < n; i++) m.row_of[i] = m.column_of[i] = -1;
    while (level_columns(&m)) {
        for (int j = 0; j < n; j++) m.next[j] = colptr[j];
        for (int j = 0; j < n; j++)
            if (m.row_of[j] < 0) augment_from(&m, j);
    }
    for (int j = 0; j < n; j++)
        if (m.row_of[j] < 0) return j;
    return -1;
}
