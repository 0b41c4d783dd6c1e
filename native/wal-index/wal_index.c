/*
 * Read-only shared mappings of a file's first bytes, for Gatehouse's SQLite change signal
 * (server/db/storage.ts). SQLite keeps the WAL-index of a database in its -shm file and maps it
 * shared; every commit rewrites the header at its start. Reading that header through a mapping of
 * our own costs a memory copy, where a pread() costs a system call on every request.
 *
 *   map(fd, length) -> handle      maps the first `length` bytes of an open file (at least that long);
 *                                  the caller may close the descriptor afterwards
 *   copy(handle, buffer)           copies buffer.length bytes (at most `length`) from the start
 *   close(handle)                  unmaps now (otherwise the garbage collector does)
 */
#include <errno.h>
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
  void *addr;
  size_t length;
} mapping;

static void unmap(mapping *m) {
  if (m->addr != NULL) munmap(m->addr, m->length);
  m->addr = NULL;
}

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  unmap((mapping *)data);
  free(data);
}

static napi_value fail(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

static mapping *handle_of(napi_env env, napi_value value) {
  napi_valuetype type;
  void *data = NULL;
  if (napi_typeof(env, value, &type) != napi_ok || type != napi_external) return NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok) return NULL;
  return (mapping *)data;
}

static napi_value Map(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int32_t fd = -1;
  uint32_t length = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return fail(env, "map(fd, length)");
  if (napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) return fail(env, "map: fd must be an open file descriptor");
  if (napi_get_value_uint32(env, argv[1], &length) != napi_ok || length == 0) return fail(env, "map: length must be a positive integer");

  struct stat st;
  // Touching a mapped page past the end of the file raises SIGBUS: refuse a file too short.
  if (fstat(fd, &st) != 0) return fail(env, strerror(errno));
  if (st.st_size < (off_t)length) return fail(env, "map: file shorter than the length to map");
  void *addr = mmap(NULL, length, PROT_READ, MAP_SHARED, fd, 0);
  if (addr == MAP_FAILED) return fail(env, strerror(errno));

  mapping *m = malloc(sizeof *m);
  if (m == NULL) {
    munmap(addr, length);
    return fail(env, "out of memory");
  }
  m->addr = addr;
  m->length = length;
  napi_value handle;
  if (napi_create_external(env, m, finalize, NULL, &handle) != napi_ok) {
    unmap(m);
    free(m);
    return fail(env, "map: cannot create the handle");
  }
  return handle;
}

static napi_value Copy(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void *target = NULL;
  size_t target_length = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 2) return fail(env, "copy(handle, buffer)");
  mapping *m = handle_of(env, argv[0]);
  if (m == NULL || m->addr == NULL) return fail(env, "copy: not an open mapping");
  if (napi_get_buffer_info(env, argv[1], &target, &target_length) != napi_ok) return fail(env, "copy: buffer must be a Buffer");
  if (target_length > m->length) return fail(env, "copy: buffer longer than the mapping");
  memcpy(target, m->addr, target_length);
  return NULL;
}

static napi_value Close(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return fail(env, "close(handle)");
  mapping *m = handle_of(env, argv[0]);
  if (m == NULL) return fail(env, "close: not a mapping");
  unmap(m);
  return NULL;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor methods[] = {
    {"map", NULL, Map, NULL, NULL, NULL, napi_default, NULL},
    {"copy", NULL, Copy, NULL, NULL, NULL, napi_default, NULL},
    {"close", NULL, Close, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof methods / sizeof methods[0], methods);
  return exports;
}
