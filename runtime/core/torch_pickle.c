/* The pickle machine of torch.save's data.pkl (rt_torch_pt.h): a stack, a memo and the
 * opcodes of protocols 2-4 that a state_dict's pickle uses, from the protocol's specification
 * (Lib/pickletools.py). Values are plain data (numbers, strings, tuples, lists, dicts) plus
 * the three things torch pickles make: a class reference (GLOBAL), a storage (the persistent
 * id ('storage', torch.FloatStorage, key, location, numel)) and a tensor (REDUCE of
 * _rebuild_tensor_v2 on (storage, offset, size, stride, requires_grad, hooks[, metadata])).
 * Every read is bounds-checked; every value is freed with the machine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_torch_pt.h"

typedef enum { PV_MARK, PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_TUPLE, PV_LIST, PV_DICT, PV_GLOBAL,
               PV_STORAGE, PV_TENSOR } pv_kind;

typedef struct pv pv;
struct pv {
    pv_kind kind;
    long long i;            /* INT, BOOL; STORAGE: its elements; TENSOR: its first element */
    double f;
    char *s;                /* STR; GLOBAL: "module.name"; STORAGE: its record key */
    pv **items;             /* TUPLE, LIST; DICT: key, value, key, value, ... */
    int n, cap;             /* TENSOR: n -1 if not contiguous */
    const char *dtype;      /* STORAGE */
    int elem_bytes;
    pv *storage;            /* TENSOR */
    int ndim;
    long shape[RT_ST_MAX_DIMS];
    pv *next;               /* every value, for freeing */
};

#define MAX_STACK (1 << 20)
#define MAX_MEMO (1 << 24)

typedef struct {
    const unsigned char *start, *p, *end;
    pv **stack;
    int sp, cap;
    pv **memo;
    long n_memo, memo_len;   /* slots allocated; entries stored (MEMOIZE's next index) */
    pv *all;
    char *msg;
    size_t msg_cap;
    int failed;
} machine;

static pv mark = { .kind = PV_MARK };

static int fail(machine *m, const char *fmt, const char *a, long b) {
    if (!m->failed) snprintf(m->msg, m->msg_cap, fmt, a, b);
    m->failed = 1;
    return 0;
}

static pv *new_value(machine *m, pv_kind kind) {
    pv *v = calloc(1, sizeof *v);
    if (!v) return fail(m, "%sout of memory at byte %ld", "", (long)(m->p - m->start)), NULL;
    v->kind = kind;
    v->next = m->all;
    m->all = v;
    return v;
}

static int add_item(machine *m, pv *to, pv *item) {
    if (to->n == to->cap) {
        int cap = to->cap ? 2 * to->cap : 8;
        pv **items = realloc(to->items, (size_t)cap * sizeof *items);
        if (!items) return fail(m, "%sout of memory at byte %ld", "", (long)(m->p - m->start));
        to->items = items, to->cap = cap;
    }
    to->items[to->n++] = item;
    return 1;
}

static int push(machine *m, pv *v) {
    if (!v) return 0;
    if (m->sp == m->cap) {
        if (m->cap >= MAX_STACK) return fail(m, "%sthe pickle's stack grows past %ld values", "", MAX_STACK);
        int cap = m->cap ? 2 * m->cap : 64;
        pv **s = realloc(m->stack, (size_t)cap * sizeof *s);
        if (!s) return fail(m, "%sout of memory at byte %ld", "", (long)(m->p - m->start));
        m->stack = s, m->cap = cap;
    }
    m->stack[m->sp++] = v;
    return 1;
}

static pv *pop(machine *m) {
    if (m->sp == 0 || m->stack[m->sp - 1] == &mark)
        return fail(m, "%sthe pickle pops an empty stack at byte %ld", "", (long)(m->p - m->start)), NULL;
    return m->stack[--m->sp];
}

static pv *top(machine *m) {
    if (m->sp == 0 || m->stack[m->sp - 1] == &mark)
        return fail(m, "%sthe pickle reads an empty stack at byte %ld", "", (long)(m->p - m->start)), NULL;
    return m->stack[m->sp - 1];
}

