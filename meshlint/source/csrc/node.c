/* The core of meshlint/source/document.py's Node, in C: its fields, and the steps from a node to its
 * entries (`get`, `at`, `path`).
 *
 * A check of a big tree takes a great many such steps, each a new Node; in Python they weighed
 * heavily on a `--jobs 1` run. Node in document.py is a subclass that adds everything else
 * (positions, text, paths, places inside strings). Where this module is not built, document.py's
 * `_NodeCore` is the same core in Python, and tests/test_document_node.py holds the two alike.
 *
 * A step reads the position table's marks (`table.raw_maps`, `table.raw_seqs`, keyed by the id of
 * a container) and gives them to the new node unread: positions are made from them only when asked
 * for, by the subclass's `pos` and `key_pos`.
 *
 * Only the case the readers make is taken here: plain dicts, lists and ints, a table of plain dicts,
 * lists and tuples of the right size, every field set. Anything else (a subclass, a bool or other
 * index, a field deleted) goes to the Python core, given by document.py (`fall_back_to`), so that
 * each odd case behaves as it does there. Every object a step reads is held while Python code can
 * run (a key's `__eq__`, the `pos` property, a collection before a new node is allocated).
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
static PyObject *PY_GET, *PY_AT; /* document._NodeCore.get and .at: every case but the common one */

/* T_OBJECT_EX: a field deleted reads as an AttributeError, as an unset slot does. */
static PyMemberDef node_members[] = {
    {"value", T_OBJECT_EX, offsetof(NodeObject, value), 0, NULL},
    {"table", T_OBJECT_EX, offsetof(NodeObject, table), 0, NULL},
    {"_pos", T_OBJECT_EX, offsetof(NodeObject, pos), 0, NULL},
    {"_key_pos", T_OBJECT_EX, offsetof(NodeObject, key_pos), 0, NULL},
    {"style", T_OBJECT_EX, offsetof(NodeObject, style), 0, NULL},
    {"raw", T_OBJECT_EX, offsetof(NodeObject, raw), 0, NULL},
    {"exists", T_OBJECT_EX, offsetof(NodeObject, exists), 0, NULL},
    {"_mark", T_OBJECT_EX, offsetof(NodeObject, mark), 0, NULL},
    {"_key_mark", T_OBJECT_EX, offsetof(NodeObject, key_mark), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

#define FIELDS 9

/* A new node of `type` with these fields (borrowed; NULL for None). Each is held before the
 * allocation, which may run a collection and with it any finalizer. */
static PyObject *make(PyTypeObject *type, PyObject *value, PyObject *table, PyObject *pos, PyObject *key_pos, PyObject *style,
                      PyObject *raw, PyObject *exists, PyObject *mark, PyObject *key_mark) {
    PyObject *fields[FIELDS] = {value, table, pos, key_pos, style, raw, exists, mark, key_mark};
    for (int i = 0; i < FIELDS; i++)
        fields[i] = Py_NewRef(fields[i] != NULL ? fields[i] : Py_None);
    NodeObject *node = (NodeObject *)type->tp_alloc(type, 0);
    if (node == NULL) {
        for (int i = 0; i < FIELDS; i++)
            Py_DECREF(fields[i]);
        return NULL;
    }
    node->value = fields[0];
    node->table = fields[1];
    node->pos = fields[2];
    node->key_pos = fields[3];
    node->style = fields[4];
    node->raw = fields[5];
    node->exists = fields[6];
    node->mark = fields[7];
    node->key_mark = fields[8];
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
    Py_TRASHCAN_BEGIN(self, node_dealloc) /* a long chain of nodes is freed without a deep C stack */
    node_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
    Py_TRASHCAN_END
}

/* The Python core's step: for what is not the common case. */
static PyObject *in_python(PyObject *step, NodeObject *self, PyObject *arg) {
    if (step == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "meshlint.source._node: document.py has not given its Python core (fall_back_to)");
        return NULL;
    }
    return PyObject_CallFunctionObjArgs(step, (PyObject *)self, arg, NULL);
}

/* A plain scalar, or the other kind of plain container: what no step goes into. */
static int plain_leaf(PyObject *value, int list_is_leaf) {
    return value == Py_None || PyUnicode_CheckExact(value) || PyLong_CheckExact(value) || PyBool_Check(value) || PyFloat_CheckExact(value) ||
           (list_is_leaf ? PyList_CheckExact(value) : PyDict_CheckExact(value));
}

/* The node of a missing entry: no value, and the place of the container it is missing from. */
static PyObject *missing(NodeObject *self) {
    return make(Py_TYPE(self), NULL, self->table, self->pos, NULL, NULL, NULL, Py_False, self->mark, NULL);
}

/* A node whose place is its container's (the table has no marks for it): the container's position. */
static PyObject *placed_as_container(NodeObject *self, PyObject *item, int as_key) {
    PyObject *table = Py_NewRef(self->table); /* read before `pos`, whose Python code may change it */
    PyObject *pos = PyObject_GetAttr((PyObject *)self, POS);
    PyObject *node = pos == NULL ? NULL : make(Py_TYPE(self), item, table, pos, as_key ? pos : NULL, NULL, NULL, Py_True, NULL, NULL);
    Py_XDECREF(pos);
    Py_DECREF(table);
    return node;
}

/* `table.<name>[id(container)]`, held (NULL: none, or an error). `*odd` when the table is not a plain
 * dict, for the Python core to read. */
static PyObject *marks_of(NodeObject *self, PyObject *name, PyObject *container, int *odd) {
    PyObject *by_id = PyObject_GetAttr(self->table, name);
    if (by_id == NULL)
        return NULL;
    PyObject *found = NULL;
    if (!PyDict_CheckExact(by_id)) {
        *odd = 1;
    } else {
        PyObject *id = PyLong_FromVoidPtr(container);
        if (id != NULL) {
            found = PyDict_GetItemWithError(by_id, id); /* an int key: no Python code runs */
            Py_XINCREF(found);
            Py_DECREF(id);
        }
    }
    Py_DECREF(by_id);
    return found;
}

static int fields_set(NodeObject *self) {
    return self->value != NULL && self->table != NULL && self->pos != NULL && self->mark != NULL;
}

static PyObject *node_get(NodeObject *self, PyObject *key) {
    if (!fields_set(self) || !(PyDict_CheckExact(self->value) || plain_leaf(self->value, 1)))
        return in_python(PY_GET, self, key);
    if (!PyDict_CheckExact(self->value))
        return missing(self);
    PyObject *value = Py_NewRef(self->value), *item = NULL, *entries = NULL, *entry = NULL, *result = NULL;
    int odd = 0;
    item = PyDict_GetItemWithError(value, key); /* a key's __eq__ may run: everything read is held */
    if (item == NULL) {
        result = PyErr_Occurred() ? NULL : missing(self);
        goto done;
    }
    Py_INCREF(item);
    entries = marks_of(self, RAW_MAPS, value, &odd);
    if (entries == NULL && PyErr_Occurred())
        goto done;
    if (entries != NULL) {
        if (!PyDict_CheckExact(entries)) {
            odd = 1;
        } else {
            entry = PyDict_GetItemWithError(entries, key);
            Py_XINCREF(entry);
            if (entry == NULL && PyErr_Occurred())
                goto done;
            odd = entry != NULL && !(PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 4);
        }
    }
    if (odd)
        result = in_python(PY_GET, self, key);
    else if (entry == NULL)
        result = placed_as_container(self, item, 1);
    else
        result = make(Py_TYPE(self), item, self->table, NULL, NULL, PyTuple_GET_ITEM(entry, 2), PyTuple_GET_ITEM(entry, 3), Py_True,
                      PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 0));
done:
    Py_XDECREF(entry);
    Py_XDECREF(entries);
    Py_XDECREF(item);
    Py_DECREF(value);
    return result;
}

