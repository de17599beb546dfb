/* _wqcore: the hot path of kubeloop's WorkQueue (add, get with an item ready, done) in C.
 *
 * Contract (kubeloop/runtime/workqueue/queue_native.py chooses it, queue.py wires it in):
 * a `Core` is built by a `WorkQueue` and shares the queue's state: the queue's FIFO (a
 * collections.deque) and list of drain waiters, and the core's own `dirty` and `processing`
 * tables (item -> add / start time, or 0.0 without metrics; see "Table" below), which the
 * queue takes as its `_dirty` and `_processing`. So every Python method of the queue (the
 * slow paths: waiting, waking, shutdown, the unfinished-work updater, subclasses) sees exactly
 * what the C methods do, and the reverse. Flags the Python side changes (shutting down,
 * whether a getter must be woken, whether the updater runs) are pushed in with `sync()`. The
 * core holds the queue through a weak reference (the queue holds the core's bound methods).
 *
 * The operations are client-go's (k8s.io/client-go/util/workqueue queue.go: Add, Get, Done)
 * as kubeloop's interpreted WorkQueue has them, statement for statement; that module's
 * docstring is the semantic contract and the tests hold the two implementations to each
 * other. Slow paths call back into the owner: `_wake_one_getter`, `_wake_drainers`,
 * `_start_unfinished_work_updater`, and `_get_slow` (a coroutine) when `get` finds the FIFO
 * empty.
 *
 * `get()` returns a `Get` awaitable, not a coroutine: the item is taken when it is first
 * awaited (sent), as the coroutine would, and when the FIFO has one, the await completes at
 * once through `am_send` with no frame, no StopIteration and no Future. The queue keeps one
 * spare `Get` and hands it out again whenever nobody else holds it (reference count 1).
 * `Get` also has send/throw/close, so asyncio takes it for a coroutine (create_task, wait_for).
 *
 * Metrics (a named queue): one clock call per operation, and either the batching recorder's
 * inline updates (`adds += 1`, the latency / work-duration pending lists' appends,
 * `unmatched_gets += 1`; see batch.py) or the generic recorder's `added` / `got` / `finished`.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define ABI_VERSION 2

static PyObject *str_wake_one_getter, *str_wake_drainers, *str_start_updater, *str_get_slow;
static PyObject *str_added, *str_got, *str_finished, *str_adds, *str_unmatched_gets, *str_throw,
    *str_close;
static PyObject *zero_float, *one;

typedef struct TableS Table;
typedef PyObject *(*meth_o)(PyObject *, PyObject *);
typedef PyObject *(*meth_noargs)(PyObject *, PyObject *);

typedef struct {
    PyObject_HEAD
    PyObject *owner;      /* a weak reference to the WorkQueue (which holds this core's methods) */
    PyObject *fifo;       /* collections.deque */
    Table *dirty;         /* item -> add time (0.0 without metrics) */
    Table *processing;    /* item -> start time (0.0 without metrics) */
    PyObject *drainers;   /* list */
    PyObject *now;        /* clock.now, or NULL without metrics */
    PyObject *batch;      /* BatchingRecorder, or NULL */
    PyObject *latency;    /* batch.latency_batch.pending (list) */
    PyObject *work;       /* batch.work_batch.pending (list) */
    PyObject *recorder;   /* generic QueueMetricsRecorder, or NULL */
    PyObject *spare;      /* a Get to hand out again */
    Py_ssize_t adds_offset; /* offset of the recorder's `adds` slot, or -1 */
    meth_o append;
    meth_noargs popleft;
    char timed;
    char shutting_down;
    char wake_needed;
    char updater_started;
} Core;

typedef struct {
    PyObject_HEAD
    Core *core;         /* NULL once finished */
    PyObject *delegate; /* the owner's `_get_slow()` coroutine while waiting */
    char state;         /* 0 fresh, 1 delegating, 2 finished */
} Get;

static PyTypeObject CoreType;
static PyTypeObject GetType;

/* ---- small helpers -------------------------------------------------------------------- */

static int
fifo_append(Core *self, PyObject *item)
{
    PyObject *r = self->append(self->fifo, item);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* The owning WorkQueue (a new reference), or NULL and an error once it is gone. Weak, so that
   a queue abandoned without shutdown is freed by reference counting, as the interpreted one is
   (its unfinished-work updater holds it weakly too). */
static PyObject *
owner_get(Core *self)
{
    PyObject *owner = self->owner == NULL ? Py_None : PyWeakref_GetObject(self->owner);
    if (owner == NULL)
        return NULL;
    if (owner == Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "the work queue of this core is gone");
        return NULL;
    }
    Py_INCREF(owner);
    return owner;
}

