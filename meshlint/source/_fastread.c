/* The reader of meshlint/source/libyaml.py, for the documents most files hold, in C.
 *
 * `read` walks libyaml's events and builds what `libyaml.read_documents` builds from PyYAML's: each
 * document's data, and per container the marks of its entries (keyed by the container's id), so
 * that positions are made only when asked for. It takes the common case alone: no anchor, alias,
 * merge key, tag, directive, complex or repeated key, nothing deeper than the limit, no syntax
 * error, and nothing that releases of libyaml read differently (`changed_between_releases`). For any of those it returns None, and the Python reader reads the whole text again, so
 * every message and mark of those cases stays the Python reader's. Plain scalars that may be
 * something other than a string are resolved by the caller's YAML 1.1 function, so both readers
 * resolve with one table; of those that start with a letter, only the caller's words (booleans and
 * null) are, so the others are strings without a call. Plain decimal ints of up to 18 digits are
 * the one type worked out here (`plain_decimal`; tests/test_fastread.py holds them equal to the
 * resolver's).
 *
 * `parses` is libyaml's parser alone: does the text parse (`libyaml.parse_only`)? It says no, so that
 * the text is composed, for what `changed_between_releases` names too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <yaml.h>

/* A mark: where the parser saw something, 0-based in the text it read (the `Mark` protocol of
 * meshlint/source/positions.py). Two numbers and no references, so the cyclic GC never sees it. */
typedef struct {
    PyObject_HEAD
    long line;
    long column;
} MarkObject;

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

