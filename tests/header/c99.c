/* The public header must compile as pedantic C99 and survive double inclusion. */
#include <minlsh.h>
#include <minlsh.h>

int minlsh_header_c99_probe(void);
int minlsh_header_c99_probe(void) {
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    return (int)(so.k + po.k) + MINLSH_VERSION_NUMBER;
}
