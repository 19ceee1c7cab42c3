/* The CUDA emulator's runtime API: one emulated device whose memory is host memory (so ASan
 * sees every kernel's out-of-bounds access), streams whose work runs only when the host
 * synchronizes (so a missing wait shows), events, and graph capture that records the work
 * with its arguments frozen and refuses what the driver refuses during a capture. At each
 * synchronization the ready stream heads run in creation order (EMU_SCHEDULE=0) or in
 * reverse (EMU_SCHEDULE=1): two interleavings of independent streams.
 * Copies: from pageable host memory the source is read at the call (as the driver stages
 * it), from page-locked memory when the copy runs; into pageable memory the call waits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <deque>
#include <map>
#include <memory>
#include <vector>
#include <cuda_profiler_api.h>
#include "emu_internal.h"

namespace emu {

struct op {
    std::function<void()> fn;
    const char *what;
    struct lane *wait_lane = nullptr;   /* a stream wait: ready once wait_lane ran wait_pos ops */
    unsigned long wait_pos = 0;
    int wait_tag = -1;                  /* in a graph: the tag of the lane waited for */
    ordered *order = nullptr;           /* NCCL: ready when its turn on the communicator comes */
    long seq = 0;
    std::function<bool()> finished;     /* work that goes on after fn started it (an NCCL collective
                                           waiting for its peers): complete once this says so */
    bool started = false;
};

struct lane {
    std::deque<op> q;
    unsigned long issued = 0, done = 0;
};

/* A capture in progress, and the graph it makes: nodes per tag (0 the origin stream). */
struct graph_def {
    std::vector<std::pair<int, op>> nodes;   /* tag, op */
    std::vector<unsigned long> count;        /* nodes per tag so far */
    std::vector<unsigned long> joined_at;    /* how far tag 0 waited for each tag */
    std::vector<CUstream_st *> streams;
    bool invalid = false;
    const char *why = nullptr;
};

}   // namespace emu

struct CUstream_st {
    emu::lane l;
    emu::graph_def *capture = nullptr;
    int tag = 0;
};
struct CUevent_st {
    emu::lane *l = nullptr;
    unsigned long pos = 0;
    bool timing = true;                           /* not cudaEventDisableTiming */
    std::shared_ptr<double> at = std::make_shared<double>(-1.0);   /* host seconds when the stream reached it */
    emu::graph_def *g = nullptr;   /* recorded inside this capture */
    int tag = 0;
    unsigned long gpos = 0;
};
struct CUgraph_st {
    std::shared_ptr<emu::graph_def> def;
};
struct CUgraphExec_st {
    std::shared_ptr<emu::graph_def> def;
};

