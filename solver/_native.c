/* solver._native: the partial solver's innermost loop for acyclic games, in C.
 *
 * One call runs one null-window test of the root the way solver.negamax's
 * _Solver._search_acyclic_py runs it (the same expansions in the same order, the same
 * bounds), then restores the bounds fixpoint from the nodes that changed and propagates
 * finality flags from everything that moved (_settle_search). The game's rules are still
 * Python: children(), canonical() and terminal_value() are called back.
 *
 * The graph's columns are the Python arrays of solver.graph.Graph. While a call runs, the
 * nodes and edges it finds already there are read and written in place through the
 * buffer protocol; the nodes and edges it adds go to growable C buffers (ids past the
 * existing ones), which are appended to the Python columns in one copy each at the end.
 * Nothing else changes a column while a call holds its buffer: the game's callbacks
 * never see the graph, and the hooks of a mapped graph (solver/partial/cache.py), which add
 * stored nodes and edges to it, are called with everything appended and every buffer
 * released, then the columns are taken again (call_hook).
 *
 * The end of a call always leaves the graph consistent (every column as long as it
 * should be, the key index matching): when a callback raises, the expansion it was part
 * of is not applied, what came before it is appended, and the exception propagates.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define UNEXPANDED 0
#define EXPANDED 1
#define TERMINAL 2
#define NEG_INF (-((int64_t)1 << 60))
#define POS_INF ((int64_t)1 << 60)
#define DEPTH_INF 2147483647

#define ST_OK 0
#define ST_NO_MOVES 1
#define ST_REPEATS 2
#define ST_WIDE_KEY 3
#define ST_ERROR (-1)

/* -- growable buffers ------------------------------------------------------------- */

typedef struct {
    char *data;
    Py_ssize_t len; /* items */
    Py_ssize_t cap; /* items */
    Py_ssize_t item;
} Buf;

static int
buf_reserve(Buf *b, Py_ssize_t extra)
{
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra)
        cap *= 2;
    char *data = PyMem_Realloc(b->data, (size_t)(cap * b->item));
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

/* -- columns: an existing part (a buffer of the Python array) and a new part ----------- */

typedef struct {
    PyObject *obj; /* the Python column (strong reference) */
    Py_buffer view;
    int held;
    Py_ssize_t n_old; /* items in the existing part */
    Buf add;          /* items appended during this call */
} Col;

static int
col_open(Col *c, PyObject *owner, const char *name, Py_ssize_t item)
{
    c->obj = PyObject_GetAttrString(owner, name);
    if (c->obj == NULL)
        return -1;
    if (PyObject_GetBuffer(c->obj, &c->view, PyBUF_WRITABLE | PyBUF_FORMAT) < 0)
        return -1;
    c->held = 1;
    if (c->view.itemsize != item) {
        PyErr_Format(PyExc_TypeError, "graph column %s has items of %zd bytes, not %zd",
                     name, c->view.itemsize, item);
        return -1;
    }
    c->n_old = c->view.len / item;
    c->add.item = item;
    return 0;
}

static void
col_release(Col *c)
{
    if (c->held) {
        PyBuffer_Release(&c->view);
        c->held = 0;
    }
}

static void
col_free(Col *c)
{
    col_release(c);
    PyMem_Free(c->add.data);
    c->add.data = NULL;
    Py_CLEAR(c->obj);
}

/* Append the new part to the Python column (its buffer released first). */
static int
col_flush(Col *c)
{
    col_release(c);
    if (c->obj == NULL || c->add.len == 0)
        return 0;
    Py_ssize_t nbytes = c->add.len * c->add.item;
    if (PyByteArray_Check(c->obj)) {
        Py_ssize_t old = PyByteArray_GET_SIZE(c->obj);
        if (PyByteArray_Resize(c->obj, old + nbytes) < 0)
            return -1;
        memcpy(PyByteArray_AS_STRING(c->obj) + old, c->add.data, (size_t)nbytes);
    }
    else {
        PyObject *mv = PyMemoryView_FromMemory(c->add.data, nbytes, PyBUF_READ);
        if (mv == NULL)
            return -1;
        PyObject *r = PyObject_CallMethod(c->obj, "frombytes", "O", mv);
        Py_DECREF(mv);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    c->add.len = 0;
    return 0;
}

#define COL_PTR(c, T, i) \
    ((i) < (c)->n_old ? &((T *)(c)->view.buf)[i] : &((T *)(c)->add.data)[(i) - (c)->n_old])
#define GET(c, T, i) (*COL_PTR(c, T, i))
#define SET(c, T, i, v) (*COL_PTR(c, T, i) = (v))

static inline int
col_push(Col *c, const void *v)
{
    if (buf_reserve(&c->add, 1) < 0)
        return -1;
    memcpy(c->add.data + c->add.len * c->add.item, v, (size_t)c->add.item);
    c->add.len++;
    return 0;
}

/* -- KeyTable: position key -> node id, for 64-bit keys ------------------------------
 *
 * The partial solver's key index. A dict of Python ints costs about 100 bytes a node (the
 * entry, the key object, the id object); this open-addressing table of int64 keys and
 * int32 ids costs 12 bytes a slot at a load of at most 3/4 (16-32 bytes a node). Linear
 * probing from a mixed hash (splitmix64's finaliser); an empty slot has id -1; deletion
 * shifts the following run back (no tombstones). Python sees a mutable mapping of ints;
 * the C loop below calls kt_get / kt_set / kt_del directly. */

typedef struct {
    PyObject_HEAD
    int64_t *keys;
    int32_t *ids; /* -1: empty */
    Py_ssize_t cap; /* a power of two, or 0 */
    Py_ssize_t len;
} KeyTable;

static PyTypeObject KeyTableType;

#define KT_MIN_CAP 64

static inline uint64_t
kt_hash(int64_t k)
{
    uint64_t z = (uint64_t)k + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The slot of k, or of the empty slot where it would go. */
static inline Py_ssize_t
kt_slot(const KeyTable *t, int64_t k)
{
    Py_ssize_t mask = t->cap - 1, i = (Py_ssize_t)(kt_hash(k) & (uint64_t)mask);
    while (t->ids[i] >= 0 && t->keys[i] != k)
        i = (i + 1) & mask;
    return i;
}

static Py_ssize_t
kt_get(const KeyTable *t, int64_t k)
{
    if (t->cap == 0)
        return -1;
    Py_ssize_t i = kt_slot(t, k);
    return t->ids[i];
}

static int
kt_resize(KeyTable *t, Py_ssize_t cap)
{
    int64_t *keys = PyMem_Malloc((size_t)cap * sizeof(int64_t));
    int32_t *ids = PyMem_Malloc((size_t)cap * sizeof(int32_t));
    if (keys == NULL || ids == NULL) {
        PyMem_Free(keys);
        PyMem_Free(ids);
        PyErr_NoMemory();
        return -1;
    }
    memset(ids, 0xff, (size_t)cap * sizeof(int32_t));
    KeyTable n = {.keys = keys, .ids = ids, .cap = cap, .len = 0};
    for (Py_ssize_t i = 0; i < t->cap; i++) {
        if (t->ids[i] >= 0) {
            Py_ssize_t j = kt_slot(&n, t->keys[i]);
            keys[j] = t->keys[i];
            ids[j] = t->ids[i];
        }
    }
    PyMem_Free(t->keys);
    PyMem_Free(t->ids);
    t->keys = keys;
    t->ids = ids;
    t->cap = cap;
    return 0;
}

/* Room for *extra* more keys at a load of at most 3/4. */
static int
kt_reserve(KeyTable *t, Py_ssize_t extra)
{
    Py_ssize_t need = t->len + extra, cap = t->cap ? t->cap : KT_MIN_CAP;
    while (need > cap / 4 * 3)
        cap *= 2;
    return cap == t->cap ? 0 : kt_resize(t, cap);
}

/* Map k to id (0 <= id < 2**31); fails only for memory. */
static int
kt_set(KeyTable *t, int64_t k, int32_t id)
{
    if (kt_reserve(t, 1) < 0)
        return -1;
    Py_ssize_t i = kt_slot(t, k);
    if (t->ids[i] < 0) {
        t->keys[i] = k;
        t->len++;
    }
    t->ids[i] = id;
    return 0;
}

/* Remove k if present; returns whether it was. */
static int
kt_del(KeyTable *t, int64_t k)
{
    if (t->cap == 0)
        return 0;
    Py_ssize_t mask = t->cap - 1, i = kt_slot(t, k);
    if (t->ids[i] < 0)
        return 0;
    /* shift back the entries of the run after i that may move to i */
    Py_ssize_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (t->ids[j] < 0)
            break;
        Py_ssize_t home = (Py_ssize_t)(kt_hash(t->keys[j]) & (uint64_t)mask);
        /* move j to i unless its home lies cyclically in (i, j] */
        if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
            continue;
        t->keys[i] = t->keys[j];
        t->ids[i] = t->ids[j];
        i = j;
    }
    t->ids[i] = -1;
    t->len--;
    return 1;
}

/* A Python key as int64: 1, or 0 when it is not an int or does not fit (no error set),
 * -1 on error. */
static int
kt_key(PyObject *key, int64_t *k)
{
    if (!PyLong_Check(key))
        return 0;
    int overflow = 0;
    *k = PyLong_AsLongLongAndOverflow(key, &overflow);
    if (*k == -1 && PyErr_Occurred())
        return -1;
    return overflow ? 0 : 1;
}

/* tp_new of the types here, which take no arguments (zeroed: empty). */
static PyObject *
new_empty(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds && PyDict_GET_SIZE(kwds))) {
        const char *dot = strrchr(type->tp_name, '.');
        PyErr_Format(PyExc_TypeError, "%s() takes no arguments", dot ? dot + 1 : type->tp_name);
        return NULL;
    }
    return type->tp_alloc(type, 0);
}

