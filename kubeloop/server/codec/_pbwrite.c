/* kubeloop.server.codec._pbwrite: protobuf message bytes of JSON-form dicts, walked in C.

Contract: the bytes are exactly those of the generated Python writers of
kubeloop/server/codec/protobuf_writer.py (gogo's generated Marshal, see that module's docstring),
for every value those writers accept. The schema is a table the Python side builds from the same
wire facts (kubeloop/server/codec/protobuf_native.py): this module knows no Kubernetes message.

Why C: the Python writers' cost is one C-API call through the object protocol per field (dict.get
bound methods, bytearray +=, lru caches); mypyc keeps those calls and takes only 6-7% off
(docs/decisions.md). Here a dict is read with PyDict_GetItemWithError, a string's UTF-8 bytes come
from PyUnicode_AsUTF8AndSize (no copy for ASCII), and everything goes into one growable buffer.

API:
  init(mapping_abc, b64decode, dumps)  the Mapping ABC (non-dict objects are read through .get when
                                       they are Mappings, else written as {}), base64.b64decode (kept
                                       for its leniency) and orjson.dumps (raw JSON fields);
  reserve() -> id                      a message id, so that recursive schemas can refer to
                                       messages before they are defined;
  define(id, fields)                   the message's fields in field-number order, each a tuple
                                       (name, flags, outer_tag, kind, tag, sub, call, zero):
                                         name       the JSON key (str);
                                         flags      REPEATED | MAP | INLINE;
                                         outer_tag  bytes: a map entry's or an inline struct's tag;
                                         kind       how one value is written (KIND_*);
                                         tag        bytes: the value's tag (field 2 for map values);
                                         sub        the message id of KIND_MESSAGE / INLINE, else -1;
                                         call       the Python function of the special kinds, or None
                                                    (for KIND_TIME..KIND_INTSTR: the fallback for any value
                                                    the C fast path does not recognise);
                                         zero       bytes written when the key is absent or None;
  write(id, obj) -> bytes              the message's content (no tag, no length);
  write_into(id, obj, bytearray)       the same appended to a bytearray (the Python Writer shape);
  delimited(id, obj, head, tail)       head + varint(length) + content + tail (a whole body).
  ABI                                  bumped whenever the table's shape changes.

kube's common special types are written here without calling Python (KIND_TIME, KIND_MICROTIME,
KIND_QUANTITY, KIND_INTSTR): each fast path takes only the values whose bytes it can decide exactly
as the Python special would, and hands anything else (a str subclass, non-ASCII digits, a time with
a trailing newline, an int past int64, a bool...) to the field's Python function, so that bytes
and errors stay those of the Python writers. Raw JSON stays orjson.dumps: a C writer of the plain
JSON of managedFields' fieldsV1 cost 2.5k instructions more per pod than orjson (docs/decisions.md).
*/

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define ABI 2

enum { F_REPEATED = 1, F_MAP = 2, F_INLINE = 4 };
enum {
    K_STRING = 0,    /* UTF-8, length-prefixed */
    K_BYTES = 1,     /* base64 text, decoded by the Python b64decode */
    K_BOOL = 2,      /* truthiness */
    K_VARINT = 3,    /* int32/int64/uint32/uint64: negative as 64-bit two's complement */
    K_DOUBLE = 4,    /* float(v), 8 bytes little-endian */
    K_FLOAT = 5,     /* float(v), 4 bytes little-endian */
    K_MESSAGE = 6,   /* a nested message, length-prefixed */
    K_DELIMITED = 7, /* call(v) returns the length-prefixed bytes (kube's cached specials) */
    K_WRITER = 8,    /* call(v, bytearray) appends the content (raw lists, JSONSchemaProps unions) */
    K_RAW = 9,       /* raw JSON: content is field 1 holding dumps(v) */
    K_TIME = 10,     /* metav1.Time from RFC 3339 text; call(v) otherwise (as K_DELIMITED) */
    K_MICROTIME = 11, /* metav1.MicroTime, the same */
    K_QUANTITY = 12, /* resource.Quantity from an exact str; call(v) otherwise */
    K_INTSTR = 13,   /* intstr.IntOrString from an exact str or int; call(v) otherwise */
};
#define K_LAST K_INTSTR