/* The index of the topmost MARK, or -1 (failed). */
static int last_mark(machine *m) {
    for (int k = m->sp - 1; k >= 0; k--)
        if (m->stack[k] == &mark) return k;
    return fail(m, "%sthe pickle closes a MARK it never opened at byte %ld", "", (long)(m->p - m->start)), -1;
}

static int take(machine *m, size_t n, const unsigned char **at) {
    if ((size_t)(m->end - m->p) < n) return fail(m, "%sthe pickle ends inside an opcode's argument (byte %ld)", "", (long)(m->p - m->start));
    *at = m->p;
    m->p += n;
    return 1;
}

static uint64_t le(const unsigned char *b, int n) {
    uint64_t v = 0;
    for (int k = n - 1; k >= 0; k--) v = v << 8 | b[k];
    return v;
}

static pv *string(machine *m, const unsigned char *b, size_t n, pv_kind kind) {
    pv *v = new_value(m, kind);
    if (!v) return NULL;
    v->s = malloc(n + 1);
    if (!v->s) return fail(m, "%sout of memory at byte %ld", "", (long)(m->p - m->start)), NULL;
    memcpy(v->s, b, n);
    v->s[n] = '\0';
    return v;
}

static pv *integer(machine *m, long long i) {
    pv *v = new_value(m, PV_INT);
    if (v) v->i = i;
    return v;
}

static int memo_put(machine *m, uint64_t idx) {
    pv *v = top(m);
    if (!v) return 0;
    if (idx >= MAX_MEMO) return fail(m, "%sa memo index past %ld", "", MAX_MEMO);
    if ((long)idx >= m->n_memo) {
        long n = m->n_memo ? m->n_memo : 256;
        while (n <= (long)idx) n *= 2;
        pv **memo = realloc(m->memo, (size_t)n * sizeof *memo);
        if (!memo) return fail(m, "%sout of memory at byte %ld", "", (long)(m->p - m->start));
        memset(memo + m->n_memo, 0, (size_t)(n - m->n_memo) * sizeof *memo);
        m->memo = memo, m->n_memo = n;
    }
    if (!m->memo[idx]) m->memo_len++;
    m->memo[idx] = v;
    return 1;
}

static int memo_get(machine *m, uint64_t idx) {
    if ((long long)idx >= m->n_memo || !m->memo[idx])
        return fail(m, "%sthe pickle reads memo entry %ld, which it never stored", "", (long)idx);
    return push(m, m->memo[idx]);
}

/* The values from the topmost MARK up, as a TUPLE or appended to a LIST below it. */
static pv *tuple_from_mark(machine *m) {
    int k = last_mark(m);
    if (k < 0) return NULL;
    pv *t = new_value(m, PV_TUPLE);
    if (!t) return NULL;
    for (int j = k + 1; j < m->sp; j++)
        if (!add_item(m, t, m->stack[j])) return NULL;
    m->sp = k;
    return t;
}

static pv *tuple_of(machine *m, int n) {
    if (m->sp < n) return fail(m, "%sa TUPLE%ld with too few values on the stack", "", n), NULL;
    pv *t = new_value(m, PV_TUPLE);
    if (!t) return NULL;
    for (int j = m->sp - n; j < m->sp; j++) {
        if (m->stack[j] == &mark) return fail(m, "%sa TUPLE%ld over a MARK", "", n), NULL;
        if (!add_item(m, t, m->stack[j])) return NULL;
    }
    m->sp -= n;
    return t;
}

static int set_items(machine *m, int from) {   /* key, value pairs from stack[from] into the dict below */
    if ((m->sp - from) % 2) return fail(m, "%san odd number of values for SETITEMS at byte %ld", "", (long)(m->p - m->start));
    if (from < 1 || m->stack[from - 1]->kind != PV_DICT)
        return fail(m, "%sSETITEM(S) on something that is not a dict at byte %ld", "", (long)(m->p - m->start));
    pv *d = m->stack[from - 1];
    for (int j = from; j < m->sp; j++)
        if (!add_item(m, d, m->stack[j])) return 0;
    m->sp = from;
    return 1;
}

static int append_items(machine *m, int from) {
    if (from < 1 || m->stack[from - 1]->kind != PV_LIST)
        return fail(m, "%sAPPEND(S) on something that is not a list at byte %ld", "", (long)(m->p - m->start));
    pv *l = m->stack[from - 1];
    for (int j = from; j < m->sp; j++)
        if (!add_item(m, l, m->stack[j])) return 0;
    m->sp = from;
    return 1;
}

