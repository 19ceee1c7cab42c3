/* `trainc project SPEC`: time to train, from a measured --benchmark of this machine's trainer
 * or from a per-layer roofline on a named system plus a ring all-reduce model over the
 * compile-time gradient buckets (project.c; hardware in project_tables.c). */
#ifndef TRAINC_PROJECT_H
#define TRAINC_PROJECT_H

#include <stdbool.h>
#include <stdio.h>

typedef struct {
    const char *name, *what;
    double fp32, tf32, half;  /* peak FLOP/s; tf32 0 = none (FP32 math) */
    double mem_bw;            /* bytes/s */
} project_device;

typedef struct {
    const char *name, *what;
    double alpha;             /* seconds per message */
    double beta;              /* bytes/s per direction */
} project_link;

typedef struct {
    const char *name, *what;
    const project_device *device;
    int per_node;
    const project_link *intra, *inter;
    int nics;                 /* inter-node links per node, shared by its devices */
} project_system;

bool project_find_system(const char *name, project_system *out);
void project_list_systems(FILE *out);
/* The command line; exit status 0, 1 (bad spec or input) or 2 (usage). */
int project_main(int argc, char **argv);

#endif