static int
call_owner(Core *self, PyObject *name)
{
    PyObject *owner = owner_get(self);
    if (owner == NULL)
        return -1;
    PyObject *r = PyObject_CallMethodNoArgs(owner, name);
    Py_DECREF(owner);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

/* ---- Table: the dirty and processing sets (item -> add / start time) ---------------------
 *
 * A hash table of its own rather than a dict: open addressing with linear probing over
 * Fibonacci-mixed hashes and backward-shift deletion (no tombstones), so the churn of a work
 * queue (every item inserted and deleted once per pass, in both tables) leaves nothing behind
 * to probe past and never shrinks-and-regrows the table; and each operation takes the hash the
 * caller computed once. Keys compare like a dict's (identity, then hash and __eq__; a lookup
 * restarts if __eq__ changed the table). Python sees it as a small mapping (`in`, `[]`, `del`,
 * `len`, `values()`, `keys()`, iteration over keys), which is all WorkQueue's Python uses.
 */
typedef struct {
    PyObject *key; /* NULL: empty */
    PyObject *value;
    Py_hash_t hash;
} Slot;

struct TableS {
    PyObject_HEAD
    Slot *slots;
    size_t mask;
    int shift; /* 64 - log2(capacity) */
    Py_ssize_t used;
    size_t version; /* bumped by every change of the slots */
};

static PyTypeObject TableType;

#define TABLE_MIN_LOG2 3

static inline size_t
home(const Table *t, Py_hash_t hash)
{
    return (size_t)(((uint64_t)hash * 0x9E3779B97F4A7C15ULL) >> t->shift);
}

static int
table_alloc(Table *t, int log2)
{
    size_t capacity = (size_t)1 << log2;
    Slot *slots = PyMem_Calloc(capacity, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    t->slots = slots;
    t->mask = capacity - 1;
    t->shift = 64 - log2;
    return 0;
}

static Table *
table_new(void)
{
    Table *t = PyObject_GC_New(Table, &TableType);
    if (t == NULL)
        return NULL;
    t->slots = NULL;
    t->used = 0;
    t->version = 0;
    if (table_alloc(t, TABLE_MIN_LOG2) < 0) {
        t->mask = 0;
        Py_DECREF(t);
        return NULL;
    }
    PyObject_GC_Track(t);
    return t;
}

/* 1 and the slot index when found, 0 and the empty slot to fill when not, -1 on error. */
static int
table_find(Table *t, PyObject *key, Py_hash_t hash, size_t *index)
{
restart:;
    Slot *slots = t->slots;
    size_t version = t->version;
    size_t i = home(t, hash);
    for (;;) {
        PyObject *k = slots[i].key;
        if (k == NULL) {
            *index = i;
            return 0;
        }
        if (k == key) {
            *index = i;
            return 1;
        }
        if (slots[i].hash == hash) {
            Py_INCREF(k);
            int equal = PyObject_RichCompareBool(k, key, Py_EQ);
            Py_DECREF(k);
            if (equal < 0)
                return -1;
            if (t->version != version || t->slots != slots)
                goto restart;
            if (equal) {
                *index = i;
                return 1;
            }
        }
        i = (i + 1) & t->mask;
    }
}

static int
table_resize(Table *t, int log2)
{
    Slot *old = t->slots;
    size_t old_capacity = t->mask + 1;
    if (table_alloc(t, log2) < 0)
        return -1;
    for (size_t j = 0; j < old_capacity; j++) {
        if (old[j].key == NULL)
            continue;
        size_t i = home(t, old[j].hash);
        while (t->slots[i].key != NULL)
            i = (i + 1) & t->mask;
        t->slots[i] = old[j];
    }
    PyMem_Free(old);
    t->version++;
    return 0;
}

static int
table_contains(Table *t, PyObject *key, Py_hash_t hash)
{
    size_t i;
    return table_find(t, key, hash, &i);
}

/* Set key -> value (new references taken). */
static int
table_set(Table *t, PyObject *key, Py_hash_t hash, PyObject *value)
{
    size_t i;
    int found = table_find(t, key, hash, &i);
    if (found < 0)
        return -1;
    Py_INCREF(value);
    if (found) {
        PyObject *old = t->slots[i].value;
        t->slots[i].value = value;
        Py_DECREF(old);
        return 0;
    }
    if ((size_t)(t->used + 1) * 2 > t->mask + 1) {
        int log2 = 64 - t->shift + 1;
        if (table_resize(t, log2) < 0) {
            Py_DECREF(value);
            return -1;
        }
        i = home(t, hash);
        while (t->slots[i].key != NULL)
            i = (i + 1) & t->mask;
    }
    Py_INCREF(key);
    t->slots[i].key = key;
    t->slots[i].value = value;
    t->slots[i].hash = hash;
    t->used++;
    t->version++;
    return 0;
}

/* Insert key -> value at the empty slot i a table_find just reported for key, unless the
   table changed since (version): then a full table_set. */
static int
table_insert(Table *t, PyObject *key, Py_hash_t hash, PyObject *value, size_t i, size_t version)
{
    if (t->version != version || (size_t)(t->used + 1) * 2 > t->mask + 1)
        return table_set(t, key, hash, value);
    Py_INCREF(key);
    Py_INCREF(value);
    t->slots[i].key = key;
    t->slots[i].value = value;
    t->slots[i].hash = hash;
    t->used++;
    t->version++;
    return 0;
}

/* Remove the entry at slot i; returns its value (a new reference), the key is released. */
static PyObject *
table_take_at(Table *t, size_t i)
{
    PyObject *key = t->slots[i].key;
    PyObject *value = t->slots[i].value;
    size_t j = i;
    for (;;) {
        j = (j + 1) & t->mask;
        if (t->slots[j].key == NULL)
            break;
        size_t k = home(t, t->slots[j].hash);
        /* Move slot j back into the hole at i unless its home lies cyclically in (i, j]. */
        if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
            continue;
        t->slots[i] = t->slots[j];
        i = j;
    }
    t->slots[i].key = NULL;
    t->slots[i].value = NULL;
    t->used--;
    t->version++;
    Py_DECREF(key);
    return value;
}

/* The value of key, removed (a new reference); NULL without an error when absent. */
static PyObject *
table_pop(Table *t, PyObject *key, Py_hash_t hash)
{
    size_t i;
    int found = table_find(t, key, hash, &i);
    if (found <= 0)
        return NULL;
    return table_take_at(t, i);
}

static Py_ssize_t
Table_len(Table *t)
{
    return t->used;
}

static PyObject *
Table_subscript(Table *t, PyObject *key)
{
    Py_hash_t hash = PyObject_Hash(key);
    if (hash == -1)
        return NULL;
    size_t i;
    int found = table_find(t, key, hash, &i);
    if (found < 0)
        return NULL;
    if (!found) {
        PyErr_SetObject(PyExc_KeyError, key);
        return NULL;
    }
    Py_INCREF(t->slots[i].value);
    return t->slots[i].value;
}

static int
Table_ass_subscript(Table *t, PyObject *key, PyObject *value)
{
    Py_hash_t hash = PyObject_Hash(key);
    if (hash == -1)
        return -1;
    if (value != NULL)
        return table_set(t, key, hash, value);
    PyObject *old = table_pop(t, key, hash);
    if (old == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetObject(PyExc_KeyError, key);
        return -1;
    }
    Py_DECREF(old);
    return 0;
}

static int
Table_contains(Table *t, PyObject *key)
{
    Py_hash_t hash = PyObject_Hash(key);
    if (hash == -1)
        return -1;
    return table_contains(t, key, hash);
}

static PyObject *
table_list(Table *t, int values)
{
    PyObject *list = PyList_New(t->used);
    if (list == NULL)
        return NULL;
    Py_ssize_t n = 0;
    for (size_t j = 0; j <= t->mask && n < t->used; j++) {
        if (t->slots[j].key == NULL)
            continue;
        PyObject *o = values ? t->slots[j].value : t->slots[j].key;
        Py_INCREF(o);
        PyList_SET_ITEM(list, n++, o);
    }
    return list;
}

static PyObject *
Table_keys(Table *t, PyObject *Py_UNUSED(ignored))
{
    return table_list(t, 0);
}

static PyObject *
Table_values(Table *t, PyObject *Py_UNUSED(ignored))
{
    return table_list(t, 1);
}

static PyObject *
Table_iter(Table *t)
{
    PyObject *keys = table_list(t, 0);
    if (keys == NULL)
        return NULL;
    PyObject *it = PyObject_GetIter(keys);
    Py_DECREF(keys);
    return it;
}

static int
Table_traverse(Table *t, visitproc visit, void *arg)
{
    if (t->slots != NULL) {
        for (size_t j = 0; j <= t->mask; j++) {
            Py_VISIT(t->slots[j].key);
            Py_VISIT(t->slots[j].value);
        }
    }
    return 0;
}

static int
Table_clear(Table *t)
{
    Slot *slots = t->slots;
    size_t capacity = t->mask + 1;
    if (slots == NULL)
        return 0;
    if (table_alloc(t, TABLE_MIN_LOG2) < 0) {
        PyErr_Clear();
        t->slots = NULL;
        t->mask = 0;
    }
    t->used = 0;
    t->version++;
    for (size_t j = 0; j < capacity; j++) {
        Py_XDECREF(slots[j].key);
        Py_XDECREF(slots[j].value);
    }
    PyMem_Free(slots);
    return 0;
}

static void
Table_dealloc(Table *t)
{
    PyObject_GC_UnTrack(t);
    Table_clear(t);
    PyMem_Free(t->slots);
    PyObject_GC_Del(t);
}

static PyMappingMethods Table_mapping = {
    .mp_length = (lenfunc)Table_len,
    .mp_subscript = (binaryfunc)Table_subscript,
    .mp_ass_subscript = (objobjargproc)Table_ass_subscript,
};

static PySequenceMethods Table_sequence = {
    .sq_contains = (objobjproc)Table_contains,
};

static PyMethodDef Table_methods[] = {
    {"keys", (PyCFunction)Table_keys, METH_NOARGS, "the keys, as a list"},
    {"values", (PyCFunction)Table_values, METH_NOARGS, "the values, as a list"},
    {NULL},
};

static PyTypeObject TableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kubeloop.runtime.workqueue._wqcore.Table",
    .tp_basicsize = sizeof(Table),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The dirty or processing set of a C work-queue core: item -> time (a small mapping).",
    .tp_dealloc = (destructor)Table_dealloc,
    .tp_traverse = (traverseproc)Table_traverse,
    .tp_clear = (inquiry)Table_clear,
    .tp_as_mapping = &Table_mapping,
    .tp_as_sequence = &Table_sequence,
    .tp_iter = (getiterfunc)Table_iter,
    .tp_methods = Table_methods,
};

static int
bump_adds(Core *self)
{
    PyObject **slot;
    PyObject *old, *new;
    if (self->adds_offset >= 0) {
        slot = (PyObject **)((char *)self->batch + self->adds_offset);
        old = *slot;
        if (old != NULL && PyLong_CheckExact(old)) {
            long long value = PyLong_AsLongLong(old);
            if (value == -1 && PyErr_Occurred())
                PyErr_Clear();
            else if (value < LLONG_MAX) {
                new = PyLong_FromLongLong(value + 1);
                if (new == NULL)
                    return -1;
                *slot = new;
                Py_DECREF(old);
                return 0;
            }
        }
    }
    old = PyObject_GetAttr(self->batch, str_adds);
    if (old == NULL)
        return -1;
    new = PyNumber_Add(old, one);
    Py_DECREF(old);
    if (new == NULL)
        return -1;
    int rc = PyObject_SetAttr(self->batch, str_adds, new);
    Py_DECREF(new);
    return rc;
}

static int
bump_unmatched(Core *self)
{
    PyObject *old = PyObject_GetAttr(self->batch, str_unmatched_gets);
    if (old == NULL)
        return -1;
    PyObject *new = PyNumber_Add(old, one);
    Py_DECREF(old);
    if (new == NULL)
        return -1;
    int rc = PyObject_SetAttr(self->batch, str_unmatched_gets, new);
    Py_DECREF(new);
    return rc;
}

/* ---- the three operations ------------------------------------------------------------- */

static PyObject *
Core_add(Core *self, PyObject *item)
{
    Py_hash_t hash = PyObject_Hash(item);
    if (hash == -1)
        return NULL;
    size_t slot;
    int found = table_find(self->dirty, item, hash, &slot);
    if (found < 0)
        return NULL;
    if (found || self->shutting_down)
        Py_RETURN_NONE;
    size_t version = self->dirty->version;
    if (self->timed) {
        PyObject *now = PyObject_CallNoArgs(self->now);
        if (now == NULL)
            return NULL;
        int rc = table_insert(self->dirty, item, hash, now, slot, version);
        Py_DECREF(now);
        if (rc < 0)
            return NULL;
        if (self->batch != NULL) {
            if (bump_adds(self) < 0)
                return NULL;
        }
        else {
            PyObject *r = PyObject_CallMethodNoArgs(self->recorder, str_added);
            if (r == NULL)
                return NULL;
            Py_DECREF(r);
        }
    }
    else if (table_insert(self->dirty, item, hash, zero_float, slot, version) < 0)
        return NULL;
    found = table_contains(self->processing, item, hash);
    if (found < 0)
        return NULL;
    if (found)
        Py_RETURN_NONE;
    if (fifo_append(self, item) < 0)
        return NULL;
    if (self->wake_needed && call_owner(self, str_wake_one_getter) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Hand out the FIFO's head (the FIFO is not empty): `(item, False)`. */
static PyObject *
take(Core *self)
{
    PyObject *item = self->popleft(self->fifo, NULL);
    if (item == NULL)
        return NULL;
    Py_hash_t hash = PyObject_Hash(item);
    if (hash == -1)
        goto fail;
    if (self->timed) {
        PyObject *now = PyObject_CallNoArgs(self->now);
        if (now == NULL)
            goto fail;
        if (table_set(self->processing, item, hash, now) < 0) {
            Py_DECREF(now);
            goto fail;
        }
        PyObject *added = table_pop(self->dirty, item, hash);
        PyObject *waited = NULL;
        if (added != NULL) {
            waited = PyNumber_Subtract(now, added);
            Py_DECREF(added);
            if (waited == NULL) {
                Py_DECREF(now);
                goto fail;
            }
        }
        else if (PyErr_Occurred()) {
            Py_DECREF(now);
            goto fail;
        }
        Py_DECREF(now);
        int rc;
        if (self->batch == NULL) {
            PyObject *r = PyObject_CallMethodOneArg(self->recorder, str_got, waited ? waited : Py_None);
            rc = r == NULL ? -1 : 0;
            Py_XDECREF(r);
        }
        else if (waited == NULL)
            rc = bump_unmatched(self);
        else
            rc = PyList_Append(self->latency, waited);
        Py_XDECREF(waited);
        if (rc < 0)
            goto fail;
        if (!self->updater_started && call_owner(self, str_start_updater) < 0)
            goto fail;
    }
    else {
        PyObject *was = table_pop(self->dirty, item, hash);
        if (was != NULL)
            Py_DECREF(was);
        else if (PyErr_Occurred())
            goto fail;
        if (table_set(self->processing, item, hash, zero_float) < 0)
            goto fail;
    }
    if (self->wake_needed && Py_SIZE(self->fifo) > 0 && call_owner(self, str_wake_one_getter) < 0)
        goto fail;
    PyObject *result = PyTuple_New(2);
    if (result == NULL)
        goto fail;
    PyTuple_SET_ITEM(result, 0, item);
    Py_INCREF(Py_False);
    PyTuple_SET_ITEM(result, 1, Py_False);
    return result;
fail:
    Py_DECREF(item);
    return NULL;
}

static PyObject *
Core_take(Core *self, PyObject *Py_UNUSED(ignored))
{
    if (Py_SIZE(self->fifo) == 0) {
        PyErr_SetString(PyExc_IndexError, "take from an empty work queue");
        return NULL;
    }
    return take(self);
}

static PyObject *
Core_done(Core *self, PyObject *item)
{
    Py_hash_t hash = PyObject_Hash(item);
    if (hash == -1)
        return NULL;
    PyObject *started = table_pop(self->processing, item, hash);
    if (started != NULL) {
        if (self->timed) {
            PyObject *now = PyObject_CallNoArgs(self->now);
            if (now == NULL) {
                Py_DECREF(started);
                return NULL;
            }
            PyObject *worked = PyNumber_Subtract(now, started);
            Py_DECREF(now);
            Py_DECREF(started);
            if (worked == NULL)
                return NULL;
            int rc;
            if (self->batch == NULL) {
                PyObject *r = PyObject_CallMethodOneArg(self->recorder, str_finished, worked);
                rc = r == NULL ? -1 : 0;
                Py_XDECREF(r);
            }
            else
                rc = PyList_Append(self->work, worked);
            Py_DECREF(worked);
            if (rc < 0)
                return NULL;
        }
        else
            Py_DECREF(started);
    }
    else if (PyErr_Occurred())
        return NULL;
    int found = table_contains(self->dirty, item, hash);
    if (found < 0)
        return NULL;
    if (found) {
        if (fifo_append(self, item) < 0)
            return NULL;
        if (self->wake_needed && call_owner(self, str_wake_one_getter) < 0)
            return NULL;
    }
    if (PyList_GET_SIZE(self->drainers) > 0 && self->processing->used == 0
        && call_owner(self, str_wake_drainers) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
Core_get(Core *self, PyObject *Py_UNUSED(ignored))
{
    Get *get = (Get *)self->spare;
    if (get != NULL && Py_REFCNT(get) == 1) {
        /* Nobody else holds the spare: reuse it. One dropped while waiting drops its delegate
           (a suspended coroutine is closed when collected, as a dropped get() coroutine is). */
        Py_CLEAR(get->delegate);
        Py_INCREF(self);
        Py_XSETREF(get->core, self);
        get->state = 0;
        Py_INCREF(get);
        return (PyObject *)get;
    }
    get = PyObject_GC_New(Get, &GetType);
    if (get == NULL)
        return NULL;
    Py_INCREF(self);
    get->core = self;
    get->delegate = NULL;
    get->state = 0;
    PyObject_GC_Track(get);
    if (self->spare == NULL) {
        Py_INCREF(get);
        self->spare = (PyObject *)get;
    }
    return (PyObject *)get;
}

static PyObject *
Core_sync(Core *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "sync(shutting_down, wake_needed, updater_started)");
        return NULL;
    }
    int values[3];
    for (int i = 0; i < 3; i++) {
        values[i] = PyObject_IsTrue(args[i]);
        if (values[i] < 0)
            return NULL;
    }
    self->shutting_down = (char)values[0];
    self->wake_needed = (char)values[1];
    self->updater_started = (char)values[2];
    Py_RETURN_NONE;
}

/* ---- construction and GC --------------------------------------------------------------- */

static int
load_deque_methods(Core *self)
{
    PyObject *type = (PyObject *)Py_TYPE(self->fifo);
    PyObject *append = PyObject_GetAttrString(type, "append");
    PyObject *popleft = PyObject_GetAttrString(type, "popleft");
    int ok = append != NULL && popleft != NULL && Py_IS_TYPE(append, &PyMethodDescr_Type)
        && Py_IS_TYPE(popleft, &PyMethodDescr_Type)
        && ((PyMethodDescrObject *)append)->d_method->ml_flags == METH_O
        && ((PyMethodDescrObject *)popleft)->d_method->ml_flags == METH_NOARGS;
    if (ok) {
        self->append = (meth_o)((PyMethodDescrObject *)append)->d_method->ml_meth;
        self->popleft = (meth_noargs)((PyMethodDescrObject *)popleft)->d_method->ml_meth;
    }
    Py_XDECREF(append);
    Py_XDECREF(popleft);
    if (!ok && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "the FIFO must be a collections.deque");
    return ok ? 0 : -1;
}

static Py_ssize_t
slot_offset(PyObject *obj, PyObject *name)
{
    PyObject *descr = _PyType_Lookup(Py_TYPE(obj), name);
    if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type))
        return -1;
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX || (member->flags & READONLY))
        return -1;
    return member->offset;
}