static const struct { const char *cls, *dtype; int bytes; } storages[] = {
    { "torch.FloatStorage", "F32", 4 }, { "torch.DoubleStorage", "F64", 8 }, { "torch.HalfStorage", "F16", 2 },
    { "torch.BFloat16Storage", "BF16", 2 }, { "torch.LongStorage", "I64", 8 }, { "torch.IntStorage", "I32", 4 },
    { "torch.ShortStorage", "I16", 2 }, { "torch.CharStorage", "I8", 1 }, { "torch.ByteStorage", "U8", 1 },
    { "torch.BoolStorage", "BOOL", 1 },
};

/* BINPERSID: ('storage', torch.XStorage, key, location, numel) -> a STORAGE. */
static pv *persistent(machine *m, pv *pid) {
    if (pid->kind != PV_TUPLE || pid->n != 5 || pid->items[0]->kind != PV_STR || strcmp(pid->items[0]->s, "storage") ||
        pid->items[1]->kind != PV_GLOBAL || pid->items[2]->kind != PV_STR || pid->items[4]->kind != PV_INT ||
        pid->items[4]->i < 0)
        return fail(m, "%sa persistent id at byte %ld that is not torch's ('storage', type, key, location, numel)", "",
                    (long)(m->p - m->start)), NULL;
    for (size_t k = 0; k < sizeof storages / sizeof storages[0]; k++)
        if (!strcmp(pid->items[1]->s, storages[k].cls)) {
            pv *s = new_value(m, PV_STORAGE);
            if (!s) return NULL;
            s->dtype = storages[k].dtype, s->elem_bytes = storages[k].bytes;
            s->s = pid->items[2]->s, s->i = pid->items[4]->i;
            return s;
        }
    return fail(m, "a storage of type %s (at byte %ld), which is not one of torch's numeric storages", pid->items[1]->s,
                (long)(m->p - m->start)), NULL;
}

static int int_tuple(const pv *t, long *out, int *n) {
    if (t->kind != PV_TUPLE || t->n > RT_ST_MAX_DIMS) return 0;
    for (int k = 0; k < t->n; k++) {
        if (t->items[k]->kind != PV_INT || t->items[k]->i < 0) return 0;
        out[k] = (long)t->items[k]->i;
    }
    *n = t->n;
    return 1;
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]). */
static pv *rebuild_tensor(machine *m, pv *args) {
    long stride[RT_ST_MAX_DIMS];
    int nd = 0, ns = 0;
    pv *t = new_value(m, PV_TENSOR);
    if (!t) return NULL;
    if ((args->n != 6 && args->n != 7) || args->items[0]->kind != PV_STORAGE || args->items[1]->kind != PV_INT ||
        args->items[1]->i < 0 || !int_tuple(args->items[2], t->shape, &nd) || !int_tuple(args->items[3], stride, &ns) ||
        nd != ns)
        return fail(m, "%s_rebuild_tensor_v2 with arguments other than torch's (storage, offset, size, stride, ...) "
                       "at byte %ld", "", (long)(m->p - m->start)), NULL;
    /* contiguous: each stride the product of the sizes after it (a size-1 dim's stride is
     * free); refused once the tensor's key is known */
    long want = 1;
    for (int k = nd - 1; k >= 0; k--) {
        if (t->shape[k] != 1 && stride[k] != want) t->n = -1;
        want = t->shape[k] && want > (1L << 50) / t->shape[k] ? (1L << 50) : want * t->shape[k];
    }
    t->storage = args->items[0], t->i = args->items[1]->i, t->ndim = nd;
    return t;
}

/* REDUCE: the callables a state_dict's pickle uses, nothing else. */
static pv *call(machine *m, pv *fn, pv *args) {
    if (fn->kind != PV_GLOBAL || args->kind != PV_TUPLE)
        return fail(m, "%sREDUCE of something that is not a class or function at byte %ld", "", (long)(m->p - m->start)), NULL;
    if (!strcmp(fn->s, "collections.OrderedDict") && args->n == 0) return new_value(m, PV_DICT);
    if (!strcmp(fn->s, "torch._utils._rebuild_tensor_v2")) return rebuild_tensor(m, args);
    if ((!strcmp(fn->s, "torch._utils._rebuild_parameter") || !strcmp(fn->s, "torch._utils._rebuild_parameter_with_state")) &&
        args->n >= 1 && args->items[0]->kind == PV_TENSOR)
        return args->items[0];
    return fail(m, "the pickle calls %s (at byte %ld), which a state_dict of tensors does not", fn->s,
                (long)(m->p - m->start)), NULL;
}

