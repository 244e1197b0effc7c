/* One document's events made into data and per-container marks, for the common case alone (see
 * module.c); anything else is NOT_MINE, and the Python readers read the whole text. */
#include "fastread.h"
#include "releases.h"

/* Styles as PyYAML gives them (a plain scalar has none), and the words a non-string key becomes. */
static PyObject *STYLE_SINGLE, *STYLE_DOUBLE, *STYLE_LITERAL, *STYLE_FOLDED, *WORD_TRUE, *WORD_FALSE, *WORD_NULL, *MERGE_KEY;

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

/* See fastread.h. */
int fastread_read_document(yaml_parser_t *parser, Options *options, Frame *stack, PyObject *out) {
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

int fastread_init_words(void) {
    STYLE_SINGLE = PyUnicode_InternFromString("'");
    STYLE_DOUBLE = PyUnicode_InternFromString("\"");
    STYLE_LITERAL = PyUnicode_InternFromString("|");
    STYLE_FOLDED = PyUnicode_InternFromString(">");
    WORD_TRUE = PyUnicode_InternFromString("true");
    WORD_FALSE = PyUnicode_InternFromString("false");
    WORD_NULL = PyUnicode_InternFromString("null");
    MERGE_KEY = PyUnicode_InternFromString("<<");
    if (!STYLE_SINGLE || !STYLE_DOUBLE || !STYLE_LITERAL || !STYLE_FOLDED || !WORD_TRUE || !WORD_FALSE || !WORD_NULL || !MERGE_KEY)
        return -1;
    return 0;
}
