/* strmod.c -- the routines of strmod.idl: plain C string handling, and one
 * routine with Fortran's convention (hidden lengths, blank padding). */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

void greet(const char *name, int cap, char *msg);
void shout(char *word);
void total_length(int k, char **words, long *total);
void number_words(int k, const char *prefix, char **names);
void reverse_every(int k, int step, char **words);
void fgreet_(const char *name, char *msg, size_t name_len, size_t msg_len);

/* msg has cap + 1 bytes, as the bound promises. */
void greet(const char *name, int cap, char *msg)
{
    snprintf(msg, (size_t)cap + 1, "hello, %s", name);
}

void shout(char *word)
{
    for (; *word; word++) *word = (char)toupper((unsigned char)*word);
}

void total_length(int k, char **words, long *total)
{
    *total = 0;
    for (int i = 0; i < k; i++) *total += (long)strlen(words[i]);
}

void number_words(int k, const char *prefix, char **names)
{
    for (int i = 0; i < k; i++) snprintf(names[i], 17, "%s%d", prefix, i);
}

void reverse_every(int k, int step, char **words)
{
    for (int i = 0; i < k; i++) {
        char *w = words[i * step];
        for (size_t a = 0, b = strlen(w); b > a + 1; a++, b--) {
            char t = w[a];
            w[a] = w[b - 1];
            w[b - 1] = t;
        }
    }
}

/* CHARACTER*(*) name, msg: no NULs; msg is blank-padded to msg_len. */
void fgreet_(const char *name, char *msg, size_t name_len, size_t msg_len)
{
    char text[64];
    int n = snprintf(text, sizeof text, "hi %.*s", (int)name_len, name);
    size_t len = (size_t)n < msg_len ? (size_t)n : msg_len;
    memcpy(msg, text, len);
    memset(msg + len, ' ', msg_len - len);
}