static const char *opcode_name(int op) {
    static const struct { unsigned char op; const char *name; } names[] = {
        { '(', "MARK" }, { '.', "STOP" }, { '0', "POP" }, { '1', "POP_MARK" }, { '2', "DUP" }, { 'F', "FLOAT" },
        { 'I', "INT" }, { 'J', "BININT" }, { 'K', "BININT1" }, { 'L', "LONG" }, { 'M', "BININT2" }, { 'N', "NONE" },
        { 'P', "PERSID" }, { 'Q', "BINPERSID" }, { 'R', "REDUCE" }, { 'S', "STRING" }, { 'T', "BINSTRING" },
        { 'U', "SHORT_BINSTRING" }, { 'V', "UNICODE" }, { 'X', "BINUNICODE" }, { 'a', "APPEND" }, { 'b', "BUILD" },
        { 'c', "GLOBAL" }, { 'd', "DICT" }, { '}', "EMPTY_DICT" }, { 'e', "APPENDS" }, { 'g', "GET" },
        { 'h', "BINGET" }, { 'i', "INST" }, { 'j', "LONG_BINGET" }, { 'l', "LIST" }, { ']', "EMPTY_LIST" },
        { 'o', "OBJ" }, { 'p', "PUT" }, { 'q', "BINPUT" }, { 'r', "LONG_BINPUT" }, { 's', "SETITEM" }, { 't', "TUPLE" },
        { ')', "EMPTY_TUPLE" }, { 'u', "SETITEMS" }, { 'G', "BINFLOAT" }, { 0x80, "PROTO" }, { 0x81, "NEWOBJ" },
        { 0x82, "EXT1" }, { 0x83, "EXT2" }, { 0x84, "EXT4" }, { 0x85, "TUPLE1" }, { 0x86, "TUPLE2" },
        { 0x87, "TUPLE3" }, { 0x88, "NEWTRUE" }, { 0x89, "NEWFALSE" }, { 0x8a, "LONG1" }, { 0x8b, "LONG4" },
        { 'B', "BINBYTES" }, { 'C', "SHORT_BINBYTES" }, { 0x8c, "SHORT_BINUNICODE" }, { 0x8d, "BINUNICODE8" },
        { 0x8e, "BINBYTES8" }, { 0x8f, "EMPTY_SET" }, { 0x90, "ADDITEMS" }, { 0x91, "FROZENSET" },
        { 0x92, "NEWOBJ_EX" }, { 0x93, "STACK_GLOBAL" }, { 0x94, "MEMOIZE" }, { 0x95, "FRAME" },
        { 0x96, "BYTEARRAY8" }, { 0x97, "NEXT_BUFFER" }, { 0x98, "READONLY_BUFFER" },
    };
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (names[k].op == op) return names[k].name;
    return "not a pickle opcode";
}