static void
kt_dealloc(KeyTable *t)
{
    PyMem_Free(t->keys);
    PyMem_Free(t->ids);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static Py_ssize_t
kt_length(KeyTable *t)
{
    return t->len;
}

static PyObject *
kt_subscript(KeyTable *t, PyObject *key)
{
    int64_t k;
    int r = kt_key(key, &k);
    if (r < 0)
        return NULL;
    Py_ssize_t id = r ? kt_get(t, k) : -1;
    if (id < 0) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    return PyLong_FromSsize_t(id);
}

static int
kt_ass_subscript(KeyTable *t, PyObject *key, PyObject *value)
{
    int64_t k;
    int r = kt_key(key, &k);
    if (r < 0)
        return -1;
    if (value == NULL) {
        if (r == 0 || !kt_del(t, k)) {
            PyErr_SetObject(PyExc_KeyError, key);
            return -1;
        }
        return 0;
    }
    if (r == 0) {
        PyErr_SetString(PyLong_Check(key) ? PyExc_OverflowError : PyExc_TypeError,
                        "KeyTable keys are 64-bit integers");
        return -1;
    }
    Py_ssize_t id = PyLong_AsSsize_t(value);
    if (id == -1 && PyErr_Occurred())
        return -1;
    if (id < 0 || id > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "KeyTable ids are 0 .. 2**31 - 1");
        return -1;
    }
    return kt_set(t, k, (int32_t)id);
}

static int
kt_contains(KeyTable *t, PyObject *key)
{
    int64_t k;
    int r = kt_key(key, &k);
    if (r <= 0)
        return r;
    return kt_get(t, k) >= 0;
}

static PyObject *
kt_get_method(KeyTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get() takes 1 or 2 arguments");
        return NULL;
    }
    int64_t k;
    int r = kt_key(args[0], &k);
    if (r < 0)
        return NULL;
    Py_ssize_t id = r ? kt_get(t, k) : -1;
    if (id >= 0)
        return PyLong_FromSsize_t(id);
    PyObject *d = nargs == 2 ? args[1] : Py_None;
    Py_INCREF(d);
    return d;
}

/* A list of (key, id) pairs, keys or ids, in slot order. */
static PyObject *
kt_list(KeyTable *t, int what)
{
    PyObject *out = PyList_New(t->len);
    if (out == NULL)
        return NULL;
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < t->cap; i++) {
        if (t->ids[i] < 0)
            continue;
        PyObject *item;
        if (what == 0)
            item = Py_BuildValue("(Li)", (long long)t->keys[i], (int)t->ids[i]);
        else if (what == 1)
            item = PyLong_FromLongLong(t->keys[i]);
        else
            item = PyLong_FromLong(t->ids[i]);
        if (item == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, n++, item);
    }
    return out;
}

static PyObject *
kt_items(KeyTable *t, PyObject *Py_UNUSED(ignored))
{
    return kt_list(t, 0);
}

static PyObject *
kt_keys(KeyTable *t, PyObject *Py_UNUSED(ignored))
{
    return kt_list(t, 1);
}

static PyObject *
kt_values(KeyTable *t, PyObject *Py_UNUSED(ignored))
{
    return kt_list(t, 2);
}

static PyObject *
kt_iter(KeyTable *t)
{
    PyObject *keys = kt_list(t, 1);
    if (keys == NULL)
        return NULL;
    PyObject *it = PyObject_GetIter(keys);
    Py_DECREF(keys);
    return it;
}

static PyObject *
kt_update(KeyTable *t, PyObject *other)
{
    PyObject *items = PyMapping_Items(other);
    if (items == NULL)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(items);
    if (kt_reserve(t, n) < 0) {
        Py_DECREF(items);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(items, i);
        if (kt_ass_subscript(t, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1)) < 0) {
            Py_DECREF(items);
            return NULL;
        }
    }
    Py_DECREF(items);
    Py_RETURN_NONE;
}

/* KeyTable.from_keys(keys): key i -> i, for a buffer of int64 keys (an array("q")). */
static PyObject *
kt_from_keys(PyTypeObject *type, PyObject *keys)
{
    Py_buffer view;
    if (PyObject_GetBuffer(keys, &view, PyBUF_FORMAT) < 0)
        return NULL;
    if (view.itemsize != 8 || view.format == NULL || strchr("qlL", view.format[0]) == NULL) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "from_keys() takes a buffer of 64-bit integers");
        return NULL;
    }
    Py_ssize_t n = view.len / 8;
    if (n > INT32_MAX) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_OverflowError, "more than 2**31 - 1 keys");
        return NULL;
    }
    KeyTable *t = (KeyTable *)type->tp_alloc(type, 0);
    if (t == NULL || kt_reserve(t, n) < 0) {
        Py_XDECREF(t);
        PyBuffer_Release(&view);
        return NULL;
    }
    const int64_t *k = view.buf;
    for (Py_ssize_t i = 0; i < n; i++)
        kt_set(t, k[i], (int32_t)i); /* reserved: cannot fail */
    PyBuffer_Release(&view);
    return (PyObject *)t;
}

/* A buffer of 64-bit integers: read-only (*writable* 0) or writable (1). */
static int
kt_int64_buffer(PyObject *o, Py_buffer *view, int writable, const char *what)
{
    int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, view, flags) < 0)
        return -1;
    if (view->itemsize != 8 || view->format == NULL || strchr("qlL", view->format[0]) == NULL) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "resolve(): %s must be a buffer of 64-bit integers", what);
        return -1;
    }
    return 0;
}

/* resolve(wanted, next_id, ids, first): the id of every key of *wanted* into *ids*,
 * giving the keys not in the table the ids next_id, next_id + 1, ... in order of first
 * occurrence (and adding them); the place in *wanted* of each new key's first
 * occurrence into *first*, in id order. Returns the number of new keys. What a tier's
 * discovery and a full solve's expansion ask of their key index, one pass and a hash
 * probe a key (solver.expand.KeyIndex). The table first makes room for every key of
 * *wanted* (a batch's children, most of them repeats), so that the loop never grows it:
 * a fixed probe a key, for a table at most a batch larger than its keys need. */
static PyObject *
kt_resolve(KeyTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "resolve() takes 4 arguments");
        return NULL;
    }
    Py_ssize_t next_id = PyLong_AsSsize_t(args[1]);
    if (next_id == -1 && PyErr_Occurred())
        return NULL;
    Py_buffer wanted, ids, first;
    if (kt_int64_buffer(args[0], &wanted, 0, "wanted") < 0)
        return NULL;
    if (kt_int64_buffer(args[2], &ids, 1, "ids") < 0) {
        PyBuffer_Release(&wanted);
        return NULL;
    }
    if (kt_int64_buffer(args[3], &first, 1, "first") < 0) {
        PyBuffer_Release(&wanted);
        PyBuffer_Release(&ids);
        return NULL;
    }
    Py_ssize_t n = wanted.len / 8, added = 0;
    PyObject *result = NULL;
    if (ids.len < wanted.len || first.len < wanted.len) {
        PyErr_SetString(PyExc_ValueError, "resolve(): ids and first must hold a value a key");
        goto done;
    }
    if (next_id < 0 || next_id > (Py_ssize_t)INT32_MAX - n) {
        PyErr_SetString(PyExc_OverflowError, "resolve(): ids past 2**31 - 1");
        goto done;
    }
    if (kt_reserve(t, n) < 0)
        goto done;
    const int64_t *w = wanted.buf;
    int64_t *out = ids.buf, *at = first.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t s = kt_slot(t, w[i]);
        if (t->ids[s] < 0) { /* reserved: no resize */
            t->keys[s] = w[i];
            t->ids[s] = (int32_t)(next_id + added);
            t->len++;
            at[added++] = i;
        }
        out[i] = t->ids[s];
    }
    result = PyLong_FromSsize_t(added);