namespace emu {

static CUstream_st legacy;                  /* stream 0 */
static std::vector<CUstream_st *> streams = { &legacy };
static std::map<uintptr_t, size_t> device_allocs, pinned;
static size_t allocated;
static int captures_active;
static cudaError_t last_error = cudaSuccess;
static const size_t TOTAL_MEM = (size_t)16 << 30;

static CUstream_st *S(cudaStream_t s) { return s ? s : &legacy; }

/* Buffers page-locked with cudaHostRegister: the program unregisters them before it exits
 * (the runtime does, at exit, once the device is done); one left over is an error here. The
 * check is registered before main, so it runs after every exit handler of the program. */
static size_t host_registered;
/* A trainer's start-up memory check is its first cudaMemGetInfo: the device bytes allocated
 * then, and the most allocated at once after it. EMU_ALLOC_REPORT=1 prints both at exit, so
 * that a test compares the growth with what the check counted (every later allocation, the
 * cuDNN search's workspace among them, must have been in the plan). */
static bool memory_checked;
static size_t at_check, peak_after_check;
static void registered_at_exit(void) {
    const char *report = getenv("EMU_ALLOC_REPORT");
    if (report && *report == '1' && memory_checked)
        fprintf(stderr, "emu: device memory: %zu bytes allocated at the memory check, %zu more at the peak after it\n",
                at_check, peak_after_check - at_check);
    if (!host_registered) return;
    fprintf(stderr, "emu: error: %zu host buffer(s) still registered with cudaHostRegister at exit "
                    "(cudaHostUnregister them once the device is done with them)\n", host_registered);
    fflush(stderr);
    _exit(1);
}
[[maybe_unused]] static const int exit_check = atexit(registered_at_exit);

static bool in_map(const std::map<uintptr_t, size_t> &m, const void *p, size_t bytes) {
    auto it = m.upper_bound((uintptr_t)p);
    if (it == m.begin()) return false;
    --it;
    return (uintptr_t)p + bytes <= it->first + it->second && (uintptr_t)p >= it->first;
}
static bool is_device(const void *p) { return in_map(device_allocs, p, 1); }

bool device_range(const void *p, uintptr_t *base, size_t *size) {
    auto it = device_allocs.upper_bound((uintptr_t)p);
    if (it == device_allocs.begin()) return false;
    --it;
    if ((uintptr_t)p >= it->first + it->second) return false;
    *base = it->first, *size = it->second;
    return true;
}

void check_device(const void *p, size_t bytes, const char *what) {
    if (bytes == 0) return;
    if (!in_map(device_allocs, p, bytes)) {
        if (is_device(p)) fail("%s: %zu bytes at %p run past the end of their device allocation", what, bytes, p);
        fail("%s: %p is not device memory", what, p);
    }
}

void library_alloc(const char *what, size_t bytes) {
    fail("%s allocates %zu bytes of device memory of its own (the operands it times and its workspace), "
         "which the trainer's start-up memory check never counted: search with the Ex variant on the "
         "trainer's own buffers",
         what, bytes);
}

static cudaError_t err(cudaError_t e) {
    if (e != cudaSuccess) last_error = e;
    return e;
}

/* An unsafe call during a capture fails and invalidates every capture (the driver's rule
 * in the global and thread-local modes, the ones the runtime uses). */
static cudaError_t refuse_in_capture(const char *what) {
    if (!captures_active) return cudaSuccess;
    for (CUstream_st *s : streams)
        if (s->capture && !s->capture->invalid) s->capture->invalid = true, s->capture->why = what;
    fprintf(stderr, "emu: %s during a stream capture: refused (cudaErrorStreamCaptureUnsupported)\n", what);
    return err(cudaErrorStreamCaptureUnsupported);
}

static void push(CUstream_st *s, op o) {
    if (s->capture) {
        graph_def *g = s->capture;
        g->nodes.push_back({ s->tag, std::move(o) });
        g->count[(size_t)s->tag]++;
        return;
    }
    if (captures_active && s == &legacy) {
        for (CUstream_st *c : streams)
            if (c->capture) c->capture->invalid = true, c->capture->why = "work on the legacy stream";
    }
    if (o.order) o.seq = o.order->issued++;
    s->l.q.push_back(std::move(o));
    s->l.issued++;
}

void enqueue(cudaStream_t s, const char *what, std::function<void()> fn, ordered *order,
             std::function<bool()> finished) {
    op o;
    o.fn = std::move(fn), o.what = what, o.order = order, o.finished = std::move(finished);
    push(S(s), std::move(o));
}

void launch(const launch_cfg &c, std::function<void()> body) {
    CUstream_st *s = S(c.stream);
    if (captures_active && s == &legacy && !s->capture)
        fail("kernel launched on the legacy stream during a capture (%s:%d)", c.file, c.line);
    launch_cfg d = c;
    op o;
    o.what = "kernel";
    o.fn = [d, body]() { run_grid(d, body); };
    push(s, std::move(o));
}

static bool ready(const op &o) {
    if (o.started) return o.finished();
    if (o.wait_lane && o.wait_lane->done < o.wait_pos) return false;
    if (o.order && o.order->executed != o.seq) return false;
    return true;
}

static void run_head(lane *l) {
    op &h = l->q.front();
    if (!h.started && h.fn) {
        traffic_begin(h.what);   /* a kernel's grid names itself (run_grid) */
        h.fn();
        traffic_end();
    }
    h.started = true;
    if (h.finished && !h.finished()) return;   /* in flight: the head until it completes */
    op o = std::move(h);
    l->q.pop_front();
    if (o.order) o.order->executed++;
    l->done++;
}

static bool in_flight(const std::vector<lane *> &lanes) {
    for (lane *l : lanes)
        if (!l->q.empty() && l->q.front().started) return true;
    return false;
}

/* Runs ready heads until `until` holds. When nothing can run: with work in flight (waiting
 * for other ranks) a blocking drain waits for it, as a synchronize waits for a GPU, and a
 * non-blocking one returns false; otherwise it dies (a wait that never ends). */
static bool drain(std::vector<lane *> &lanes, const std::function<bool()> &until, bool block = true) {
    int reverse = schedule() == 1;
    while (!until()) {
        bool ran = false;
        for (size_t i = 0; i < lanes.size() && !ran; i++) {
            lane *l = lanes[reverse ? lanes.size() - 1 - i : i];
            if (!l->q.empty() && ready(l->q.front())) run_head(l), ran = true;
        }
        if (!ran && in_flight(lanes)) {
            if (!block) return false;
            struct timespec pause = { 0, 100000 };
            nanosleep(&pause, nullptr);
            continue;
        }
        if (!ran) {
            for (lane *l : lanes)
                if (!l->q.empty())
                    fail("deadlock: a stream waits at '%s' for work that can never run (an event recorded on a "
                         "stream that waits itself, or NCCL calls issued in another order)",
                         l->q.front().what);
            fail("internal: drain found no work and its condition is false");
        }
    }
    return true;
}

static std::vector<lane *> device_lanes(void) {
    std::vector<lane *> v;
    for (CUstream_st *s : streams) v.push_back(&s->l);
    return v;
}

static void sync_lane(lane *l, unsigned long upto) {
    std::vector<lane *> v = device_lanes();
    drain(v, [l, upto]() { return l->done >= upto; });
}

static void sync_all(void) {
    std::vector<lane *> v = device_lanes();
    drain(v, [&v]() {
        for (lane *l : v)
            if (!l->q.empty()) return false;
        return true;
    });
}

/* A graph's launch: its nodes on lanes of their own, run as one piece of work, which stays in
 * flight while a node does (an NCCL collective waiting for its peers). */
struct graph_run {
    std::vector<lane> lanes;
    std::vector<lane *> ptrs;
};

static std::shared_ptr<graph_run> start_graph(const graph_def &g) {
    auto r = std::make_shared<graph_run>();
    r->lanes.resize(g.count.size());
    for (lane &l : r->lanes) r->ptrs.push_back(&l);
    for (const auto &n : g.nodes) {
        op o = n.second;
        if (o.wait_tag >= 0) o.wait_lane = &r->lanes[(size_t)o.wait_tag];
        if (o.order) o.seq = o.order->issued++;
        r->lanes[(size_t)n.first].q.push_back(std::move(o));
        r->lanes[(size_t)n.first].issued++;
    }
    return r;
}

static bool graph_done(graph_run &r) {
    std::vector<lane *> &ptrs = r.ptrs;
    return drain(ptrs, [&ptrs]() {
        for (lane *l : ptrs)
            if (!l->q.empty()) return false;
        return true;
    }, false);
}

}   // namespace emu

