/* The core of meshlint/source/document.py's Node, in C: its fields, and the steps from a node to its
 * entries (`get`, `at`, `path`).
 *
 * A check of a 10,000-document tree takes about 390,000 such steps, each a new Node; in Python they
 * were a tenth of a `--jobs 1` run. Node in document.py is a subclass that adds everything else
 * (positions, text, paths, places inside strings). Where this module is not built, document.py's
 * `_NodeCore` is the same core in Python, and tests/test_document_node.py holds the two alike.
 *
 * A step reads the position table's marks (`table.raw_maps`, `table.raw_seqs`, keyed by the id of
 * a container) and gives them to the new node unread: positions are made from them only when asked
 * for, by the subclass's `pos` and `key_pos`.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyObject *value;
    PyObject *table;
    PyObject *pos;      /* `_pos`: the position, or None until made from `mark` */
    PyObject *key_pos;  /* `_key_pos`: likewise, from `key_mark` */
    PyObject *style;
    PyObject *raw;
    PyObject *exists;   /* True or False */
    PyObject *mark;     /* `_mark` */
    PyObject *key_mark; /* `_key_mark` */
} NodeObject;

static PyObject *RAW_MAPS, *RAW_SEQS, *POS;

static PyMemberDef node_members[] = {
    {"value", T_OBJECT, offsetof(NodeObject, value), 0, NULL},
    {"table", T_OBJECT, offsetof(NodeObject, table), 0, NULL},
    {"_pos", T_OBJECT, offsetof(NodeObject, pos), 0, NULL},
    {"_key_pos", T_OBJECT, offsetof(NodeObject, key_pos), 0, NULL},
    {"style", T_OBJECT, offsetof(NodeObject, style), 0, NULL},
    {"raw", T_OBJECT, offsetof(NodeObject, raw), 0, NULL},
    {"exists", T_OBJECT, offsetof(NodeObject, exists), 0, NULL},
    {"_mark", T_OBJECT, offsetof(NodeObject, mark), 0, NULL},
    {"_key_mark", T_OBJECT, offsetof(NodeObject, key_mark), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

/* A new node of `type`; the fields are borrowed references (NULL for None), taken here. */
static PyObject *make(PyTypeObject *type, PyObject *value, PyObject *table, PyObject *pos, PyObject *key_pos, PyObject *style,
                      PyObject *raw, PyObject *exists, PyObject *mark, PyObject *key_mark) {
    NodeObject *node = (NodeObject *)type->tp_alloc(type, 0);
    if (node == NULL)
        return NULL;
#define TAKE(field, from) node->field = (from) != NULL ? (from) : Py_None, Py_INCREF(node->field)
    TAKE(value, value);
    TAKE(table, table);
    TAKE(pos, pos);
    TAKE(key_pos, key_pos);
    TAKE(style, style);
    TAKE(raw, raw);
    TAKE(exists, exists);
    TAKE(mark, mark);
    TAKE(key_mark, key_mark);
#undef TAKE
    return (PyObject *)node;
}

static PyObject *node_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *value, *table, *pos, *key_pos, *style = NULL, *raw = NULL, *exists = Py_True, *mark = NULL, *key_mark = NULL;
    static char *names[] = {"value", "table", "pos", "key_pos", "style", "raw", "exists", "mark", "key_mark", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO|OOOOO", names, &value, &table, &pos, &key_pos, &style, &raw, &exists, &mark, &key_mark))
        return NULL;
    return make(type, value, table, pos, key_pos, style, raw, exists, mark, key_mark);
}

static int node_traverse(NodeObject *self, visitproc visit, void *arg) {
    Py_VISIT(self->value);
    Py_VISIT(self->table);
    Py_VISIT(self->pos);
    Py_VISIT(self->key_pos);
    Py_VISIT(self->style);
    Py_VISIT(self->raw);
    Py_VISIT(self->exists);
    Py_VISIT(self->mark);
    Py_VISIT(self->key_mark);
    return 0;
}

static int node_clear(NodeObject *self) {
    Py_CLEAR(self->value);
    Py_CLEAR(self->table);
    Py_CLEAR(self->pos);
    Py_CLEAR(self->key_pos);
    Py_CLEAR(self->style);
    Py_CLEAR(self->raw);
    Py_CLEAR(self->exists);
    Py_CLEAR(self->mark);
    Py_CLEAR(self->key_mark);
    return 0;
}

static void node_dealloc(NodeObject *self) {
    PyObject_GC_UnTrack(self);
    node_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The node of a missing entry: no value, and the place of the container it is missing from. */
static PyObject *missing(NodeObject *self) {
    return make(Py_TYPE(self), NULL, self->table, self->pos, NULL, NULL, NULL, Py_False, self->mark, NULL);
}

/* `table.<name>[id(container)]`, borrowed (NULL, no error, when the table has none for it). */
static PyObject *raw_of(NodeObject *self, PyObject *name, PyObject *container, PyObject **held) {
    *held = PyObject_GetAttr(self->table, name);
    if (*held == NULL)
        return NULL;
    PyObject *id = PyLong_FromVoidPtr(container);
    if (id == NULL)
        return NULL;
    PyObject *found = PyDict_Check(*held) ? PyDict_GetItemWithError(*held, id) : NULL;
    Py_DECREF(id);
    return found;
}

/* A node whose place is its container's (no marks for it): the container's position, made now. */
static PyObject *placed_as_container(NodeObject *self, PyObject *item, int as_key) {
    PyObject *pos = PyObject_GetAttr((PyObject *)self, POS);
    if (pos == NULL)
        return NULL;
    PyObject *node = make(Py_TYPE(self), item, self->table, pos, as_key ? pos : NULL, NULL, NULL, Py_True, NULL, NULL);
    Py_DECREF(pos);
    return node;
}

static PyObject *node_get(NodeObject *self, PyObject *key) {
    PyObject *value = self->value;
    if (!PyDict_Check(value))
        return missing(self);
    PyObject *item;
    if (PyDict_CheckExact(value)) {
        item = PyDict_GetItemWithError(value, key); /* borrowed */
        if (item == NULL)
            return PyErr_Occurred() ? NULL : missing(self);
        Py_INCREF(item); /* held while the table is looked at */
    } else { /* a subclass's own `in` and `[]`, as the Python core uses them */
        int found = PySequence_Contains(value, key);
        if (found <= 0)
            return found < 0 ? NULL : missing(self);
        item = PyObject_GetItem(value, key);
        if (item == NULL)
            return NULL;
    }
    PyObject *held = NULL, *result = NULL;
    PyObject *entries = raw_of(self, RAW_MAPS, value, &held);
    PyObject *entry = NULL;
    if (entries == NULL && PyErr_Occurred())
        goto done;
    if (entries != NULL && PyDict_Check(entries)) {
        entry = PyDict_GetItemWithError(entries, key);
        if (entry == NULL && PyErr_Occurred())
            goto done;
    }
    if (entry == NULL || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4)
        result = placed_as_container(self, item, 1);
    else
        result = make(Py_TYPE(self), item, self->table, NULL, NULL, PyTuple_GET_ITEM(entry, 2), PyTuple_GET_ITEM(entry, 3), Py_True,
                      PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 0));
done:
    Py_XDECREF(held);
    Py_DECREF(item);
    return result;
}

static PyObject *at_index(NodeObject *self, Py_ssize_t index) {
    PyObject *value = self->value;
    if (!PyList_Check(value) || index < 0)
        return missing(self);
    Py_ssize_t size = PyList_CheckExact(value) ? PyList_GET_SIZE(value) : PyObject_Size(value);
    if (size < 0)
        return NULL;
    if (index >= size)
        return missing(self);
    PyObject *item;
    if (PyList_CheckExact(value)) {
        item = PyList_GET_ITEM(value, index);
        Py_INCREF(item);
    } else if ((item = PySequence_GetItem(value, index)) == NULL) { /* a subclass's own `[]` */
        return NULL;
    }
    PyObject *held = NULL, *result = NULL;
    PyObject *entries = raw_of(self, RAW_SEQS, value, &held);
    if (entries == NULL && PyErr_Occurred())
        goto done;
    PyObject *entry = entries != NULL && PyList_Check(entries) && index < PyList_GET_SIZE(entries) ? PyList_GET_ITEM(entries, index) : NULL;
    if (entry == NULL || !PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3)
        result = placed_as_container(self, item, 0);
    else
        result = make(Py_TYPE(self), item, self->table, NULL, NULL, PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 2), Py_True,
                      PyTuple_GET_ITEM(entry, 0), NULL);
done:
    Py_XDECREF(held);
    Py_DECREF(item);
    return result;
}

static PyObject *node_at(NodeObject *self, PyObject *index) {
    if (!PyLong_Check(index)) {
        PyErr_Format(PyExc_TypeError, "a node's index is an int, not %.100s", Py_TYPE(index)->tp_name);
        return NULL;
    }
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (overflow || n > PY_SSIZE_T_MAX || n < -PY_SSIZE_T_MAX)
        return missing(self); /* past any list's end, or before its start */
    return at_index(self, (Py_ssize_t)n);
}

static PyObject *node_path(NodeObject *self, PyObject *const *keys, Py_ssize_t count) {
    PyObject *node = (PyObject *)self;
    Py_INCREF(node);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *next = PyLong_Check(keys[i]) ? node_at((NodeObject *)node, keys[i]) : node_get((NodeObject *)node, keys[i]);
        Py_DECREF(node);
        if (next == NULL)
            return NULL;
        node = next;
    }
    return node;
}

