/* Plain SVG line charts: no plotting dependency, so that any SVG renderer (a browser,
 * rsvg-convert) draws them. Coordinates are written with one decimal. */
#include "svg_chart.h"

#include <math.h>
#include <string.h>

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b" };

const char *svg_color(int i) { return palette[i % (int)(sizeof palette / sizeof palette[0])]; }

static void xml_text(FILE *out, const char *s) {
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", out);
        else if (*s == '>') fputs("&gt;", out);
        else if (*s == '&') fputs("&amp;", out);
        else if (*s == '"') fputs("&quot;", out);
        else fputc(*s, out);
    }
}

void svg_open(FILE *out, int width, int height) {
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                 "font-family=\"sans-serif\" font-size=\"12\">\n"
                 "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n",
            width, height, width, height, width, height);
}

void svg_close(FILE *out) { fputs("</svg>\n", out); }

static double tick_step(double lo, double hi) {
    double range = hi - lo, raw = range / 5.0, mag = pow(10.0, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
}

void svg_nice_range(double *lo, double *hi) {
    if (!isfinite(*lo) || !isfinite(*hi)) *lo = 0, *hi = 1;
    if (*hi - *lo <= fabs(*hi) * 1e-9) {
        double pad = *hi != 0 ? fabs(*hi) * 0.1 : 1.0;
        *lo -= pad, *hi += pad;
    }
    double s = tick_step(*lo, *hi);
    *lo = floor(*lo / s + 1e-9) * s;
    *hi = ceil(*hi / s - 1e-9) * s;
}

static double px(const svg_panel *p, double x) {
    double t = p->x1 > p->x0 ? (x - p->x0) / (p->x1 - p->x0) : 0;
    return p->left + fmin(fmax(t, 0), 1) * p->width;
}

static double py(const svg_panel *p, double y) {
    double t = p->y1 > p->y0 ? (y - p->y0) / (p->y1 - p->y0) : 0;
    return p->top + p->height - fmin(fmax(t, 0), 1) * p->height;
}

void svg_axes(FILE *out, const svg_panel *p) {
    fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n", p->left,
            p->top, p->width, p->height);
    double sx = tick_step(p->x0, p->x1), sy = tick_step(p->y0, p->y1);
    for (double x = ceil(p->x0 / sx - 1e-9) * sx; x <= p->x1 + sx * 1e-9; x += sx) {
        fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#ddd\"/>\n", px(p, x), p->top,
                px(p, x), p->top + p->height);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%g</text>\n", px(p, x), p->top + p->height + 15,
                fabs(x) < sx * 1e-6 ? 0.0 : x);
    }
    for (double y = ceil(p->y0 / sy - 1e-9) * sy; y <= p->y1 + sy * 1e-9; y += sy) {
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", p->left, py(p, y),
                p->left + p->width, py(p, y));
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", p->left - 5, py(p, y) + 4,
                fabs(y) < sy * 1e-6 ? 0.0 : y);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">", p->left, p->top - 8);
    xml_text(out, p->title);
    fprintf(out, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", p->left + p->width / 2,
            p->top + p->height + 32);
    xml_text(out, p->xlabel);
    fputs("</text>\n", out);
}

void svg_polyline(FILE *out, const svg_panel *p, const double *x, const double *y, int n, const char *color,
                  double stroke, bool dashed) {
    bool open = false;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) {
            if (open) fputs("\"/>\n", out), open = false;
            continue;
        }
        if (!open) {
            fprintf(out, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%g\"%s points=\"", color, stroke,
                    dashed ? " stroke-dasharray=\"5,3\"" : "");
            open = true;
        }
        fprintf(out, "%.1f,%.1f ", px(p, x[i]), py(p, y[i]));
    }
    if (open) fputs("\"/>\n", out);
}

void svg_markers(FILE *out, const svg_panel *p, const double *x, const double *y, int n, const char *color) {
    for (int i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]))
            fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", px(p, x[i]), py(p, y[i]), color);
}

void svg_hline(FILE *out, const svg_panel *p, double y, const char *color, const char *label) {
    fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
                 "stroke-dasharray=\"8,4\"/>\n<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">",
            p->left, py(p, y), p->left + p->width, py(p, y), color, p->left + p->width - 4, py(p, y) - 4, color);
    xml_text(out, label);
    fputs("</text>\n", out);
}

void svg_legend(FILE *out, int x, int y, const char *const *names, const char *const *colors, int n) {
    for (int i = 0; i < n; i++) {
        fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>\n"
                     "<text x=\"%d\" y=\"%d\">", x, y + 16 * i, x + 20, y + 16 * i, colors[i], x + 26, y + 16 * i + 4);
        xml_text(out, names[i]);
        fputs("</text>\n", out);
    }
}
