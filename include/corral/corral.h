/* corral's C API: confined commands for any language (libcorral.so).
 *
 * The C face of the executor library (src/executor/executor.h and
 * process.h, docs/executors.md): a policy from the config file's schema
 * (TOML, or the same tables as JSON), an executor set that owns its
 * executors and scratch, runs with their output captured, and prepared
 * processes driven by hand. Every call is admitted by corral's gate and run
 * through the same sandbox as `corral run`; nothing here runs a command any
 * other way.
 *
 *   corral_policy *policy; corral_set *set; corral_executor *ex;
 *   corral_run_result r; char *err = NULL;
 *   if (corral_policy_from_toml("[sandbox]\nmode = \"read-only\"\n", "/src/app", &policy, &err) ||
 *       corral_set_create(policy, NULL, 8, &set, &err) ||
 *       corral_set_executor(set, "agent", &ex, &err) ||
 *       corral_run_command(ex, "", "make test", 0, &r, &err)) {
 *     fprintf(stderr, "%s\n", err); corral_string_free(err);
 *   }
 *   ... r.exit_code, r.stdout_data (r.stdout_len bytes) ...
 *   corral_run_result_free(&r); corral_set_free(set); corral_policy_free(policy);
 *
 * Errors: every function that can fail returns 0 (CORRAL_OK) or a
 * corral_errc, and when `error` is not NULL stores there a message the
 * caller frees with corral_string_free (NULL on success). Handles are
 * opaque. An executor belongs to its set and is valid until corral_set_free;
 * a process is the caller's until corral_process_free. Threads: a set may be
 * used from many threads at once (the C++ contract: one executor's runs are
 * serialised, different executors run in parallel). */
#ifndef CORRAL_CORRAL_H
#define CORRAL_CORRAL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The exported functions: libcorral.so is built with hidden visibility. */
#if defined(__GNUC__)
#define CORRAL_API __attribute__((visibility("default")))
#else
#define CORRAL_API
#endif

/* The typed errors (executor/errors.h), stable numbers. */
typedef enum corral_errc {
  CORRAL_OK = 0,
  CORRAL_E_EXECUTOR_LIMIT = 1,
  CORRAL_E_SET_CLOSED = 2,
  CORRAL_E_EXECUTOR_CLOSED = 3,
  CORRAL_E_ALREADY_STARTED = 4,
  CORRAL_E_NOT_STARTED = 5,
  CORRAL_E_TTY_UNSUPPORTED = 6,
  CORRAL_E_STDIN_CLOSED = 7,
  CORRAL_E_SANDBOX_UNAVAILABLE = 8,
  CORRAL_E_REFUSED_BY_GATE = 9,
  CORRAL_E_CWD_OUTSIDE_WORKSPACE = 10,
  CORRAL_E_SCRATCH_UNSAFE = 11,
  CORRAL_E_INVALID_ARGUMENT = 12,
  CORRAL_E_POLICY = 13,
  CORRAL_E_COMMAND_NOT_FOUND = 14,
  CORRAL_E_DEADLINE = 15,
  CORRAL_E_CANCELLED = 16,
  CORRAL_E_INTERNAL = 17
} corral_errc;

/* "executor_limit", "set_closed", ...; "ok" for 0. Static: not freed. */
CORRAL_API const char *corral_errc_name(int errc);
CORRAL_API void corral_string_free(char *text);

typedef struct corral_policy corral_policy;
typedef struct corral_set corral_set;
typedef struct corral_executor corral_executor;
typedef struct corral_process corral_process;

/* A policy: a config file's tables ([sandbox], [approval]; docs/config.md),
 * as TOML or as JSON ({"sandbox": {"mode": "read-only"}}), in place of the
 * user's config file. `text` NULL: the user's config files, as `corral run`
 * reads them. `workspace` NULL: the config's workspace_root, else the
 * working directory (or its repository's top). */
CORRAL_API int corral_policy_from_toml(const char *text, const char *workspace, corral_policy **out, char **error);
CORRAL_API int corral_policy_from_json(const char *text, const char *workspace, corral_policy **out, char **error);
CORRAL_API void corral_policy_free(corral_policy *policy);

/* `scratch_root` NULL: /tmp; else a directory of the caller's (not a
 * symlink). `max_executors` <= 0: 64. Every question the gate asks is
 * answered "no". */
CORRAL_API int corral_set_create(const corral_policy *policy, const char *scratch_root, int max_executors, corral_set **out,
                      char **error);
