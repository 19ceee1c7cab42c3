/* Clocks: monotonic for rates and ETAs (immune to NTP jumps), wall clock for timestamps. */
#include <stdio.h>
#include <time.h>
#include "rt_core.h"

double rt_time_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double rt_wall_time_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

char *rt_format_duration(double seconds, char *out, size_t cap) {
    if (!(seconds >= 0) || seconds > 1e9) {   /* NaN, negative, or absurd: not worth a number */
        snprintf(out, cap, "?");
        return out;
    }
    long s = (long)(seconds + 0.5);
    if (seconds < 60) snprintf(out, cap, "%.1fs", seconds);
    else if (s < 3600) snprintf(out, cap, "%ldm%02lds", s / 60, s % 60);
    else snprintf(out, cap, "%ldh%02ldm%02lds", s / 3600, (s / 60) % 60, s % 60);
    return out;
}
