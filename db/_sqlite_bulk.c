/* Bulk statements on a Python sqlite3 connection, bound from whole columns in C.

   Python's sqlite3 module binds executemany()'s parameters one Python object at a time,
   through a tuple per row: about a microsecond a row before SQLite does any work, which
   was a third of a tiered connect-four solve into SQLite (docs/performance.md, "The
   SQLite write path"). Here one call runs one prepared statement over every row of a set
   of columns (lists, tuples or ranges of None, int, float, str and bytes) or of an
   iterable of row tuples, on the connection's own sqlite3 handle and so inside its
   transaction. The other way, a query's integer and key columns are read straight into
   arrays (fetch).

   The handle is read from the connection object, whose C layout is CPython's own
   (Modules/_sqlite/connection.h: the sqlite3 pointer right after the object header, in
   3.11 to 3.13; this file refuses to build for other versions). The SQLite functions are
   looked up in the library that Python's _sqlite3 module itself uses (dlopen of that
   module, then dlsym), never linked separately: two copies of SQLite in one process must
   not share a handle. db/sqlite_bulk.py checks the handle's file name against the
   connection's before the first use, and falls back to executemany wherever any of this
   is not available. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#error "db/_sqlite_bulk.c knows the sqlite3.Connection layout of CPython 3.11 to 3.13 only"
#endif

typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef void (*sqlite_destructor)(void *);

#define SQLITE_OK 0
#define SQLITE_ROW 100
#define SQLITE_DONE 101
#define SQLITE_STATIC ((sqlite_destructor)0)
#define SQLITE_TRANSIENT ((sqlite_destructor)-1)
#define SQLITE_INTEGER 1
#define SQLITE_BLOB 4
#define SQLITE_NULL 5

typedef struct {
    PyObject_HEAD
    sqlite3 *db;
} ConnectionHead; /* the first fields of CPython's pysqlite_Connection */

static struct {
    int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
    int (*bind_int64)(sqlite3_stmt *, int, long long);
    int (*bind_double)(sqlite3_stmt *, int, double);
    int (*bind_null)(sqlite3_stmt *, int);
    int (*bind_text)(sqlite3_stmt *, int, const char *, int, sqlite_destructor);
    int (*bind_blob)(sqlite3_stmt *, int, const void *, int, sqlite_destructor);
    int (*bind_parameter_count)(sqlite3_stmt *);
    int (*step)(sqlite3_stmt *);
    int (*reset)(sqlite3_stmt *);
    int (*finalize)(sqlite3_stmt *);
    const char *(*errmsg)(sqlite3 *);
    int (*extended_errcode)(sqlite3 *);
    const char *(*db_filename)(sqlite3 *, const char *);
    int (*column_count)(sqlite3_stmt *);
    int (*column_type)(sqlite3_stmt *, int);
    long long (*column_int64)(sqlite3_stmt *, int);
    const void *(*column_blob)(sqlite3_stmt *, int);
    int (*column_bytes)(sqlite3_stmt *, int);
} api;

static int api_loaded = 0;

#define ROWS_BETWEEN_SIGNAL_CHECKS 65536

/* load(path) -> bool: look the SQLite functions up in the already loaded module *path*
   (Python's _sqlite3) and the libraries it uses. */
static PyObject *bulk_load(PyObject *self, PyObject *args) {
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    void *lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (lib == NULL) Py_RETURN_FALSE;
#define LOOK(field, name)                                   \
    *(void **)(&api.field) = dlsym(lib, name);              \
    if (api.field == NULL) { dlclose(lib); Py_RETURN_FALSE; }
    LOOK(prepare_v2, "sqlite3_prepare_v2")
    LOOK(bind_int64, "sqlite3_bind_int64")
    LOOK(bind_double, "sqlite3_bind_double")
    LOOK(bind_null, "sqlite3_bind_null")
    LOOK(bind_text, "sqlite3_bind_text")
    LOOK(bind_blob, "sqlite3_bind_blob")
    LOOK(bind_parameter_count, "sqlite3_bind_parameter_count")
    LOOK(step, "sqlite3_step")
    LOOK(reset, "sqlite3_reset")
    LOOK(finalize, "sqlite3_finalize")
    LOOK(errmsg, "sqlite3_errmsg")
    LOOK(extended_errcode, "sqlite3_extended_errcode")
    LOOK(db_filename, "sqlite3_db_filename")
    LOOK(column_count, "sqlite3_column_count")
    LOOK(column_type, "sqlite3_column_type")
    LOOK(column_int64, "sqlite3_column_int64")
    LOOK(column_blob, "sqlite3_column_blob")
    LOOK(column_bytes, "sqlite3_column_bytes")
#undef LOOK
    /* the module stays loaded as long as Python runs: keeping the reference is harmless */
    api_loaded = 1;
    Py_RETURN_TRUE;
}

