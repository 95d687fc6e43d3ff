/* ftest.c -- the routine behind ftest.idl: echoes its scalars back so a
 * test can see every type arrive with its value. */
#include <complex.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

void fecho(const char *s, char c, long l, float x, double complex z, char *out, long *lout,
           double *sum, float *v, int n);
void fshout(const char *s, char *loud, char *word);

void fecho(const char *s, char c, long l, float x, double complex z, char *out, long *lout,
           double *sum, float *v, int n)
{
    char buf[80];
    int len = snprintf(buf, sizeof buf, "%.60s|%c", s, c); /* at most 62 characters */
    memset(out, ' ', 64);
    memcpy(out, buf, (size_t)len);
    *lout = 2 * l;
    *sum = (double)x + creal(z) + cimag(z);
    for (int i = 0; i < n; i++) v[i] *= 2;
}

/* loud holds 21 bytes and word 13, as their bounds promise. */
void fshout(const char *s, char *loud, char *word)
{
    size_t i = 0;
    for (; s[i] && i < 20; i++) loud[i] = (char)toupper((unsigned char)s[i]);
    loud[i] = '\0';
    for (size_t a = 0, b = strlen(word); b > a + 1; a++, b--) {
        char t = word[a];
        word[a] = word[b - 1];
        word[b - 1] = t;
    }
}
