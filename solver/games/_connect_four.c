/* Connect four's batched rules in C (solver/games/connect_four.py's children_batch,
 * terminal_values_batch and tiers_batch, same results as their numpy forms).
 *
 * A complete solve asks the rules of every position twice (discovery, then the solve)
 * and of a billion positions on connect-four 5 x 6: numpy's forms make a dozen passes
 * over arrays of positions x columns, about 0.6 microseconds a position; here one pass.
 *
 * The bit layout is the module docstring's (Pons / Tromp): column c owns bits
 * c*h1 .. c*h1+h1-1 (h1 = height + 1), bottom first, the top one spare; a key is the
 * stones of the player to move plus one marker bit above each column's top stone.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "int64_buffer.h"

typedef struct {
    int width, h1;
    uint64_t bottom, board, tops, col_bits;
} Shape;

static int
shape_of(PyObject *w, PyObject *h, Shape *s)
{
    long width = PyLong_AsLong(w), height = PyLong_AsLong(h);
    if (PyErr_Occurred())
        return -1;
    if (width < 1 || height < 1 || width * (height + 1) > 63) {
        PyErr_SetString(PyExc_ValueError, "connect four: the board must fit 63 bits with its spare row");
        return -1;
    }
    s->width = (int)width;
    s->h1 = (int)height + 1;
    s->col_bits = ((uint64_t)1 << s->h1) - 1;
    s->bottom = s->board = s->tops = 0;
    for (int c = 0; c < s->width; c++) {
        s->bottom |= (uint64_t)1 << (c * s->h1);
        s->board |= (((uint64_t)1 << height) - 1) << (c * s->h1);
        s->tops |= (uint64_t)1 << (c * s->h1 + height);
    }
    return 0;
}

/* The stones of key k: in each column, every bit below its marker. */
static inline uint64_t
mask_of(const Shape *s, uint64_t k)
{
    uint64_t mask = 0;
    for (int c = 0; c < s->width; c++) {
        uint64_t col = (k >> (c * s->h1)) & s->col_bits;
        /* col != 0: the marker is its highest bit */
        uint64_t below = col ? (((uint64_t)1 << (63 - __builtin_clzll(col))) - 1) : 0;
        mask |= below << (c * s->h1);
    }
    return mask;
}

static inline int
has_four(const Shape *s, uint64_t x)
{
    uint64_t m = x & (x >> 1);
    if (m & (m >> 2))
        return 1;
    int dirs[3] = {s->h1, s->h1 - 1, s->h1 + 1};
    for (int i = 0; i < 3; i++) {
        m = x & (x >> dirs[i]);
        if (m & (m >> (2 * dirs[i])))
            return 1;
    }
    return 0;
}

/* children(width, height, order, keys, counts, children, labels): the moves of each
 * position of *keys*, in the columns' *order*: their number into counts[i], the
 * children's keys and columns into *children* and *labels* (room for len(keys) x width);
 * returns the number of moves. A position that is over (full, or the last mover has
 * four) has none. */
static PyObject *
children(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "children() takes 7 arguments");
        return NULL;
    }
    Shape s;
    if (shape_of(args[0], args[1], &s) < 0)
        return NULL;
    Py_buffer ov, kv, cv, chv, lv;
    if (int64_buffer(args[2], &ov, 0, "order") < 0)
        return NULL;
    if (int64_buffer(args[3], &kv, 0, "keys") < 0)
        goto fail_o;
    if (int64_buffer(args[4], &cv, 1, "counts") < 0)
        goto fail_k;
    if (int64_buffer(args[5], &chv, 1, "children") < 0)
        goto fail_c;
    if (int64_buffer(args[6], &lv, 1, "labels") < 0)
        goto fail_ch;
    Py_ssize_t n = kv.len / 8, w = ov.len / 8;
    const int64_t *order = ov.buf;
    if (w != s.width || cv.len < kv.len || chv.len < kv.len * w || lv.len < kv.len * w) {
        PyErr_SetString(PyExc_ValueError, "children(): buffers too small, or order not of width");
        goto fail_l;
    }
    for (Py_ssize_t j = 0; j < w; j++) {
        if (order[j] < 0 || order[j] >= w) {
            PyErr_SetString(PyExc_ValueError, "children(): a column of order is off the board");
            goto fail_l;
        }
    }
    const uint64_t *keys = kv.buf;
    int64_t *counts = cv.buf, *out = chv.buf, *labels = lv.buf;
    Py_ssize_t m = 0;
    Py_BEGIN_ALLOW_THREADS
    uint64_t columns[64];
    for (Py_ssize_t j = 0; j < w; j++)
        columns[j] = s.col_bits << (order[j] * s.h1);
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t k = keys[i], mask = mask_of(&s, k);
        uint64_t markers = mask + s.bottom, opponent = k ^ markers ^ mask;
        Py_ssize_t before = m;
        if (mask != s.board && !has_four(&s, opponent)) {
            uint64_t base = opponent + markers;
            for (Py_ssize_t j = 0; j < w; j++) {
                uint64_t bit = markers & columns[j];
                if (bit & s.tops)
                    continue;
                out[m] = (int64_t)(base + bit);
                labels[m] = order[j];
                m++;
            }
        }
        counts[i] = m - before;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&lv);
    PyBuffer_Release(&chv);
    PyBuffer_Release(&cv);
    PyBuffer_Release(&kv);
    PyBuffer_Release(&ov);
    return PyLong_FromSsize_t(m);