static PyTypeObject MarkType = {
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

static PyObject *make_mark(yaml_mark_t where) {
    MarkObject *mark = PyObject_New(MarkObject, &MarkType);
    if (mark != NULL) {
        mark->line = (long)where.line;
        mark->column = (long)where.column;
    }
    return (PyObject *)mark;
}

/* Styles as PyYAML gives them (a plain scalar has none), and the words a non-string key becomes. */
static PyObject *STYLE_SINGLE, *STYLE_DOUBLE, *STYLE_LITERAL, *STYLE_FOLDED, *WORD_TRUE, *WORD_FALSE, *WORD_NULL, *MERGE_KEY;

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

/* What `read` returns when the text is not the common case: the caller reads it in Python. */
#define NOT_MINE 1

/* Does the flow mapping that starts at this mark (libyaml counts characters) open with `{`? One
 * that does not is a single pair in a flow sequence. */
static int opens_with_brace(PyObject *text, size_t index) {
    return (Py_ssize_t)index < PyUnicode_GET_LENGTH(text) && PyUnicode_READ_CHAR(text, (Py_ssize_t)index) == '{';
}

/* This reader links the system's libyaml, PyYAML its own copy, which may be of another release
 * (Debian's 0.2.5 against PyYAML 6.0.4's later one). Where the releases between them changed what
 * parses, both readers leave the text to PyYAML: a single-pair mapping in a flow sequence (`[a: 1]`,
 * `[?]]`), a tag (flow indicators in local tags), a directive (a document end before one), and
 * nesting past the limit (later releases stop at 1000 levels). */
#define NESTING_LIMIT 200

static int changed_between_releases(const yaml_event_t *event, Py_ssize_t depth, PyObject *text) {
    switch (event->type) { /* a directive is found in the text (`has_directive_line`), before any event */
    case YAML_MAPPING_START_EVENT:
        return event->data.mapping_start.tag != NULL || depth >= NESTING_LIMIT ||
               (event->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE && !opens_with_brace(text, event->start_mark.index));
    case YAML_SEQUENCE_START_EVENT:
        return event->data.sequence_start.tag != NULL || depth >= NESTING_LIMIT;
    case YAML_SCALAR_EVENT:
        return event->data.scalar.tag != NULL;
    default:
        return 0;
    }
}

/* A line that starts with `%` (a directive, or what a release takes for one). */
static int has_directive_line(const char *text, Py_ssize_t size) {
    for (Py_ssize_t i = 0; i < size; i++)
        if (text[i] == '%' && (i == 0 || text[i - 1] == '\n' || text[i - 1] == '\r'))
            return 1;
    return 0;
}

static void drop_frame(Frame *frame) {
    Py_XDECREF(frame->data);
    Py_XDECREF(frame->entries);
    Py_XDECREF(frame->start);
    Py_XDECREF(frame->key);
    Py_XDECREF(frame->key_mark);
}

static PyObject *style_of(yaml_scalar_style_t style) {
    switch (style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE: return STYLE_SINGLE;
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE: return STYLE_DOUBLE;
    case YAML_LITERAL_SCALAR_STYLE: return STYLE_LITERAL;
    case YAML_FOLDED_SCALAR_STYLE: return STYLE_FOLDED;
    default: return Py_None;
    }
}

/* A key as the Python reader keeps it: text, with booleans, null and numbers written out. */
static PyObject *key_text(PyObject *value) {
    if (PyUnicode_CheckExact(value)) {
        Py_INCREF(value);
        return value;
    }
    if (value == Py_True) { Py_INCREF(WORD_TRUE); return WORD_TRUE; }
    if (value == Py_False) { Py_INCREF(WORD_FALSE); return WORD_FALSE; }
    if (value == Py_None) { Py_INCREF(WORD_NULL); return WORD_NULL; }
    return PyObject_Str(value);
}

typedef struct {
    PyObject *text;    /* what is read */
    PyObject *firsts;  /* the first characters a non-string plain scalar can have */
    PyObject *words;   /* every non-string plain scalar that starts with a letter */
    PyObject *resolve; /* the YAML 1.1 resolver of a plain scalar */
    Py_ssize_t max_depth;
} Options;

/* Hands `value` (with its mark, style and raw text; references taken) to the innermost frame, or
 * makes it the document's root. Returns 0, NOT_MINE, or -1 with an exception set. */
static int hand_over(Frame *stack, Py_ssize_t depth, PyObject *value, PyObject *mark, PyObject *style, PyObject *raw,
                     PyObject **root, PyObject **root_mark) {
    int status = 0;
    if (depth == 0) {
        *root = value;
        *root_mark = mark;
        Py_DECREF(raw);
        return 0;
    }
    Frame *parent = &stack[depth - 1];
    if (!parent->is_map) {
        PyObject *entry = PyTuple_Pack(3, mark, style, raw);
        if (entry == NULL || PyList_Append(parent->data, value) < 0 || PyList_Append(parent->entries, entry) < 0)
            status = -1;
        Py_XDECREF(entry);
    } else if (parent->key == NULL) {
        if (PyDict_CheckExact(value) || PyList_CheckExact(value)) {
            status = NOT_MINE; /* a complex key */
        } else {
            PyObject *key = key_text(value);
            if (key == NULL) {
                status = -1;
            } else {
                parent->key = key;
                parent->key_mark = mark;
                Py_INCREF(mark);
            }
        }
    } else {
        PyObject *key = parent->key, *key_mark = parent->key_mark;
        parent->key = parent->key_mark = NULL;
        int seen = PyDict_Contains(parent->entries, key);
        if (seen < 0) {
            status = -1;
        } else if (seen) {
            status = NOT_MINE; /* a repeated key: the Python reader reports it */
        } else {
            PyObject *entry = PyTuple_Pack(4, key_mark, mark, style, raw);
            if (entry == NULL || PyDict_SetItem(parent->data, key, value) < 0 || PyDict_SetItem(parent->entries, key, entry) < 0)
                status = -1;
            Py_XDECREF(entry);
        }
        Py_DECREF(key);
        Py_DECREF(key_mark);
    }
    Py_DECREF(value);
    Py_DECREF(mark);
    Py_DECREF(raw);
    return status;
}

/* Is the scalar 1 to 18 ASCII digits, with no leading zero unless it is "0"? That is YAML 1.1's
 * plain decimal int, the number most manifests hold (ports, replicas, counts), whose value is
 * worked out here without a call to the resolver: fewer digits than a long long can overflow, and
 * none of YAML 1.1's other forms (octal, hexadecimal, signs, `_`, sexagesimal, floats). */
static int plain_decimal(const unsigned char *chars, size_t length, long long *number) {
    if (length == 0 || length > 18 || (chars[0] == '0' && length > 1))
        return 0;
    long long n = 0;
    for (size_t i = 0; i < length; i++) {
        if (chars[i] < '0' || chars[i] > '9')
            return 0;
        n = n * 10 + (chars[i] - '0');
    }
    *number = n;
    return 1;
}

/* A scalar event's value and raw text, and whether it is the merge key's word; NOT_MINE for what
 * the Python reader must read. */
static int scalar_of(yaml_event_t *event, Options *options, PyObject **value, PyObject **raw, int *merge) {
    if (event->data.scalar.anchor != NULL) /* a tag was left already (`changed_between_releases`) */
        return NOT_MINE;
    PyObject *text = PyUnicode_DecodeUTF8((const char *)event->data.scalar.value, (Py_ssize_t)event->data.scalar.length, "strict");
    if (text == NULL)
        return -1;
    long long number;
    if (event->data.scalar.plain_implicit && plain_decimal(event->data.scalar.value, event->data.scalar.length, &number)) {
        PyObject *resolved = PyLong_FromLongLong(number);
        if (resolved == NULL) {
            Py_DECREF(text);
            return -1;
        }
        *value = resolved;
        *raw = text;
        return 0;
    }
    if (event->data.scalar.plain_implicit) {
        int candidate;
        Py_UCS4 first = PyUnicode_GET_LENGTH(text) ? PyUnicode_READ_CHAR(text, 0) : 0;
        if ((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z')) {
            /* Most keys and words start with a letter; only a boolean's or null's word is no string. */
            candidate = PySet_Contains(options->words, text);
        } else {
            PyObject *head = PyUnicode_Substring(text, 0, 1);
            candidate = head == NULL ? -1 : PySet_Contains(options->firsts, head);
            Py_XDECREF(head);
        }
        if (candidate < 0) {
            Py_DECREF(text);
            return -1;
        }
        if (candidate) {
            *merge = PyUnicode_Compare(text, MERGE_KEY) == 0;
            PyObject *resolved = PyObject_CallOneArg(options->resolve, text);
            if (resolved == NULL) {
                Py_DECREF(text);
                return -1;
            }
            if (!PyUnicode_CheckExact(resolved)) {
                *value = resolved;
                *raw = text;
                return 0;
            }
            Py_DECREF(text);
            text = resolved;
        }
    }
    *value = text;
    *raw = Py_None;
    Py_INCREF(Py_None);
    return 0;
}

static PyObject *id_of(PyObject *object) { return PyLong_FromVoidPtr(object); }

/* One document, from after its start event to its end: appends (root, root mark, end line, maps,
 * seqs, starts) to `out`. Returns 0, NOT_MINE, or -1 with an exception set. */
static int read_document(yaml_parser_t *parser, Options *options, Frame *stack, PyObject *out) {
    PyObject *maps = PyDict_New(), *seqs = PyDict_New(), *starts = PyDict_New();
    PyObject *root = NULL, *root_mark = NULL;
    Py_ssize_t depth = 0;
    size_t end_line = 0;
    int status = 0;
    if (maps == NULL || seqs == NULL || starts == NULL)
        status = -1;
    while (status == 0) {
        yaml_event_t event;
        if (!yaml_parser_parse(parser, &event)) {
            status = NOT_MINE; /* a syntax error: the Python reader words it */
            break;
        }
        yaml_event_type_t type = event.type;
        if (type == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&event);
            if (depth != 0 || root == NULL)
                status = NOT_MINE; /* no release gives that: the Python reader will say what it is */
            break;
        }
        if (changed_between_releases(&event, depth, options->text)) {
            status = NOT_MINE;
        } else if (type == YAML_SCALAR_EVENT) {
            PyObject *value = NULL, *raw = NULL;
            int merge = 0;
            status = scalar_of(&event, options, &value, &raw, &merge);
            if (status == 0 && merge && depth > 0 && stack[depth - 1].is_map && stack[depth - 1].key == NULL) {
                Py_DECREF(value); /* a merge key: the Python reader merges */
                Py_DECREF(raw);
                status = NOT_MINE;
            } else if (status == 0) {
                PyObject *mark = make_mark(event.start_mark);
                PyObject *style = style_of(event.data.scalar.style);
                end_line = event.end_mark.line;
                if (mark == NULL) {
                    Py_DECREF(value);
                    Py_DECREF(raw);
                    status = -1;
                } else {
                    status = hand_over(stack, depth, value, mark, style, raw, &root, &root_mark);
                }
            }
        } else if (type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_START_EVENT) {
            int is_map = type == YAML_MAPPING_START_EVENT;
            if ((is_map ? event.data.mapping_start.anchor : event.data.sequence_start.anchor) != NULL || depth > options->max_depth) {
                status = NOT_MINE;
            } else {
                Frame *frame = &stack[depth];
                frame->data = is_map ? PyDict_New() : PyList_New(0);
                frame->entries = is_map ? PyDict_New() : PyList_New(0);
                frame->start = make_mark(event.start_mark);
                frame->key = frame->key_mark = NULL;
                frame->is_map = is_map;
                depth++;
                if (frame->data == NULL || frame->entries == NULL || frame->start == NULL)
                    status = -1;
            }
        } else if ((type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT) && depth == 0) {
            status = NOT_MINE; /* an end with nothing open: as above */
        } else if (type == YAML_MAPPING_END_EVENT || type == YAML_SEQUENCE_END_EVENT) {
            Frame *frame = &stack[--depth];
            PyObject *id = id_of(frame->data);
            end_line = event.end_mark.line;
            if (id == NULL || PyDict_SetItem(frame->is_map ? maps : seqs, id, frame->entries) < 0 || PyDict_SetItem(starts, id, frame->start) < 0) {
                status = -1;
                depth++; /* the frame is dropped with the others */
            } else {
                PyObject *value = frame->data, *mark = frame->start;
                Py_DECREF(frame->entries);
                frame->data = frame->entries = frame->start = NULL;
                Py_INCREF(Py_None);
                status = hand_over(stack, depth, value, mark, Py_None, Py_None, &root, &root_mark);
            }
            Py_XDECREF(id);
        } else { /* an alias */
            status = NOT_MINE;
        }
        yaml_event_delete(&event);
    }
    while (depth > 0)
        drop_frame(&stack[--depth]);
    if (status == 0 && root != NULL) {
        PyObject *document = Py_BuildValue("(OOnOOO)", root, root_mark, (Py_ssize_t)end_line, maps, seqs, starts);
        if (document == NULL || PyList_Append(out, document) < 0)
            status = -1;
        Py_XDECREF(document);
    }
    Py_XDECREF(root);
    Py_XDECREF(root_mark);
    Py_XDECREF(maps);
    Py_XDECREF(seqs);
    Py_XDECREF(starts);
    return status;
}

/* The text as UTF-8, as PyYAML hands it to libyaml. An ASCII text is its own UTF-8, lent as it is;
 * any other is encoded into `*held`, released by the caller, so that the text does not keep a second
 * copy of itself (which PyUnicode_AsUTF8AndSize would cache in it) for as long as it lives. */
static const char *utf8_of(PyObject *text, Py_ssize_t *size, PyObject **held) {
    *held = NULL;
    if (PyUnicode_IS_ASCII(text))
        return PyUnicode_AsUTF8AndSize(text, size);
    *held = PyUnicode_AsUTF8String(text);
    if (*held == NULL)
        return NULL;
    *size = PyBytes_GET_SIZE(*held);
    return PyBytes_AS_STRING(*held);
}

static PyObject *fast_read(PyObject *module, PyObject *args) {
    PyObject *text;
    Options options;
    if (!PyArg_ParseTuple(args, "UO!O!On", &text, &PyFrozenSet_Type, &options.firsts, &PyFrozenSet_Type, &options.words, &options.resolve, &options.max_depth))
        return NULL;
    options.text = text;
    Py_ssize_t size;
    PyObject *held;
    const char *utf8 = utf8_of(text, &size, &held);
    if (utf8 == NULL) { /* a lone surrogate: PyYAML's reader raises for it, and says so */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    Frame *stack = PyMem_Calloc((size_t)options.max_depth + 2, sizeof(Frame));
    PyObject *out = PyList_New(0);
    yaml_parser_t parser;
    if (stack == NULL || out == NULL || !yaml_parser_initialize(&parser)) {
        PyMem_Free(stack);
        Py_XDECREF(out);
        Py_XDECREF(held);
        return PyErr_NoMemory();
    }
    /* No encoding is set, as PyYAML sets none: libyaml takes a leading byte-order mark as one. */
    yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
    int status = has_directive_line(utf8, size) ? NOT_MINE : 0;
    while (status == 0) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            status = NOT_MINE;
            break;
        }
        yaml_event_type_t type = event.type;
        yaml_event_delete(&event);
        if (type == YAML_STREAM_END_EVENT)
            break;
        if (type == YAML_DOCUMENT_START_EVENT)
            status = read_document(&parser, &options, stack, out);
    }
    yaml_parser_delete(&parser);
    PyMem_Free(stack);
    Py_XDECREF(held);
    if (status != 0) {
        Py_DECREF(out);
        if (status < 0)
            return NULL;
        Py_RETURN_NONE;
    }
    return out;
}

