/* Reads the state_dict in a torch.save file (.pth/.pt, PyTorch >= 1.6's format) into the same
 * table of named tensors as a safetensors file (rt_safetensors.h), so that the init block
 * reads both alike. The file is a zip of stored (uncompressed) records: PREFIX/data.pkl, a
 * pickle whose tensors name their storages by persistent id, and PREFIX/data/KEY, each
 * storage's raw little-endian bytes. The pickle is run by a small machine written from the
 * pickle protocol's specification (Lib/pickletools.py), with the opcodes of protocols 2-4
 * that torch's state_dict pickles use and the few callables they reduce: OrderedDict,
 * torch._utils._rebuild_tensor_v2 and _rebuild_parameter; anything else is refused with a
 * message naming the opcode or callable. Never arbitrary code: nothing is imported or called.
 *
 *   rt_safetensors st;
 *   if (rt_torch_pt_open(&st, "resnet18.pth", &err) != RT_OK) rt_die_err(&err);
 *   ... rt_safetensors_find / rt_safetensors_read_f32 / rt_safetensors_close as for safetensors
 *
 * The state_dict is the pickled dict of tensors, or the dict under "state_dict" or "model" of
 * a training checkpoint's dict (torchvision's reference scripts save {"model": ...}); its
 * tensors must be contiguous (state_dicts are). Every offset and size is checked against the
 * zip record it lies in and the file, so a damaged file is one message, never a crash. */
#ifndef RT_TORCH_PT_H
#define RT_TORCH_PT_H
#include "rt_safetensors.h"

/* 1 if the file starts as a zip (a torch.save file of PyTorch >= 1.6 does), 2 if as a torch.save
 * file of the older format (refused by rt_torch_pt_open, saying so), else 0. */
int rt_torch_pt_sniff(const char *path);
rt_status rt_torch_pt_open(rt_safetensors *s, const char *path, rt_err *err);

/* The pickle machine (torch_pickle.c), for the zip reader: the state_dict's tensors of the
 * data.pkl bytes, each naming its storage's record key and its element offset, dtype and
 * shape. On error, msg says what (the opcode or callable, the byte it is at). */
typedef struct {
    char *name;
    char dtype[8];         /* safetensors' names: F32, F16, BF16, F64, I64, ... */
    int elem_bytes;
    char *storage_key;     /* the record PREFIX/data/KEY */
    long long storage_numel, offset;   /* the storage's elements; the tensor's first */
    int ndim;
    long shape[RT_ST_MAX_DIMS];
} rt_pt_tensor;

typedef struct {
    rt_pt_tensor *t;
    int n;
} rt_pt_state_dict;

int rt_pt_unpickle(const unsigned char *data, size_t size, rt_pt_state_dict *sd, char *msg, size_t msg_cap);
void rt_pt_state_dict_free(rt_pt_state_dict *sd);

#endif