fail_l:
    PyBuffer_Release(&lv);
fail_ch:
    PyBuffer_Release(&chv);
fail_c:
    PyBuffer_Release(&cv);
fail_k:
    PyBuffer_Release(&kv);
fail_o:
    PyBuffer_Release(&ov);
    return NULL;
}

/* terminal(width, height, keys, values): -1 (the mover has lost: the last mover has
 * four), 0 (a full board, drawn) or 1 (not over) for each position of *keys*. */
static PyObject *
terminal(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "terminal() takes 4 arguments");
        return NULL;
    }
    Shape s;
    if (shape_of(args[0], args[1], &s) < 0)
        return NULL;
    Py_buffer kv, vv;
    if (int64_buffer(args[2], &kv, 0, "keys") < 0)
        return NULL;
    if (int64_buffer(args[3], &vv, 1, "values") < 0) {
        PyBuffer_Release(&kv);
        return NULL;
    }
    if (vv.len < kv.len) {
        PyBuffer_Release(&vv);
        PyBuffer_Release(&kv);
        PyErr_SetString(PyExc_ValueError, "terminal(): values shorter than keys");
        return NULL;
    }
    const uint64_t *keys = kv.buf;
    int64_t *values = vv.buf;
    Py_ssize_t n = kv.len / 8;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t k = keys[i], mask = mask_of(&s, k);
        uint64_t last = k ^ (mask + s.bottom) ^ mask;
        values[i] = has_four(&s, last) ? -1 : (mask == s.board ? 0 : 1);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&vv);
    PyBuffer_Release(&kv);
    Py_RETURN_NONE;
}

/* stones(width, height, keys, out): the number of stones of each position (its tier). */
static PyObject *
stones(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "stones() takes 4 arguments");
        return NULL;
    }
    Shape s;
    if (shape_of(args[0], args[1], &s) < 0)
        return NULL;
    Py_buffer kv, ov;
    if (int64_buffer(args[2], &kv, 0, "keys") < 0)
        return NULL;
    if (int64_buffer(args[3], &ov, 1, "out") < 0) {
        PyBuffer_Release(&kv);
        return NULL;
    }
    if (ov.len < kv.len) {
        PyBuffer_Release(&ov);
        PyBuffer_Release(&kv);
        PyErr_SetString(PyExc_ValueError, "stones(): out shorter than keys");
        return NULL;
    }
    const uint64_t *keys = kv.buf;
    int64_t *out = ov.buf;
    Py_ssize_t n = kv.len / 8;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        out[i] = __builtin_popcountll(mask_of(&s, keys[i]));
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ov);
    PyBuffer_Release(&kv);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"children", (PyCFunction)(void (*)(void))children, METH_FASTCALL,
     "children(width, height, order, keys, counts, children, labels): the moves of keys"},
    {"terminal", (PyCFunction)(void (*)(void))terminal, METH_FASTCALL,
     "terminal(width, height, keys, values): -1 lost, 0 drawn, 1 not over"},
    {"stones", (PyCFunction)(void (*)(void))stones, METH_FASTCALL,
     "stones(width, height, keys, out): the stones of each position"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "solver.games._connect_four",
    "Connect four's batched rules in C (see _connect_four.c).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__connect_four(void)
{
    return PyModule_Create(&module);
}