static PyObject *node_at(NodeObject *self, PyObject *index) {
    if (!fields_set(self) || !PyLong_CheckExact(index) || !(PyList_CheckExact(self->value) || plain_leaf(self->value, 0)))
        return in_python(PY_AT, self, index);
    if (!PyList_CheckExact(self->value))
        return missing(self);
    int overflow;
    long long n = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (overflow || n < 0 || n >= PyList_GET_SIZE(self->value))
        return missing(self);
    PyObject *value = Py_NewRef(self->value), *item = Py_NewRef(PyList_GET_ITEM(value, (Py_ssize_t)n)), *result = NULL;
    int odd = 0;
    PyObject *entries = marks_of(self, RAW_SEQS, value, &odd), *entry = NULL;
    if (entries == NULL && PyErr_Occurred())
        goto done;
    if (entries != NULL) {
        if (!PyList_CheckExact(entries)) {
            odd = 1;
        } else if (n < PyList_GET_SIZE(entries)) {
            entry = Py_NewRef(PyList_GET_ITEM(entries, (Py_ssize_t)n));
            odd = !(PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 3);
        }
    }
    if (odd)
        result = in_python(PY_AT, self, index);
    else if (entry == NULL)
        result = placed_as_container(self, item, 0);
    else
        result = make(Py_TYPE(self), item, self->table, NULL, NULL, PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 2), Py_True,
                      PyTuple_GET_ITEM(entry, 0), NULL);
done:
    Py_XDECREF(entry);
    Py_XDECREF(entries);
    Py_DECREF(item);
    Py_DECREF(value);
    return result;
}

/* `get` for each key and `at` for each int, in turn (a bool is an int, as `isinstance` says). */
static PyObject *node_path(NodeObject *self, PyObject *const *keys, Py_ssize_t count) {
    PyObject *node = Py_NewRef((PyObject *)self);
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

static PyObject *fall_back_to(PyObject *module, PyObject *args) {
    PyObject *get, *at;
    if (!PyArg_ParseTuple(args, "OO", &get, &at))
        return NULL;
    Py_XSETREF(PY_GET, Py_NewRef(get));
    Py_XSETREF(PY_AT, Py_NewRef(at));
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"fall_back_to", fall_back_to, METH_VARARGS, "fall_back_to(get, at): the Python core's steps, for every case but the common one."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "meshlint.source._node", "The core of document.Node, in C.", -1, module_methods,
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
    if (PyModule_AddObjectRef(module, "NodeCore", (PyObject *)&NodeCoreType) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