/* One opcode; 0 on error or STOP (m->failed tells which). */
static int step(machine *m, int *stopped) {
    const unsigned char *b;
    long at = (long)(m->p - m->start);
    if (!take(m, 1, &b)) return 0;
    int op = b[0];
    switch (op) {
    case 0x80: return take(m, 1, &b) && (b[0] >= 2 && b[0] <= 4 ? 1 : fail(m, "%spickle protocol %ld (torch.save writes 2; 2-4 are read)", "", b[0]));
    case 0x95: return take(m, 8, &b);   /* FRAME: a length hint */
    case '.': *stopped = 1; return 1;
    case '(': return push(m, &mark);
    case ')': return push(m, new_value(m, PV_TUPLE));
    case ']': return push(m, new_value(m, PV_LIST));
    case '}': return push(m, new_value(m, PV_DICT));
    case 'N': return push(m, new_value(m, PV_NONE));
    case 0x88: case 0x89: {
        pv *v = new_value(m, PV_BOOL);
        if (v) v->i = op == 0x88;
        return push(m, v);
    }
    case 'J': return take(m, 4, &b) && push(m, integer(m, (int32_t)(uint32_t)le(b, 4)));
    case 'K': return take(m, 1, &b) && push(m, integer(m, b[0]));
    case 'M': return take(m, 2, &b) && push(m, integer(m, (long long)le(b, 2)));
    case 0x8a: {   /* LONG1: n bytes of two's complement, little-endian */
        if (!take(m, 1, &b)) return 0;
        int n = b[0];
        if (n > 8) return fail(m, "%san integer of %ld bytes (more than 8)", "", n);
        if (!take(m, (size_t)n, &b)) return 0;
        uint64_t v = le(b, n);
        if (n > 0 && n < 8 && (b[n - 1] & 0x80)) v |= ~(uint64_t)0 << (8 * n);
        return push(m, integer(m, (long long)v));
    }
    case 'G': {
        if (!take(m, 8, &b)) return 0;
        uint64_t bits = 0;
        for (int k = 0; k < 8; k++) bits = bits << 8 | b[k];   /* big-endian */
        pv *v = new_value(m, PV_FLOAT);
        if (v) memcpy(&v->f, &bits, 8);
        return push(m, v);
    }
    case 'X': case 0x8c: case 0x8d: {
        int w = op == 'X' ? 4 : op == 0x8c ? 1 : 8;
        if (!take(m, (size_t)w, &b)) return 0;
        uint64_t n = le(b, w);
        if (n > (uint64_t)(m->end - m->p)) return fail(m, "%sa string longer than the pickle at byte %ld", "", at);
        take(m, (size_t)n, &b);
        return push(m, string(m, b, (size_t)n, PV_STR));
    }
    case 'c': {   /* GLOBAL: module\nname\n */
        const unsigned char *nl1 = memchr(m->p, '\n', (size_t)(m->end - m->p));
        const unsigned char *nl2 = nl1 ? memchr(nl1 + 1, '\n', (size_t)(m->end - nl1 - 1)) : NULL;
        if (!nl2) return fail(m, "%sa GLOBAL without its two lines at byte %ld", "", at);
        pv *g = string(m, m->p, (size_t)(nl2 - m->p), PV_GLOBAL);
        if (g) g->s[nl1 - m->p] = '.';
        m->p = nl2 + 1;
        return push(m, g);
    }
    case 0x93: {   /* STACK_GLOBAL: module, name */
        pv *name = pop(m), *mod = name ? pop(m) : NULL;
        if (!mod) return 0;
        if (mod->kind != PV_STR || name->kind != PV_STR) return fail(m, "%sSTACK_GLOBAL of non-strings at byte %ld", "", at);
        size_t a = strlen(mod->s), c = strlen(name->s);
        char *s = malloc(a + c + 2);
        if (!s) return fail(m, "%sout of memory at byte %ld", "", at);
        snprintf(s, a + c + 2, "%s.%s", mod->s, name->s);
        pv *g = string(m, (const unsigned char *)s, a + c + 1, PV_GLOBAL);
        free(s);
        return push(m, g);
    }
    case 'q': return take(m, 1, &b) && memo_put(m, b[0]);
    case 'r': return take(m, 4, &b) && memo_put(m, le(b, 4));
    case 0x94: return memo_put(m, (uint64_t)m->memo_len);
    case 'h': return take(m, 1, &b) && memo_get(m, b[0]);
    case 'j': return take(m, 4, &b) && memo_get(m, le(b, 4));
    case 't': return push(m, tuple_from_mark(m));
    case 0x85: case 0x86: case 0x87: return push(m, tuple_of(m, op - 0x84));
    case 'a': { int k = m->sp - 1; return k >= 1 && m->stack[k] != &mark ? append_items(m, k) : fail(m, "%sAPPEND without a value at byte %ld", "", at); }
    case 'e': { int k = last_mark(m); if (k < 0) return 0; memmove(m->stack + k, m->stack + k + 1, (size_t)(m->sp - k - 1) * sizeof *m->stack); m->sp--; return append_items(m, k); }
    case 's': return m->sp >= 3 ? set_items(m, m->sp - 2) : fail(m, "%sSETITEM without a key and value at byte %ld", "", at);
    case 'u': { int k = last_mark(m); if (k < 0) return 0; memmove(m->stack + k, m->stack + k + 1, (size_t)(m->sp - k - 1) * sizeof *m->stack); m->sp--; return set_items(m, k); }
    case 'Q': { pv *pid = pop(m); return pid && push(m, persistent(m, pid)); }
    case 'R': {
        pv *args = pop(m), *fn = args ? pop(m) : NULL;
        return fn && push(m, call(m, fn, args));
    }
    case 'b': return pop(m) && top(m);   /* BUILD: an OrderedDict's _metadata, not needed */
    default: {
        char what[64];
        snprintf(what, sizeof what, "0x%02x %s", op, opcode_name(op));
        return fail(m, "opcode %s at byte %ld of the pickle, which torch's state_dict pickles do not use", what, at);
    }
    }
}

