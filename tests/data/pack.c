/* The packer in a sanitized build (tests/data/ runs it under ASan/UBSan): `pack ARGS` is
 * `trainc pack ARGS`. */
#include "rt_pack.h"

int main(int argc, char **argv) { return rt_pack_main(argv[0], argc - 1, argv + 1); }
