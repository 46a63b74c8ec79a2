/* Finding keys in a solved tier's sorted keys, in C (solver/tiers/lookup.py).
 *
 * A tier solved in shards looks up every move's child in its child tier: hundreds of
 * millions of keys, in no useful order, in a sorted array of millions. A binary search
 * over the whole array (numpy.searchsorted) misses the cache at most of its 20-odd
 * steps. Here a directory of the keys' leading bits (the first position of each bucket
 * of 2**shift consecutive key values above the smallest key) narrows each search to a
 * bucket of a few keys first: two or three cache misses a key.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "int64_buffer.h"

/* directory(keys, shift, out): for each bucket j of out (all but its last entry), the
 * place of the first key k of the sorted *keys* with (k - keys[0]) >> shift >= j; the
 * last entry is len(keys). */
static PyObject *
directory(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "directory() takes 3 arguments");
        return NULL;
    }
    long shift = PyLong_AsLong(args[1]);
    if (shift == -1 && PyErr_Occurred())
        return NULL;
    if (shift < 0 || shift > 63) {
        PyErr_SetString(PyExc_ValueError, "directory(): shift must be 0..63");
        return NULL;
    }
    Py_buffer kv, ov;
    if (int64_buffer(args[0], &kv, 0, "keys") < 0)
        return NULL;
    if (int64_buffer(args[2], &ov, 1, "out") < 0) {
        PyBuffer_Release(&kv);
        return NULL;
    }
    const int64_t *keys = kv.buf;
    int64_t *out = ov.buf;
    Py_ssize_t n = kv.len / 8, buckets = ov.len / 8 - 1;
    if (buckets < 1 || (n && (((uint64_t)keys[n - 1] - (uint64_t)keys[0]) >> shift) >= (uint64_t)buckets)) {
        PyBuffer_Release(&kv);
        PyBuffer_Release(&ov);
        PyErr_SetString(PyExc_ValueError, "directory(): out has too few buckets for the keys");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t i = 0;
    uint64_t base = n ? (uint64_t)keys[0] : 0;
    for (Py_ssize_t j = 0; j < buckets; j++) {
        while (i < n && (((uint64_t)keys[i] - base) >> shift) < (uint64_t)j)
            i++;
        out[j] = i;
    }
    out[buckets] = n;
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&kv);
    PyBuffer_Release(&ov);
    Py_RETURN_NONE;
}

/* find(keys, directory, shift, queries, out): the place of each of *queries* in the
 * sorted *keys* into *out*; returns the index of the first query that is not among the
 * keys (its place then undefined, the rest not looked at), or -1 when all are. */
static PyObject *
find(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "find() takes 5 arguments");
        return NULL;
    }
    long shift = PyLong_AsLong(args[2]);
    if (shift == -1 && PyErr_Occurred())
        return NULL;
    if (shift < 0 || shift > 63) {
        PyErr_SetString(PyExc_ValueError, "find(): shift must be 0..63");
        return NULL;
    }
    Py_buffer kv, dv, qv, ov;
    if (int64_buffer(args[0], &kv, 0, "keys") < 0)
        return NULL;
    if (int64_buffer(args[1], &dv, 0, "directory") < 0)
        goto fail_k;
    if (int64_buffer(args[3], &qv, 0, "queries") < 0)
        goto fail_d;
    if (int64_buffer(args[4], &ov, 1, "out") < 0)
        goto fail_q;
    if (ov.len < qv.len || dv.len < 16) {
        PyErr_SetString(PyExc_ValueError, "find(): out shorter than queries, or no directory");
        goto fail_o;
    }
    const int64_t *keys = kv.buf, *dir = dv.buf, *q = qv.buf;
    int64_t *out = ov.buf;
    Py_ssize_t n = kv.len / 8, m = qv.len / 8;
    uint64_t buckets = (uint64_t)(dv.len / 8 - 1);
    Py_ssize_t missing = -1;
    Py_BEGIN_ALLOW_THREADS
    if (n == 0) {
        missing = m ? 0 : -1;
    } else {
        int64_t first = keys[0];
        for (Py_ssize_t i = 0; i < m; i++) {
            int64_t k = q[i];
            uint64_t b = ((uint64_t)k - (uint64_t)first) >> shift;
            if (k < first || b >= buckets) {
                missing = i;
                break;
            }
            Py_ssize_t lo = (Py_ssize_t)dir[b], hi = (Py_ssize_t)dir[b + 1];
            if (lo < 0 || hi > n || lo > hi) { /* not a directory of these keys */
                missing = i;
                break;
            }
            while (lo < hi) { /* the first place with keys[place] >= k */
                Py_ssize_t mid = lo + (hi - lo) / 2;
                if (keys[mid] < k)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            if (lo >= n || keys[lo] != k) {
                missing = i;
                break;
            }
            out[i] = lo;
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ov);
    PyBuffer_Release(&qv);
    PyBuffer_Release(&dv);
    PyBuffer_Release(&kv);
    return PyLong_FromSsize_t(missing);
fail_o:
    PyBuffer_Release(&ov);
fail_q:
    PyBuffer_Release(&qv);
fail_d:
    PyBuffer_Release(&dv);
fail_k:
    PyBuffer_Release(&kv);
    return NULL;
}

static PyMethodDef methods[] = {
    {"directory", (PyCFunction)(void (*)(void))directory, METH_FASTCALL,
     "directory(keys, shift, out): the first place of each bucket of sorted keys"},
    {"find", (PyCFunction)(void (*)(void))find, METH_FASTCALL,
     "find(keys, directory, shift, queries, out): the places of queries in sorted keys"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "solver.tiers._lookup",
    "Finding keys in a solved tier's sorted keys, in C (see _lookup.c).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__lookup(void)
{
    return PyModule_Create(&module);
}
