/* solver.chance._sweep: the value iteration of a chance solve (solver/chance/bounds.py's
 * _iterate), in C.
 *
 * It gives bit for bit the floats of the NumPy path (_Sweep.update), which it replaces
 * where the module is built: the same Gauss-Seidel sweeps by layers, each layer updated
 * from the values before it (so a move inside a layer reads the previous sweep's value),
 * the same stopping rule, and the same arithmetic in the same order. A chance node's sums
 * are NumPy's np.add.reduceat's: the first term, plus the pairwise sum of the others
 * (pairwise_sum below, NumPy's own, which sums fewer than 8 terms one after another).
 * Maxima and minima are exact; of two equal values (0.0 and -0.0) they take the second,
 * as np.maximum / np.minimum do (the x86 instructions'), so the zeros' signs agree too,
 * except where NumPy's vectorised max reduces many moves in another order.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define CHANCE 2
#define UNIT_ROUNDOFF 1.1102230246251565e-16 /* 2**-53 */
#define TINY 9.332636185032189e-302           /* 2**-1000 */
#define PW_BLOCKSIZE 128

/* NumPy's pairwise summation (numpy/_core/src/umath/loops_utils.h.src) of n terms. */
static double
pairwise_sum(const double *a, Py_ssize_t n)
{
    if (n < 8) {
        double res = 0.;
        for (Py_ssize_t i = 0; i < n; i++)
            res += a[i];
        return res;
    }
    if (n <= PW_BLOCKSIZE) {
        double r[8], res;
        Py_ssize_t i;
        for (int j = 0; j < 8; j++)
            r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++)
                r[j] += a[i + j];
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2) + pairwise_sum(a + n2, n - n2);
}

/* np.add.reduceat's sum of one segment of n >= 1 terms. */
static double
segment_sum(const double *a, Py_ssize_t n)
{
    double s = a[0];
    s += pairwise_sum(a + 1, n - 1);
    return s;
}

static double
margin(double weighted_abs, int64_t count)
{
    return 2.0 * (double)(count + 2) * UNIT_ROUNDOFF * weighted_abs + TINY;
}

/* A move of a node being iterated: its child's local id (-1: outside the level, whose
 * bounds seen from the parent are vl / vh), its sign and its probability. */
typedef struct {
    double p, vl, vh;
    int32_t at;
    int32_t positive;
} Move;

typedef struct {
    Py_buffer view;
    int held;
} Buf;

static int
take(Buf *b, PyObject *obj, const char *name, Py_ssize_t itemsize, int writable)
{
    if (PyObject_GetBuffer(obj, &b->view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT |
                                              (writable ? PyBUF_WRITABLE : 0)) < 0)
        return -1;
    b->held = 1;
    if (b->view.itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: items of %zd bytes expected", name, itemsize);
        return -1;
    }
    return 0;
}

PyDoc_STRVAR(iterate_doc,
             "iterate(low, high, start, child, sign, weight, kind, nodes, bounds, tolerance, "
             "max_sweeps, /)\n--\n\n"
             "Value iteration over the layers nodes[bounds[i]:bounds[i + 1]] (int64), in "
             "place in low / high (float64); the graph's columns start, child (int64), sign, "
             "kind (int8) and weight (float64). Returns the sweeps it took.");

