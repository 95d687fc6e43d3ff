/* pinmod.c -- the library behind pinmod.idl and its live versions
 * (pinmods/): scaling, negating, a file's size. */
#include <stdio.h>

void pin_scale(int n, double factor, double *x);
void pin_scale2(int n, double factor, double *x);
void pin_negate(int n, double *x);
void pin_file_size(const char *input, long *bytes);

void pin_scale(int n, double factor, double *x)
{
    for (int i = 0; i < n; i++) x[i] *= factor;
}

void pin_scale2(int n, double factor, double *x)
{
    for (int i = 0; i < 2 * n; i++) x[i] *= factor;
}

void pin_negate(int n, double *x)
{
    for (int i = 0; i < n; i++) x[i] = -x[i];
}

void pin_file_size(const char *input, long *bytes)
{
    FILE *in = fopen(input, "rb");
    *bytes = -1;
    if (in == NULL) return;
    if (fseek(in, 0, SEEK_END) == 0) *bytes = ftell(in);
    fclose(in);
}