typedef struct {
    PyObject *name; /* JSON key */
    Py_hash_t hash; /* its hash */
    PyObject *call; /* special's Python function or NULL */
    PyObject *zero; /* bytes */
    int flags;
    int kind;
    int sub;
    unsigned char outer_tag[5];
    unsigned char tag[5];
    unsigned char outer_tag_len;
    unsigned char tag_len;
} Field;

typedef struct {
    Field *fields;
    Py_ssize_t count;
    /* An open-addressing table from a key's hash to its field's index (-1: empty), so that an
       exact dict is read by walking its items once: a pod's dicts set a fraction of their
       message's fields, and a probe here costs less than a dict lookup per field. */
    int *index;
    Py_ssize_t mask;
    int defined;
} Message;

static Message *messages = NULL;
static Py_ssize_t message_count = 0, message_capacity = 0;
static PyObject *mapping_abc = NULL, *b64decode = NULL, *dumps = NULL;
static PyObject *get_name = NULL; /* "get", interned */

/* --- the growable buffer ------------------------------------------------------------------------ */

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int buf_grow(Buf *b, Py_ssize_t more) {
    Py_ssize_t need = b->len + more;
    if (need <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap *= 2;
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const void *src, Py_ssize_t n) {
    if (b->len + n > b->cap && buf_grow(b, n) < 0) return -1;
    if (n <= 8) {
        /* tags and zeros: a loop costs less than a call to memcpy */
        const char *from = src;
        char *to = b->data + b->len;
        for (Py_ssize_t i = 0; i < n; i++) to[i] = from[i];
    } else
        memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static inline int varint_len(uint64_t v) {
    int n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline int encode_varint(unsigned char *out, uint64_t v) {
    int n = 0;
    while (v >= 0x80) {
        out[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (unsigned char)v;
    return n;
}

static inline int buf_varint(Buf *b, uint64_t v) {
    if (b->len + 10 > b->cap && buf_grow(b, 10) < 0) return -1;
    b->len += encode_varint((unsigned char *)b->data + b->len, v);
    return 0;
}

/* A length-prefixed part: one byte is reserved for the length before the content is written (most
   nested messages are shorter than 128 bytes); a longer one moves its content up once. */
static inline int open_length(Buf *b, Py_ssize_t *start) {
    if (b->len + 1 > b->cap && buf_grow(b, 1) < 0) return -1;
    b->len += 1;
    *start = b->len;
    return 0;
}

static int close_length(Buf *b, Py_ssize_t start) {
    uint64_t n = (uint64_t)(b->len - start);
    if (n < 0x80) {
        b->data[start - 1] = (char)n;
        return 0;
    }
    int extra = varint_len(n) - 1;
    if (buf_grow(b, extra) < 0) return -1;
    memmove(b->data + start + extra, b->data + start, (size_t)n);
    encode_varint((unsigned char *)b->data + start - 1, n);
    b->len += extra;
    return 0;
}

static int put_prefixed(Buf *b, const char *data, Py_ssize_t n) {
    if (buf_varint(b, (uint64_t)n) < 0) return -1;
    return buf_put(b, data, n);
}

/* --- values ------------------------------------------------------------------------------------- */

static int write_message(Buf *b, int id, PyObject *obj);

/* A Python writer's content written into a temporary bytearray, then length-prefixed here. */
static int write_by_writer(Buf *b, PyObject *call, PyObject *value) {
    PyObject *tmp = PyByteArray_FromStringAndSize(NULL, 0);
    if (tmp == NULL) return -1;
    PyObject *r = PyObject_CallFunctionObjArgs(call, value, tmp, NULL);
    int rc = -1;
    if (r != NULL) {
        Py_DECREF(r);
        rc = put_prefixed(b, PyByteArray_AS_STRING(tmp), PyByteArray_GET_SIZE(tmp));
    }
    Py_DECREF(tmp);
    return rc;
}

static int write_varint_value(Buf *b, PyObject *v) {
    /* Python writers: out.append(v) or varint(v); a float or str raises TypeError there too. */
    if (!PyLong_Check(v)) {
        PyErr_Format(PyExc_TypeError, "an integer is required (got type %.200s)", Py_TYPE(v)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long s = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (s == -1 && PyErr_Occurred()) return -1;
    if (overflow == 0) return buf_varint(b, (uint64_t)s); /* negative: two's complement, ten bytes */
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(v);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) return -1;
        return buf_varint(b, (uint64_t)u);
    }
    PyErr_SetString(PyExc_OverflowError, "integer below -2**63 has no protobuf varint");
    return -1;
}

/* --- kube's special types, without Python -------------------------------------------------------- */

/* Go's zero time.Time as Unix seconds (kubeloop/server/codec/gotext.py ZERO_SECONDS). */
#define ZERO_SECONDS (-62135596800LL)

static inline int digits(const char *s, int n, int64_t *out) {
    int64_t v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* Days from 1970-01-01 to the first of (year, month), proleptic Gregorian (H. Hinnant's
   days_from_civil), for 1 <= year <= 9999 and 1 <= month <= 12. */
static int64_t days_to_month(int64_t y, int64_t m) {
    y -= m <= 2;
    const int64_t era = y / 400; /* y >= 0 here */
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5; /* day 1 of the month */
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The RFC 3339 text of a compact ASCII str as gotext.parse_time reads it: its pattern
   `^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$`, then calendar.timegm
   (days by date(year, month, 1), so any two-digit day, hour, minute and second add up
   linearly) less the offset; nanoseconds from the first nine fraction digits. 1 when read, 0 for
   any text it does not take (the Python special then reads it, or raises as it does). */
static int parse_time(PyObject *v, int64_t *seconds, int64_t *nanos) {
    if (!PyUnicode_CheckExact(v) || !PyUnicode_IS_COMPACT_ASCII(v)) return 0;
    const char *s = (const char *)PyUnicode_DATA(v);
    Py_ssize_t n = PyUnicode_GET_LENGTH(v);
    int64_t year, month, day, hour, minute, second;
    if (n < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':')
        return 0;
    if (!digits(s, 4, &year) || !digits(s + 5, 2, &month) || !digits(s + 8, 2, &day) ||
        !digits(s + 11, 2, &hour) || !digits(s + 14, 2, &minute) || !digits(s + 17, 2, &second))
        return 0;
    if (year < 1 || month < 1 || month > 12) return 0; /* date() raises: the Python special says so */
    Py_ssize_t i = 19;
    int64_t frac = 0;
    if (s[i] == '.') {
        Py_ssize_t first = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (i - first < 9) frac = frac * 10 + (s[i] - '0');
            i++;
        }
        if (i == first) return 0;
        for (Py_ssize_t k = i - first; k < 9; k++) frac *= 10;
    }
    int64_t offset = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        int64_t oh, om;
        if (n - i < 6 || s[i + 3] != ':' || !digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om)) return 0;
        offset = oh * 3600 + om * 60;
        if (s[i] == '+') offset = -offset;
        i += 6;
    } else
        return 0;
    if (i != n) return 0; /* `$` also matches before a final newline: the Python special reads those */
    int64_t days = days_to_month(year, month) + day - 1;
    *seconds = ((days * 24 + hour) * 60 + minute) * 60 + second + offset;
    *nanos = frac;
    return 1;
}

/* A length-prefixed message of seconds (field 1) and nanos (field 2) as _time / _microtime write it. */
static int put_timestamp(Buf *b, int64_t seconds, int64_t nanos) {
    unsigned char out[1 + 1 + 10 + 1 + 10];
    int k = 1;
    out[k++] = 0x08;
    k += encode_varint(out + k, (uint64_t)seconds);
    out[k++] = 0x10;
    k += encode_varint(out + k, (uint64_t)nanos);
    out[0] = (unsigned char)(k - 1); /* at most 23 */
    return buf_put(b, out, k);
}

/* Time / MicroTime: 1 written, 0 not taken (call the Python special), -1 error. */
static int write_time(Buf *b, PyObject *v, int micro) {
    int64_t seconds, nanos;
    if (!parse_time(v, &seconds, &nanos)) return 0;
    if (!micro) { /* seconds only; the zero time is an empty message */
        if (seconds == ZERO_SECONDS) return buf_put(b, "\0", 1) < 0 ? -1 : 1;
        return put_timestamp(b, seconds, 0) < 0 ? -1 : 1;
    }
    if (seconds == ZERO_SECONDS && nanos < 1000) return buf_put(b, "\0", 1) < 0 ? -1 : 1;
    return put_timestamp(b, seconds, nanos - nanos % 1000) < 0 ? -1 : 1;
}

/* An exact str's UTF-8, or NULL with no error set when it has none (lone surrogates: the Python
   special raises its own error). */
static const char *utf8_of(PyObject *v, Py_ssize_t *n) {
    if (!PyUnicode_CheckExact(v)) return NULL;
    const char *s = PyUnicode_AsUTF8AndSize(v, n);
    if (s == NULL) PyErr_Clear();
    return s;
}

/* Quantity text (field 1), length-prefixed: 1 written, 0 not taken, -1 error. */
static int write_quantity(Buf *b, PyObject *v) {
    Py_ssize_t n;
    const char *s = utf8_of(v, &n);
    if (s == NULL) return 0;
    unsigned char head[11];
    head[0] = 0x0a;
    int k = 1 + encode_varint(head + 1, (uint64_t)n);
    if (buf_varint(b, (uint64_t)(k + n)) < 0 || buf_put(b, head, k) < 0 || buf_put(b, s, n) < 0) return -1;
    return 1;
}

/* IntOrString (type 1, intVal 2, strVal 3; Go writes all three), length-prefixed: an exact str
   or an exact int within int64 (bool, floats and subclasses go to the Python special). */
static int write_intstr(Buf *b, PyObject *v) {
    if (PyLong_CheckExact(v)) {
        int overflow = 0;
        long long i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow) return 0;
        if (i == -1 && PyErr_Occurred()) return -1;
        unsigned char out[1 + 3 + 10 + 2];
        int k = 1;
        out[k++] = 0x08;
        out[k++] = 0x00;
        out[k++] = 0x10;
        k += encode_varint(out + k, (uint64_t)i);
        out[k++] = 0x1a;
        out[k++] = 0x00;
        out[0] = (unsigned char)(k - 1);
        return buf_put(b, out, k) < 0 ? -1 : 1;
    }
    Py_ssize_t n;
    const char *s = utf8_of(v, &n);
    if (s == NULL) return 0;
    static const unsigned char head[] = {0x08, 0x01, 0x10, 0x00, 0x1a};
    uint64_t content = 5 + (uint64_t)varint_len((uint64_t)n) + (uint64_t)n;
    if (buf_varint(b, content) < 0 || buf_put(b, head, 5) < 0 || put_prefixed(b, s, n) < 0) return -1;
    return 1;
}

static int write_value(Buf *b, const Field *f, PyObject *v) {
    if (buf_put(b, f->tag, f->tag_len) < 0) return -1;
    switch (f->kind) {
    case K_STRING: {
        if (!PyUnicode_Check(v)) {
            PyErr_Format(PyExc_TypeError, "field %R: a string is required (got type %.200s)", f->name,
                         Py_TYPE(v)->tp_name);
            return -1;
        }
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(v, &n);
        if (s == NULL) return -1;
        return put_prefixed(b, s, n);
    }
    case K_BYTES: {
        PyObject *raw = PyObject_CallOneArg(b64decode, v);
        if (raw == NULL) return -1;
        char *s;
        Py_ssize_t n;
        int rc = PyBytes_AsStringAndSize(raw, &s, &n);
        if (rc == 0) rc = put_prefixed(b, s, n);
        Py_DECREF(raw);
        return rc;
    }
    case K_BOOL: {
        int t = PyObject_IsTrue(v);
        if (t < 0) return -1;
        unsigned char c = (unsigned char)t;
        return buf_put(b, &c, 1);
    }
    case K_VARINT:
        return write_varint_value(b, v);
    case K_DOUBLE:
    case K_FLOAT: {
        PyObject *fl = PyNumber_Float(v);
        if (fl == NULL) return -1;
        double d = PyFloat_AS_DOUBLE(fl);
        Py_DECREF(fl);
        unsigned char out[8];
        if (f->kind == K_DOUBLE) {
            if (PyFloat_Pack8(d, (char *)out, 1) < 0) return -1;
            return buf_put(b, out, 8);
        }
        if (PyFloat_Pack4(d, (char *)out, 1) < 0) return -1;
        return buf_put(b, out, 4);
    }
    case K_MESSAGE: {
        Py_ssize_t start;
        if (open_length(b, &start) < 0 || write_message(b, f->sub, v) < 0) return -1;
        return close_length(b, start);
    }
    case K_TIME:
    case K_MICROTIME:
    case K_QUANTITY:
    case K_INTSTR: {
        int rc = f->kind == K_QUANTITY ? write_quantity(b, v)
                 : f->kind == K_INTSTR ? write_intstr(b, v)
                                       : write_time(b, v, f->kind == K_MICROTIME);
        if (rc != 0) return rc < 0 ? -1 : 0;
    } /* fall through: the Python special */
    /* FALLTHROUGH */
    case K_DELIMITED: {
        PyObject *r = PyObject_CallOneArg(f->call, v);
        if (r == NULL) return -1;
        char *s;
        Py_ssize_t n;
        int rc = PyBytes_AsStringAndSize(r, &s, &n);
        if (rc == 0) rc = buf_put(b, s, n);
        Py_DECREF(r);
        return rc;
    }
    case K_WRITER:
        return write_by_writer(b, f->call, v);
    case K_RAW: {
        PyObject *r = PyObject_CallOneArg(dumps, v);
        if (r == NULL) return -1;
        char *s;
        Py_ssize_t n;
        int rc = PyBytes_AsStringAndSize(r, &s, &n);
        if (rc == 0) {
            /* content: field 1 (tag 0x0a) holding the JSON text */
            unsigned char head[11];
            head[0] = 0x0a;
            int k = 1 + encode_varint(head + 1, (uint64_t)n);
            rc = buf_varint(b, (uint64_t)(k + n));
            if (rc == 0) rc = buf_put(b, head, k);
            if (rc == 0) rc = buf_put(b, s, n);
        }
        Py_DECREF(r);
        return rc;
    }
    }
    PyErr_SetString(PyExc_SystemError, "_pbwrite: unknown kind");
    return -1;
}

/* A map: keys in sorted() order (str code-point order, which is UTF-8 byte order, Go's), each entry
   a length-prefixed message of key (field 1, a string) and value (field 2). */
static int write_map(Buf *b, const Field *f, PyObject *v) {
    PyObject *keys = PySequence_List(v);
    if (keys == NULL) return -1;
    int rc = PyList_Sort(keys);
    Field key_field = *f;
    key_field.kind = K_STRING;
    key_field.tag[0] = 0x0a;
    key_field.tag_len = 1;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(keys); i++) {
        PyObject *k = PyList_GET_ITEM(keys, i);
        PyObject *y = PyObject_GetItem(v, k);
        if (y == NULL) {
            rc = -1;
            break;
        }
        Py_ssize_t start;
        rc = buf_put(b, f->outer_tag, f->outer_tag_len);
        if (rc == 0) rc = open_length(b, &start);
        if (rc == 0) rc = write_value(b, &key_field, k);
        if (rc == 0) rc = write_value(b, f, y);
        if (rc == 0) rc = close_length(b, start);
        Py_DECREF(y);
    }
    Py_DECREF(keys);
    return rc;
}

static int write_repeated(Buf *b, const Field *f, PyObject *v) {
    if (PyList_CheckExact(v)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(v); i++) {
            PyObject *x = PyList_GET_ITEM(v, i);
            Py_INCREF(x); /* a callback could change the list */
            int rc = write_value(b, f, x);
            Py_DECREF(x);
            if (rc < 0) return -1;
        }
        return 0;
    }
    PyObject *it = PyObject_GetIter(v);
    if (it == NULL) return -1;
    PyObject *x;
    while ((x = PyIter_Next(it)) != NULL) {
        int rc = write_value(b, f, x);
        Py_DECREF(x);
        if (rc < 0) {
            Py_DECREF(it);
            return -1;
        }
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

/* Whether two str of equal hashes hold the same text (the keys orjson makes are equal to the
   names, not the same objects): same kind and length, then the bytes. */
static inline int same_text(PyObject *a, PyObject *b) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(a);
    if (n != PyUnicode_GET_LENGTH(b) || PyUnicode_KIND(a) != PyUnicode_KIND(b)) return 0;
    return memcmp(PyUnicode_DATA(a), PyUnicode_DATA(b), (size_t)n * PyUnicode_KIND(a)) == 0;
}

/* The field of `key` in `m`, or -1. */
static Py_ssize_t field_of(const Message *m, PyObject *key) {
    if (!PyUnicode_Check(key)) return -1; /* no field's name equals it */
    Py_hash_t h = PyObject_Hash(key); /* cached in the str */
    if (h == -1) {
        PyErr_Clear();
        return -1;
    }
    for (Py_ssize_t i = (Py_ssize_t)((size_t)h & (size_t)m->mask);; i = (i + 1) & m->mask) {
        int found = m->index[i];
        if (found < 0) return -1;
        const Field *f = &m->fields[found];
        if (f->hash == h && (f->name == key || same_text(f->name, key))) return found;
    }
}

#define STACK_SLOTS 64

static int write_fields(Buf *b, const Message *m, PyObject *obj, int exact) {
    /* The value of every field, found by walking an exact dict's items once (a Mapping's by .get). */
    PyObject *stack[STACK_SLOTS];
    PyObject **slots = stack;
    if (m->count > STACK_SLOTS && (slots = PyMem_Malloc((size_t)m->count * sizeof(PyObject *))) == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(slots, 0, (size_t)m->count * sizeof(PyObject *));
    int rc = 0;
    if (exact) {
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(obj, &pos, &key, &value)) {
            Py_ssize_t i = field_of(m, key);
            if (i >= 0 && !(m->fields[i].flags & F_INLINE)) {
                Py_INCREF(value); /* held while Python callbacks run */
                slots[i] = value;
            }
        }
    } else {
        for (Py_ssize_t i = 0; i < m->count; i++) {
            if (m->fields[i].flags & F_INLINE) continue;
            slots[i] = PyObject_CallMethodOneArg(obj, get_name, m->fields[i].name);
            if (slots[i] == NULL) {
                rc = -1;
                break;
            }
        }
    }
    for (Py_ssize_t i = 0; rc == 0 && i < m->count; i++) {
        const Field *f = &m->fields[i];
        PyObject *v = slots[i];
        if (f->flags & F_INLINE) {
            /* an embedded struct: written from the same dict, as a nested message */
            Py_ssize_t start;
            if (buf_put(b, f->outer_tag, f->outer_tag_len) < 0 || open_length(b, &start) < 0 ||
                write_message(b, f->sub, obj) < 0 || close_length(b, start) < 0)
                rc = -1;
        } else if (v == NULL || v == Py_None)
            rc = buf_put(b, PyBytes_AS_STRING(f->zero), PyBytes_GET_SIZE(f->zero));
        else if (f->flags & F_REPEATED)
            rc = write_repeated(b, f, v);
        else if (f->flags & F_MAP)
            rc = write_map(b, f, v);
        else
            rc = write_value(b, f, v);
    }
    for (Py_ssize_t i = 0; i < m->count; i++) Py_XDECREF(slots[i]);
    if (slots != stack) PyMem_Free(slots);
    return rc;
}

static PyObject *empty_dict = NULL;

static int write_message(Buf *b, int id, PyObject *obj) {
    /* A copy: `messages` may move if a Python callback defines more of them (its fields do not). */
    const Message copy = messages[id];
    const Message *m = &copy;
    int exact = PyDict_CheckExact(obj);
    if (!exact) {
        /* as the Python writer: a dict subclass or another Mapping is read through .get, anything
           else (a struct without fields takes any JSON) is written as {} */
        int is_mapping = PyDict_Check(obj) ? 1 : PyObject_IsInstance(obj, mapping_abc);
        if (is_mapping < 0) return -1;
        if (!is_mapping) {
            obj = empty_dict;
            exact = 1;
        }
    }
    if (Py_EnterRecursiveCall(" while writing a protobuf message")) return -1;
    int rc = write_fields(b, m, obj, exact);
    Py_LeaveRecursiveCall();
    return rc;
}

/* --- the module's functions --------------------------------------------------------------------- */

static int check_id(Py_ssize_t id) {
    if (id < 0 || id >= message_count || !messages[id].defined) {
        PyErr_Format(PyExc_ValueError, "_pbwrite: message %zd is not defined", id);
        return -1;
    }
    return 0;
}

static PyObject *py_init(PyObject *self, PyObject *args) {
    PyObject *abc, *decode, *dump;
    if (!PyArg_ParseTuple(args, "OOO", &abc, &decode, &dump)) return NULL;
    Py_INCREF(abc);
    Py_INCREF(decode);
    Py_INCREF(dump);
    Py_XSETREF(mapping_abc, abc);
    Py_XSETREF(b64decode, decode);
    Py_XSETREF(dumps, dump);
    Py_RETURN_NONE;
}

static PyObject *py_reserve(PyObject *self, PyObject *unused) {
    if (message_count == message_capacity) {
        Py_ssize_t cap = message_capacity ? message_capacity * 2 : 256;
        Message *grown = PyMem_Realloc(messages, (size_t)cap * sizeof(Message));
        if (grown == NULL) return PyErr_NoMemory();
        messages = grown;
        message_capacity = cap;
    }
    messages[message_count].fields = NULL;
    messages[message_count].index = NULL;
    messages[message_count].count = 0;
    messages[message_count].defined = 0;
    return PyLong_FromSsize_t(message_count++);
}

static int copy_tag(PyObject *bytes, unsigned char *out, unsigned char *len) {
    if (!PyBytes_Check(bytes) || PyBytes_GET_SIZE(bytes) > 5) {
        PyErr_SetString(PyExc_ValueError, "_pbwrite: a tag is bytes of at most 5");
        return -1;
    }
    *len = (unsigned char)PyBytes_GET_SIZE(bytes);
    memcpy(out, PyBytes_AS_STRING(bytes), *len);
    return 0;
}

static PyObject *py_define(PyObject *self, PyObject *args) {
    Py_ssize_t id;
    PyObject *table;
    if (!PyArg_ParseTuple(args, "nO!", &id, &PyTuple_Type, &table)) return NULL;
    if (id < 0 || id >= message_count || messages[id].defined) {
        PyErr_Format(PyExc_ValueError, "_pbwrite: message %zd is not reserved or already defined", id);
        return NULL;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(table);
    Field *fields = PyMem_Calloc((size_t)(count ? count : 1), sizeof(Field));
    if (fields == NULL) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *name, *outer, *tag, *call, *zero;
        Field *f = &fields[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(table, i), "UiO!iO!iOS", &name, &f->flags, &PyBytes_Type, &outer,
                              &f->kind, &PyBytes_Type, &tag, &f->sub, &call, &zero) ||
            copy_tag(outer, f->outer_tag, &f->outer_tag_len) < 0 || copy_tag(tag, f->tag, &f->tag_len) < 0)
            goto fail;
        if (f->kind < K_STRING || f->kind > K_LAST ||
            ((f->kind == K_MESSAGE || (f->flags & F_INLINE)) && (f->sub < 0 || f->sub >= message_count)) ||
            ((f->kind == K_DELIMITED || f->kind == K_WRITER || f->kind >= K_TIME) && !PyCallable_Check(call))) {
            PyErr_Format(PyExc_ValueError, "_pbwrite: field %R is not well formed", name);
            goto fail;
        }
        if ((f->hash = PyObject_Hash(name)) == -1) goto fail;
        Py_INCREF(name);
        f->name = name;
        Py_INCREF(zero);
        f->zero = zero;
        if (call != Py_None) {
            Py_INCREF(call);
            f->call = call;
        }
    }
    Py_ssize_t size = 8;
    while (size < 2 * count) size *= 2;
    int *index = PyMem_Malloc((size_t)size * sizeof(int));
    if (index == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t i = 0; i < size; i++) index[i] = -1;
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_ssize_t slot = (Py_ssize_t)((size_t)fields[i].hash & (size_t)(size - 1));
        while (index[slot] >= 0) slot = (slot + 1) & (size - 1);
        index[slot] = (int)i;
    }
    messages[id].fields = fields;
    messages[id].count = count;
    messages[id].index = index;
    messages[id].mask = size - 1;
    messages[id].defined = 1;
    Py_RETURN_NONE;
fail:
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_XDECREF(fields[i].name);
        Py_XDECREF(fields[i].zero);
        Py_XDECREF(fields[i].call);
    }
    PyMem_Free(fields);
    return NULL;
}