static PyObject *
iterate(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "iterate() takes 11 arguments");
        return NULL;
    }
    static const char *names[9] = {"low",    "high", "start", "child", "sign",
                                   "weight", "kind", "nodes", "bounds"};
    static const Py_ssize_t sizes[9] = {8, 8, 8, 8, 1, 8, 1, 8, 8};
    Buf b[9] = {{{0}, 0}};
    double *nl = NULL, *nh = NULL, *tl = NULL, *th = NULL, *al = NULL, *ah = NULL;
    double *lo = NULL, *hi = NULL;
    int32_t *local = NULL;
    int64_t *first = NULL;
    char *chance = NULL;
    Move *moves = NULL;
    PyObject *result = NULL;
    double tolerance = PyFloat_AsDouble(args[9]);
    if (tolerance == -1.0 && PyErr_Occurred())
        return NULL;
    Py_ssize_t max_sweeps = PyLong_AsSsize_t(args[10]);
    if (max_sweeps == -1 && PyErr_Occurred())
        return NULL;
    for (int i = 0; i < 9; i++)
        if (take(&b[i], args[i], names[i], sizes[i], i < 2) < 0)
            goto done;
    double *low = b[0].view.buf, *high = b[1].view.buf;
    const int64_t *start = b[2].view.buf, *child = b[3].view.buf;
    const int8_t *sign = b[4].view.buf, *kind = b[6].view.buf;
    const double *weight = b[5].view.buf;
    const int64_t *nodes = b[7].view.buf, *bounds = b[8].view.buf;
    Py_ssize_t n = b[0].view.len / 8, edges = b[3].view.len / 8;
    Py_ssize_t nlayers = b[8].view.len / 8 - 1, total = b[7].view.len / 8;
    if (b[1].view.len / 8 != n || b[2].view.len / 8 != n + 1 || b[4].view.len != edges ||
        b[5].view.len / 8 != edges || b[6].view.len != n || nlayers < 0 ||
        total >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "iterate(): columns of unequal lengths");
        goto done;
    }
    Py_ssize_t widest = 0, most = 1;
    for (Py_ssize_t i = 0; i < nlayers; i++) {
        if (bounds[i] < 0 || bounds[i] > bounds[i + 1] || bounds[i + 1] > total) {
            PyErr_SetString(PyExc_ValueError, "iterate(): bad layer bounds");
            goto done;
        }
        if (bounds[i + 1] - bounds[i] > widest)
            widest = bounds[i + 1] - bounds[i];
    }
    for (Py_ssize_t i = 0; i < total; i++) {
        int64_t v = nodes[i];
        if (v < 0 || v >= n || start[v] >= start[v + 1] || start[v] < 0 ||
            start[v + 1] > edges) {
            PyErr_SetString(PyExc_ValueError, "iterate(): a node without moves, or out of range");
            goto done;
        }
        if (start[v + 1] - start[v] > most)
            most = start[v + 1] - start[v];
        for (int64_t e = start[v]; e < start[v + 1]; e++)
            if (child[e] < 0 || child[e] >= n) {
                PyErr_SetString(PyExc_ValueError, "iterate(): a child out of range");
                goto done;
            }
    }
    /* The level's nodes get local ids in layer order, and their moves a compact list in
     * the same order: a move within the level reads the local values, a move out of it
     * (to a final child) carries its child's bounds, seen from the parent, as constants.
     * The sweeps then run over a few small arrays instead of the whole graph's. */
    int64_t inside_edges = 0;
    for (Py_ssize_t i = 0; i < total; i++)
        inside_edges += start[nodes[i] + 1] - start[nodes[i]];
    local = calloc((size_t)n, sizeof(int32_t));
    lo = malloc(sizeof(double) * (size_t)(total + 1));
    hi = malloc(sizeof(double) * (size_t)(total + 1));
    first = malloc(sizeof(int64_t) * (size_t)(total + 1));
    chance = malloc((size_t)(total + 1));
    moves = malloc(sizeof(Move) * (size_t)(inside_edges + 1));
    nl = malloc(sizeof(double) * (size_t)(widest + 1));
    nh = malloc(sizeof(double) * (size_t)(widest + 1));
    tl = malloc(sizeof(double) * (size_t)most);
    th = malloc(sizeof(double) * (size_t)most);
    al = malloc(sizeof(double) * (size_t)most);
    ah = malloc(sizeof(double) * (size_t)most);
    if (!local || !lo || !hi || !first || !chance || !moves || !nl || !nh || !tl || !th ||
        !al || !ah) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < total; i++) {
        if (local[nodes[i]]) {
            PyErr_SetString(PyExc_ValueError, "iterate(): a node in two places");
            goto done;
        }
        local[nodes[i]] = (int32_t)(i + 1);
    }
    first[0] = 0;
    for (Py_ssize_t i = 0; i < total; i++) {
        int64_t v = nodes[i], m = first[i];
        lo[i] = low[v];
        hi[i] = high[v];
        chance[i] = kind[v] == CHANCE;
        for (int64_t e = start[v]; e < start[v + 1]; e++, m++) {
            int64_t c = child[e];
            Move *mv = &moves[m];
            mv->at = local[c] - 1;
            mv->positive = sign[e] > 0;
            mv->p = weight[e];
            mv->vl = mv->positive ? low[c] : -high[c];
            mv->vh = mv->positive ? high[c] : -low[c];
        }
        first[i + 1] = m;
    }
    Py_ssize_t sweeps = 0;
    Py_BEGIN_ALLOW_THREADS;
    while (sweeps < max_sweeps) {
        sweeps++;
        int moved = 0;
        for (Py_ssize_t L = 0; L < nlayers; L++) {
            Py_ssize_t from = bounds[L], size = bounds[L + 1] - from;
            int layer_moved = 0;
            for (Py_ssize_t i = 0; i < size; i++) {
                Py_ssize_t u = from + i;
                const Move *mv = moves + first[u];
                int64_t k = first[u + 1] - first[u];
                double new_low, new_high;
                if (chance[u]) {
                    for (int64_t j = 0; j < k; j++) {
                        double vl = mv[j].vl, vh = mv[j].vh, p = mv[j].p;
                        if (mv[j].at >= 0) {
                            vl = mv[j].positive ? lo[mv[j].at] : -hi[mv[j].at];
                            vh = mv[j].positive ? hi[mv[j].at] : -lo[mv[j].at];
                        }
                        tl[j] = p * vl;
                        th[j] = p * vh;
                        al[j] = p * fabs(vl);
                        ah[j] = p * fabs(vh);
                    }
                    new_low = segment_sum(tl, k) - margin(segment_sum(al, k), k);
                    new_high = segment_sum(th, k) + margin(segment_sum(ah, k), k);
                }
                else {
                    new_low = new_high = 0.0;
                    for (int64_t j = 0; j < k; j++) {
                        double vl = mv[j].vl, vh = mv[j].vh;
                        if (mv[j].at >= 0) {
                            vl = mv[j].positive ? lo[mv[j].at] : -hi[mv[j].at];
                            vh = mv[j].positive ? hi[mv[j].at] : -lo[mv[j].at];
                        }
                        if (j == 0 || !(new_low > vl))
                            new_low = vl;
                        if (j == 0 || !(new_high > vh))
                            new_high = vh;
                    }
                }
                nl[i] = new_low;
                nh[i] = new_high;
                if (new_low > lo[u] || new_high < hi[u])
                    layer_moved = 1;
            }
            if (layer_moved) {
                for (Py_ssize_t i = 0; i < size; i++) {
                    Py_ssize_t u = from + i;
                    if (!(lo[u] > nl[i]))
                        lo[u] = nl[i];
                    if (!(hi[u] < nh[i]))
                        hi[u] = nh[i];
                }
                moved = 1;
            }
        }
        if (!moved)
            break;
        double widest_gap = -HUGE_VAL;
        for (Py_ssize_t i = 0; i < total; i++) {
            double gap = hi[i] - lo[i];
            if (gap > widest_gap || gap != gap)
                widest_gap = gap;
            if (gap != gap)
                break; /* np.max: NaN */
        }
        if (total > 0 && widest_gap <= tolerance)
            break;
    }
    for (Py_ssize_t i = 0; i < total; i++) {
        low[nodes[i]] = lo[i];
        high[nodes[i]] = hi[i];
    }
    Py_END_ALLOW_THREADS;
    result = PyLong_FromSsize_t(sweeps);
done:
    free(local);
    free(lo);
    free(hi);
    free(first);
    free(chance);
    free(moves);
    free(nl);
    free(nh);
    free(tl);
    free(th);
    free(al);
    free(ah);
    for (int i = 0; i < 9; i++)
        if (b[i].held)
            PyBuffer_Release(&b[i].view);
    return result;
}

static PyMethodDef methods[] = {
    {"iterate", (PyCFunction)(void (*)(void))iterate, METH_FASTCALL, iterate_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "solver.chance._sweep",
    "The value iteration of a chance solve, in C (see _sweep.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__sweep(void)
{
    return PyModule_Create(&module);
}
