/* The Mark type of meshlint's C reader. */
#include "fastread.h"
#include <structmember.h>

static PyMemberDef mark_members[] = {
    {"line", T_LONG, offsetof(MarkObject, line), READONLY, NULL},
    {"column", T_LONG, offsetof(MarkObject, column), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyObject *mark_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    long line, column;
    static char *names[] = {"line", "column", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "ll", names, &line, &column))
        return NULL;
    MarkObject *mark = (MarkObject *)type->tp_alloc(type, 0);
    if (mark != NULL) {
        mark->line = line;
        mark->column = column;
    }
    return (PyObject *)mark;
}

static PyObject *mark_reduce(PyObject *self, PyObject *unused) {
    MarkObject *mark = (MarkObject *)self;
    return Py_BuildValue("O(ll)", (PyObject *)Py_TYPE(self), mark->line, mark->column);
}

static PyObject *mark_repr(PyObject *self) {
    MarkObject *mark = (MarkObject *)self;
    return PyUnicode_FromFormat("Mark(line=%ld, column=%ld)", mark->line, mark->column);
}

static PyMethodDef mark_methods[] = {
    {"__reduce__", mark_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

PyTypeObject fastread_MarkType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "meshlint.source._fastread.Mark",
    .tp_basicsize = sizeof(MarkObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A 0-based line and column in the text the parser read.",
    .tp_new = mark_new,
    .tp_repr = mark_repr,
    .tp_members = mark_members,
    .tp_methods = mark_methods,
};