static int ready(void) {
    if (mapping_abc == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_pbwrite: init() was not called");
        return -1;
    }
    return 0;
}

static PyObject *py_write(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) return PyErr_Format(PyExc_TypeError, "write(id, obj) takes 2 arguments");
    Py_ssize_t id = PyLong_AsSsize_t(args[0]);
    if ((id == -1 && PyErr_Occurred()) || ready() < 0 || check_id(id) < 0) return NULL;
    Buf b = {NULL, 0, 0};
    PyObject *r = NULL;
    if (write_message(&b, (int)id, args[1]) == 0) r = PyBytes_FromStringAndSize(b.data ? b.data : "", b.len);
    PyMem_Free(b.data);
    return r;
}

static PyObject *py_write_into(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyByteArray_Check(args[2]))
        return PyErr_Format(PyExc_TypeError, "write_into(id, obj, bytearray) takes 3 arguments");
    Py_ssize_t id = PyLong_AsSsize_t(args[0]);
    if ((id == -1 && PyErr_Occurred()) || ready() < 0 || check_id(id) < 0) return NULL;
    Buf b = {NULL, 0, 0};
    int rc = write_message(&b, (int)id, args[1]);
    if (rc == 0) {
        PyObject *out = args[2];
        Py_ssize_t old = PyByteArray_GET_SIZE(out);
        rc = PyByteArray_Resize(out, old + b.len);
        if (rc == 0 && b.len) memcpy(PyByteArray_AS_STRING(out) + old, b.data, (size_t)b.len);
    }
    PyMem_Free(b.data);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_delimited(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyBytes_Check(args[2]) || !PyBytes_Check(args[3]))
        return PyErr_Format(PyExc_TypeError, "delimited(id, obj, head: bytes, tail: bytes) takes 4 arguments");
    Py_ssize_t id = PyLong_AsSsize_t(args[0]);
    if ((id == -1 && PyErr_Occurred()) || ready() < 0 || check_id(id) < 0) return NULL;
    Buf b = {NULL, 0, 0};
    PyObject *r = NULL;
    Py_ssize_t start;
    if (buf_put(&b, PyBytes_AS_STRING(args[2]), PyBytes_GET_SIZE(args[2])) == 0 && open_length(&b, &start) == 0 &&
        write_message(&b, (int)id, args[1]) == 0 && close_length(&b, start) == 0 &&
        buf_put(&b, PyBytes_AS_STRING(args[3]), PyBytes_GET_SIZE(args[3])) == 0)
        r = PyBytes_FromStringAndSize(b.data, b.len);
    PyMem_Free(b.data);
    return r;
}