static PyObject *fast_parses(PyObject *module, PyObject *args) {
    PyObject *text;
    if (!PyArg_ParseTuple(args, "U", &text))
        return NULL;
    Py_ssize_t size;
    PyObject *held;
    const char *utf8 = utf8_of(text, &size, &held);
    if (utf8 == NULL) {
        PyErr_Clear();
        Py_RETURN_FALSE;
    }
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        Py_XDECREF(held);
        return PyErr_NoMemory();
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)utf8, (size_t)size);
    /* False sends the text to a reader that says why: so does all that releases of libyaml differ on. */
    int ok = !has_directive_line(utf8, size), done = !ok;
    Py_ssize_t depth = 0;
    Py_BEGIN_ALLOW_THREADS
    while (!done) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            ok = 0;
            break;
        }
        if (changed_between_releases(&event, depth, text)) { /* reads the str: immutable, and held */
            ok = 0;
            done = 1;
        }
        if (event.type == YAML_MAPPING_START_EVENT || event.type == YAML_SEQUENCE_START_EVENT)
            depth++;
        else if (event.type == YAML_MAPPING_END_EVENT || event.type == YAML_SEQUENCE_END_EVENT)
            depth--;
        done |= event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
    }
    Py_END_ALLOW_THREADS
    yaml_parser_delete(&parser);
    Py_XDECREF(held);
    return PyBool_FromLong(ok);
}

