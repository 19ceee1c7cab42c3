/* The help text of each trainc command, printed to stdout by `trainc COMMAND --help`. */
#include "cli_help.h"

#include <string.h>

typedef struct {
    const char *command;
    const char *text;
} command_help;

static const command_help helps[] = {
    { "check",
      "usage: trainc check SPEC\n"
      "\n"
      "Reads SPEC with its includes, extends and blocks, checks every field against the\n"
      "schema and the network's shapes, and prints each error on stderr (file:line:col,\n"
      "the source line, a hint); stdout stays empty.\n"
      "\n"
      "exit status: 0 valid, 1 invalid, 2 usage error\n" },
    { "show",
      "usage: trainc show [--json] SPEC\n"
      "       trainc show --buckets SPEC\n"
      "       trainc show --device-memory GiB SPEC\n"
      "       trainc show --schedule [--backend cpu|cuda] [--layout nchw|nhwc] [--no-bn-retire]\n"
      "                              [--no-bn-add] [--no-relu-mask] [--no-conv-genstats] [--no-conv-sbr]\n"
      "                              [--no-bn-pool] [--no-residual-tail] [--no-cudnn-attention] SPEC\n"
      "       trainc show --gpu-cost [--device h100|h200|a100] [--layout nchw|nhwc] [--old-kernels]\n"
      "                              [--no-bn-retire] [--no-bn-add] [--no-relu-mask] [--no-conv-genstats]\n"
      "                              [--no-conv-sbr] [--no-bn-pool] [--no-residual-tail]\n"
      "                              [--no-cudnn-attention] SPEC\n"
      "\n"
      "Without options: the per-layer table (name, type, output shape, params, MACs,\n"
      "activation bytes), totals, and the run summary (global batch, steps, peak LR, LR key\n"
      "points, optimizer, precision, parallel layout, memory plan) and the spec hash.\n"
      "\n"
      "  --json                 the same as one JSON object\n"
      "  --buckets              the gradient all-reduce buckets of the compiled trainer\n"
      "  --device-memory GiB    the CUDA trainer's device memory (fixed and per sample) and\n"
      "                         the largest batch_per_rank that fits GiB of free memory\n"
      "  --schedule             the training step as lowered for --backend (default cpu)\n"
      "                         and --layout: each op and every choice made for it\n"
      "                         (fusions, the CPU conv algorithm, depthwise engine, ...)\n"
      "  --gpu-cost             the CUDA training step as lowered: each kernel and library\n"
      "                         call with its bytes, FLOPs and modeled time on --device\n"
      "                         (default h100), totals and one summary line; --old-kernels\n"
      "                         models the batch-norm kernels TRAINC_CUDA_BN=old selects,\n"
      "                         --no-bn-retire, --no-bn-add, --no-relu-mask,\n"
      "                         --no-conv-genstats, --no-conv-sbr, --no-bn-pool,\n"
      "                         --no-residual-tail and --no-cudnn-attention the builds of\n"
      "                         those names; each conv's\n"
      "                         fused engine (or why none) is listed first\n"
      "\n"
      "exit status: 0 shown, 1 invalid spec, 2 usage error\n" },
    { "print",
      "usage: trainc print SPEC\n"
      "\n"
      "Prints the resolved spec (includes, extends and blocks expanded, expressions\n"
      "evaluated) in canonical text: the text the spec hash covers.\n"
      "\n"
      "exit status: 0 printed, 1 invalid spec, 2 usage error\n" },
    { "diff",
      "usage: trainc diff A B\n"
      "\n"
      "Semantic diff of two resolved specs, one 'path: a -> b' per line: fields (absent\n"
      "ones at their defaults), layers matched by name, then the derived quantities that\n"
      "differ (global batch, steps, peak LR, params, MACs).\n"
      "\n"
      "exit status: like diff(1): 0 same run, 1 different, 2 usage error or an invalid spec\n" },
    { "build",
      "usage: trainc build SPEC -o BIN [--emit-dir DIR] [--emit-only] [--backend cpu|cuda]\n"
      "                    [--no-fuse] [--layout nchw|nhwc] [--no-bn-retire]\n"
      "                    [--no-bn-add] [--no-relu-mask] [--no-conv-genstats] [--no-conv-sbr]\n"
      "                    [--no-bn-pool] [--no-residual-tail] [--no-cudnn-attention]\n"
      "\n"
      "Generates the trainer specialized for SPEC (BIN.src/model.c, plan.txt, buckets.txt)\n"
      "and compiles it against the runtime into BIN; run 'BIN --help' for its options.\n"
      "\n"
      "  -o BIN                 the trainer binary to write\n"
      "  --emit-dir DIR         write the generated sources to DIR instead of BIN.src\n"
      "  --emit-only            write the sources only (to DIR, or BIN.src), compile nothing\n"
      "  --backend cpu|cuda     CPU (default, OpenBLAS) or CUDA (needs 'make cuda' first)\n"
      "  --no-fuse              cuda: one kernel per op instead of the fused ones\n"
      "  --layout nchw|nhwc     cuda with BF16 or FP16 compute: nhwc keeps activations\n"
      "                         channels-last for tensor cores (default nchw)\n"
      "  --no-bn-retire         cuda nhwc: batch norm's per-channel sums in launches of their\n"
      "                         own, not finished by each channel tile's last block\n"
      "  --no-bn-add            cuda nhwc: a residual block's closing batch norms (both\n"
      "                         branches of a projection block) applied in passes of their\n"
      "                         own, then the add and ReLU; by default one pass does all\n"
      "  --no-relu-mask         cuda nhwc: no ReLU bitmasks (the backward reads each ReLU's\n"
      "                         output), and a residual block's add and closing batch norms\n"
      "                         with backward passes of their own; by default two passes do\n"
      "                         dReLU, the add's gradient and both batch norms' backward\n"
      "  --no-conv-genstats     cuda nhwc FP16: batch norm's statistics in a pass of their\n"
      "                         own; by default a conv feeding a batch norm writes them from\n"
      "                         its epilogue (cuDNN's ConvBNfprop engine, where it takes the\n"
      "                         shape; the trainer falls back and says why where it does not)\n"
      "  --no-conv-sbr          cuda nhwc FP16: a batch norm + ReLU before a conv applied in a\n"
      "                         pass of its own; by default that conv reads the batch norm's\n"
      "                         input and applies its scale, bias and ReLU in its prologue\n"
      "                         (cuDNN's ConvBNfprop engine), so the normalized tensor is\n"
      "                         never written, and the batch norm's backward recomputes the\n"
      "                         ReLU from its input\n"
      "  --no-bn-pool           cuda nhwc: a batch norm + ReLU and the 3x3 stride-2 max\n"
      "                         pooling after it (ResNet's stem) in passes of their own; by\n"
      "                         default one pass reads the bn's input and writes the pooled\n"
      "                         output, its argmax and the ReLU's bits\n"
      "  --no-residual-tail     cuda: a residual block's tail (a conv's bias, layer scale,\n"
      "                         drop path, add: ConvNeXt's) in passes of their own; by default\n"
      "                         one kernel each way\n"
      "  --no-cudnn-attention   cuda BF16/FP16: attention's core on the runtime's own kernels;\n"
      "                         by default a global attention whose heads are a multiple of 8\n"
      "                         channels up to 128 runs cuDNN's fused scaled-dot-product\n"
      "                         attention (the trainer falls back and says why where cuDNN\n"
      "                         refuses it)\n"
      "\n"
      "exit status: 0 built, 1 invalid spec or build failure, 2 usage error\n" },
    { "schema",
      "usage: trainc schema --markdown\n"
      "\n"
      "Prints the field reference of the spec language as Markdown, generated from\n"
      "compiler/check/schema.def (the text of specs/REFERENCE.md).\n"
      "\n"
      "exit status: 0 printed, 2 usage error\n" },
    { "plot",
      "usage: trainc plot METRICS.jsonl [MORE.jsonl...] -o FILE.svg [--epochs]\n"
      "                   [--reference SPEC | --top1 X]\n"
      "\n"
      "Draws loss, top-1 and LR of one or more runs (their metrics.jsonl) overlaid against\n"
      "steps, as a plain SVG; the published top-1 (of SPEC's reference block, or X) as a line.\n"
      "\n"
      "  -o FILE.svg            the chart to write (atomically)\n"
      "  --epochs               epochs on the x axis instead of steps\n"
      "  --reference SPEC       draw SPEC's reference.top1\n"
      "  --top1 X               draw X (0.76 or 76) as the published top-1\n"
      "\n"
      "exit status: 0 written, 1 unreadable metrics, 2 usage error\n" },
    { "project",
      "usage: trainc project SPEC --benchmark OUT/benchmark.jsonl\n"
      "       trainc project SPEC --system NAME [--gpus N]\n"
      "       trainc project --systems\n"
      "\n"
      "Projects the time to train SPEC, next to the published time of its reference block:\n"
      "from a measured '--benchmark' run of its trainer on this machine, or for a named GPU\n"
      "system from a per-layer roofline (the compiler's MACs and bytes against the device\n"
      "table's peak FLOP/s and bandwidth) plus a ring all-reduce model over the buckets.\n"
      "\n"
      "  --benchmark FILE       the benchmark.jsonl a trainer's --benchmark wrote\n"
      "  --system NAME          a device of the table (--systems lists them)\n"
      "  --gpus N               GPUs to project for (default: the spec's ranks)\n"
      "  --systems              print the device and interconnect tables\n"
      "\n"
      "exit status: 0 projected, 1 invalid spec or benchmark, 2 usage error\n" },
    { "export",
      "usage: trainc export CKPT --spec SPEC -o FILE.safetensors|FILE.pt [--format torch|safetensors]\n"
      "                     [--backend cpu|cuda] [--ema]\n"
      "       trainc export CKPT --spec SPEC --format onnx -o FILE.onnx [--backend cpu|cuda] [--ema]\n"
      "       trainc export CKPT --spec SPEC --format caffemodel -o FILE.caffemodel [--backend cpu|cuda] [--ema]\n"
      "\n"
      "Writes the weights and batch-norm statistics of checkpoint CKPT, written by a trainer\n"
      "of SPEC, as a safetensors file: a JSON header and the raw tensors, one per state_dict\n"
      "key, which safetensors.torch.load_file reads into a dict for load_state_dict (FILE.pt\n"
      "or .pth: the same tensors as torch.save writes them, for torch.load); or the inference\n"
      "graph with those weights as an ONNX model; or Caffe's weight file.\n"
      "\n"
      "  --spec SPEC            the spec whose trainer wrote CKPT (its hash must match)\n"
      "  -o FILE                the file to write (.safetensors, .pt/.pth, .onnx, .caffemodel)\n"
      "  --format torch         torchvision's state_dict keys and shapes (default): BN's\n"
      "                         running_mean, running_var and num_batches_tracked (int64),\n"
      "                         ConvNeXt's layers under torchvision's features.S.I.block.K\n"
      "  --format safetensors   the same tensors under trainc's layer names\n"
      "  --format onnx          the inference graph (opset 13): input [batch, C, H, W]\n"
      "                         normalized as the validation data, output logits\n"
      "  --format caffemodel    Caffe's NetParameter: each layer's blobs under its name (a\n"
      "                         bn as BatchNorm + Scale: caffe_scale, or NAME_scale)\n"
      "  --backend cpu|cuda     the trainer that wrote CKPT, when its size does not tell\n"
      "  --ema                  the EMA of the weights (solver.ema) instead of the model's\n"
      "\n"
      "exit status: 0 written, 1 invalid spec or checkpoint, 2 usage error\n" },
    { "pack",
      "usage: trainc pack SRC -o DST [--max-side N] [--quality Q] [--shard-records N] [--threads N]\n"
      "\n"
      "Packs an image folder (SRC/train/<class>/..., optionally SRC/val/<class>/... or a flat\n"
      "SRC/val/ with labels.txt) into checksummed record shards plus an index that the\n"
      "trainer reads like the folder. Converts what can be converted (PNG named .JPEG, CMYK,\n"
      "grayscale), names every file it skips with the reason, prints the counts, and resumes\n"
      "an interrupted pack into the same DST. SRC may instead hold IDX files (MNIST layout:\n"
      "train-images-idx3-ubyte[.gz] and its labels, t10k-* as val): each image becomes an RGB\n"
      "JPEG at --quality, its class named by its label.\n"
      "\n"
      "  -o DST                 the output folder\n"
      "  --max-side N           re-encode images whose longer side exceeds N (default: keep)\n"
      "  --quality Q            JPEG quality of re-encoded images (default 90)\n"
      "  --shard-records N      records per shard (default 1024)\n"
      "  --threads N            packing threads (default: every core)\n"
      "\n"
      "exit status: 0 packed, 1 unreadable input or output, 2 usage error\n" },
    { "import",
      "usage: trainc import caffe NET.prototxt [SOLVER.prototxt] -o SPEC [--approximate]\n"
      "\n"
      "Translates a Caffe net (and its solver) into a trainc spec: one layer a line, Caffe's\n"
      "layer names kept, fillers kept, BatchNorm + Scale as one bn, LMDB Data layers as the\n"
      "data block (shape and size read from the database; DummyData as synthetic data), the\n"
      "Input layer's batch as data.train.batch_per_rank, Caffe's SGD and Adam in its forms, and\n"
      "max_iter, test_interval, snapshot and the LR policy in iterations. What trainc cannot\n"
      "say is an error at its file:line with what to do instead. SPEC is written only when\n"
      "the whole import succeeds.\n"
      "\n"
      "  -o SPEC                the spec to write\n"
      "  --approximate          replace Caffe settings that only change how training starts\n"
      "                         or proceeds (Scale fillers and multipliers folded into bn,\n"
      "                         fillers trainc lacks) by trainc's behaviour, with a note\n"
      "                         for each at the top of SPEC\n"
      "\n"
      "exit status: 0 written, 1 the input cannot be imported or SPEC cannot be written,\n"
      "2 usage error\n" },
};

int cli_wants_help(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) return 1;
    return 0;
}

const char *cli_command_help(const char *command) {
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++)
        if (strcmp(helps[i].command, command) == 0) return helps[i].text;
    return NULL;
}