static sqlite3 *handle_of(PyObject *conn) {
    if (!api_loaded) {
        PyErr_SetString(PyExc_RuntimeError, "load() has not found SQLite's functions");
        return NULL;
    }
    if (strcmp(Py_TYPE(conn)->tp_name, "sqlite3.Connection") != 0) {
        PyErr_Format(PyExc_TypeError, "a sqlite3.Connection is needed, not %s",
                     Py_TYPE(conn)->tp_name);
        return NULL;
    }
    sqlite3 *db = ((ConnectionHead *)conn)->db;
    if (db == NULL) {
        PyErr_SetString(PyExc_ValueError, "the connection is closed");
        return NULL;
    }
    return db;
}

/* filename(conn) -> str: the file of the connection's main database ("" in memory). */
static PyObject *bulk_filename(PyObject *self, PyObject *conn) {
    sqlite3 *db = handle_of(conn);
    if (db == NULL) return NULL;
    const char *name = api.db_filename(db, "main");
    return PyUnicode_DecodeFSDefault(name == NULL ? "" : name);
}

/* Bind *value* as parameter *i*; 0, or -1 with a Python exception set. */
static int bind_value(sqlite3_stmt *stmt, int i, PyObject *value) {
    int rc;
    if (value == Py_None) {
        rc = api.bind_null(stmt, i);
    } else if (PyLong_Check(value)) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) return -1;
        rc = api.bind_int64(stmt, i, v);
    } else if (PyUnicode_Check(value)) {
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(value, &size);
        if (text == NULL) return -1;
        if (size > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "string longer than 2 GiB");
            return -1;
        }
        rc = api.bind_text(stmt, i, text, (int)size, SQLITE_STATIC);
    } else if (PyBytes_Check(value)) {
        Py_ssize_t size = PyBytes_GET_SIZE(value);
        if (size > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "bytes longer than 2 GiB");
            return -1;
        }
        rc = api.bind_blob(stmt, i, PyBytes_AS_STRING(value), (int)size, SQLITE_STATIC);
    } else if (PyFloat_Check(value)) {
        rc = api.bind_double(stmt, i, PyFloat_AS_DOUBLE(value));
    } else {
        PyErr_Format(PyExc_TypeError, "cannot bind a value of type %s",
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    if (rc != SQLITE_OK) {
        PyErr_Format(PyExc_ValueError, "cannot bind parameter %d (SQLite result %d)", i, rc);
        return -1;
    }
    return 0;
}

/* Step *stmt* once: 0 when it is done; 1 when SQLite failed (its code and message are
   in *failure*); -1 with a Python exception set. */
static int step_row(sqlite3 *db, sqlite3_stmt *stmt, PyObject **failure) {
    int rc = api.step(stmt);
    if (rc == SQLITE_ROW) {
        PyErr_SetString(PyExc_ValueError, "the statement returns rows");
        return -1;
    }
    if (rc != SQLITE_DONE) {
        *failure = Py_BuildValue("(is)", api.extended_errcode(db), api.errmsg(db));
        return *failure == NULL ? -1 : 1;
    }
    api.reset(stmt);
    return 0;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **stmt, PyObject **failure) {
    if (api.prepare_v2(db, sql, -1, stmt, NULL) != SQLITE_OK) {
        *failure = Py_BuildValue("(is)", api.extended_errcode(db), api.errmsg(db));
        return *failure == NULL ? -1 : 1;
    }
    if (*stmt == NULL) {
        PyErr_SetString(PyExc_ValueError, "no statement given");
        return -1;
    }
    return 0;
}

/* One column of bulk_columns: a sequence of Python values, or an integer buffer. */
typedef struct {
    PyObject *fast; /* the sequence (PySequence_Fast), or NULL for a buffer */
    Py_buffer view; /* the buffer (view.obj set once it is held) */
    int is_signed;
    int nullable; /* values <= null_low or >= null_high are NULL */
    long long null_low, null_high;
    int key; /* values as minimal big-endian blobs (at least one byte) */
} Column;

/* Item *i* of integer buffer *c*. */
static long long buffer_item(const Column *c, Py_ssize_t i) {
    const char *at = (const char *)c->view.buf + i * c->view.itemsize;
    switch (c->view.itemsize) {
    case 8: return c->is_signed ? (long long)*(const int64_t *)at : (long long)*(const uint64_t *)at;
    case 4: return c->is_signed ? (long long)*(const int32_t *)at : (long long)*(const uint32_t *)at;
    case 2: return c->is_signed ? (long long)*(const int16_t *)at : (long long)*(const uint16_t *)at;
    default: return c->is_signed ? (long long)*(const int8_t *)at : (long long)*(const uint8_t *)at;
    }
}

/* Hold column *given* with its *spec* (None, (null_low, null_high) or "key"); 0, or -1
   with a Python exception set; *n* gets its length. */
static int open_column(Column *c, PyObject *given, PyObject *spec, Py_ssize_t *n) {
    int integers = 0;
    if (PyObject_CheckBuffer(given) && !PyBytes_Check(given) && !PyByteArray_Check(given)) {
        if (PyObject_GetBuffer(given, &c->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            return -1;
        const char *format = c->view.format == NULL ? "B" : c->view.format;
        if (*format == '<' || *format == '=' || *format == '@') format++;
        integers = c->view.ndim == 1 && strlen(format) == 1 &&
                   strchr("bBhHiIlLqQ?", *format) != NULL &&
                   (c->view.itemsize == 1 || c->view.itemsize == 2 ||
                    c->view.itemsize == 4 || c->view.itemsize == 8);
        if (integers) {
            c->is_signed = strchr("bhilq", *format) != NULL;
        } else {
            PyBuffer_Release(&c->view); /* not integers: read as a sequence below */
        }
    }
    if (!integers) {
        if (spec != Py_None) {
            PyErr_SetString(PyExc_TypeError, "only a column of integers in an array takes a spec");
            return -1;
        }
        c->fast = PySequence_Fast(given, "each column must be a sequence or an array");
        if (c->fast == NULL) return -1;
        *n = PySequence_Fast_GET_SIZE(c->fast);
        return 0;
    }
    *n = c->view.len / c->view.itemsize;
    if (spec == Py_None) return 0;
    if (PyUnicode_Check(spec) && PyUnicode_CompareWithASCIIString(spec, "key") == 0) {
        c->key = 1;
        return 0;
    }
    if (!PyTuple_Check(spec) ||
        !PyArg_ParseTuple(spec, "LL", &c->null_low, &c->null_high)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "a spec is None, (null_low, null_high) or 'key'");
        return -1;
    }
    c->nullable = 1;
    return 0;
}

/* Bind row *i* of column *c* as parameter *j*; 0, or -1 with a Python exception set. */
static int bind_column(sqlite3_stmt *stmt, int j, const Column *c, Py_ssize_t i) {
    if (c->fast != NULL) return bind_value(stmt, j, PySequence_Fast_GET_ITEM(c->fast, i));
    long long v = buffer_item(c, i);
    int rc;
    if (c->nullable && (v <= c->null_low || v >= c->null_high)) {
        rc = api.bind_null(stmt, j);
    } else if (c->key) {
        unsigned char bytes[8];
        uint64_t u = (uint64_t)v;
        int size = 1;
        while (size < 8 && (u >> (8 * size)) != 0) size++;
        for (int b = 0; b < size; b++) bytes[size - 1 - b] = (unsigned char)(u >> (8 * b));
        rc = api.bind_blob(stmt, j, bytes, size, SQLITE_TRANSIENT);
    } else {
        rc = api.bind_int64(stmt, j, v);
    }
    if (rc != SQLITE_OK) {
        PyErr_Format(PyExc_ValueError, "cannot bind parameter %d (SQLite result %d)", j, rc);
        return -1;
    }
    return 0;
}

/* columns(conn, sql, columns, specs=None) -> None or (extended code, message): run *sql*
   once per row of *columns* (one per parameter, equally long): each a sequence of
   Python values, or a one-dimensional integer array whose spec (specs[j]) is None,
   (null_low, null_high) to bind NULL for values at or beyond either, or "key" to bind
   each value as its minimal big-endian bytes. */
static PyObject *bulk_columns(PyObject *self, PyObject *args) {
    PyObject *conn, *given, *specs = Py_None;
    const char *sql;
    if (!PyArg_ParseTuple(args, "OsO|O", &conn, &sql, &given, &specs)) return NULL;
    sqlite3 *db = handle_of(conn);
    if (db == NULL) return NULL;
    PyObject *columns = PySequence_Fast(given, "columns must be a sequence");
    if (columns == NULL) return NULL;
    Py_ssize_t width = PySequence_Fast_GET_SIZE(columns);
    Column *cols = PyMem_Calloc(width ? width : 1, sizeof(Column));
    PyObject *failure = NULL;
    sqlite3_stmt *stmt = NULL;
    Py_ssize_t rows = -1;
    if (cols == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (specs != Py_None && (!PyList_Check(specs) || PyList_GET_SIZE(specs) != width)) {
        PyErr_SetString(PyExc_ValueError, "specs must be a list with one item a column");
        goto done;
    }
    for (Py_ssize_t j = 0; j < width; j++) {
        Py_ssize_t n;
        PyObject *spec = specs == Py_None ? Py_None : PyList_GET_ITEM(specs, j);
        if (open_column(&cols[j], PySequence_Fast_GET_ITEM(columns, j), spec, &n) < 0)
            goto done;
        if (rows < 0) rows = n;
        if (n != rows) {
            PyErr_Format(PyExc_ValueError, "column %zd has %zd values, column 0 has %zd", j,
                         n, rows);
            goto done;
        }
    }
    if (prepare(db, sql, &stmt, &failure) != 0) goto done;
    if (api.bind_parameter_count(stmt) != width) {
        PyErr_Format(PyExc_ValueError, "the statement has %d parameters, %zd columns given",
                     api.bind_parameter_count(stmt), width);
        goto done;
    }
    for (Py_ssize_t i = 0; i < rows; i++) {
        for (Py_ssize_t j = 0; j < width; j++) {
            if (bind_column(stmt, (int)j + 1, &cols[j], i) < 0) goto done;
        }
        if (step_row(db, stmt, &failure) != 0) goto done;
        if (i % ROWS_BETWEEN_SIGNAL_CHECKS == ROWS_BETWEEN_SIGNAL_CHECKS - 1 &&
            PyErr_CheckSignals() < 0)
            goto done;
    }
done:
    if (stmt != NULL) api.finalize(stmt);
    if (cols != NULL) {
        for (Py_ssize_t j = 0; j < width; j++) {
            Py_XDECREF(cols[j].fast);
            if (cols[j].view.obj != NULL) PyBuffer_Release(&cols[j].view);
        }
        PyMem_Free(cols);
    }
    Py_DECREF(columns);
    if (PyErr_Occurred()) {
        Py_XDECREF(failure);
        return NULL;
    }
    return failure != NULL ? failure : Py_NewRef(Py_None);
}

/* rows(conn, sql, rows) -> None or (extended code, message): run *sql* once per tuple
   of the iterable *rows*. */
static PyObject *bulk_rows(PyObject *self, PyObject *args) {
    PyObject *conn, *given;
    const char *sql;
    if (!PyArg_ParseTuple(args, "OsO", &conn, &sql, &given)) return NULL;
    sqlite3 *db = handle_of(conn);
    if (db == NULL) return NULL;
    PyObject *iterator = PyObject_GetIter(given);
    if (iterator == NULL) return NULL;
    PyObject *failure = NULL, *row = NULL;
    sqlite3_stmt *stmt = NULL;
    if (prepare(db, sql, &stmt, &failure) != 0) goto done;
    int width = api.bind_parameter_count(stmt);
    Py_ssize_t i = 0;
    while ((row = PyIter_Next(iterator)) != NULL) {
        PyObject *fast = PySequence_Fast(row, "each row must be a sequence");
        Py_DECREF(row);
        if (fast == NULL) goto done;
        if (PySequence_Fast_GET_SIZE(fast) != width) {
            PyErr_Format(PyExc_ValueError, "the statement has %d parameters, a row has %zd",
                         width, PySequence_Fast_GET_SIZE(fast));
            Py_DECREF(fast);
            goto done;
        }
        for (int j = 0; j < width; j++) {
            if (bind_value(stmt, j + 1, PySequence_Fast_GET_ITEM(fast, j)) < 0) {
                Py_DECREF(fast);
                goto done;
            }
        }
        int stepped = step_row(db, stmt, &failure);
        Py_DECREF(fast);
        if (stepped != 0) goto done;
        if (++i % ROWS_BETWEEN_SIGNAL_CHECKS == 0 && PyErr_CheckSignals() < 0) goto done;
    }
done:
    if (stmt != NULL) api.finalize(stmt);
    Py_DECREF(iterator);
    if (PyErr_Occurred()) {
        Py_XDECREF(failure);
        return NULL;
    }
    return failure != NULL ? failure : Py_NewRef(Py_None);
}

/* Store *value* as item *i* of *view* (an integer buffer of 1, 2, 4 or 8 bytes). */
static int store_int(Py_buffer *view, Py_ssize_t i, long long value) {
    char *at = (char *)view->buf + i * view->itemsize;
    switch (view->itemsize) {
    case 8: *(int64_t *)at = (int64_t)value; return 0;
    case 4:
        if (value < INT32_MIN || value > INT32_MAX) break;
        *(int32_t *)at = (int32_t)value;
        return 0;
    case 2:
        if (value < INT16_MIN || value > INT16_MAX) break;
        *(int16_t *)at = (int16_t)value;
        return 0;
    case 1:
        if (value < 0 || value > 255) break;
        *(uint8_t *)at = (uint8_t)value;
        return 0;
    }
    PyErr_Format(PyExc_OverflowError, "%lld does not fit in %zd bytes", value, view->itemsize);
    return -1;
}

/* fetch(conn, sql, params, arrays, nulls, keys) -> (rows, None or (code, message)):
   run the query *sql* with *params* and store column j of row i as item i of arrays[j]
   (a writable integer buffer; every array as long as the rows expected): NULL as
   nulls[j], a blob (when keys[j]) as the big-endian integer it spells, at most 8
   bytes. More rows than the arrays hold is an error. */
static PyObject *bulk_fetch(PyObject *self, PyObject *args) {
    PyObject *conn, *params, *arrays, *nulls, *keys;
    const char *sql;
    if (!PyArg_ParseTuple(args, "OsOOOO", &conn, &sql, &params, &arrays, &nulls, &keys))
        return NULL;
    sqlite3 *db = handle_of(conn);
    if (db == NULL) return NULL;
    if (!PyTuple_Check(params) || !PyList_Check(arrays) || !PyList_Check(nulls) ||
        !PyList_Check(keys)) {
        PyErr_SetString(PyExc_TypeError, "params must be a tuple; arrays, nulls, keys lists");
        return NULL;
    }
    Py_ssize_t width = PyList_GET_SIZE(arrays);
    if (PyList_GET_SIZE(nulls) != width || PyList_GET_SIZE(keys) != width || width == 0) {
        PyErr_SetString(PyExc_ValueError, "arrays, nulls and keys must have one item a column");
        return NULL;
    }
    Py_buffer *views = PyMem_Calloc(width, sizeof(Py_buffer));
    long long *null_values = PyMem_Calloc(width, sizeof(long long));
    int *is_key = PyMem_Calloc(width, sizeof(int));
    Py_ssize_t got = 0, capacity = -1, rows = 0;
    PyObject *failure = NULL;
    sqlite3_stmt *stmt = NULL;
    if (views == NULL || null_values == NULL || is_key == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < width; j++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(arrays, j), &views[j],
                               PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
            goto done;
        got = j + 1;
        Py_ssize_t n = views[j].len / views[j].itemsize;
        if (capacity < 0) capacity = n;
        if (n != capacity) {
            PyErr_SetString(PyExc_ValueError, "the arrays differ in length");
            goto done;
        }
        null_values[j] = PyLong_AsLongLong(PyList_GET_ITEM(nulls, j));
        if (null_values[j] == -1 && PyErr_Occurred()) goto done;
        is_key[j] = PyObject_IsTrue(PyList_GET_ITEM(keys, j));
        if (is_key[j] < 0) goto done;
    }
    if (prepare(db, sql, &stmt, &failure) != 0) goto done;
    if (api.bind_parameter_count(stmt) != PyTuple_GET_SIZE(params)) {
        PyErr_Format(PyExc_ValueError, "the statement has %d parameters, %zd given",
                     api.bind_parameter_count(stmt), PyTuple_GET_SIZE(params));
        goto done;
    }
    if (api.column_count(stmt) != width) {
        PyErr_Format(PyExc_ValueError, "the query has %d columns, %zd arrays given",
                     api.column_count(stmt), width);
        goto done;
    }
    for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(params); j++) {
        if (bind_value(stmt, (int)j + 1, PyTuple_GET_ITEM(params, j)) < 0) goto done;
    }
    for (;;) {
        int rc = api.step(stmt);
        if (rc == SQLITE_DONE) break;
        if (rc != SQLITE_ROW) {
            failure = Py_BuildValue("(is)", api.extended_errcode(db), api.errmsg(db));
            goto done;
        }
        if (rows == capacity) {
            PyErr_Format(PyExc_ValueError, "the query returns more than %zd rows", capacity);
            goto done;
        }
        for (int j = 0; j < (int)width; j++) {
            long long value;
            int type = api.column_type(stmt, j);
            if (type == SQLITE_NULL) {
                value = null_values[j];
            } else if (is_key[j]) {
                const unsigned char *blob = api.column_blob(stmt, j);
                int size = api.column_bytes(stmt, j);
                if (type != SQLITE_BLOB || size > 8) {
                    PyErr_Format(PyExc_ValueError,
                                 "column %d of row %zd is not a key of at most 8 bytes", j,
                                 rows);
                    goto done;
                }
                uint64_t key = 0;
                for (int b = 0; b < size; b++) key = (key << 8) | blob[b];
                value = (long long)key;
            } else if (type == SQLITE_INTEGER) {
                value = api.column_int64(stmt, j);
            } else {
                PyErr_Format(PyExc_ValueError, "column %d of row %zd is not an integer", j,
                             rows);
                goto done;
            }
            if (store_int(&views[j], rows, value) < 0) goto done;
        }
        rows++;
        if (rows % ROWS_BETWEEN_SIGNAL_CHECKS == 0 && PyErr_CheckSignals() < 0) goto done;
    }
done:
    if (stmt != NULL) api.finalize(stmt);
    for (Py_ssize_t j = 0; j < got; j++) PyBuffer_Release(&views[j]);
    PyMem_Free(views);
    PyMem_Free(null_values);
    PyMem_Free(is_key);
    if (PyErr_Occurred()) {
        Py_XDECREF(failure);
        return NULL;
    }
    if (failure == NULL) return Py_BuildValue("(nO)", rows, Py_None);
    return Py_BuildValue("(nN)", rows, failure);
}

static PyMethodDef methods[] = {
    {"load", bulk_load, METH_VARARGS, "load(path) -> bool"},
    {"filename", bulk_filename, METH_O, "filename(conn) -> str"},
    {"columns", bulk_columns, METH_VARARGS,
     "columns(conn, sql, columns, specs=None) -> None or (extended code, message)"},
    {"rows", bulk_rows, METH_VARARGS,
     "rows(conn, sql, rows) -> None or (extended code, message)"},
    {"fetch", bulk_fetch, METH_VARARGS,
     "fetch(conn, sql, params, arrays, nulls, keys) -> (rows, None or (code, message))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "db._sqlite_bulk",
    "Bulk statements on a sqlite3 connection, bound in C (see db/sqlite_bulk.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__sqlite_bulk(void) { return PyModule_Create(&module); }
