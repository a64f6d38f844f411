// The public header must compile as C++ (extern "C", no C-only constructs).
#include <minlsh.h>
#include <minlsh.h>

int minlsh_header_cxx_probe();
int minlsh_header_cxx_probe() {
    minlsh_shingler_options so = MINLSH_SHINGLER_OPTIONS_INIT;
    minlsh_plan_options po = MINLSH_PLAN_OPTIONS_INIT;
    const char *(*f)(int) = &minlsh_strerror;
    return static_cast<int>(so.k + po.k) + (f != 0);
}
