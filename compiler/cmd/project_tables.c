/* The hardware `trainc project` models: devices with their vendor peak FLOP/s and memory
 * bandwidth, links with a latency (alpha) and a bandwidth per direction (beta), and the
 * systems of the published runs built from them. Every number is a vendor datasheet figure
 * (dense, no sparsity), never fitted to a published run's time; the sources are noted.
 *
 * Devices (peak TFLOP/s: FP32 / TF32 / FP16-BF16 tensor; memory GB/s):
 *   P100 SXM2    10.6 / -   / 21.2  ;  732   NVIDIA Tesla P100 datasheet (2016)
 *   V100 SXM2    15.7 / -   / 125   ;  900   NVIDIA Tesla V100 datasheet (2017)
 *   A100 SXM4    19.5 / 156 / 312   ; 1555   NVIDIA A100 40GB datasheet (2020)
 *   H100 SXM5    67   / 495 / 990   ; 3350   NVIDIA H100 datasheet (2022, dense)
 *   GTX 1080 Ti  11.3 / -   / 11.3  ;  484   NVIDIA GeForce GTX 1080 Ti spec (FP16 runs at 1/64:
 *                                             mixed precision falls back to FP32 math)
 *   Xeon Platinum 8160 socket (Skylake-SP, 24 cores, 2 AVX-512 FMA units: 64 FP32 FLOP per
 *   cycle per core at the 2.0 GHz all-core AVX-512 clock) 3.07 / - / 3.07 ; 128 (6 x DDR4-2666)
 *
 * Links (alpha us; GB/s per direction):
 *   NVLink 1 (P100, 4 links x 20)        5 ;  80     NVLink 2 (V100 AC922, 3 bricks x 25) 5 ; 75
 *   NVLink 3 (A100, 12 links x 25)       5 ; 300    PCIe 3.0 x16                          5 ; 15.75
 *   UPI (Skylake, 2 links x 10.4 GT/s)   1 ; 20.8   InfiniBand EDR (100 Gb/s)             2 ; 12.5
 *   InfiniBand HDR200 (200 Gb/s)         2 ; 25     Omni-Path 100 (100 Gb/s)              2 ; 12.5
 *   Ethernet 50 Gb/s                    10 ; 6.25
 */
#include "project.h"

#include <string.h>

static const project_device devices[] = {
    { "p100", "Tesla P100 SXM2", 10.6e12, 0, 21.2e12, 732e9 },
    { "v100", "Tesla V100 SXM2", 15.7e12, 0, 125e12, 900e9 },
    { "a100", "A100 SXM4 40GB", 19.5e12, 156e12, 312e12, 1555e9 },
    { "h100", "H100 SXM5", 67e12, 495e12, 990e12, 3350e9 },
    { "1080ti", "GeForce GTX 1080 Ti", 11.3e12, 0, 11.3e12, 484e9 },
    { "xeon8160", "Xeon Platinum 8160 socket", 3.07e12, 0, 3.07e12, 128e9 },
};

static const project_link links[] = {
    { "nvlink1", "NVLink 1", 5e-6, 80e9 },
    { "nvlink2", "NVLink 2 (3 bricks)", 5e-6, 75e9 },
    { "nvlink3", "NVLink 3", 5e-6, 300e9 },
    { "pcie3", "PCIe 3.0 x16", 5e-6, 15.75e9 },
    { "upi", "UPI", 1e-6, 20.8e9 },
    { "edr", "InfiniBand EDR", 2e-6, 12.5e9 },
    { "hdr200", "InfiniBand HDR200", 2e-6, 25e9 },
    { "opa100", "Omni-Path 100", 2e-6, 12.5e9 },
    { "eth50", "Ethernet 50 Gb/s", 10e-6, 6.25e9 },
};

/* name, device, devices per node, link inside a node, link between nodes, NICs per node */
static const struct { const char *name, *device; int per_node; const char *intra, *inter; int nics; const char *what; }
systems[] = {
    { "hal", "v100", 4, "nvlink2", "edr", 2, "IBM AC922 (HAL): 4 V100 per node, NVLink 2, 2 x EDR" },
    { "juwels-booster", "a100", 4, "nvlink3", "hdr200", 4, "JUWELS Booster: 4 A100 per node, NVLink 3, 4 x HDR200" },
    { "big-basin", "p100", 8, "nvlink1", "eth50", 1, "Facebook Big Basin: 8 P100 per server, NVLink, 50 GbE" },
    { "1080ti-cluster", "1080ti", 4, "pcie3", "edr", 1, "4 GTX 1080 Ti per node on PCIe 3, EDR" },
    { "skylake-cluster", "xeon8160", 2, "upi", "opa100", 1, "2-socket Skylake nodes (a worker per socket), Omni-Path" },
    { "a100-node", "a100", 8, "nvlink3", "hdr200", 1, "one node of up to 8 A100 SXM4, NVLink 3" },
    { "h100-node", "h100", 8, "nvlink3", "hdr200", 1, "one node of up to 8 H100 SXM5 (NVLink 4 modelled as 3)" },
    { "v100-node", "v100", 8, "nvlink2", "edr", 1, "one node of up to 8 V100 SXM2, NVLink 2" },
};

static const project_device *find_device(const char *name) {
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++) if (!strcmp(devices[i].name, name)) return &devices[i];
    return NULL;
}

static const project_link *find_link(const char *name) {
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++) if (!strcmp(links[i].name, name)) return &links[i];
    return NULL;
}

bool project_find_system(const char *name, project_system *out) {
    for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++) {
        if (strcmp(systems[i].name, name)) continue;
        *out = (project_system){ systems[i].name, systems[i].what, find_device(systems[i].device), systems[i].per_node,
                                 find_link(systems[i].intra), find_link(systems[i].inter), systems[i].nics };
        return true;
    }
    return false;
}

void project_list_systems(FILE *out) {
    fputs("systems (trainc project SPEC --system NAME [--gpus N]):\n", out);
    for (size_t i = 0; i < sizeof systems / sizeof systems[0]; i++) fprintf(out, "  %-16s %s\n", systems[i].name, systems[i].what);
    fputs("devices (peak TFLOP/s FP32 / TF32 / FP16-BF16, memory GB/s):\n", out);
    for (size_t i = 0; i < sizeof devices / sizeof devices[0]; i++)
        fprintf(out, "  %-10s %-28s %6.1f / %5.1f / %5.1f, %5.0f\n", devices[i].name, devices[i].what,
                devices[i].fp32 / 1e12, devices[i].tf32 / 1e12, devices[i].half / 1e12, devices[i].mem_bw / 1e9);
    fputs("links (alpha us, GB/s per direction):\n", out);
    for (size_t i = 0; i < sizeof links / sizeof links[0]; i++)
        fprintf(out, "  %-10s %-28s %4.0f, %6.2f\n", links[i].name, links[i].what, links[i].alpha * 1e6, links[i].beta / 1e9);
}
