// The public header must compile as C++ (extern "C", no C-only constructs),
// be includable twice, and add its experimental part on a later include
// once MINLSH_EXPERIMENTAL_API is defined.
#include <minlsh.h>
#include <minlsh.h>
#define MINLSH_EXPERIMENTAL_API
#include <minlsh.h>

int minlsh_header_cxx_probe();
int minlsh_header_cxx_probe() {
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    minlsh_load_options lo = MINLSH_LOAD_OPTIONS_INIT;
    const char *(*f)(int) = &minlsh_strerror;
    int (*g)(const minlsh_index *, const uint32_t *, size_t, uint64_t, uint64_t *, double *,
             size_t, size_t *, uint32_t *) = &minlsh_index_query_limited;
    return static_cast<int>(so.k + po.k + lo.version) + (f != 0) + (g != 0);
}
