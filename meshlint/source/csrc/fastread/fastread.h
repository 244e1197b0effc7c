/* What the parts of meshlint's C reader share (meshlint/source/readers/native.py is its Python side).
 *
 * module.c: the module, `read` and `parses`; document.c: one document's events made into data and
 * marks; mark.c: the Mark type; releases.h: what releases of libyaml read differently.
 */
#ifndef MESHLINT_FASTREAD_H
#define MESHLINT_FASTREAD_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <yaml.h>

/* A mark: where the parser saw something, 0-based in the text it read (the `Mark` protocol of
 * meshlint/source/positions.py). Two numbers and no references, so the cyclic GC never sees it. */
typedef struct {
    PyObject_HEAD
    long line;
    long column;
} MarkObject;

extern PyTypeObject fastread_MarkType;

/* A new mark; inline, as one is made for every node read. */
static inline PyObject *make_mark(yaml_mark_t where) {
    MarkObject *mark = PyObject_New(MarkObject, &fastread_MarkType);
    if (mark != NULL) {
        mark->line = (long)where.line;
        mark->column = (long)where.column;
    }
    return (PyObject *)mark;
}

/* What `read` returns when the text is not the common case: the caller reads it in Python. */
#define NOT_MINE 1

typedef struct {
    PyObject *text;    /* what is read */
    PyObject *firsts;  /* the first characters a non-string plain scalar can have */
    PyObject *words;   /* every non-string plain scalar that starts with a letter */
    PyObject *resolve; /* the YAML 1.1 resolver of a plain scalar */
    Py_ssize_t max_depth;
} Options;

/* An open container: its data, its entries' marks, where it starts, and (a mapping) the key whose
 * value comes next, with that key's mark. */
typedef struct {
    PyObject *data;
    PyObject *entries;
    PyObject *start;
    PyObject *key;
    PyObject *key_mark;
    int is_map;
} Frame;

/* The styles and words document.c hands out, made once; 0, or -1 with an exception set. */
int fastread_init_words(void);

/* One document, from after its start event to its end: appends (root, root mark, end line, maps,
 * seqs, starts) to `out`. Returns 0, NOT_MINE, or -1 with an exception set. `stack` holds
 * `options->max_depth + 2` frames. */
int fastread_read_document(yaml_parser_t *parser, Options *options, Frame *stack, PyObject *out);

#endif