static int
Core_init(Core *self, PyObject *args, PyObject *kwds)
{
    static char *keywords[] = {"owner", "fifo", "drainers", "now", "batch", "recorder", NULL};
    PyObject *owner, *fifo, *drainers, *now = Py_None, *batch = Py_None, *recorder = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOO!|OOO:Core", keywords, &owner, &fifo, &PyList_Type,
                                     &drainers, &now, &batch, &recorder))
        return -1;
    if (self->owner != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Core is initialised once");
        return -1;
    }
    if ((self->owner = PyWeakref_NewRef(owner, NULL)) == NULL)
        return -1;
    Py_INCREF(fifo);
    self->fifo = fifo;
    if ((self->dirty = table_new()) == NULL || (self->processing = table_new()) == NULL)
        return -1;
    Py_INCREF(drainers);
    self->drainers = drainers;
    self->adds_offset = -1;
    if (load_deque_methods(self) < 0)
        return -1;
    if (now != Py_None) {
        self->timed = 1;
        Py_INCREF(now);
        self->now = now;
        if (batch != Py_None) {
            Py_INCREF(batch);
            self->batch = batch;
            PyObject *histogram = PyObject_GetAttrString(batch, "latency_batch");
            if (histogram == NULL)
                return -1;
            self->latency = PyObject_GetAttrString(histogram, "pending");
            Py_DECREF(histogram);
            histogram = PyObject_GetAttrString(batch, "work_batch");
            if (histogram == NULL)
                return -1;
            self->work = PyObject_GetAttrString(histogram, "pending");
            Py_DECREF(histogram);
            if (self->latency == NULL || self->work == NULL)
                return -1;
            if (!PyList_Check(self->latency) || !PyList_Check(self->work)) {
                PyErr_SetString(PyExc_TypeError, "histogram pending values must be lists");
                return -1;
            }
            self->adds_offset = slot_offset(batch, str_adds);
        }
        else if (recorder != Py_None) {
            Py_INCREF(recorder);
            self->recorder = recorder;
        }
        else {
            PyErr_SetString(PyExc_TypeError, "a timed Core needs a batch or a recorder");
            return -1;
        }
    }
    return 0;
}

