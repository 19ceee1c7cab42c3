/* Minimal test helpers for unit tests: checks that report file:line and keep going. */
#ifndef TESTLIB_H
#define TESTLIB_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond) do { if (!(cond)) { \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    test_failures++; } } while (0)

#define CHECK_NEAR(a, b, tol) do { double a_ = (a), b_ = (b); \
    if (!(fabs(a_ - b_) <= (tol) * fmax(1.0, fmax(fabs(a_), fabs(b_))))) { \
    fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s = %.10g vs %s = %.10g (tol %g)\n", \
            __FILE__, __LINE__, #a, a_, #b, b_, (double)(tol)); test_failures++; } } while (0)

/* Ends main(): prints a verdict and returns the process exit status. */
static inline int test_finish(const char *name) {
    if (test_failures) { fprintf(stderr, "%s: %d check(s) failed\n", name, test_failures); return 1; }
    printf("%s: ok\n", name);
    return 0;
}
#endif
