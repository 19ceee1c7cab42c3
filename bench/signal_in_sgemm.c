/* Shows why the trainer's stop signals go to a listener thread (runtime/core/signals.c):
 * oneDNN's JIT sgemm runs with its stack pointer at the start of a heap buffer, so a signal
 * taken by a thread inside it has its frame written over the heap below that buffer.
 * Two OpenMP threads call dnnl_sgemm (the MLP example's first layer, split as rt_gemm splits
 * it) while a child process sends SIGUSR1 every 50 us; with argument 1 the computing threads
 * block the signal and a listener thread takes it.
 *   cc -O2 -fopenmp bench/signal_in_sgemm.c -o build/bench/signal_in_sgemm -l:libdnnl.so.2 -lpthread
 *   build/bench/signal_in_sgemm 100000 0   # glibc aborts ("corrupted size vs. prev_size") or SIGSEGV
 *   build/bench/signal_in_sgemm 100000 1   # "done", every time */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <omp.h>

int dnnl_sgemm(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

static volatile sig_atomic_t signals_taken;

static void on_signal(int sig) { (void)sig; signals_taken++; }

static void *listener(void *arg) {
    (void)arg;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    for (;;) pause();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s ITERATIONS BLOCK(0|1)\n", argv[0]); return 2; }
    long iterations = atol(argv[1]);
    int block = atoi(argv[2]);
    struct sigaction sa = { 0 };
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    if (block) {
        pthread_t thread;
        pthread_create(&thread, NULL, listener, NULL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
    }
    pid_t self = getpid();
    if (fork() == 0)   /* the sender: ends when this process is gone */
        for (;;) {
            if (kill(self, SIGUSR1) != 0) _exit(0);
            usleep(50);
        }
    enum { M = 64, N = 128, K = 784 };
    float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * N * K), *c = malloc(sizeof(float) * M * N);
    for (int i = 0; i < M * K; i++) a[i] = (float)(i % 7) * 0.1f;
    for (int i = 0; i < N * K; i++) b[i] = (float)(i % 5) * 0.1f;
    for (long it = 0; it < iterations; it++) {
        #pragma omp parallel for schedule(static) num_threads(2)
        for (int t = 0; t < 2; t++) {   /* columns t*64.. of C, one oneDNN call per thread */
            int threads = omp_get_max_threads();
            if (threads > 1) omp_set_num_threads(1);
            dnnl_sgemm('N', 'T', M, N / 2, K, 1.f, a, K, b + (long)t * (N / 2) * K, K, 0.f, c + t * (N / 2), N);
            if (threads > 1) omp_set_num_threads(threads);
        }
        free(malloc(100 + (size_t)(it % 3000)));   /* the trainer's other allocations */
    }
    printf("done: %ld iterations, %ld signals taken\n", iterations, (long)signals_taken);
    return 0;
}