static int
Core_traverse(Core *self, visitproc visit, void *arg)
{
    Py_VISIT(self->owner);
    Py_VISIT(self->fifo);
    Py_VISIT(self->dirty);
    Py_VISIT(self->processing);
    Py_VISIT(self->drainers);
    Py_VISIT(self->now);
    Py_VISIT(self->batch);
    Py_VISIT(self->latency);
    Py_VISIT(self->work);
    Py_VISIT(self->recorder);
    Py_VISIT(self->spare);
    return 0;
}

static int
Core_clear(Core *self)
{
    Py_CLEAR(self->owner);
    Py_CLEAR(self->fifo);
    Py_CLEAR(self->dirty);
    Py_CLEAR(self->processing);
    Py_CLEAR(self->drainers);
    Py_CLEAR(self->now);
    Py_CLEAR(self->batch);
    Py_CLEAR(self->latency);
    Py_CLEAR(self->work);
    Py_CLEAR(self->recorder);
    Py_CLEAR(self->spare);
    self->timed = 0;
    return 0;
}

static void
Core_dealloc(Core *self)
{
    PyObject_GC_UnTrack(self);
    Core_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
Core_get_flag(Core *self, void *which)
{
    char value = which == (void *)0 ? self->shutting_down : which == (void *)1 ? self->wake_needed
                                                                                : self->updater_started;
    return PyBool_FromLong(value);
}

static PyMemberDef Core_members[] = {
    {"dirty", T_OBJECT, offsetof(Core, dirty), READONLY, "item -> add time (a Table)"},
    {"processing", T_OBJECT, offsetof(Core, processing), READONLY, "item -> start time (a Table)"},
    {NULL},
};

static PyGetSetDef Core_getset[] = {
    {"shutting_down", (getter)Core_get_flag, NULL, "as last synced", (void *)0},
    {"wake_needed", (getter)Core_get_flag, NULL, "as last synced", (void *)1},
    {"updater_started", (getter)Core_get_flag, NULL, "as last synced", (void *)2},
    {NULL},
};

static PyMethodDef Core_methods[] = {
    {"add", (PyCFunction)Core_add, METH_O, "WorkQueue.add"},
    {"get", (PyCFunction)Core_get, METH_NOARGS, "WorkQueue.get: an awaitable of (item, False) or (None, True)"},
    {"done", (PyCFunction)Core_done, METH_O, "WorkQueue.done"},
    {"take", (PyCFunction)Core_take, METH_NOARGS, "hand out the FIFO's head (after waiting for one)"},
    {"sync", (PyCFunction)(void (*)(void))Core_sync, METH_FASTCALL,
     "sync(shutting_down, wake_needed, updater_started): the owner's flags"},
    {NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kubeloop.runtime.workqueue._wqcore.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The hot path of one WorkQueue (see the module source's contract).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_getset = Core_getset,
    .tp_members = Core_members,
};

/* ---- Get: the awaitable of one get() ---------------------------------------------------- */

static void
get_finish(Get *self)
{
    self->state = 2;
    Py_CLEAR(self->delegate);
    Py_CLEAR(self->core);
}

static PySendResult
Get_send(Get *self, PyObject *arg, PyObject **result)
{
    if (self->state == 0) {
        Core *core = self->core;
        if (core == NULL) {
            PyErr_SetString(PyExc_RuntimeError, "work queue get on a cleared queue");
            *result = NULL;
            get_finish(self);
            return PYGEN_ERROR;
        }
        if (Py_SIZE(core->fifo) > 0) {
            *result = take(core);
            get_finish(self);
            return *result == NULL ? PYGEN_ERROR : PYGEN_RETURN;
        }
        PyObject *owner = owner_get(core);
        self->delegate = owner == NULL ? NULL : PyObject_CallMethodNoArgs(owner, str_get_slow);
        Py_XDECREF(owner);
        if (self->delegate == NULL) {
            *result = NULL;
            get_finish(self);
            return PYGEN_ERROR;
        }
        self->state = 1;
    }
    if (self->state == 1) {
        PySendResult status = PyIter_Send(self->delegate, arg, result);
        if (status != PYGEN_NEXT)
            get_finish(self);
        return status;
    }
    PyErr_SetString(PyExc_RuntimeError, "cannot reuse already awaited work queue get");
    *result = NULL;
    return PYGEN_ERROR;
}

/* A finished value as a StopIteration (the value is a tuple, so it must not become args). */
static PyObject *
stop_with(PyObject *value)
{
    PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, value);
    Py_DECREF(value);
    if (stop != NULL) {
        PyErr_SetObject(PyExc_StopIteration, stop);
        Py_DECREF(stop);
    }
    return NULL;
}

static PyObject *
send_or_stop(Get *self, PyObject *arg)
{
    PyObject *result;
    PySendResult status = Get_send(self, arg, &result);
    if (status == PYGEN_NEXT)
        return result;
    if (status == PYGEN_RETURN)
        return stop_with(result);
    return NULL;
}

static PyObject *
Get_iternext(Get *self)
{
    return send_or_stop(self, Py_None);
}

static PyObject *
Get_send_method(Get *self, PyObject *arg)
{
    if (self->state == 0 && arg != Py_None) {
        PyErr_SetString(PyExc_TypeError, "can't send non-None value to a just-started work queue get");
        return NULL;
    }
    return send_or_stop(self, arg);
}

static PyObject *
Get_throw(Get *self, PyObject *args)
{
    PyObject *typ, *val = NULL, *tb = NULL;
    if (!PyArg_UnpackTuple(args, "throw", 1, 3, &typ, &val, &tb))
        return NULL;
    if (self->state == 1) {
        PyObject *throw = PyObject_GetAttr(self->delegate, str_throw);
        if (throw == NULL) {
            get_finish(self);
            return NULL;
        }
        PyObject *r = PyObject_Call(throw, args, NULL);
        Py_DECREF(throw);
        if (r != NULL)
            return r;
        /* The delegate finished (StopIteration) or raised: so do we. */
        get_finish(self);
        return NULL;
    }
    get_finish(self);
    if (PyExceptionInstance_Check(typ)) {
        PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
    }
    else if (PyExceptionClass_Check(typ)) {
        PyErr_SetObject(typ, val != NULL ? val : Py_None);
    }
    else {
        PyErr_SetString(PyExc_TypeError, "exceptions must be classes or instances deriving from BaseException");
    }
    return NULL;
}

static PyObject *
Get_close(Get *self, PyObject *Py_UNUSED(ignored))
{
    PyObject *delegate = self->delegate;
    if (self->state == 1 && delegate != NULL) {
        Py_INCREF(delegate);
        get_finish(self);
        PyObject *r = PyObject_CallMethodNoArgs(delegate, str_close);
        Py_DECREF(delegate);
        return r;
    }
    get_finish(self);
    Py_RETURN_NONE;
}

static PyObject *
Get_await(Get *self)
{
    Py_INCREF(self);
    return (PyObject *)self;
}

static int
Get_traverse(Get *self, visitproc visit, void *arg)
{
    Py_VISIT(self->core);
    Py_VISIT(self->delegate);
    return 0;
}

static int
Get_clear(Get *self)
{
    Py_CLEAR(self->core);
    Py_CLEAR(self->delegate);
    return 0;
}

static void
Get_dealloc(Get *self)
{
    PyObject_GC_UnTrack(self);
    Get_clear(self);
    PyObject_GC_Del(self);
}

static PyAsyncMethods Get_async = {
    .am_await = (unaryfunc)Get_await,
    .am_send = (sendfunc)Get_send,
};

static PyMethodDef Get_methods[] = {
    {"send", (PyCFunction)Get_send_method, METH_O, "coroutine.send"},
    {"throw", (PyCFunction)Get_throw, METH_VARARGS, "coroutine.throw"},
    {"close", (PyCFunction)Get_close, METH_NOARGS, "coroutine.close"},
    {NULL},
};

static PyTypeObject GetType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kubeloop.runtime.workqueue._wqcore.Get",
    .tp_basicsize = sizeof(Get),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "The awaitable of WorkQueue.get() (a coroutine to asyncio).",
    .tp_dealloc = (destructor)Get_dealloc,
    .tp_traverse = (traverseproc)Get_traverse,
    .tp_clear = (inquiry)Get_clear,
    .tp_as_async = &Get_async,
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)Get_iternext,
    .tp_methods = Get_methods,
};

