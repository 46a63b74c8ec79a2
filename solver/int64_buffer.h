/* A buffer of 64-bit integers taken from a Python object, for the optional C modules
 * that read and write numpy arrays in place (solver/tiers/_lookup.c,
 * solver/games/_connect_four.c). Header only: each module keeps its own copy. */

#ifndef NEGAGRAPH_INT64_BUFFER_H
#define NEGAGRAPH_INT64_BUFFER_H

#include <Python.h>
#include <string.h>

/* The C-contiguous, aligned buffer of 64-bit integers of *o* into *view* (writable if
 * *writable*); -1 with a TypeError naming it *what* otherwise. An unaligned numpy array
 * exports the format "=q" and is refused: callers pass np.require(..., ["C", "A"]). */
static int
int64_buffer(PyObject *o, Py_buffer *view, int writable, const char *what)
{
    int flags = PyBUF_FORMAT | PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(o, view, flags) < 0)
        return -1;
    if (view->itemsize != 8 || view->format == NULL || strchr("qlL", view->format[0]) == NULL) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "%s must be a buffer of 64-bit integers", what);
        return -1;
    }
    return 0;
}

#endif
