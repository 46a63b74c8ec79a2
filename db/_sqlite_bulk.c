/* Bulk statements on a Python sqlite3 connection, bound from whole columns in C.

   Python's sqlite3 module binds executemany()'s parameters one Python object at a time,
   through a tuple per row: about a microsecond a row before SQLite does any work, which
   was a third of a tiered connect-four solve into SQLite (docs/performance.md, "The
   SQLite write path"). Here one call runs one prepared statement over every row of a set
   of columns (lists, tuples or ranges of None, int, float, str and bytes) or of an
   iterable of row tuples, on the connection's own sqlite3 handle and so inside its
   transaction. The statements run without the GIL, a chunk of rows at a time (each
   chunk's Python values read into cells first), so that another thread, such as the
   search of a solve whose batches are written behind (db/store.py), goes on meanwhile.
   The other way, a query's integer and key columns are read straight into arrays
   (fetch).

   The handle is read from the connection object, whose C layout is CPython's own
   (Modules/_sqlite/connection.h: the sqlite3 pointer right after the object header, in
   3.11 to 3.13; this file refuses to build for other versions). The SQLite functions are
   looked up in the library that Python's _sqlite3 module itself uses (dlopen of that
   module, then dlsym), never linked separately: two copies of SQLite in one process must
   not share a handle. db/backends/sqlite/bulk.py checks the handle's file name against the
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

/* A value taken from a Python object while the GIL is held, to be bound without it: the
   text or bytes it points to belong to an object that the call keeps alive. */
typedef struct {
    int type; /* CELL_* */
    int size; /* bytes of text or blob */
    union {
        long long i;
        double d;
        const void *p;
    } v;
} Cell;

enum { CELL_NULL, CELL_INT, CELL_DOUBLE, CELL_TEXT, CELL_BLOB };

/* Rows bound and stepped between two takings of the GIL: the statement runs without it
   (another thread, such as a solver's search, goes on meanwhile), and each chunk's
   Python values are read into cells first. */
#define CHUNK_ROWS 16384

/* *value* as *cell*; 0, or -1 with a Python exception set. */
static int cell_of(Cell *cell, PyObject *value) {
    if (value == Py_None) {
        cell->type = CELL_NULL;
    } else if (PyLong_Check(value)) {
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) return -1;
        cell->type = CELL_INT;
        cell->v.i = v;
    } else if (PyUnicode_Check(value)) {
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(value, &size); /* cached in the object */
        if (text == NULL) return -1;
        if (size > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "string longer than 2 GiB");
            return -1;
        }
        cell->type = CELL_TEXT;
        cell->size = (int)size;
        cell->v.p = text;
    } else if (PyBytes_Check(value)) {
        Py_ssize_t size = PyBytes_GET_SIZE(value);
        if (size > INT32_MAX) {
            PyErr_SetString(PyExc_OverflowError, "bytes longer than 2 GiB");
            return -1;
        }
        cell->type = CELL_BLOB;
        cell->size = (int)size;
        cell->v.p = PyBytes_AS_STRING(value);
    } else if (PyFloat_Check(value)) {
        cell->type = CELL_DOUBLE;
        cell->v.d = PyFloat_AS_DOUBLE(value);
    } else {
        PyErr_Format(PyExc_TypeError, "cannot bind a value of type %s",
                     Py_TYPE(value)->tp_name);
        return -1;
    }
    return 0;
}

/* Bind *cell* as parameter *i* (no GIL needed): SQLite's result code. */
static int bind_cell(sqlite3_stmt *stmt, int i, const Cell *cell) {
    switch (cell->type) {
    case CELL_NULL: return api.bind_null(stmt, i);
    case CELL_INT: return api.bind_int64(stmt, i, cell->v.i);
    case CELL_DOUBLE: return api.bind_double(stmt, i, cell->v.d);
    case CELL_TEXT: return api.bind_text(stmt, i, cell->v.p, cell->size, SQLITE_STATIC);
    default: return api.bind_blob(stmt, i, cell->v.p, cell->size, SQLITE_STATIC);
    }
}

/* What went wrong in a chunk run without the GIL, turned into the call's result once it
   is held again. */
typedef struct {
    int bind_rc;  /* a bind's result code, or SQLITE_OK */
    int param;    /* the parameter it failed on */
    int returned; /* the statement returned a row */
    int step_rc;  /* a step's result code other than SQLITE_DONE, or SQLITE_OK */
} ChunkError;