/* The dict of tensors: the pickled dict itself, or its "state_dict" or "model" entry. */
static const pv *state_dict_of(const pv *root) {
    if (!root || root->kind != PV_DICT) return NULL;
    for (int k = 0; k + 1 < root->n; k += 2)
        if (root->items[k + 1]->kind == PV_TENSOR) return root;
    for (int k = 0; k + 1 < root->n; k += 2) {
        const pv *key = root->items[k], *v = root->items[k + 1];
        if (key->kind == PV_STR && (!strcmp(key->s, "state_dict") || !strcmp(key->s, "model")) && v->kind == PV_DICT)
            return v;
    }
    return NULL;
}

static void free_machine(machine *m) {
    for (pv *v = m->all, *next; v; v = next) {
        next = v->next;
        if (v->kind != PV_STORAGE) free(v->s);   /* a storage borrows its key's string */
        free(v->items);
        free(v);
    }
    free(m->stack);
    free(m->memo);
}

int rt_pt_unpickle(const unsigned char *data, size_t size, rt_pt_state_dict *sd, char *msg, size_t msg_cap) {
    machine m = { .start = data, .p = data, .end = data + size, .msg = msg, .msg_cap = msg_cap };
    memset(sd, 0, sizeof *sd);
    int stopped = 0;
    while (!stopped && step(&m, &stopped)) {}
    if (!m.failed && !stopped) fail(&m, "%sthe pickle ends without STOP (byte %ld)", "", (long)size);
    const pv *root = m.failed ? NULL : pop(&m), *d = root ? state_dict_of(root) : NULL;
    if (!m.failed && !d)
        fail(&m, "the pickle holds no dict of tensors%s%.0ld", " (save model.state_dict(); a checkpoint's dict may "
             "hold it under \"state_dict\" or \"model\")", 0);
    if (!m.failed) {
        sd->t = calloc((size_t)(d->n / 2 + 1), sizeof *sd->t);
        for (int k = 0; sd->t && k + 1 < d->n; k += 2) {
            const pv *key = d->items[k], *v = d->items[k + 1];
            if (key->kind != PV_STR || v->kind != PV_TENSOR) continue;   /* an epoch count, say */
            if (v->n < 0) {
                fail(&m, "tensor '%s' is not contiguous%.0ld (save {k: v.contiguous() for k, v in sd.items()})", key->s, 0);
                break;
            }
            rt_pt_tensor *t = &sd->t[sd->n++];
            t->name = strdup(key->s);
            snprintf(t->dtype, sizeof t->dtype, "%s", v->storage->dtype);
            t->elem_bytes = v->storage->elem_bytes;
            t->storage_key = strdup(v->storage->s);
            t->storage_numel = v->storage->i, t->offset = v->i, t->ndim = v->ndim;
            memcpy(t->shape, v->shape, sizeof t->shape);
        }
        if (!sd->t) fail(&m, "%sout of memory for %ld tensors", "", d->n / 2);
    }
    free_machine(&m);
    if (m.failed) rt_pt_state_dict_free(sd);
    return m.failed ? -1 : 0;
}

void rt_pt_state_dict_free(rt_pt_state_dict *sd) {
    for (int k = 0; k < sd->n; k++) free(sd->t[k].name), free(sd->t[k].storage_key);
    free(sd->t);
    memset(sd, 0, sizeof *sd);
}