using namespace emu;

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
    const char *e = getenv("EMU_DEVICES");   /* EMU_DEVICES=0: a machine without a GPU */
    *count = e && *e ? atoi(e) : 1;
    return *count ? cudaSuccess : err(cudaErrorNoDevice);
}
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : err(cudaErrorInvalidDevice); }
cudaError_t cudaGetDevice(int *device) {   /* one emulated device: the one cudaSetDevice accepts */
    *device = 0;
    return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device) {
    memset(prop, 0, sizeof *prop);
    snprintf(prop->name, sizeof prop->name, "CUDA emulator (tests/emu, schedule %d)", schedule());
    prop->major = 9, prop->minor = 0;
    /* EMU_DEVICE_CC=7.5: another GPU model, e.g. one rank of a job on mixed nodes */
    const char *cc = getenv("EMU_DEVICE_CC");
    if (cc && *cc && sscanf(cc, "%d.%d", &prop->major, &prop->minor) != 2) {
        fprintf(stderr, "emulator: EMU_DEVICE_CC='%s' is not MAJOR.MINOR (e.g. 7.5)\n", cc);
        abort();
    }
    prop->totalGlobalMem = TOTAL_MEM;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->multiProcessorCount = 1;
    prop->sharedMemPerBlock = 48 << 10;
    return device == 0 ? cudaSuccess : err(cudaErrorInvalidDevice);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) {
    *s = new CUstream_st;
    streams.push_back(*s);
    return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithFlags(s, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    sync_lane(&s->l, s->l.issued);   /* pending work completes first, as the driver does */
    for (size_t i = 0; i < streams.size(); i++)
        if (streams[i] == s) streams.erase(streams.begin() + (long)i);
    delete s;
    return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags) {
    *e = new CUevent_st;
    (*e)->timing = !(flags & cudaEventDisableTiming);
    return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}

cudaError_t cudaMalloc(void **p, size_t bytes) {
    *p = NULL;
    if (cudaError_t e = refuse_in_capture("cudaMalloc")) return e;
    if (allocated + bytes > TOTAL_MEM) return err(cudaErrorMemoryAllocation);
    size_t rounded = (bytes + 255) & ~(size_t)255;
    /* Exactly `bytes` are addressable: ASan reports an access past them. */
    void *m = aligned_alloc(256, rounded ? rounded : 256);
    if (!m) return err(cudaErrorMemoryAllocation);
    memset(m, 0xCB, bytes);   /* not zero: a kernel that reads what nobody wrote gets garbage */
    device_allocs[(uintptr_t)m] = bytes ? bytes : 1;
    allocated += bytes;
    if (memory_checked && allocated > peak_after_check) peak_after_check = allocated;
    *p = m;
    return cudaSuccess;
}
cudaError_t cudaFree(void *p) {
    if (!p) return cudaSuccess;
    if (cudaError_t e = refuse_in_capture("cudaFree")) return e;
    auto it = device_allocs.find((uintptr_t)p);
    if (it == device_allocs.end()) fail("cudaFree(%p): not the start of a device allocation", p);
    sync_all();   /* cudaFree synchronizes the device */
    allocated -= it->second;
    device_allocs.erase(it);
    traffic_forget(p);
    free(p);
    return cudaSuccess;
}
cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total_b) {
    if (!memory_checked) memory_checked = true, at_check = peak_after_check = allocated;
    *free_b = TOTAL_MEM - allocated, *total_b = TOTAL_MEM;
    return cudaSuccess;
}

cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int flags) {
    if (cudaError_t e = refuse_in_capture("cudaHostAlloc")) return e;
    *p = malloc(bytes ? bytes : 1);
    pinned[(uintptr_t)*p] = bytes;
    return cudaSuccess;
}
cudaError_t cudaMallocHost(void **p, size_t bytes) { return cudaHostAlloc(p, bytes, 0); }
cudaError_t cudaFreeHost(void *p) {
    sync_all();
    pinned.erase((uintptr_t)p);
    free(p);
    return cudaSuccess;
}
cudaError_t cudaHostRegister(void *p, size_t bytes, unsigned int flags) {
    if (cudaError_t e = refuse_in_capture("cudaHostRegister")) return e;
    if (in_map(pinned, p, 1)) return err(cudaErrorHostMemoryAlreadyRegistered);
    pinned[(uintptr_t)p] = bytes;
    host_registered++;
    return cudaSuccess;
}
cudaError_t cudaHostUnregister(void *p) {
    if (!pinned.erase((uintptr_t)p)) return err(cudaErrorHostMemoryNotRegistered);
    host_registered--;
    return cudaSuccess;
}

static cudaError_t copy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t stream,
                        const char *what) {
    CUstream_st *s = S(stream);
    bool dst_dev = is_device(dst), src_dev = is_device(src);
    if (kind == cudaMemcpyDefault) kind = dst_dev ? (src_dev ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                                   : (src_dev ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
    if (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) check_device(dst, bytes, what);
    if (kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) check_device(src, bytes, what);
    if ((kind == cudaMemcpyHostToDevice && src_dev) || (kind == cudaMemcpyDeviceToHost && dst_dev))
        fail("%s: the host side of a %s copy is device memory", what, kind == cudaMemcpyHostToDevice ? "host-to-device" : "device-to-host");
    op o;
    o.what = what;
    if (kind == cudaMemcpyHostToDevice && !in_map(pinned, src, bytes)) {
        if (s->capture) {   /* a graph cannot read pageable memory at replay */
            s->capture->invalid = true, s->capture->why = "a copy from pageable host memory";
            fprintf(stderr, "emu: %s from pageable host memory during a capture: refused\n", what);
            return err(cudaErrorStreamCaptureUnsupported);
        }
        std::shared_ptr<std::vector<char>> staged(new std::vector<char>((const char *)src, (const char *)src + bytes));
        o.fn = [dst, staged]() {
            memcpy(dst, staged->data(), staged->size());
            traffic_touch(dst, staged->size(), true);
        };
        push(s, std::move(o));
        return cudaSuccess;
    }
    bool pageable_dst = kind == cudaMemcpyDeviceToHost && !in_map(pinned, dst, bytes);
    if (pageable_dst && s->capture) {
        s->capture->invalid = true, s->capture->why = "a copy into pageable host memory";
        return err(cudaErrorStreamCaptureUnsupported);
    }
    o.fn = [dst, src, bytes]() {
        memmove(dst, src, bytes);
        traffic_touch(src, bytes, false), traffic_touch(dst, bytes, true);
    };
    push(s, std::move(o));
    if (pageable_dst) sync_lane(&s->l, s->l.issued);   /* returns once the data is there */
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
    return copy(dst, src, bytes, kind, s, "cudaMemcpyAsync");
}
cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
    if (cudaError_t e = refuse_in_capture("cudaMemcpy")) return e;
    cudaError_t e = copy(dst, src, bytes, kind, 0, "cudaMemcpy");
    sync_all();
    return e;
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) {
    if (width > dpitch || width > spitch) return err(cudaErrorInvalidPitchValue);
    if (height == 0 || width == 0) return cudaSuccess;
    size_t dspan = dpitch * (height - 1) + width, sspan = spitch * (height - 1) + width;
    if (kind != cudaMemcpyDeviceToDevice) fail("cudaMemcpy2DAsync: only device-to-device copies are emulated");
    check_device(dst, dspan, "cudaMemcpy2DAsync destination");
    check_device(src, sspan, "cudaMemcpy2DAsync source");
    op o;
    o.what = "cudaMemcpy2DAsync";
    o.fn = [=]() {
        for (size_t r = 0; r < height; r++) {
            memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
            traffic_touch((const char *)src + r * spitch, width, false), traffic_touch((char *)dst + r * dpitch, width, true);
        }
    };
    push(S(stream), std::move(o));
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t s) {
    check_device(p, bytes, "cudaMemsetAsync");
    op o;
    o.what = "cudaMemsetAsync";
    o.fn = [=]() {
        memset(p, value, bytes);
        traffic_touch(p, bytes, true);
    };
    push(S(s), std::move(o));
    return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int value, size_t bytes) {
    if (cudaError_t e = refuse_in_capture("cudaMemset")) return e;
    cudaMemsetAsync(p, value, bytes, 0);
    sync_all();
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    CUstream_st *s = S(stream);
    if (s->capture || captures_active) return refuse_in_capture("cudaStreamSynchronize");
    sync_lane(&s->l, s->l.issued);
    return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) {
    if (cudaError_t e = refuse_in_capture("cudaDeviceSynchronize")) return e;
    sync_all();
    return cudaSuccess;
}
/* The profiler API (TRAINC_CUDA_PROFILE_STEP): with no profiler attached the real runtime
 * does nothing either; like cudaDeviceSynchronize, not inside a capture. */
cudaError_t cudaProfilerStart(void) {
    traffic_mark("profiler start");
    return refuse_in_capture("cudaProfilerStart");
}
cudaError_t cudaProfilerStop(void) {
    traffic_mark("profiler stop");
    return refuse_in_capture("cudaProfilerStop");
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t stream) {
    CUstream_st *s = S(stream);
    if (s->capture) {
        e->g = s->capture, e->tag = s->tag, e->gpos = s->capture->count[(size_t)s->tag], e->l = nullptr;
        return cudaSuccess;
    }
    if (e->timing) {   /* the host time when the stream's work before it has run (what the timing measures) */
        std::shared_ptr<double> at = e->at = std::make_shared<double>(-1.0);
        op o;
        o.what = "cudaEventRecord";
        o.fn = [at]() {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            *at = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
        };
        push(s, std::move(o));
    }
    e->g = nullptr, e->l = &s->l, e->pos = s->l.issued;
    return cudaSuccess;
}
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
    if (!start->timing || !end->timing) return err(cudaErrorInvalidResourceHandle);
    if (start->g || end->g) return refuse_in_capture("cudaEventElapsedTime on an event recorded in a capture");
    if (*start->at < 0 || *end->at < 0) return err(cudaErrorNotReady);
    *ms = (float)((*end->at - *start->at) * 1e3);
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    if (e->g) return refuse_in_capture("cudaEventSynchronize on an event recorded in a capture");
    if (e->l) sync_lane(e->l, e->pos);
    return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
    if (e->g) return refuse_in_capture("cudaEventQuery on an event recorded in a capture");
    return !e->l || e->l->done >= e->pos ? cudaSuccess : cudaErrorNotReady;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t e, unsigned int flags) {
    CUstream_st *s = S(stream);
    op o;
    o.what = "cudaStreamWaitEvent";
    if (e->g) {   /* an event of a capture: the waiting stream joins it */
        graph_def *g = e->g;
        if (s->capture && s->capture != g) return err(cudaErrorStreamCaptureMerge);
        if (!s->capture) {
            s->capture = g, s->tag = (int)g->count.size();
            g->count.push_back(0), g->joined_at.push_back(0), g->streams.push_back(s);
        }
        o.wait_tag = e->tag, o.wait_pos = e->gpos;
        if (s->tag == 0 && e->tag > 0 && e->gpos > g->joined_at[(size_t)e->tag]) g->joined_at[(size_t)e->tag] = e->gpos;
        push(s, std::move(o));
        return cudaSuccess;
    }
    if (s->capture) {
        /* An event from outside the capture: the driver refuses the dependency. */
        s->capture->invalid = true, s->capture->why = "a wait on an event recorded outside the capture";
        fprintf(stderr, "emu: cudaStreamWaitEvent on an event recorded outside the capture: refused\n");
        return err(cudaErrorStreamCaptureIsolation);
    }
    if (!e->l) return cudaSuccess;   /* never recorded: no wait */
    o.wait_lane = e->l, o.wait_pos = e->pos;
    push(s, std::move(o));
    return cudaSuccess;
}
/* The emulated device runs only when the host waits: a query lets the stream run what it
 * can (so a polling loop makes progress), then answers; it never waits for work in flight (an
 * NCCL collective whose peers have not arrived), which a real query does not either. */
