/* `trainc import`: the importers' command line (see import_cli.c). */
#ifndef TRAINC_IMPORT_CLI_H
#define TRAINC_IMPORT_CLI_H

/* argv starts at FORMAT. Returns the exit status: 0 written, 1 the input cannot be
 * imported (errors printed), 2 usage error or trouble writing. */
int import_main(int argc, char **argv);

#endif