done:
    PyBuffer_Release(&wanted);
    PyBuffer_Release(&ids);
    PyBuffer_Release(&first);
    return result;
}

/* The table as a dict (for comparisons). */
static PyObject *
kt_to_dict(KeyTable *t)
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < t->cap; i++) {
        if (t->ids[i] < 0)
            continue;
        PyObject *k = PyLong_FromLongLong(t->keys[i]);
        PyObject *v = PyLong_FromLong(t->ids[i]);
        int r = (k == NULL || v == NULL) ? -1 : PyDict_SetItem(d, k, v);
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (r < 0) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

/* Equal to any mapping with the same pairs (a dict, another KeyTable). */
static PyObject *
kt_richcompare(PyObject *self, PyObject *other, int op)
{
    if (op != Py_EQ && op != Py_NE)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *mine = kt_to_dict((KeyTable *)self);
    if (mine == NULL)
        return NULL;
    PyObject *theirs;
    if (PyObject_TypeCheck(other, &KeyTableType))
        theirs = kt_to_dict((KeyTable *)other);
    else {
        theirs = other;
        Py_INCREF(theirs);
    }
    PyObject *r = theirs == NULL ? NULL : PyObject_RichCompare(mine, theirs, op);
    Py_DECREF(mine);
    Py_XDECREF(theirs);
    return r;
}

static PyObject *
kt_nbytes(KeyTable *t, void *Py_UNUSED(closure))
{
    return PyLong_FromSsize_t(t->cap * (Py_ssize_t)(sizeof(int64_t) + sizeof(int32_t)));
}

static PyMappingMethods kt_as_mapping = {
    (lenfunc)kt_length, (binaryfunc)kt_subscript, (objobjargproc)kt_ass_subscript,
};

static PySequenceMethods kt_as_sequence = {
    .sq_contains = (objobjproc)kt_contains,
};

static PyMethodDef kt_methods[] = {
    {"get", (PyCFunction)(void (*)(void))kt_get_method, METH_FASTCALL,
     "get(key, default=None): the id of key, or default"},
    {"items", (PyCFunction)kt_items, METH_NOARGS, "a list of (key, id) pairs"},
    {"keys", (PyCFunction)kt_keys, METH_NOARGS, "a list of the keys"},
    {"values", (PyCFunction)kt_values, METH_NOARGS, "a list of the ids"},
    {"update", (PyCFunction)kt_update, METH_O, "update(mapping): add its pairs"},
    {"from_keys", (PyCFunction)kt_from_keys, METH_O | METH_CLASS,
     "from_keys(keys): key i -> i for a buffer of 64-bit keys"},
    {"resolve", (PyCFunction)(void (*)(void))kt_resolve, METH_FASTCALL,
     "resolve(wanted, next_id, ids, first): ids of the keys, new ones added; the count new"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef kt_getset[] = {
    {"nbytes", (getter)kt_nbytes, NULL, "bytes of the table's slots", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject KeyTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "solver._native.KeyTable",
    .tp_doc = "KeyTable(): a mapping of 64-bit position keys to node ids (0 .. 2**31 - 1)\n"
              "in 12 bytes a slot at a load of at most 3/4.",
    .tp_basicsize = sizeof(KeyTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = new_empty,
    .tp_dealloc = (destructor)kt_dealloc,
    .tp_as_mapping = &kt_as_mapping,
    .tp_as_sequence = &kt_as_sequence,
    .tp_iter = (getiterfunc)kt_iter,
    .tp_richcompare = kt_richcompare,
    .tp_methods = kt_methods,
    .tp_getset = kt_getset,
    .tp_hash = PyObject_HashNotImplemented,
};

/* -- KeyFilter: which 64-bit keys may be stored -------------------------------------
 *
 * A bounded-memory run (solver/partial/cache.py) must tell, for every child key that is not
 * resident, whether the database holds it. Most such keys are new; asking the database
 * about each costs a query. This Bloom filter of the stored keys answers "certainly not
 * stored" for nearly all of them without one: no false negatives, about 1% false
 * positives (which then cost the query they would have cost anyway).
 *
 * A blocked Bloom filter (one 512-bit block a key, KF_PROBES bits set in it: one cache
 * line touched a lookup), KF_BITS bits a key. It grows by parts: when the newest part
 * holds its capacity, a part of twice that capacity is added; a lookup asks every part
 * (a handful: the capacities double from KF_FIRST). */

#define KF_BITS 12
#define KF_PROBES 7
#define KF_FIRST (1 << 20)
#define KF_MAX_PARTS 40

typedef struct {
    uint64_t *blocks; /* 8 words (512 bits) a block */
    uint64_t nblocks;
    Py_ssize_t cap, len;
} KfPart;

typedef struct {
    PyObject_HEAD
    KfPart parts[KF_MAX_PARTS];
    int nparts;
    Py_ssize_t len;
} KeyFilter;

static PyTypeObject KeyFilterType;

static inline void
kf_probe(uint64_t h, uint64_t nblocks, uint64_t *block, uint64_t bits[8])
{
    *block = (uint64_t)(((unsigned __int128)(h >> 32 | h << 32) * nblocks) >> 64);
    memset(bits, 0, 8 * sizeof(uint64_t));
    uint64_t g = kt_hash((int64_t)(h ^ 0x5851f42d4c957f2dULL));
    for (int i = 0; i < KF_PROBES; i++) {
        unsigned b = (unsigned)(g & 511);
        g >>= 9;
        bits[b >> 6] |= (uint64_t)1 << (b & 63);
    }
}

static int
kf_maybe(const KeyFilter *f, int64_t k)
{
    uint64_t h = kt_hash(k), block, bits[8];
    for (int p = 0; p < f->nparts; p++) {
        const KfPart *part = &f->parts[p];
        kf_probe(h, part->nblocks, &block, bits);
        const uint64_t *w = &part->blocks[block * 8];
        int all = 1;
        for (int i = 0; i < 8; i++) {
            if ((w[i] & bits[i]) != bits[i]) {
                all = 0;
                break;
            }
        }
        if (all)
            return 1;
    }
    return 0;
}

static int
kf_add(KeyFilter *f, int64_t k)
{
    KfPart *part = f->nparts ? &f->parts[f->nparts - 1] : NULL;
    if (part == NULL || part->len >= part->cap) {
        if (f->nparts == KF_MAX_PARTS) {
            PyErr_SetString(PyExc_OverflowError, "too many keys for a KeyFilter");
            return -1;
        }
        Py_ssize_t cap = part == NULL ? KF_FIRST : part->cap * 2;
        uint64_t nblocks = ((uint64_t)cap * KF_BITS + 511) / 512;
        uint64_t *blocks = PyMem_Calloc((size_t)nblocks * 8, sizeof(uint64_t));
        if (blocks == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        part = &f->parts[f->nparts++];
        part->blocks = blocks;
        part->nblocks = nblocks;
        part->cap = cap;
        part->len = 0;
    }
    uint64_t block, bits[8];
    kf_probe(kt_hash(k), part->nblocks, &block, bits);
    uint64_t *w = &part->blocks[block * 8];
    for (int i = 0; i < 8; i++)
        w[i] |= bits[i];
    part->len++;
    f->len++;
    return 0;
}

static void
kf_dealloc(KeyFilter *f)
{
    for (int p = 0; p < f->nparts; p++)
        PyMem_Free(f->parts[p].blocks);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static Py_ssize_t
kf_length(KeyFilter *f)
{
    return f->len;
}

/* A key that is not a 64-bit int may be stored: the filter cannot tell. */
static int
kf_contains(KeyFilter *f, PyObject *key)
{
    int64_t k;
    int r = kt_key(key, &k);
    if (r <= 0)
        return r < 0 ? -1 : 1;
    return kf_maybe(f, k);
}

static PyObject *
kf_add_method(KeyFilter *f, PyObject *key)
{
    int64_t k;
    int r = kt_key(key, &k);
    if (r < 0)
        return NULL;
    if (r == 0) {
        PyErr_SetString(PyExc_TypeError, "a KeyFilter holds 64-bit integer keys");
        return NULL;
    }
    if (kf_add(f, k) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
kf_add_many(KeyFilter *f, PyObject *keys)
{
    Py_buffer view;
    if (PyObject_GetBuffer(keys, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return NULL;
    const char *fmt = view.format ? view.format : "B";
    if (view.itemsize != 8 || !(strcmp(fmt, "q") == 0 || strcmp(fmt, "l") == 0 ||
                                strcmp(fmt, "<q") == 0 || strcmp(fmt, "=q") == 0 ||
                                strcmp(fmt, "<l") == 0 || strcmp(fmt, "=l") == 0)) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "add_many() takes a buffer of 64-bit integers");
        return NULL;
    }
    const int64_t *k = view.buf;
    Py_ssize_t n = view.len / 8;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (kf_add(f, k[i]) < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyObject *
kf_nbytes(KeyFilter *f, void *Py_UNUSED(closure))
{
    Py_ssize_t n = 0;
    for (int p = 0; p < f->nparts; p++)
        n += (Py_ssize_t)f->parts[p].nblocks * 64;
    return PyLong_FromSsize_t(n);
}

static PySequenceMethods kf_as_sequence = {
    .sq_length = (lenfunc)kf_length,
    .sq_contains = (objobjproc)kf_contains,
};

static PyMethodDef kf_methods[] = {
    {"add", (PyCFunction)kf_add_method, METH_O, "Add one 64-bit key."},
    {"add_many", (PyCFunction)kf_add_many, METH_O,
     "Add every key of a buffer of 64-bit integers (an array('q'), an int64 ndarray)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef kf_getset[] = {
    {"nbytes", (getter)kf_nbytes, NULL, "Bytes of the filter's bits.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject KeyFilterType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "solver._native.KeyFilter",
    .tp_doc = PyDoc_STR("KeyFilter()\n--\n\nA Bloom filter of 64-bit position keys: `k in f` is "
                        "False only for keys never added (about 1% false positives); keys "
                        "that are not 64-bit integers are always `in`."),
    .tp_basicsize = sizeof(KeyFilter),
    .tp_itemsize = 0,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = new_empty,
    .tp_dealloc = (destructor)kf_dealloc,
    .tp_as_sequence = &kf_as_sequence,
    .tp_methods = kf_methods,
    .tp_getset = kf_getset,
    .tp_hash = PyObject_HashNotImplemented,
};

/* -- one call's context ------------------------------------------------------------ */

enum {
    C_KEYS, C_STATE, C_LOW, C_HIGH, C_LF, C_HF, C_DIST, C_FIRST, C_COUNT, C_DLOW,
    C_DHIGH, C_RHEAD, C_GID, C_STUB, C_HIDDEN, /* node columns (the last 3: mapped only) */
    C_ECHILD, C_EPARENT, C_RNEXT, /* edge columns */
    N_COLS
};

static const char *col_names[N_COLS] = {
    "keys", "state", "low", "high", "low_final", "high_final", "dist", "first_edge",
    "child_count", "depth_low", "depth_high", "_rev_head", "gid", "stub", "hidden",
    "edge_child", "edge_parent", "_rev_next",
};
static const Py_ssize_t col_items[N_COLS] = {8, 1, 8, 8, 1, 1, 4, 4, 4, 4, 4, 4, 8, 1, 1,
                                             4, 4, 4};

#define M_PATH 1
#define M_QUEUED 2

typedef struct {
    Col col[N_COLS];
    PyObject *graph, *index;
    KeyTable *table; /* the index when it is a KeyTable (borrowed from index), else NULL */
    Buf labels; /* the new edges' move labels (strong references) */
    Buf dirty;  /* committed nodes that changed (Py_ssize_t, repeats allowed) */
    PyObject *children, *terminal, *canon;
    Py_ssize_t n, m; /* nodes and edges, existing and new */
    Py_ssize_t committed;
    int track_dirty;
    int64_t vmin, vmax;
    uint8_t *mark; /* per node: M_PATH, M_QUEUED */
    Py_ssize_t mark_cap;
    Buf expanded, changed, seeds, work, next, queue; /* node ids (Py_ssize_t) */
    Py_ssize_t err_node;
    /* a mapped graph (solver/partial/cache.py): its hooks, and the stored id of the next new node */
    int mapped;
    PyObject *load_stub, *lookup, *reveal;
    KeyFilter *filter;
    Buf fresh; /* the parents expanded (Py_ssize_t): graph.fresh_parents */
    int64_t next_gid;
} Ctx;

/* Whether column c is part of this call (a mapped graph's columns only when mapped). */
static inline int
col_used(const Ctx *x, int c)
{
    return x->mapped || !(c == C_GID || c == C_STUB || c == C_HIDDEN);
}

#define K(x) (&(x)->col[C_KEYS])
#define STATE(x) (&(x)->col[C_STATE])
#define LOW(x) (&(x)->col[C_LOW])
#define HIGH(x) (&(x)->col[C_HIGH])
#define LF(x) (&(x)->col[C_LF])
#define HF(x) (&(x)->col[C_HF])
#define FIRST(x) (&(x)->col[C_FIRST])
#define COUNT(x) (&(x)->col[C_COUNT])
#define R_HEAD(x) (&(x)->col[C_RHEAD])
#define E_CHILD(x) (&(x)->col[C_ECHILD])
#define E_PARENT(x) (&(x)->col[C_EPARENT])
#define R_NEXT(x) (&(x)->col[C_RNEXT])
#define STUB(x) (&(x)->col[C_STUB])
#define HIDDEN(x) (&(x)->col[C_HIDDEN])
#define D_LOW(x) (&(x)->col[C_DLOW])
#define D_HIGH(x) (&(x)->col[C_DHIGH])

static int
ids_push(Buf *b, Py_ssize_t v)
{
    if (buf_reserve(b, 1) < 0)
        return -1;
    ((Py_ssize_t *)b->data)[b->len++] = v;
    return 0;
}

static int
mark_dirty(Ctx *x, Py_ssize_t n)
{
    if (!x->track_dirty || n >= x->committed)
        return 0;
    return ids_push(&x->dirty, n);
}

static int
marks_fit(Ctx *x)
{
    if (x->n <= x->mark_cap)
        return 0;
    Py_ssize_t cap = x->mark_cap ? x->mark_cap : 1024;
    while (cap < x->n)
        cap *= 2;
    uint8_t *mark = PyMem_Realloc(x->mark, (size_t)cap);
    if (mark == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(mark + x->mark_cap, 0, (size_t)(cap - x->mark_cap));
    x->mark = mark;
    x->mark_cap = cap;
    return 0;
}

/* (max -high(c), max -low(c)) over the children of expanded n */
static inline void
children_bounds(Ctx *x, Py_ssize_t n, int64_t *lo, int64_t *hi)
{
    int64_t l = NEG_INF, h = NEG_INF;
    Py_ssize_t f = GET(FIRST(x), int32_t, n);
    Py_ssize_t end = f + GET(COUNT(x), int32_t, n);
    for (Py_ssize_t e = f; e < end; e++) {
        Py_ssize_t c = GET(E_CHILD(x), int32_t, e);
        int64_t v = -GET(HIGH(x), int64_t, c);
        if (v > l)
            l = v;
        v = -GET(LOW(x), int64_t, c);
        if (v > h)
            h = v;
    }
    *lo = l;
    *hi = h;
}

/* -- a mapped graph's hooks -------------------------------------------------------- */

static int flush(Ctx *x);
static int open_graph(Ctx *x);

/* Call hook(arg) with the graph as Python sees it: everything added so far appended to
 * its columns, their buffers released (the hook adds nodes and edges of its own), then
 * taken again. Returns -1 with an exception set if the hook (or taking the graph back)
 * fails; the columns are then released and complete. */
static int
call_hook(Ctx *x, PyObject *hook, PyObject *arg)
{
    if (flush(x) < 0)
        return -1;
    PyObject *r = PyObject_CallOneArg(hook, arg);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return open_graph(x);
}

static int
call_node_hook(Ctx *x, PyObject *hook, Py_ssize_t n)
{
    PyObject *id = PyLong_FromSsize_t(n);
    if (id == NULL)
        return -1;
    int r = call_hook(x, hook, id);
    Py_DECREF(id);
    return r;
}

/* Load stub n's stored edges (solver.partial.cache.Cache.load_stub). */
static int
load_stub(Ctx *x, Py_ssize_t n)
{
    return call_node_hook(x, x->load_stub, n);
}

/* Before a change of n reaches its parents: make the stored ones resident, with their
 * edges, if some may not be (solver.partial.cache.Cache.reveal). */
static inline int
reveal(Ctx *x, Py_ssize_t n)
{
    if (!x->mapped || !GET(HIDDEN(x), uint8_t, n))
        return 0;
    return call_node_hook(x, x->reveal, n);
}

/* -- expansion --------------------------------------------------------------------- */

typedef struct {
    PyObject *label; /* borrowed from the moves sequence */
    PyObject *key;   /* strong: the canonical child key */
    int64_t k;
    Py_ssize_t id; /* an existing node, or -1 - (its index among this expansion's new keys) */
} Move;

/* Append a node (buffers reserved beforehand: cannot fail). */
static void
push_node(Ctx *x, int64_t key, int32_t dist, int terminal, int64_t value)
{
    uint8_t st = terminal ? TERMINAL : UNEXPANDED, fin = terminal ? 1 : 0;
    int64_t lo = terminal ? value : NEG_INF, hi = terminal ? value : POS_INF;
    int32_t no_edge = -1;
    int32_t depth = terminal ? 0 : DEPTH_INF, minus1 = -1, zero = 0;
    col_push(K(x), &key);
    col_push(STATE(x), &st);
    col_push(LOW(x), &lo);
    col_push(HIGH(x), &hi);
    col_push(LF(x), &fin);
    col_push(HF(x), &fin);
    col_push(&x->col[C_DIST], &dist);
    col_push(FIRST(x), &minus1);
    col_push(COUNT(x), &zero);
    col_push(&x->col[C_DLOW], &depth);
    col_push(&x->col[C_DHIGH], &depth);
    col_push(R_HEAD(x), &no_edge);
    if (x->mapped) {
        uint8_t no = 0;
        col_push(&x->col[C_GID], &x->next_gid);
        col_push(STUB(x), &no);
        col_push(&x->col[C_HIDDEN], &no);
        x->next_gid++;
    }
    x->n++;
}

/* Expand node n. Everything that can fail comes before anything changes. Returns ST_OK,
 * ST_NO_MOVES, ST_WIDE_KEY (a child key that is not a 64-bit integer) or ST_ERROR (an
 * exception is set); the graph is unchanged unless ST_OK. */
static int
expand(Ctx *x, Py_ssize_t n)
{
    int status = ST_ERROR;
    Move *mv = NULL;
    Py_ssize_t *fresh_at = NULL; /* per new key: the first move that leads to it */
    PyObject **values = NULL;    /* per new key: terminal_value() (strong) */
    PyObject *seen = NULL;       /* key -> index among the new keys, with many moves */
    Py_ssize_t k = 0, n_fresh = 0, inserted = 0;

    PyObject *kobj = PyLong_FromLongLong(GET(K(x), int64_t, n));
    if (kobj == NULL)
        return ST_ERROR;
    PyObject *res = PyObject_CallOneArg(x->children, kobj);
    Py_DECREF(kobj);
    if (res == NULL)
        return ST_ERROR;
    PyObject *seq = PySequence_Fast(res, "children() must return a sequence of moves");
    Py_DECREF(res);
    if (seq == NULL)
        return ST_ERROR;
    k = PySequence_Fast_GET_SIZE(seq);
    if (k == 0) {
        Py_DECREF(seq);
        return ST_NO_MOVES;
    }
    mv = PyMem_Calloc((size_t)k, sizeof(Move));
    fresh_at = PyMem_Calloc((size_t)k, sizeof(Py_ssize_t));
    values = PyMem_Calloc((size_t)k, sizeof(PyObject *));
    if (mv == NULL || fresh_at == NULL || values == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *it = items[i], *ck;
        if (PyTuple_Check(it) && PyTuple_GET_SIZE(it) == 2) {
            mv[i].label = PyTuple_GET_ITEM(it, 0);
            ck = PyTuple_GET_ITEM(it, 1);
        }
        else if (PyList_Check(it) && PyList_GET_SIZE(it) == 2) {
            mv[i].label = PyList_GET_ITEM(it, 0);
            ck = PyList_GET_ITEM(it, 1);
        }
        else {
            PyErr_SetString(PyExc_ValueError, "children() must give (label, key) pairs");
            goto done;
        }
        if (x->canon != Py_None) {
            mv[i].key = PyObject_CallOneArg(x->canon, ck);
            if (mv[i].key == NULL)
                goto done;
        }
        else {
            Py_INCREF(ck);
            mv[i].key = ck;
        }
        ck = mv[i].key;
        if (!PyLong_Check(ck)) {
            status = ST_WIDE_KEY;
            goto done;
        }
        int overflow = 0;
        mv[i].k = PyLong_AsLongLongAndOverflow(ck, &overflow);
        if (overflow) {
            status = ST_WIDE_KEY;
            goto done;
        }
        if (mv[i].k == -1 && PyErr_Occurred())
            goto done;
    }
    if (x->mapped) {
        /* keys neither resident nor certainly new: make those stored resident first
           (solver.partial.cache.Cache.lookup), so that a position never gets two nodes */
        PyObject *ask = NULL;
        for (Py_ssize_t i = 0; i < k; i++) {
            if (kt_get(x->table, mv[i].k) >= 0 || !kf_maybe(x->filter, mv[i].k))
                continue;
            if ((ask == NULL && (ask = PyList_New(0)) == NULL) ||
                PyList_Append(ask, mv[i].key) < 0) {
                Py_XDECREF(ask);
                goto done;
            }
        }
        if (ask != NULL) {
            int r = call_hook(x, x->lookup, ask);
            Py_DECREF(ask);
            if (r < 0)
                goto done;
        }
    }
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *ck = mv[i].key;
        if (x->table != NULL) {
            Py_ssize_t id = kt_get(x->table, mv[i].k);
            if (id >= 0) {
                mv[i].id = id;
                continue;
            }
        }
        else {
            PyObject *id = PyDict_GetItemWithError(x->index, ck);
            if (id != NULL) {
                mv[i].id = PyLong_AsSsize_t(id);
                if (mv[i].id == -1 && PyErr_Occurred())
                    goto done;
                continue;
            }
            if (PyErr_Occurred())
                goto done;
        }
        Py_ssize_t j = -1;
        if (seen == NULL && n_fresh >= 16) {
            seen = PyDict_New();
            if (seen == NULL)
                goto done;
            for (Py_ssize_t f = 0; f < n_fresh; f++) {
                PyObject *v = PyLong_FromSsize_t(f);
                int r = v == NULL ? -1 : PyDict_SetItem(seen, mv[fresh_at[f]].key, v);
                Py_XDECREF(v);
                if (r < 0)
                    goto done;
            }
        }
        if (seen != NULL) {
            PyObject *v = PyDict_GetItemWithError(seen, ck);
            if (v != NULL)
                j = PyLong_AsSsize_t(v);
            else if (PyErr_Occurred())
                goto done;
        }
        else {
            for (Py_ssize_t f = 0; f < n_fresh; f++) {
                if (mv[fresh_at[f]].k == mv[i].k) {
                    j = f;
                    break;
                }
            }
        }
        if (j < 0) {
            j = n_fresh++;
            fresh_at[j] = i;
            if (seen != NULL) {
                PyObject *v = PyLong_FromSsize_t(j);
                int r = v == NULL ? -1 : PyDict_SetItem(seen, ck, v);
                Py_XDECREF(v);
                if (r < 0)
                    goto done;
            }
        }
        mv[i].id = -1 - j;
    }
    for (Py_ssize_t f = 0; f < n_fresh; f++) {
        values[f] = PyObject_CallOneArg(x->terminal, mv[fresh_at[f]].key);
        if (values[f] == NULL)
            goto done;
        if (values[f] != Py_None) {
            int overflow = 0;
            int64_t v = PyLong_AsLongLongAndOverflow(values[f], &overflow);
            if (v == -1 && PyErr_Occurred())
                goto done;
            if (overflow) {
                PyErr_SetString(PyExc_OverflowError,
                                "terminal_value() gave a value beyond 64 bits");
                goto done;
            }
        }
    }
    if (x->n + n_fresh > INT32_MAX || x->m + k > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2**31 - 1 nodes or edges");
        goto done;
    }
    /* Reserve everything, so that nothing below fails half-way. */
    for (int c = 0; c < N_COLS; c++) {
        if (buf_reserve(&x->col[c].add, c < C_ECHILD ? n_fresh : k) < 0)
            goto done;
    }
    if (buf_reserve(&x->labels, k) < 0 || buf_reserve(&x->dirty, 1) < 0 ||
        buf_reserve(&x->fresh, 1) < 0)
        goto done;
    Py_ssize_t base = x->n;
    x->n += n_fresh;
    int fits = marks_fit(x);
    x->n = base;
    if (fits < 0)
        goto done;
    /* The key index: the only change that can fail (memory); undone if it does. */
    if (x->table != NULL && kt_reserve(x->table, n_fresh) < 0)
        goto done;
    for (; inserted < n_fresh; inserted++) {
        if (x->table != NULL) {
            /* reserved: cannot fail */
            kt_set(x->table, mv[fresh_at[inserted]].k, (int32_t)(base + inserted));
            continue;
        }
        PyObject *id = PyLong_FromSsize_t(base + inserted);
        int r = id == NULL ? -1 : PyDict_SetItem(x->index, mv[fresh_at[inserted]].key, id);
        Py_XDECREF(id);
        if (r < 0) {
            PyObject *et, *ev, *tb;
            PyErr_Fetch(&et, &ev, &tb);
            for (Py_ssize_t f = 0; f < inserted; f++) {
                if (PyDict_DelItem(x->index, mv[fresh_at[f]].key) < 0)
                    PyErr_Clear();
            }
            PyErr_Restore(et, ev, tb);
            goto done;
        }
    }
    int32_t dist = GET(&x->col[C_DIST], int32_t, n) + 1;
    for (Py_ssize_t f = 0; f < n_fresh; f++) {
        PyObject *v = values[f];
        push_node(x, mv[fresh_at[f]].k, dist, v != Py_None,
                  v != Py_None ? PyLong_AsLongLong(v) : 0);
    }
    Py_ssize_t first = x->m;
    for (Py_ssize_t i = 0; i < k; i++) {
        Py_ssize_t c = mv[i].id >= 0 ? mv[i].id : base + (-1 - mv[i].id);
        int32_t c32 = (int32_t)c, p32 = (int32_t)n;
        int32_t e = (int32_t)x->m, prev = GET(R_HEAD(x), int32_t, c);
        col_push(E_CHILD(x), &c32);
        col_push(E_PARENT(x), &p32);
        col_push(R_NEXT(x), &prev);
        SET(R_HEAD(x), int32_t, c, e);
        x->m++;
        Py_INCREF(mv[i].label);
        ((PyObject **)x->labels.data)[x->labels.len++] = mv[i].label;
    }
    SET(FIRST(x), int32_t, n, (int32_t)first);
    SET(COUNT(x), int32_t, n, (int32_t)k);
    SET(STATE(x), uint8_t, n, EXPANDED);
    mark_dirty(x, n); /* reserved */
    if (x->mapped)
        ids_push(&x->fresh, n); /* reserved */
    status = ST_OK;
done:
    if (mv != NULL) {
        for (Py_ssize_t i = 0; i < k; i++)
            Py_XDECREF(mv[i].key);
        PyMem_Free(mv);
    }
    if (values != NULL) {
        for (Py_ssize_t f = 0; f < k; f++)
            Py_XDECREF(values[f]);
        PyMem_Free(values);
    }
    PyMem_Free(fresh_at);
    Py_XDECREF(seen);
    Py_DECREF(seq);
    return status;
}

/* -- the null-window test ----------------------------------------------------------- */

typedef struct {
    Py_ssize_t n, e, end;
    int64_t t;
} Frame;

/* Enter test(n, t): decide it at once (*r set, returns 0) or push a frame (returns 1);
 * ST_* error codes as negative numbers minus 1 (-1 - status) otherwise. */
static int
enter(Ctx *x, Buf *stack, Py_ssize_t n, int64_t t, Py_ssize_t *budget, int *r)
{
    if (x->mapped && GET(STUB(x), uint8_t, n) && load_stub(x, n) < 0)
        return -1 - 100;
    uint8_t st = GET(STATE(x), uint8_t, n);
    if (st == UNEXPANDED) {
        if (*budget == 0) {
            *r = 0;
            return 0;
        }
        int s = expand(x, n);
        if (s != ST_OK) {
            x->err_node = n;
            return -1 - (s == ST_ERROR ? 100 : s);
        }
        (*budget)--;
        if (ids_push(&x->expanded, n) < 0)
            return -1 - 100;
        int64_t lo, hi;
        children_bounds(x, n, &lo, &hi);
        SET(LOW(x), int64_t, n, lo);
        SET(HIGH(x), int64_t, n, hi);
        if (ids_push(&x->changed, n) < 0)
            return -1 - 100;
        if (lo >= t) {
            *r = 1;
            return 0;
        }
        if (hi < t) {
            *r = -1;
            return 0;
        }
    }
    else if (x->mark[n] & M_PATH) {
        x->err_node = n;
        return -1 - ST_REPEATS;
    }
    x->mark[n] |= M_PATH;
    if (buf_reserve(stack, 1) < 0)
        return -1 - 100;
    Frame *fr = &((Frame *)stack->data)[stack->len++];
    fr->n = n;
    fr->t = t;
    fr->e = GET(FIRST(x), int32_t, n);
    fr->end = fr->e + GET(COUNT(x), int32_t, n);
    return 1;
}

/* test(root, t) as _search_acyclic_py's test() runs it: 1 proved, -1 refuted, 0 out of
 * budget. Returns ST_OK or an error status. */
static int
run_test(Ctx *x, Py_ssize_t root, int64_t t, Py_ssize_t *budget, int *result)
{
    Buf stack = {NULL, 0, 0, sizeof(Frame)};
    int r = 0, have_r = 0, status = ST_OK;
    int s = enter(x, &stack, root, t, budget, &r);
    if (s < 0) {
        status = -1 - s;
        goto out;
    }
    have_r = s == 0;
    while (stack.len > 0) {
        Frame *fr = &((Frame *)stack.data)[stack.len - 1];
        int res;
        if (have_r) {
            have_r = 0;
            if (r <= 0) {
                res = r ? 1 : 0; /* the child is below 1 - t: n is at least t */
                goto finish;
            }
        }
        for (;;) {
            if (fr->e >= fr->end) {
                res = -1;
                goto finish;
            }
            Py_ssize_t c = GET(E_CHILD(x), int32_t, fr->e);
            int64_t u = -fr->t;
            int64_t hc = GET(HIGH(x), int64_t, c), lc = GET(LOW(x), int64_t, c);
            if (hc <= u || (GET(LF(x), uint8_t, c) && lc <= u)) {
                res = 1; /* the child is at most u: n is at least t */
                goto finish;
            }
            fr->e++;
            if (lc > u || (GET(HF(x), uint8_t, c) && hc > u))
                continue; /* the child is above u: it cannot show n is at least t */
            s = enter(x, &stack, c, 1 - fr->t, budget, &r);
            if (s < 0) {
                status = -1 - s;
                goto out;
            }
            have_r = s == 0;
            break;
        }
        continue;
    finish:
        {
            Py_ssize_t n = fr->n;
            x->mark[n] &= ~M_PATH;
            int64_t lo, hi;
            children_bounds(x, n, &lo, &hi);
            if (lo != GET(LOW(x), int64_t, n) || hi != GET(HIGH(x), int64_t, n)) {
                SET(LOW(x), int64_t, n, lo);
                SET(HIGH(x), int64_t, n, hi);
                if (ids_push(&x->changed, n) < 0) {
                    status = 100;
                    goto out;
                }
            }
            stack.len--;
            r = res;
            have_r = 1;
        }
    }
    *result = r;
out:
    if (status != ST_OK) {
        /* clear the path marks of the abandoned frames */
        for (Py_ssize_t i = 0; i < stack.len; i++)
            x->mark[((Frame *)stack.data)[i].n] &= ~M_PATH;
    }
    PyMem_Free(stack.data);
    return status == 100 ? ST_ERROR : status;
}

/* -- settling: the bounds fixpoint, then finality (_settle_search) ----------------- */

/* Queue n if it is expanded and not queued yet (M_QUEUED). */
static inline int
queue_node(Ctx *x, Buf *queue, Py_ssize_t n)
{
    if ((x->mark[n] & M_QUEUED) || GET(STATE(x), uint8_t, n) != EXPANDED)
        return 0;
    x->mark[n] |= M_QUEUED;
    return ids_push(queue, n);
}

/* Queue n's parents as queue_node does. */
static int
queue_parents(Ctx *x, Buf *queue, Py_ssize_t n)
{
    for (int64_t e = GET(R_HEAD(x), int32_t, n); e >= 0; e = GET(R_NEXT(x), int32_t, e)) {
        if (queue_node(x, queue, GET(E_PARENT(x), int32_t, e)) < 0)
            return -1;
    }
    return 0;
}

/* The depths the retrograde pass gives expanded n of an acyclic graph
 * (solver.fixpoint.children_depths). */
static void
children_depths(Ctx *x, Py_ssize_t n, int32_t *dl, int32_t *dh)
{
    int64_t lo = GET(LOW(x), int64_t, n), hi = GET(HIGH(x), int64_t, n);
    Py_ssize_t f = GET(FIRST(x), int32_t, n);
    Py_ssize_t end = f + GET(COUNT(x), int32_t, n);
    *dl = *dh = DEPTH_INF;
    if (lo != NEG_INF) {
        int32_t best = DEPTH_INF;
        for (Py_ssize_t e = f; e < end; e++) {
            Py_ssize_t c = GET(E_CHILD(x), int32_t, e);
            int32_t d = GET(D_HIGH(x), int32_t, c);
            if (-GET(HIGH(x), int64_t, c) == lo && d < best)
                best = d;
        }
        if (best != DEPTH_INF)
            *dl = best + 1;
    }
    if (hi != POS_INF) {
        int32_t worst = -1;
        for (Py_ssize_t e = f; e < end; e++) {
            int32_t d = GET(D_LOW(x), int32_t, GET(E_CHILD(x), int32_t, e));
            if (d > worst)
                worst = d;
        }
        if (worst >= 0 && worst != DEPTH_INF)
            *dh = worst + 1;
    }
}

/* A mapped graph keeps an acyclic game's depths exact as bounds change: from the seeds
 * of settle(), a worklist re-evaluates the parents of each node whose depths changed
 * (solver.fixpoint.update_depths). */
static int
update_depths(Ctx *x)
{
    Buf *seeds = &x->seeds, *queue = &x->queue;
    queue->len = 0;
    for (Py_ssize_t i = 0; i < seeds->len; i++) {
        if (queue_node(x, queue, ((Py_ssize_t *)seeds->data)[i]) < 0)
            return -1;
    }
    for (Py_ssize_t head = 0; head < queue->len; head++) {
        Py_ssize_t n = ((Py_ssize_t *)queue->data)[head];
        x->mark[n] &= ~M_QUEUED;
        int32_t dl, dh;
        children_depths(x, n, &dl, &dh);
        if (dl == GET(D_LOW(x), int32_t, n) && dh == GET(D_HIGH(x), int32_t, n))
            continue;
        SET(D_LOW(x), int32_t, n, dl);
        SET(D_HIGH(x), int32_t, n, dh);
        if (mark_dirty(x, n) < 0 || reveal(x, n) < 0 || queue_parents(x, queue, n) < 0)
            return -1;
    }
    return 0;
}

static int
settle(Ctx *x)
{
    Buf *seeds = &x->seeds, *work = &x->work, *next = &x->next;
    seeds->len = 0;
    work->len = 0;
    for (Py_ssize_t i = 0; i < x->expanded.len; i++) {
        if (ids_push(seeds, ((Py_ssize_t *)x->expanded.data)[i]) < 0)
            return -1;
    }
    for (Py_ssize_t i = 0; i < x->changed.len; i++) {
        if (ids_push(work, ((Py_ssize_t *)x->changed.data)[i]) < 0)
            return -1;
    }
    while (work->len) {
        next->len = 0;
        Py_ssize_t queued_from = seeds->len;
        for (Py_ssize_t i = 0; i < work->len; i++) {
            Py_ssize_t n = ((Py_ssize_t *)work->data)[i];
            if (mark_dirty(x, n) < 0 || ids_push(seeds, n) < 0 || reveal(x, n) < 0)
                return -1;
            int64_t e = GET(R_HEAD(x), int32_t, n);
            while (e >= 0) {
                Py_ssize_t p = GET(E_PARENT(x), int32_t, e);
                e = GET(R_NEXT(x), int32_t, e);
                if ((x->mark[p] & M_QUEUED) || GET(STATE(x), uint8_t, p) != EXPANDED)
                    continue;
                x->mark[p] |= M_QUEUED;
                if (ids_push(seeds, p) < 0)
                    return -1;
                int64_t lo, hi;
                children_bounds(x, p, &lo, &hi);
                if (lo != GET(LOW(x), int64_t, p) || hi != GET(HIGH(x), int64_t, p)) {
                    SET(LOW(x), int64_t, p, lo);
                    SET(HIGH(x), int64_t, p, hi);
                    if (ids_push(next, p) < 0)
                        return -1;
                }
            }
        }
        for (Py_ssize_t i = queued_from; i < seeds->len; i++)
            x->mark[((Py_ssize_t *)seeds->data)[i]] &= ~M_QUEUED;
        Buf tmp = *work;
        *work = *next;
        *next = tmp;
    }
    x->expanded.len = 0;
    x->changed.len = 0;

    /* propagate_finality(seeds): the rules of solver/fixpoint.py (low_final_by_rules,
       high_final_by_rules), inlined */
    Buf *queue = &x->queue;
    queue->len = 0;
    for (Py_ssize_t i = 0; i < seeds->len; i++) {
        if (queue_node(x, queue, ((Py_ssize_t *)seeds->data)[i]) < 0)
            return -1;
    }
    for (Py_ssize_t head = 0; head < queue->len; head++) {
        Py_ssize_t n = ((Py_ssize_t *)queue->data)[head];
        x->mark[n] &= ~M_QUEUED;
        uint8_t l_ok = GET(LF(x), uint8_t, n), h_ok = GET(HF(x), uint8_t, n);
        if (l_ok && h_ok)
            continue;
        int64_t lo = GET(LOW(x), int64_t, n), hi = GET(HIGH(x), int64_t, n);
        Py_ssize_t f = GET(FIRST(x), int32_t, n);
        Py_ssize_t end = f + GET(COUNT(x), int32_t, n);
        if (lo == hi) {
            l_ok = h_ok = 1;
        }
        else {
            if (!l_ok) {
                if (lo >= x->vmax) {
                    l_ok = 1;
                }
                else {
                    l_ok = 1;
                    for (Py_ssize_t e = f; e < end; e++) {
                        Py_ssize_t c = GET(E_CHILD(x), int32_t, e);
                        if (!GET(HF(x), uint8_t, c) && -GET(LOW(x), int64_t, c) > lo) {
                            l_ok = 0;
                            break;
                        }
                    }
                }
            }
            if (!h_ok) {
                if (hi <= x->vmin) {
                    h_ok = 1;
                }
                else {
                    for (Py_ssize_t e = f; e < end; e++) {
                        Py_ssize_t c = GET(E_CHILD(x), int32_t, e);
                        if (GET(LF(x), uint8_t, c) && -GET(LOW(x), int64_t, c) == hi) {
                            h_ok = 1;
                            break;
                        }
                    }
                }
            }
        }
        if (l_ok != GET(LF(x), uint8_t, n) || h_ok != GET(HF(x), uint8_t, n)) {
            SET(LF(x), uint8_t, n, l_ok);
            SET(HF(x), uint8_t, n, h_ok);
            if (mark_dirty(x, n) < 0 || reveal(x, n) < 0 || queue_parents(x, queue, n) < 0)
                return -1;
        }
    }
    return x->mapped ? update_depths(x) : 0;
}

/* -- the entry point ---------------------------------------------------------------- */

/* Hand the node ids of b to the graph's attribute *name* (a set or a list) by *add*, and
 * empty b. */
static int
ids_flush(Ctx *x, Buf *b, const char *name, int (*add)(PyObject *, PyObject *))
{
    if (!b->len)
        return 0;
    int failed = 0;
    PyObject *to = PyObject_GetAttrString(x->graph, name);
    if (to == NULL) {
        failed = 1;
    }
    else {
        for (Py_ssize_t i = 0; i < b->len && !failed; i++) {
            PyObject *id = PyLong_FromSsize_t(((Py_ssize_t *)b->data)[i]);
            if (id == NULL || add(to, id) < 0)
                failed = 1;
            Py_XDECREF(id);
        }
        Py_DECREF(to);
    }
    b->len = 0;
    return failed ? -1 : 0;
}

/* Append the new parts to the graph's columns, labels to edge_move, dirty ids to
 * graph.dirty and a mapped graph's expanded parents to graph.fresh_parents; release every
 * buffer. Keeps a pending exception. */
static int
flush(Ctx *x)
{
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    int failed = 0;
    for (int c = 0; c < N_COLS; c++)
        col_release(&x->col[c]);
    for (int c = 0; c < N_COLS; c++) {
        if (col_flush(&x->col[c]) < 0)
            failed = 1;
    }
    if (x->labels.len) {
        PyObject *list = PyList_New(x->labels.len);
        if (list != NULL) {
            for (Py_ssize_t i = 0; i < x->labels.len; i++) /* the list takes the refs */
                PyList_SET_ITEM(list, i, ((PyObject **)x->labels.data)[i]);
            x->labels.len = 0;
            PyObject *moves = PyObject_GetAttrString(x->graph, "edge_move");
            PyObject *r = moves ? PyObject_CallMethod(moves, "extend", "O", list) : NULL;
            Py_XDECREF(r);
            Py_XDECREF(moves);
            Py_DECREF(list);
            if (r == NULL)
                failed = 1;
        }
        else {
            failed = 1;
        }
    }
    if (!failed && ids_flush(x, &x->dirty, "dirty", PySet_Add) < 0)
        failed = 1;
    if (!failed && ids_flush(x, &x->fresh, "fresh_parents", PyList_Append) < 0)
        failed = 1;
    if (et != NULL) {
        if (failed)
            PyErr_Clear();
        PyErr_Restore(et, ev, tb);
        return -1;
    }
    return failed ? -1 : 0;
}

static void
ctx_free(Ctx *x)
{
    for (int c = 0; c < N_COLS; c++)
        col_free(&x->col[c]);
    for (Py_ssize_t i = 0; i < x->labels.len; i++)
        Py_DECREF(((PyObject **)x->labels.data)[i]);
    PyMem_Free(x->labels.data);
    PyMem_Free(x->dirty.data);
    PyMem_Free(x->mark);
    PyMem_Free(x->expanded.data);
    PyMem_Free(x->changed.data);
    PyMem_Free(x->seeds.data);
    PyMem_Free(x->work.data);
    PyMem_Free(x->next.data);
    PyMem_Free(x->queue.data);
    PyMem_Free(x->fresh.data);
    Py_XDECREF(x->index);
}

/* Take the graph's columns (their buffers) and key index, as they are now: at the start
 * of a call, and after a hook changed them. */
static int
open_graph(Ctx *x)
{
    PyObject *v;
    Py_CLEAR(x->index);
    x->table = NULL;
    x->index = PyObject_GetAttrString(x->graph, "_index");
    if (x->index == NULL)
        return -1;
    if (PyObject_TypeCheck(x->index, &KeyTableType))
        x->table = (KeyTable *)x->index;
    else if (x->mapped || !PyDict_CheckExact(x->index)) {
        PyErr_SetString(PyExc_TypeError, x->mapped ? "a mapped graph's key index is not a KeyTable"
                                                   : "the graph's key index is not built");
        return -1;
    }
    for (int c = 0; c < N_COLS; c++) {
        if (!col_used(x, c))
            continue;
        col_release(&x->col[c]);
        Py_CLEAR(x->col[c].obj);
        if (col_open(&x->col[c], x->graph, col_names[c], col_items[c]) < 0)
            return -1;
    }
    x->n = x->col[C_STATE].n_old;
    x->m = x->col[C_ECHILD].n_old;
    for (int c = 0; c < N_COLS; c++) {
        if (col_used(x, c) && x->col[c].n_old != (c < C_ECHILD ? x->n : x->m)) {
            PyErr_Format(PyExc_ValueError, "graph column %s has %zd items, not %zd",
                         col_names[c], x->col[c].n_old, c < C_ECHILD ? x->n : x->m);
            return -1;
        }
    }
    if (x->mapped) {
        if ((v = PyObject_GetAttrString(x->graph, "outside_nodes")) == NULL)
            return -1;
        x->next_gid = (int64_t)x->n + PyLong_AsLongLong(v);
        Py_DECREF(v);
        if (PyErr_Occurred())
            return -1;
    }
    return marks_fit(x);
}

PyDoc_STRVAR(acyclic_test_doc,
"acyclic_test(graph, root, t, budget, children, terminal_value, canonical, vmin, vmax)\n"
"--\n\n"
"Whether the value of *root* is at least *t*, by the null-window search of\n"
"solver.negamax's acyclic mode with at most *budget* expansions, then the bounds\n"
"fixpoint and finality restored. *canonical* is None when the game has no symmetry.\n"
"The graph needs its key index and reverse edges built and 64-bit keys.\n\n"
"Returns (status, expansions, node): status 0 when the test ran (decided or out of\n"
"budget), 1 when *node* has no moves but is not terminal, 2 when *node* repeats on the\n"
"search path, 3 when a child of *node* has a key that is not a 64-bit integer (*node*\n"
"not expanded; the graph is settled). The game's exceptions propagate, the graph\n"
"consistent (without the expansion that raised), but not settled.\n\n"
"A mapped graph (solver.partial.cache) passes four more: load_stub(node), called before the\n"
"search enters a stub; lookup(keys), called with the child keys of an expansion that\n"
"are not resident but may be stored (by filter, a KeyFilter of the stored keys), before\n"
"the expansion; reveal(node), called before a change of a node whose parents may not\n"
"be resident (graph.hidden) reaches them. Its depths are kept exact as well (the\n"
"graph is acyclic).");

static PyObject *
acyclic_test(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 9 && nargs != 13) {
        PyErr_SetString(PyExc_TypeError, "acyclic_test() takes 9 or 13 arguments");
        return NULL;
    }
    Ctx x;
    memset(&x, 0, sizeof x);
    x.labels.item = sizeof(PyObject *);
    x.dirty.item = x.expanded.item = x.changed.item = sizeof(Py_ssize_t);
    x.seeds.item = x.work.item = x.next.item = x.queue.item = sizeof(Py_ssize_t);
    x.fresh.item = sizeof(Py_ssize_t);
    x.graph = args[0];
    Py_ssize_t root = PyLong_AsSsize_t(args[1]);
    int64_t t = PyLong_AsLongLong(args[2]);
    Py_ssize_t budget = PyLong_AsSsize_t(args[3]);
    x.children = args[4];
    x.terminal = args[5];
    x.canon = args[6];
    x.vmin = PyLong_AsLongLong(args[7]);
    x.vmax = PyLong_AsLongLong(args[8]);
    if (PyErr_Occurred())
        return NULL;
    if (nargs == 13) {
        x.mapped = 1;
        x.load_stub = args[9];
        x.lookup = args[10];
        x.reveal = args[11];
        if (!PyObject_TypeCheck(args[12], &KeyFilterType)) {
            PyErr_SetString(PyExc_TypeError, "acyclic_test()'s filter must be a KeyFilter");
            return NULL;
        }
        x.filter = (KeyFilter *)args[12];
    }
    PyObject *v;
    if ((v = PyObject_GetAttrString(x.graph, "committed_nodes")) == NULL)
        goto fail;
    x.committed = PyLong_AsSsize_t(v);
    Py_DECREF(v);
    if ((v = PyObject_GetAttrString(x.graph, "all_dirty")) == NULL)
        goto fail;
    x.track_dirty = !PyObject_IsTrue(v);
    Py_DECREF(v);
    if (PyErr_Occurred() || open_graph(&x) < 0)
        goto fail;
    if (root < 0 || root >= x.n) {
        PyErr_SetString(PyExc_IndexError, "root is not a node of the graph");
        goto fail;
    }
    x.err_node = -1;
    Py_ssize_t left = budget;
    int result = 0;
    int status = run_test(&x, root, t, &left, &result);
    if (status == ST_OK || status == ST_WIDE_KEY) {
        if (settle(&x) < 0)
            status = ST_ERROR;
    }
    if (flush(&x) < 0 || status == ST_ERROR)
        goto fail;
    ctx_free(&x);
    return Py_BuildValue("(inn)", status, budget - left, x.err_node);
fail:
    flush(&x);
    ctx_free(&x);
    return NULL;
}

static PyMethodDef methods[] = {
    {"acyclic_test", (PyCFunction)(void (*)(void))acyclic_test, METH_FASTCALL,
     acyclic_test_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "solver._native",
    "The partial solver's inner loop for acyclic games and its key index, in C (see _native.c).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__native(void)
{
    if (PyType_Ready(&KeyTableType) < 0 || PyType_Ready(&KeyFilterType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "KeyTable", (PyObject *)&KeyTableType) < 0 ||
        PyModule_AddObjectRef(m, "KeyFilter", (PyObject *)&KeyFilterType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