cudaError_t cudaStreamQuery(cudaStream_t stream) {
    CUstream_st *s = S(stream);
    if (s->capture) return refuse_in_capture("cudaStreamQuery on a capturing stream");
    std::vector<lane *> v = device_lanes();
    lane *l = &s->l;
    drain(v, [l]() { return l->q.empty(); }, false);
    return s->l.q.empty() ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus *st) {
    CUstream_st *s = S(stream);
    *st = !s->capture ? cudaStreamCaptureStatusNone
                      : s->capture->invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
    CUstream_st *s = S(stream);
    if (s == &legacy) return err(cudaErrorStreamCaptureUnsupported);
    if (s->capture) return err(cudaErrorIllegalState);
    graph_def *g = new graph_def;
    g->count.push_back(0), g->joined_at.push_back(0), g->streams.push_back(s);
    s->capture = g, s->tag = 0;
    captures_active++;
    return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
    CUstream_st *s = S(stream);
    *graph = NULL;
    if (!s->capture) return err(cudaErrorIllegalState);
    graph_def *g = s->capture;
    if (s->tag != 0) return err(cudaErrorStreamCaptureUnmatched);
    cudaError_t e = cudaSuccess;
    for (size_t t = 1; t < g->count.size(); t++)
        if (g->joined_at[t] < g->count[t]) {
            fprintf(stderr, "emu: a stream forked into the capture has %lu operations the origin stream never waited for\n",
                    g->count[t] - g->joined_at[t]);
            e = cudaErrorStreamCaptureUnjoined;
        }
    if (g->invalid) {
        fprintf(stderr, "emu: the capture was invalidated by %s\n", g->why);
        e = cudaErrorStreamCaptureInvalidated;
    }
    for (CUstream_st *m : g->streams) m->capture = nullptr, m->tag = 0;
    captures_active--;
    if (e != cudaSuccess) {
        delete g;
        return err(e);
    }
    *graph = new CUgraph_st{ std::shared_ptr<graph_def>(g) };
    return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags) {
    *exec = new CUgraphExec_st{ graph->def };
    return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
    delete graph;
    return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
    sync_all();
    delete exec;
    return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
    CUstream_st *s = S(stream);
    if (s->capture) fail("cudaGraphLaunch inside a capture is not emulated");
    std::shared_ptr<graph_def> def = exec->def;
    auto run = std::make_shared<std::shared_ptr<graph_run>>();   /* made when the stream gets there */
    op o;
    o.what = "cudaGraphLaunch";
    o.fn = [def, run]() { *run = start_graph(*def); };
    o.finished = [run]() { return graph_done(**run); };
    push(s, std::move(o));
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char *cudaGetErrorName(cudaError_t e) {
    switch (e) {
#define N(x) case x: return #x;
        N(cudaSuccess) N(cudaErrorNoDevice) N(cudaErrorInvalidDevice) N(cudaErrorMemoryAllocation)
        N(cudaErrorInvalidValue) N(cudaErrorNotReady) N(cudaErrorIllegalState) N(cudaErrorInvalidPitchValue)
        N(cudaErrorHostMemoryAlreadyRegistered) N(cudaErrorHostMemoryNotRegistered)
        N(cudaErrorStreamCaptureUnsupported) N(cudaErrorStreamCaptureInvalidated) N(cudaErrorStreamCaptureMerge)
        N(cudaErrorStreamCaptureUnmatched) N(cudaErrorStreamCaptureUnjoined) N(cudaErrorStreamCaptureIsolation)
        N(cudaErrorStreamCaptureImplicit) N(cudaErrorInsufficientDriver)
#undef N
    default: return "cudaErrorUnknown";
    }
}
const char *cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorStreamCaptureUnsupported: return "operation not permitted when stream is capturing";
    case cudaErrorStreamCaptureInvalidated: return "operation failed due to a previous error during capture";
    case cudaErrorStreamCaptureUnjoined: return "capture was not joined to the origin stream";
    case cudaErrorStreamCaptureIsolation: return "dependency created on uncaptured work in another stream";
    default: return cudaGetErrorName(e);
    }
}

}   // extern "C"