static PyMethodDef methods[] = {
    {"read", fast_read, METH_VARARGS,
     "read(text, first_characters, letter_words, resolve_plain, max_depth) -> [(root, root mark, end line, maps, seqs, starts)] or None"},
    {"parses", fast_parses, METH_VARARGS, "parses(text) -> does libyaml parse it?"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "meshlint.source._fastread", "libyaml's events made into meshlint's documents, in C.", -1, methods,
};

PyMODINIT_FUNC PyInit__fastread(void) {
    if (PyType_Ready(&MarkType) < 0)
        return NULL;
    STYLE_SINGLE = PyUnicode_InternFromString("'");
    STYLE_DOUBLE = PyUnicode_InternFromString("\"");
    STYLE_LITERAL = PyUnicode_InternFromString("|");
    STYLE_FOLDED = PyUnicode_InternFromString(">");
    WORD_TRUE = PyUnicode_InternFromString("true");
    WORD_FALSE = PyUnicode_InternFromString("false");
    WORD_NULL = PyUnicode_InternFromString("null");
    MERGE_KEY = PyUnicode_InternFromString("<<");
    if (!STYLE_SINGLE || !STYLE_DOUBLE || !STYLE_LITERAL || !STYLE_FOLDED || !WORD_TRUE || !WORD_FALSE || !WORD_NULL || !MERGE_KEY)
        return NULL;
    PyObject *module = PyModule_Create(&module_def);
    if (module == NULL)
        return NULL;
    if (PyModule_AddStringConstant(module, "LIBYAML_VERSION", yaml_get_version_string()) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    Py_INCREF(&MarkType);
    if (PyModule_AddObject(module, "Mark", (PyObject *)&MarkType) < 0) {
        Py_DECREF(&MarkType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