/* The executor of `key` (memoised), owned by the set. */
CORRAL_API int corral_set_executor(corral_set *set, const char *key, corral_executor **out, char **error);
/* Kills every running tree, removes the scratch; later calls fail with
 * CORRAL_E_SET_CLOSED. Idempotent. */
CORRAL_API void corral_set_close(corral_set *set);
/* Closes, then frees the set and its executors. */
CORRAL_API void corral_set_free(corral_set *set);

/* 0 full, 1 degraded, 2 none (confine/plan.h Level). */
CORRAL_API int corral_executor_level(const corral_executor *executor);
/* JSON: the policy, the plan and its guarantees; freed with corral_string_free. */
CORRAL_API char *corral_executor_report(const corral_executor *executor);
CORRAL_API const char *corral_executor_home(const corral_executor *executor);
CORRAL_API const char *corral_executor_tmpdir(const corral_executor *executor);

typedef struct corral_run_result {
  char *stdout_data; /* NUL-terminated too; stdout_len bytes */
  size_t stdout_len;
  char *stderr_data;
  size_t stderr_len;
  int exit_code;    /* the command's, or 128 + the signal */
  int signal;       /* the signal that killed it, or 0 */
  int output_limit; /* 1: max_output was passed and the tree killed */
  /* What the command made at a protected path in the workspace (a git hook,
   * a .envrc, ...) that corral could not take out after the call: it may run
   * outside the sandbox; inspect and remove it before you use git or an
   * editor there. protected_left_count paths (NULL when none), owned by the
   * result. */
  char **protected_left;
  size_t protected_left_count;
} corral_run_result;

/* `argv` NULL-terminated; `cwd` inside the workspace ("" or NULL: the
 * workspace); `max_output` 0: no cap. */
CORRAL_API int corral_run_argv(corral_executor *executor, const char *cwd, const char *const *argv, size_t max_output,
                    corral_run_result *out, char **error);
/* /bin/sh -c `shell`. */
CORRAL_API int corral_run_command(corral_executor *executor, const char *cwd, const char *shell, size_t max_output,
                       corral_run_result *out, char **error);
CORRAL_API void corral_run_result_free(corral_run_result *result);

typedef struct corral_process_options {
  const char *dir;               /* inside the workspace; NULL or "": the workspace */
  const char *const *argv;       /* NULL-terminated */
  const char *const *env;        /* "NAME=value", NULL-terminated, or NULL */
  int tty;                       /* 1: a pty of the command's own */
  unsigned short rows, columns;  /* the pty's size; 0: 24 x 80 */
  long deadline_ms;              /* 0: none */
  long terminate_grace_ms;       /* 0: 2000 */
} corral_process_options;

enum { CORRAL_SIGNAL_INTERRUPT = 0, CORRAL_SIGNAL_TERMINATE = 1, CORRAL_SIGNAL_KILL = 2 };
/* Why a process ended (ProcessExit::ended_by). */
enum { CORRAL_ENDED_BY_COMMAND = 0, CORRAL_ENDED_BY_OUTPUT_LIMIT = 1, CORRAL_ENDED_BY_DEADLINE = 2,
       CORRAL_ENDED_BY_CANCELLED = 3, CORRAL_ENDED_BY_SIGNAL = 4 };

CORRAL_API int corral_process_prepare(corral_executor *executor, const corral_process_options *options, corral_process **out,
                           char **error);
CORRAL_API int corral_process_start(corral_process *process, char **error);
/* Descriptors the process owns (valid until corral_process_free). */
CORRAL_API int corral_process_stdin(corral_process *process, int *fd, char **error);
CORRAL_API int corral_process_stdout(corral_process *process, int *fd, char **error);
CORRAL_API int corral_process_stderr(corral_process *process, int *fd, char **error);
CORRAL_API int corral_process_pty(corral_process *process, int *fd, char **error);
CORRAL_API int corral_process_close_stdin(corral_process *process, char **error);
CORRAL_API int corral_process_resize(corral_process *process, unsigned short rows, unsigned short columns, char **error);
CORRAL_API int corral_process_signal(corral_process *process, int which, char **error);
/* One real wait, cached. Any out pointer may be NULL. */
CORRAL_API int corral_process_wait(corral_process *process, int *exit_code, int *signal, int *ended_by, char **error);
/* After corral_process_wait: as corral_run_result's protected_left, `count`
 * paths (NULL when none), valid until corral_process_free. */
CORRAL_API const char *const *corral_process_protected_left(const corral_process *process, size_t *count);
/* Kills what still runs, closes its descriptors, frees it. */
CORRAL_API void corral_process_free(corral_process *process);

#ifdef __cplusplus
}
#endif

#endif /* CORRAL_CORRAL_H */
