/* Plain SVG line charts for `trainc plot` and `trainc show --lr-plot` (svg_chart.c): panels
 * with axes and round-number ticks, polylines, a horizontal reference line and a legend. */
#ifndef TRAINC_SVG_CHART_H
#define TRAINC_SVG_CHART_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    double x0, x1, y0, y1;    /* data range shown */
    int left, top, width, height;   /* plot area in pixels */
    const char *title, *xlabel;
} svg_panel;

void svg_open(FILE *out, int width, int height);
void svg_close(FILE *out);
/* Frame, grid, ticks with their values, title and x label. */
void svg_axes(FILE *out, const svg_panel *p);
/* Points outside the range are clamped; NaN values break the line. */
void svg_polyline(FILE *out, const svg_panel *p, const double *x, const double *y, int n, const char *color,
                  double stroke, bool dashed);
/* A dot at each point (evaluations, which may be a single point). */
void svg_markers(FILE *out, const svg_panel *p, const double *x, const double *y, int n, const char *color);
void svg_hline(FILE *out, const svg_panel *p, double y, const char *color, const char *label);
void svg_legend(FILE *out, int x, int y, const char *const *names, const char *const *colors, int n);
/* Widens [lo, hi] to round tick values; a flat range gets some height. */
void svg_nice_range(double *lo, double *hi);
/* Distinct line colors, cycling. */
const char *svg_color(int i);

#endif