static PyMethodDef node_methods[] = {
    {"get", (PyCFunction)node_get, METH_O, "The entry `key` of this mapping, or a missing node where this mapping is."},
    {"at", (PyCFunction)node_at, METH_O, "The item `index` of this sequence, or a missing node where this sequence is."},
    {"path", (PyCFunction)(void (*)(void))node_path, METH_FASTCALL, "`get` for each key and `at` for each int, in turn."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NodeCoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "meshlint.source._node.NodeCore",
    .tp_basicsize = sizeof(NodeObject),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A value in a document, with the marks of where it stands: the core of document.Node.",
    .tp_new = node_new,
    .tp_dealloc = (destructor)node_dealloc,
    .tp_traverse = (traverseproc)node_traverse,
    .tp_clear = (inquiry)node_clear,
    .tp_members = node_members,
    .tp_methods = node_methods,
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "meshlint.source._node", "The core of document.Node, in C.", -1, NULL,
};

PyMODINIT_FUNC PyInit__node(void) {
    RAW_MAPS = PyUnicode_InternFromString("raw_maps");
    RAW_SEQS = PyUnicode_InternFromString("raw_seqs");
    POS = PyUnicode_InternFromString("pos");
    if (RAW_MAPS == NULL || RAW_SEQS == NULL || POS == NULL || PyType_Ready(&NodeCoreType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    Py_INCREF(&NodeCoreType);
    if (PyModule_AddObject(module, "NodeCore", (PyObject *)&NodeCoreType) < 0) {
        Py_DECREF(&NodeCoreType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
