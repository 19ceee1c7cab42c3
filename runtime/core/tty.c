/* Terminal detection: progress lines rewrite themselves only when a person is watching. */
#include <unistd.h>
#include "rt_core.h"

int rt_is_tty(FILE *f) { return f && isatty(fileno(f)); }
