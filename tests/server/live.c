/* live.c -- the library behind live1.idl and live2.idl: each version of the
 * module links the function that returns its number. */
void live_version1(int *v);
void live_version2(int *v);

void live_version1(int *v)
{
    *v = 1;
}

void live_version2(int *v)
{
    *v = 2;
}
