/* CPython 3.11 (x86-64) structure offsets that the CPU sampler's Python frame reader uses.
 *
 * libnnprof does not link libpython and must build where no Python headers are installed (the
 * sanitizer builds), so the reader works from these numbers rather than from the headers.
 * tests/python_layout_check.c compiles against /usr/include/python3.11 with Py_BUILD_CORE and
 * checks every one of them with _Static_assert, so a header that disagrees fails the build of
 * that check instead of silently misreading frames. Plain C so that check can include it. */
#ifndef NNPROF_PYTHON_LAYOUT_311_H
#define NNPROF_PYTHON_LAYOUT_311_H

/* _PyRuntimeState: the gilstate block, and in it the thread state holding the GIL and the
 * thread-specific key under which each thread's PyThreadState is kept (Py_tss_t). */
#define NNPROF_PY311_RUNTIME_GILSTATE 568
#define NNPROF_PY311_GILSTATE_TSTATE_CURRENT 8
#define NNPROF_PY311_GILSTATE_AUTO_TSS_KEY 24
#define NNPROF_PY311_TSS_IS_INITIALIZED 0
#define NNPROF_PY311_TSS_KEY 4

/* PyThreadState */
#define NNPROF_PY311_TSTATE_CFRAME 56
#define NNPROF_PY311_TSTATE_THREAD_ID 152
#define NNPROF_PY311_TSTATE_DATASTACK_CHUNK 296
#define NNPROF_PY311_TSTATE_DATASTACK_TOP 304

/* _PyStackChunk: the thread's frames live in chunks of a stack of its own */
#define NNPROF_PY311_CHUNK_DATA 24

/* _PyCFrame: one per C-level call of _PyEval_EvalFrameDefault, on the C stack */
#define NNPROF_PY311_CFRAME_CURRENT_FRAME 8

/* _PyInterpreterFrame */
#define NNPROF_PY311_FRAME_CODE 32
#define NNPROF_PY311_FRAME_PREVIOUS 48
#define NNPROF_PY311_FRAME_PREV_INSTR 56
#define NNPROF_PY311_FRAME_IS_ENTRY 68
#define NNPROF_PY311_FRAME_OWNER 69
#define NNPROF_PY311_FRAME_SIZE 72 /* up to localsplus */
#define NNPROF_PY311_FRAME_OWNED_BY_GENERATOR 1

/* PyObject / PyCodeObject */
#define NNPROF_PY311_OBJECT_TYPE 8
#define NNPROF_PY311_CODE_FIRSTLINENO 72
#define NNPROF_PY311_CODE_FILENAME 112
#define NNPROF_PY311_CODE_QUALNAME 128
#define NNPROF_PY311_CODE_LINETABLE 136
#define NNPROF_PY311_CODE_FIRSTTRACEABLE 168
#define NNPROF_PY311_CODE_CODE_ADAPTIVE 184
#define NNPROF_PY311_CODE_HEAD_BYTES (NNPROF_PY311_CODE_CODE_ADAPTIVE - NNPROF_PY311_OBJECT_TYPE)

/* PyBytesObject */
#define NNPROF_PY311_BYTES_SIZE 16
#define NNPROF_PY311_BYTES_SVAL 32

/* PyASCIIObject / PyCompactUnicodeObject: length, and the state bit field (interned:2, kind:3,
 * compact:1, ascii:1, ready:1) in the byte at STATE; compact strings keep their characters
 * right after the struct. */
#define NNPROF_PY311_UNICODE_LENGTH 16
#define NNPROF_PY311_UNICODE_STATE 32
#define NNPROF_PY311_ASCII_DATA 48
#define NNPROF_PY311_COMPACT_DATA 72

#endif
