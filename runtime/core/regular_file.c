/* Refusing inputs that are not regular files before reading them: a FIFO would block the
 * reader forever and a device (/dev/zero) has no size to trust. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "rt_core.h"

const char *rt_file_kind(unsigned mode) {
    return S_ISREG(mode) ? "regular file" : S_ISDIR(mode) ? "directory" : S_ISFIFO(mode) ? "FIFO"
         : S_ISCHR(mode) ? "character device" : S_ISBLK(mode) ? "block device"
         : S_ISSOCK(mode) ? "socket" : "special file";
}

rt_status rt_require_regular_file(const char *path, const char *what, const char *hint, rt_err *err) {
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return rt_fail(err, errno == ENOENT ? RT_E_NOT_FOUND : RT_E_IO, hint, "cannot open %s %s: %s", what,
                       path, strerror(errno));
    struct stat st;
    int ok = fstat(fd, &st) == 0;
    int e = errno;
    close(fd);
    if (!ok) return rt_fail(err, RT_E_IO, hint, "cannot stat %s %s: %s", what, path, strerror(e));
    if (!S_ISREG(st.st_mode))
        return rt_fail(err, RT_E_FORMAT, hint, "%s %s is a %s, not a regular file", what, path,
                       rt_file_kind(st.st_mode));
    return RT_OK;
}
