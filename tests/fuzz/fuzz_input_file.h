/* For fuzz targets whose reader takes a path: the input as an anonymous in-memory file,
 * named /proc/self/fd/N (a regular file, so the readers' checks treat it as a real one).
 * memfd_create needs _GNU_SOURCE, which the fuzz build defines. */
#ifndef FUZZ_INPUT_FILE_H
#define FUZZ_INPUT_FILE_H
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data into a fresh memfd; fills path; returns the descriptor (close it after). */
static int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t cap) {
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0) { perror("memfd_create"); abort(); }
    for (size_t done = 0; done < size;) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) { perror("write"); abort(); }
        done += (size_t)n;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}
#endif