/* Set the Python exception or *failure* for *e* (GIL held); 0 when there is none. */
static int chunk_failed(sqlite3 *db, const ChunkError *e, PyObject **failure) {
    if (e->bind_rc != SQLITE_OK) {
        PyErr_Format(PyExc_ValueError, "cannot bind parameter %d (SQLite result %d)", e->param,
                     e->bind_rc);
        return -1;
    }
    if (e->returned) {
        PyErr_SetString(PyExc_ValueError, "the statement returns rows");
        return -1;
    }
    if (e->step_rc != SQLITE_OK) {
        /* nothing else ran on the handle since the step: its message is the step's */
        *failure = Py_BuildValue("(is)", api.extended_errcode(db), api.errmsg(db));
        return *failure == NULL ? -1 : 1;
    }
    return 0;
}

/* Step *stmt*, its parameters bound (no GIL needed): 0, or 1 with *e* saying why not. */
static int step_bound(sqlite3_stmt *stmt, ChunkError *e) {
    int rc = api.step(stmt);
    if (rc == SQLITE_ROW) {
        e->returned = 1;
        return 1;
    }
    if (rc != SQLITE_DONE) {
        e->step_rc = rc;
        return 1;
    }
    api.reset(stmt);
    return 0;
}

/* One column of bulk_columns: a sequence of Python values, or an integer buffer. */
typedef struct {
    PyObject *items; /* the values (a tuple of them), or NULL for a buffer */
    Py_buffer view;  /* the buffer (view.obj set once it is held) */
    int is_signed;
    int nullable; /* values <= null_low or >= null_high are NULL */
    long long null_low, null_high;
    int key;     /* values as minimal big-endian blobs (at least one byte) */
    int text;    /* a fixed-width bytes array (numpy "S"): each item, up to its first
                    NUL, is UTF-8 text */
    Cell *cells; /* a chunk of the values, for a sequence */
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
   with a Python exception set; *n* gets its length. A sequence is copied into a tuple,
   which keeps every value alive (and its text where the cells point) while the
   statement runs without the GIL, whatever other threads do to the sequence. A
   one-dimensional array of fixed-width bytes (numpy dtype "S", buffer format "<n>s") is
   a column of text, bound from the buffer. */
static int open_column(Column *c, PyObject *given, PyObject *spec, Py_ssize_t *n) {
    int integers = 0;
    if (PyObject_CheckBuffer(given) && !PyBytes_Check(given) && !PyByteArray_Check(given)) {
        if (PyObject_GetBuffer(given, &c->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
            return -1;
        const char *format = c->view.format == NULL ? "B" : c->view.format;
        if (*format == '<' || *format == '=' || *format == '@') format++;
        size_t length = strlen(format);
        if (c->view.ndim == 1 && length > 1 && format[length - 1] == 's' &&
            strspn(format, "0123456789") == length - 1 && c->view.itemsize > 0) {
            if (spec != Py_None) {
                PyErr_SetString(PyExc_TypeError, "a column of text takes no spec");
                return -1;
            }
            if (c->view.itemsize > INT32_MAX) {
                PyErr_SetString(PyExc_OverflowError, "text longer than 2 GiB");
                return -1;
            }
            c->text = 1;
            *n = c->view.len / c->view.itemsize;
            return 0;
        }
        integers = c->view.ndim == 1 && length == 1 &&
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
        if (!PySequence_Check(given) || PyUnicode_Check(given) || PyBytes_Check(given)) {
            PyErr_SetString(PyExc_TypeError, "each column must be a sequence or an array");
            return -1;
        }
        c->items = PySequence_Tuple(given);
        if (c->items == NULL) return -1;
        *n = PyTuple_GET_SIZE(c->items);
        c->cells = PyMem_Malloc(CHUNK_ROWS * sizeof(Cell));
        if (c->cells == NULL) {
            PyErr_NoMemory();
            return -1;
        }
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

/* Bind row *i* of column *c* as parameter *j* (no GIL needed; a sequence's row from the
   chunk starting at row *start*): SQLite's result code. */
static int bind_column(sqlite3_stmt *stmt, int j, const Column *c, Py_ssize_t i,
                       Py_ssize_t start) {
    if (c->items != NULL) return bind_cell(stmt, j, &c->cells[i - start]);
    if (c->text) {
        const char *at = (const char *)c->view.buf + i * c->view.itemsize;
        const char *end = memchr(at, 0, (size_t)c->view.itemsize);
        int size = end == NULL ? (int)c->view.itemsize : (int)(end - at);
        return api.bind_text(stmt, j, at, size, SQLITE_STATIC);
    }
    long long v = buffer_item(c, i);
    if (c->nullable && (v <= c->null_low || v >= c->null_high)) return api.bind_null(stmt, j);
    if (c->key) {
        unsigned char bytes[8];
        uint64_t u = (uint64_t)v;
        int size = 1;
        while (size < 8 && (u >> (8 * size)) != 0) size++;
        for (int b = 0; b < size; b++) bytes[size - 1 - b] = (unsigned char)(u >> (8 * b));
        return api.bind_blob(stmt, j, bytes, size, SQLITE_TRANSIENT);
    }
    return api.bind_int64(stmt, j, v);
}

/* Bind and step rows [start, stop) of *cols* without the GIL: 0, or 1 with *e* set.
   Where *many* > 1, *multi* takes *many* rows a step (its parameters row after row),
   and *stmt* the rows left over. */
static int run_columns(sqlite3_stmt *stmt, sqlite3_stmt *multi, Py_ssize_t many,
                       const Column *cols, Py_ssize_t width, Py_ssize_t start,
                       Py_ssize_t stop, ChunkError *e) {
    Py_ssize_t i = start;
    if (multi != NULL && many > 1) {
        for (; i + many <= stop; i += many) {
            for (Py_ssize_t r = 0; r < many; r++) {
                for (Py_ssize_t j = 0; j < width; j++) {
                    int param = (int)(r * width + j) + 1;
                    int rc = bind_column(multi, param, &cols[j], i + r, start);
                    if (rc != SQLITE_OK) {
                        e->bind_rc = rc;
                        e->param = param;
                        return 1;
                    }
                }
            }
            if (step_bound(multi, e)) return 1;
        }
    }
    for (; i < stop; i++) {
        for (Py_ssize_t j = 0; j < width; j++) {
            int rc = bind_column(stmt, (int)j + 1, &cols[j], i, start);
            if (rc != SQLITE_OK) {
                e->bind_rc = rc;
                e->param = (int)j + 1;
                return 1;
            }
        }
        if (step_bound(stmt, e)) return 1;
    }
    return 0;
}

/* columns(conn, sql, columns, specs=None, multi_sql=None, many=1) -> None or (extended
   code, message): run *sql* once per row of *columns* (one per parameter, equally long):
   each a sequence of Python values, a one-dimensional integer array whose spec
   (specs[j]) is None, (null_low, null_high) to bind NULL for values at or beyond either,
   or "key" to bind each value as its minimal big-endian bytes, or a one-dimensional
   array of fixed-width bytes, bound as UTF-8 text (up to each item's first NUL: numpy's
   padding). With *multi_sql*, the
   same statement for *many* rows at once (an INSERT of *many* rows of values), which
   runs for as many rows as it can: SQLite's work a statement (its cursors opened and
   closed, its end) is then shared by *many* rows. The statements run without the GIL, a
   chunk of rows at a time; the caller must not use the connection from another thread
   meanwhile (SQLite would serialise it, but not the transaction). */
static PyObject *bulk_columns(PyObject *self, PyObject *args) {
    PyObject *conn, *given, *specs = Py_None;
    const char *sql, *multi_sql = NULL;
    Py_ssize_t many = 1;
    if (!PyArg_ParseTuple(args, "OsO|Ozn", &conn, &sql, &given, &specs, &multi_sql, &many))
        return NULL;
    sqlite3 *db = handle_of(conn);
    if (db == NULL) return NULL;
    PyObject *columns = PySequence_Fast(given, "columns must be a sequence");
    if (columns == NULL) return NULL;
    Py_ssize_t width = PySequence_Fast_GET_SIZE(columns);
    Column *cols = PyMem_Calloc(width ? width : 1, sizeof(Column));
    PyObject *failure = NULL;
    sqlite3_stmt *stmt = NULL, *multi = NULL;
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
    if (multi_sql != NULL && many > 1 && rows >= many) {
        if (many > CHUNK_ROWS || CHUNK_ROWS % many != 0) {
            PyErr_Format(PyExc_ValueError, "many must divide %d", CHUNK_ROWS);
            goto done;
        }
        if (prepare(db, multi_sql, &multi, &failure) != 0) goto done;
        if (api.bind_parameter_count(multi) != many * width) {
            PyErr_Format(PyExc_ValueError, "the statement for %zd rows has %d parameters", many,
                         api.bind_parameter_count(multi));
            goto done;
        }
    }
    for (Py_ssize_t start = 0; start < rows; start += CHUNK_ROWS) {
        Py_ssize_t stop = rows - start < CHUNK_ROWS ? rows : start + CHUNK_ROWS;
        for (Py_ssize_t j = 0; j < width; j++) {
            if (cols[j].items == NULL) continue;
            for (Py_ssize_t i = start; i < stop; i++) {
                if (cell_of(&cols[j].cells[i - start], PyTuple_GET_ITEM(cols[j].items, i)) < 0)
                    goto done;
            }
        }
        ChunkError e = {SQLITE_OK, 0, 0, SQLITE_OK};
        int bad;
        Py_BEGIN_ALLOW_THREADS
        bad = run_columns(stmt, multi, many, cols, width, start, stop, &e);
        Py_END_ALLOW_THREADS
        if (bad && chunk_failed(db, &e, &failure) != 0) goto done;
        if (PyErr_CheckSignals() < 0) goto done;
    }
done:
    if (stmt != NULL) api.finalize(stmt);
    if (multi != NULL) api.finalize(multi);
    if (cols != NULL) {
        for (Py_ssize_t j = 0; j < width; j++) {
            Py_XDECREF(cols[j].items);
            PyMem_Free(cols[j].cells);
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

/* Bind and step *count* rows of *width* cells each without the GIL: 0, or 1 with *e*. */
static int run_cells(sqlite3_stmt *stmt, const Cell *cells, int width, Py_ssize_t count,
                     ChunkError *e) {
    for (Py_ssize_t i = 0; i < count; i++) {
        for (int j = 0; j < width; j++) {
            int rc = bind_cell(stmt, j + 1, &cells[i * width + j]);
            if (rc != SQLITE_OK) {
                e->bind_rc = rc;
                e->param = j + 1;
                return 1;
            }
        }
        if (step_bound(stmt, e)) return 1;
    }
    return 0;
}

/* rows(conn, sql, rows) -> None or (extended code, message): run *sql* once per tuple
   of the iterable *rows*, a chunk of rows at a time without the GIL (as columns()). */
static PyObject *bulk_rows(PyObject *self, PyObject *args) {
    PyObject *conn, *given;
    const char *sql;
    if (!PyArg_ParseTuple(args, "OsO", &conn, &sql, &given)) return NULL;
    sqlite3 *db = handle_of(conn);
    if (db == NULL) return NULL;
    PyObject *iterator = PyObject_GetIter(given);
    if (iterator == NULL) return NULL;
    PyObject *failure = NULL, *held = NULL;
    Cell *cells = NULL;
    sqlite3_stmt *stmt = NULL;
    if (prepare(db, sql, &stmt, &failure) != 0) goto done;
    int width = api.bind_parameter_count(stmt);
    cells = PyMem_Malloc((size_t)CHUNK_ROWS * (width ? width : 1) * sizeof(Cell));
    held = PyList_New(0); /* the chunk's rows, alive while their cells are bound */
    if (cells == NULL || held == NULL) {
        if (cells == NULL) PyErr_NoMemory();
        goto done;
    }
    int more = 1;
    while (more) {
        Py_ssize_t count = 0;
        while (count < CHUNK_ROWS) {
            PyObject *row = PyIter_Next(iterator);
            if (row == NULL) {
                more = 0;
                break;
            }
            PyObject *fast = PySequence_Fast(row, "each row must be a sequence");
            Py_DECREF(row);
            if (fast == NULL) goto done;
            int kept = PyList_Append(held, fast);
            Py_DECREF(fast);
            if (kept < 0) goto done;
            if (PySequence_Fast_GET_SIZE(fast) != width) {
                PyErr_Format(PyExc_ValueError, "the statement has %d parameters, a row has %zd",
                             width, PySequence_Fast_GET_SIZE(fast));
                goto done;
            }
            for (int j = 0; j < width; j++) {
                if (cell_of(&cells[count * width + j], PySequence_Fast_GET_ITEM(fast, j)) < 0)
                    goto done;
            }
            count++;
        }
        if (PyErr_Occurred()) goto done; /* the iterator failed */
        ChunkError e = {SQLITE_OK, 0, 0, SQLITE_OK};
        int bad;
        Py_BEGIN_ALLOW_THREADS
        bad = run_cells(stmt, cells, width, count, &e);
        Py_END_ALLOW_THREADS
        if (bad && chunk_failed(db, &e, &failure) != 0) goto done;
        if (PyList_SetSlice(held, 0, PyList_GET_SIZE(held), NULL) < 0) goto done;
        if (PyErr_CheckSignals() < 0) goto done;
    }
done:
    if (stmt != NULL) api.finalize(stmt);
    PyMem_Free(cells);
    Py_XDECREF(held);
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
     "columns(conn, sql, columns, specs=None, multi_sql=None, many=1) -> None or "
     "(extended code, message)"},
    {"rows", bulk_rows, METH_VARARGS,
     "rows(conn, sql, rows) -> None or (extended code, message)"},
    {"fetch", bulk_fetch, METH_VARARGS,
     "fetch(conn, sql, params, arrays, nulls, keys) -> (rows, None or (code, message))"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "db._sqlite_bulk",
    "Bulk statements on a sqlite3 connection, bound in C (see db/backends/sqlite/bulk.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__sqlite_bulk(void) { return PyModule_Create(&module); }