static PyMethodDef methods[] = {
    {"init", py_init, METH_VARARGS, "init(mapping_abc, b64decode, dumps)"},
    {"reserve", py_reserve, METH_NOARGS, "reserve() -> message id"},
    {"define", py_define, METH_VARARGS, "define(id, fields)"},
    {"write", (PyCFunction)(void (*)(void))py_write, METH_FASTCALL, "write(id, obj) -> bytes"},
    {"write_into", (PyCFunction)(void (*)(void))py_write_into, METH_FASTCALL, "write_into(id, obj, bytearray)"},
    {"delimited", (PyCFunction)(void (*)(void))py_delimited, METH_FASTCALL,
     "delimited(id, obj, head, tail) -> head + length + message + tail"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pbwrite",
                                    "Protobuf message bytes of JSON-form dicts (see the source's contract).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pbwrite(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (empty_dict == NULL && (empty_dict = PyDict_New()) == NULL) goto fail;
    if (get_name == NULL && (get_name = PyUnicode_InternFromString("get")) == NULL) goto fail;
    if (PyModule_AddIntConstant(m, "ABI", ABI) < 0 || PyModule_AddIntConstant(m, "REPEATED", F_REPEATED) < 0 ||
        PyModule_AddIntConstant(m, "MAP", F_MAP) < 0 || PyModule_AddIntConstant(m, "INLINE", F_INLINE) < 0 ||
        PyModule_AddIntConstant(m, "KIND_STRING", K_STRING) < 0 ||
        PyModule_AddIntConstant(m, "KIND_BYTES", K_BYTES) < 0 || PyModule_AddIntConstant(m, "KIND_BOOL", K_BOOL) < 0 ||
        PyModule_AddIntConstant(m, "KIND_VARINT", K_VARINT) < 0 ||
        PyModule_AddIntConstant(m, "KIND_DOUBLE", K_DOUBLE) < 0 ||
        PyModule_AddIntConstant(m, "KIND_FLOAT", K_FLOAT) < 0 ||
        PyModule_AddIntConstant(m, "KIND_MESSAGE", K_MESSAGE) < 0 ||
        PyModule_AddIntConstant(m, "KIND_DELIMITED", K_DELIMITED) < 0 ||
        PyModule_AddIntConstant(m, "KIND_WRITER", K_WRITER) < 0 || PyModule_AddIntConstant(m, "KIND_RAW", K_RAW) < 0 ||
        PyModule_AddIntConstant(m, "KIND_TIME", K_TIME) < 0 ||
        PyModule_AddIntConstant(m, "KIND_MICROTIME", K_MICROTIME) < 0 ||
        PyModule_AddIntConstant(m, "KIND_QUANTITY", K_QUANTITY) < 0 ||
        PyModule_AddIntConstant(m, "KIND_INTSTR", K_INTSTR) < 0)
        goto fail;
    return m;
fail:
    Py_DECREF(m);
    return NULL;
}
