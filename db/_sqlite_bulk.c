/* Bulk statements on a Python sqlite3 connection, bound from whole columns in C.

   Python's sqlite3 module binds executemany()'s parameters one Python object at a time,
   through a tuple per row: about a microsecond a row before SQLite does any work, which
   was a third of a tiered connect-four solve into SQLite (docs/performance.md, "The
   SQLite write path"). Here one call runs one prepared statement over every row of a set
   of columns (lists, tuples or ranges of None, int, float, str and bytes) or of an
   iterable of row tuples, on the connection's own sqlite3 handle and so inside its
   transaction.

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

/* columns(conn, sql, columns) -> None or (extended code, message): run *sql* once per
   row of *columns* (sequences of equal length, one per parameter). */
static PyObject *bulk_columns(PyObject *self, PyObject *args) {
    PyObject *conn, *given;
    const char *sql;
    if (!PyArg_ParseTuple(args, "OsO", &conn, &sql, &given)) return NULL;
    sqlite3 *db = handle_of(conn);
    if (db == NULL) return NULL;
    PyObject *columns = PySequence_Fast(given, "columns must be a sequence");
    if (columns == NULL) return NULL;
    Py_ssize_t width = PySequence_Fast_GET_SIZE(columns);
    PyObject **fast = PyMem_Calloc(width ? width : 1, sizeof(PyObject *));
    PyObject *failure = NULL, *result = NULL;
    sqlite3_stmt *stmt = NULL;
    Py_ssize_t rows = -1;
    if (fast == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t j = 0; j < width; j++) {
        fast[j] = PySequence_Fast(PySequence_Fast_GET_ITEM(columns, j),
                                  "each column must be a sequence");
        if (fast[j] == NULL) goto done;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fast[j]);
        if (rows < 0) rows = n;
        if (n != rows) {
            PyErr_Format(PyExc_ValueError, "column %zd has %zd values, column 0 has %zd", j,
                         n, rows);
            goto done;
        }
    }
    int prepared = prepare(db, sql, &stmt, &failure);
    if (prepared != 0) goto done;
    if (api.bind_parameter_count(stmt) != width) {
        PyErr_Format(PyExc_ValueError, "the statement has %d parameters, %zd columns given",
                     api.bind_parameter_count(stmt), width);
        goto done;
    }
    for (Py_ssize_t i = 0; i < rows; i++) {
        for (Py_ssize_t j = 0; j < width; j++) {
            if (bind_value(stmt, (int)j + 1, PySequence_Fast_GET_ITEM(fast[j], i)) < 0)
                goto done;
        }
        if (step_row(db, stmt, &failure) != 0) goto done;
        if (i % ROWS_BETWEEN_SIGNAL_CHECKS == ROWS_BETWEEN_SIGNAL_CHECKS - 1 &&
            PyErr_CheckSignals() < 0)
            goto done;
    }
done:
    if (stmt != NULL) api.finalize(stmt);
    if (fast != NULL) {
        for (Py_ssize_t j = 0; j < width; j++) Py_XDECREF(fast[j]);
        PyMem_Free(fast);
    }
    Py_DECREF(columns);
    if (PyErr_Occurred()) {
        Py_XDECREF(failure);
        return NULL;
    }
    result = failure != NULL ? failure : Py_NewRef(Py_None);
    return result;
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

static PyMethodDef methods[] = {
    {"load", bulk_load, METH_VARARGS, "load(path) -> bool"},
    {"filename", bulk_filename, METH_O, "filename(conn) -> str"},
    {"columns", bulk_columns, METH_VARARGS,
     "columns(conn, sql, columns) -> None or (extended code, message)"},
    {"rows", bulk_rows, METH_VARARGS,
     "rows(conn, sql, rows) -> None or (extended code, message)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "db._sqlite_bulk",
    "Bulk statements on a sqlite3 connection, bound in C (see db/sqlite_bulk.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__sqlite_bulk(void) { return PyModule_Create(&module); }