/* ---- module ------------------------------------------------------------------------------ */

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "kubeloop.runtime.workqueue._wqcore",
    .m_doc = "The hot path of kubeloop's WorkQueue in C (see queue_native.py).",
    .m_size = -1,
};

#define INTERN(var, text)                                                                                   \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                                  \
        return NULL;

PyMODINIT_FUNC
PyInit__wqcore(void)
{
    INTERN(str_wake_one_getter, "_wake_one_getter");
    INTERN(str_wake_drainers, "_wake_drainers");
    INTERN(str_start_updater, "_start_unfinished_work_updater");
    INTERN(str_get_slow, "_get_slow");
    INTERN(str_added, "added");
    INTERN(str_got, "got");
    INTERN(str_finished, "finished");
    INTERN(str_adds, "adds");
    INTERN(str_unmatched_gets, "unmatched_gets");
    INTERN(str_throw, "throw");
    INTERN(str_close, "close");
    if ((zero_float = PyFloat_FromDouble(0.0)) == NULL || (one = PyLong_FromLong(1)) == NULL)
        return NULL;
    if (PyType_Ready(&CoreType) < 0 || PyType_Ready(&GetType) < 0 || PyType_Ready(&TableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&CoreType);
    Py_INCREF(&GetType);
    Py_INCREF(&TableType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0
        || PyModule_AddObject(m, "Get", (PyObject *)&GetType) < 0
        || PyModule_AddObject(m, "Table", (PyObject *)&TableType) < 0
        || PyModule_AddIntConstant(m, "ABI", ABI_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
